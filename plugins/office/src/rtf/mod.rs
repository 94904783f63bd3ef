//! RTF documents, read by a small bounded interpreter of their tokens.
//!
//! Groups keep their state (destination, `\ucN`, font, paragraph
//! properties) on an explicit stack of bounded depth. Text is decoded from
//! `\'hh` bytes in the font's charset or the document's `\ansicpg` code
//! page, or taken from `\uN` (skipping the `\ucN` fallback characters that
//! follow, surrogate pairs joined). Destinations that hold no visible text
//! are skipped (font, colour and style tables, pictures, objects' data,
//! field instructions, bookmarks, every unknown `\*` destination), but
//! `\info` gives the title, author, subject, keywords and dates, the
//! style sheet gives each style's outline level (or `heading N` name),
//! and `\listtext` gives a list item's bullet or number.
//!
//! Hidden (`\v`) and deleted (`\deleted`) text is left out.
//!
//! Paragraphs end at `\par`; `\outlinelevelN` or the paragraph's style
//! makes a heading; `\intbl` paragraphs are table cells ended by `\cell`,
//! rows by `\row`. Footnotes (`\footnote`, `\ftnalt` for endnotes),
//! comments (`\annotation`), headers and footers are collected apart.

mod lexer;

use std::collections::HashMap;

use encoding_rs::Encoding;
use kebab_plugin_sdk::{Document, LogLevel, PluginError, log};

use crate::codepage;
use crate::flow::{Flow, Item, Role};
use crate::limits::MAX_RTF_DEPTH;
use crate::meta::{Field, Properties};
use crate::textdoc::{self, Section};
use lexer::{Lexer, Token};

/// Destinations whose content is never shown.
const SKIPPED: &[&str] = &[
    "colortbl",
    "pict",
    "objdata",
    "themedata",
    "colorschememapping",
    "latentstyles",
    "datastore",
    "listtable",
    "listoverridetable",
    "rsidtbl",
    "generator",
    "xmlnstbl",
    "mmathPr",
    "filetbl",
    "revtbl",
    "fldinst",
    "bkmkstart",
    "bkmkend",
    "xe",
    "tc",
    "tcn",
    "shprslt",
    "sp",
    "nonshppict",
    "nesttableprops",
    "nonesttables",
    "pn",
    "falt",
    "panose",
    "leveltext",
    "levelnumbers",
    "pgdsctbl",
    "listpicture",
    "template",
    "docvar",
    "userprops",
];

/// `\*` destinations that are read rather than skipped.
const READ_IGNORABLE: &[&str] = &["shpinst", "shptxt", "annotation", "ud", "fldrslt"];

/// Where text goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dest {
    Text,
    Skip,
    FontTable,
    StyleSheet,
    Info,
    Property(Field),
    ListText,
}

/// What a group carries.
#[derive(Debug, Clone)]
struct State {
    dest: Dest,
    /// Fallback characters after `\uN`.
    uc: u32,
    font: Option<i32>,
    outline: Option<u8>,
    style: i32,
    in_table: bool,
    list_level: u8,
    /// The paragraph belongs to a list (`\lsN`).
    in_list: bool,
    /// Inside `\ud`: the Unicode twin of the `\upr` group's ANSI text.
    unicode_alternative: bool,
    /// Hidden (`\v`) or deleted (`\deleted`) text, not shown.
    unseen: bool,
}

impl Default for State {
    fn default() -> State {
        State {
            dest: Dest::Text,
            uc: 1,
            font: None,
            outline: None,
            style: 0,
            in_table: false,
            list_level: 0,
            in_list: false,
            unicode_alternative: false,
            unseen: false,
        }
    }
}

/// The table state of one container (the body, a note).
#[derive(Debug, Default, Clone, Copy)]
struct TableState {
    table: bool,
    row: bool,
    cell: bool,
}

/// What a collected group is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Collect {
    /// A header, footer, note or comment, filed under its section.
    Section(Section),
    /// A shape's text box, read after the paragraph it is anchored in.
    TextBox,
}

/// A style sheet entry being read.
#[derive(Debug, Default)]
struct StyleEntry {
    number: Option<i32>,
    outline: Option<u8>,
    name: String,
}

/// The interpreter's state.
struct Reader {
    flow: Flow,
    stack: Vec<State>,
    state: State,
    /// Groups opened past [`MAX_RTF_DEPTH`], sharing the deepest state.
    overflow: usize,
    /// A `\*` was just read.
    ignorable: bool,
    default_cp: u32,
    default_font: Option<i32>,
    font_pages: HashMap<i32, u32>,
    font_entry: Option<i32>,
    /// Style number → 0-based outline level.
    styles: HashMap<i32, u8>,
    style_entry: StyleEntry,
    /// `\'hh` and plain bytes waiting to be decoded together.
    pending: Vec<u8>,
    /// Fallback characters still to skip after `\uN`.
    skip_chars: u32,
    high_surrogate: Option<u16>,
    props: Properties,
    property: String,
    date: Option<(Field, [i32; 5])>,
    list_prefix: String,
    /// The last list item's mark, continued by items that have none.
    last_mark: String,
    tables: Vec<TableState>,
    /// Open collected groups: the stack depth they opened at.
    open_groups: Vec<(usize, Collect)>,
    groups: Vec<(Section, Vec<Item>)>,
    /// Text boxes waiting for their anchor paragraph to end.
    boxes: Vec<Item>,
}

/// Parse an RTF document.
pub fn parse(bytes: &[u8]) -> Result<Document, PluginError> {
    let mut reader = Reader {
        flow: Flow::default(),
        stack: Vec::new(),
        state: State::default(),
        overflow: 0,
        ignorable: false,
        default_cp: 1252,
        default_font: None,
        font_pages: HashMap::new(),
        font_entry: None,
        styles: HashMap::new(),
        style_entry: StyleEntry::default(),
        pending: Vec::new(),
        skip_chars: 0,
        high_surrogate: None,
        props: Properties::default(),
        property: String::new(),
        date: None,
        list_prefix: String::new(),
        last_mark: String::new(),
        tables: vec![TableState::default()],
        open_groups: Vec::new(),
        groups: Vec::new(),
        boxes: Vec::new(),
    };
    let mut saw_any = false;
    for token in Lexer::new(bytes) {
        saw_any = true;
        reader.token(token);
    }
    if !saw_any {
        return Err(PluginError::Malformed("an empty RTF file".into()));
    }
    reader.flush();
    reader.end_paragraph();
    reader.end_table();
    while let Some((_, collect)) = reader.open_groups.pop() {
        reader.close_group(collect);
    }
    let boxes = std::mem::take(&mut reader.boxes);
    reader.flow.place_items(boxes);
    if reader.overflow > 0 || reader.stack.len() >= MAX_RTF_DEPTH {
        log(
            LogLevel::Warn,
            "RTF groups nested past the depth bound were read flat",
        );
    }
    let items = reader.flow.finish();
    Ok(textdoc::document(
        &items,
        &reader.groups,
        &reader.props,
        "rtf",
    ))
}

impl Reader {
    /// Interpret one token.
    fn token(&mut self, token: Token<'_>) {
        if self.skip_chars > 0 && self.skips(&token) {
            return;
        }
        match token {
            Token::Text(bytes) => self.pending.extend_from_slice(bytes),
            Token::Hex(byte) => self.pending.push(byte),
            other => {
                self.flush();
                match other {
                    Token::Open => self.open_group(),
                    Token::Close => self.close(),
                    Token::Word(word, param) => self.word(word, param),
                    Token::Symbol(symbol) => self.symbol(symbol),
                    Token::Text(_) | Token::Hex(_) | Token::Binary => {}
                }
            }
        }
    }

    /// Consume `token` as fallback characters after `\uN` when it is one;
    /// braces end the skipping.
    fn skips(&mut self, token: &Token<'_>) -> bool {
        match token {
            Token::Open | Token::Close => {
                self.skip_chars = 0;
                false
            }
            Token::Text(bytes) => {
                let skipped = (self.skip_chars as usize).min(bytes.len());
                self.skip_chars -= skipped as u32;
                if skipped < bytes.len() {
                    self.pending.extend_from_slice(&bytes[skipped..]);
                }
                true
            }
            _ => {
                self.skip_chars -= 1;
                true
            }
        }
    }

    fn open_group(&mut self) {
        if self.stack.len() >= MAX_RTF_DEPTH {
            self.overflow += 1;
            return;
        }
        self.stack.push(self.state.clone());
        if self.state.dest == Dest::StyleSheet {
            self.style_entry = StyleEntry::default();
        }
    }

    fn close(&mut self) {
        self.ignorable = false;
        if self.overflow > 0 {
            self.overflow -= 1;
            return;
        }
        let Some(outer) = self.stack.pop() else {
            return;
        };
        let inner = std::mem::replace(&mut self.state, outer);
        self.commit_date();
        match inner.dest {
            Dest::Property(field) if self.state.dest != inner.dest => {
                let value = std::mem::take(&mut self.property);
                if inner.unicode_alternative {
                    self.props.replace(field, &value);
                } else {
                    self.props.set(field, &value);
                }
            }
            Dest::StyleSheet => self.commit_style(),
            _ => {}
        }
        while let Some(&(depth, collect)) = self.open_groups.last() {
            if depth <= self.stack.len() {
                break;
            }
            self.open_groups.pop();
            self.close_group(collect);
        }
    }

    /// Interpret a control word.
    fn word(&mut self, word: &str, param: Option<i32>) {
        let ignorable = std::mem::take(&mut self.ignorable);
        if self.destination(word, param, ignorable) {
            return;
        }
        if ignorable {
            self.state.dest = Dest::Skip;
            return;
        }
        match self.state.dest {
            Dest::FontTable => self.font_word(word, param),
            Dest::StyleSheet => self.style_word(word, param),
            Dest::Skip => {}
            _ => self.text_word(word, param),
        }
    }

    /// Handle a control word that starts a destination; `false` if it is
    /// none.
    fn destination(&mut self, word: &str, param: Option<i32>, ignorable: bool) -> bool {
        let dest = match word {
            "fonttbl" => Dest::FontTable,
            "stylesheet" => Dest::StyleSheet,
            "info" => Dest::Info,
            "listtext" | "pntext" => {
                self.list_prefix.clear();
                Dest::ListText
            }
            "ud" => {
                self.state.unicode_alternative = true;
                self.state.dest
            }
            "fldrslt" | "shpinst" | "upr" => self.state.dest,
            "shptxt" => return self.open_collected(Collect::TextBox),
            "footnote" => return self.open_collected(Collect::Section(Section::Footnotes)),
            "annotation" => return self.open_collected(Collect::Section(Section::Comments)),
            "header" | "headerl" | "headerr" | "headerf" => {
                return self.open_collected(Collect::Section(Section::Header));
            }
            "footer" | "footerl" | "footerr" | "footerf" => {
                return self.open_collected(Collect::Section(Section::Footer));
            }
            "creatim" | "revtim" if self.state.dest == Dest::Info => {
                let field = if word == "creatim" {
                    Field::Created
                } else {
                    Field::Modified
                };
                self.date = Some((field, [0; 5]));
                return true;
            }
            w if self.state.dest == Dest::Info => match info_field(w) {
                Some(field) => Dest::Property(field),
                None => return self.date_part(w, param),
            },
            w if SKIPPED.contains(&w) => Dest::Skip,
            _ => return false,
        };
        if ignorable && !READ_IGNORABLE.contains(&word) && dest != Dest::Skip {
            self.state.dest = Dest::Skip;
        } else if self.state.dest != Dest::Skip {
            self.state.dest = dest;
        }
        true
    }

    /// Start collecting a note, comment, header, footer or text box.
    fn open_collected(&mut self, collect: Collect) -> bool {
        if self.state.dest == Dest::Skip {
            return true;
        }
        self.flow.open_container();
        self.tables.push(TableState::default());
        self.open_groups.push((self.stack.len(), collect));
        self.state.dest = Dest::Text;
        self.state.in_table = false;
        true
    }

    /// Finish a collected group.
    fn close_group(&mut self, collect: Collect) {
        self.end_paragraph();
        self.end_table();
        if self.tables.len() > 1 {
            self.tables.pop();
        }
        let items = self.flow.close_container();
        match collect {
            Collect::Section(section) => self.groups.push((section, items)),
            Collect::TextBox => self.boxes.extend(items),
        }
    }

    /// A `\yr`, `\mo`, … part of an `\info` date; `false` for other words.
    fn date_part(&mut self, word: &str, param: Option<i32>) -> bool {
        let index = match word {
            "yr" => 0,
            "mo" => 1,
            "dy" => 2,
            "hr" => 3,
            "min" => 4,
            _ => return false,
        };
        if let Some((_, parts)) = self.date.as_mut() {
            parts[index] = param.unwrap_or(0);
        }
        true
    }

    /// Store a finished `\creatim`/`\revtim` date.
    fn commit_date(&mut self) {
        if let Some((field, [y, mo, d, h, mi])) = self.date.take()
            && y > 0
        {
            let date = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:00");
            self.props.set(field, &date);
        }
    }

    fn font_word(&mut self, word: &str, param: Option<i32>) {
        match (word, param) {
            ("f", Some(n)) => self.font_entry = Some(n),
            ("fcharset", Some(charset)) => {
                if let (Some(font), Some(cp)) =
                    (self.font_entry, codepage::charset_codepage(charset))
                {
                    self.font_pages.insert(font, cp);
                }
            }
            ("cpg", Some(cp)) => {
                if let (Some(font), Ok(cp)) = (self.font_entry, u32::try_from(cp)) {
                    self.font_pages.insert(font, cp);
                }
            }
            _ => {}
        }
    }

    fn style_word(&mut self, word: &str, param: Option<i32>) {
        match (word, param) {
            ("s", Some(n)) => self.style_entry.number = Some(n),
            ("outlinelevel", Some(n)) => self.style_entry.outline = u8::try_from(n).ok(),
            _ => {}
        }
    }

    /// Record a finished style sheet entry's outline level.
    fn commit_style(&mut self) {
        let entry = std::mem::take(&mut self.style_entry);
        let name = entry
            .name
            .trim()
            .trim_end_matches(';')
            .trim()
            .to_lowercase();
        let level = entry.outline.or_else(|| match name.as_str() {
            "title" => Some(0),
            n => n
                .strip_prefix("heading ")
                .and_then(|l| l.parse::<u8>().ok())
                .and_then(|l| l.checked_sub(1)),
        });
        if let Some(level) = level.filter(|l| *l < 9) {
            self.styles.insert(entry.number.unwrap_or(0), level);
        }
    }

    /// A control word in text: characters, paragraph and table structure,
    /// properties.
    fn text_word(&mut self, word: &str, param: Option<i32>) {
        let shown = match word {
            "par" | "sect" => {
                self.end_paragraph();
                None
            }
            "line" => Some('\n'),
            "tab" => Some('\t'),
            "emdash" => Some('—'),
            "endash" => Some('–'),
            "bullet" => Some('•'),
            "lquote" => Some('‘'),
            "rquote" => Some('’'),
            "ldblquote" => Some('“'),
            "rdblquote" => Some('”'),
            "emspace" | "enspace" | "qmspace" => Some(' '),
            "u" => self.unicode(param.unwrap_or(0)),
            _ => {
                self.property_word(word, param);
                None
            }
        };
        if let Some(c) = shown {
            self.emit(&c.to_string());
        }
    }

    /// Properties and structure words that show nothing themselves.
    fn property_word(&mut self, word: &str, param: Option<i32>) {
        let n = param.unwrap_or(0);
        match word {
            "ansicpg" => self.default_cp = u32::try_from(n).unwrap_or(1252),
            "mac" => self.default_cp = 10000,
            "deff" => self.default_font = Some(n),
            "uc" => self.state.uc = u32::try_from(n).unwrap_or(1).min(16),
            "f" => self.state.font = Some(n),
            "plain" => {
                self.state.font = None;
                self.state.unseen = false;
            }
            "v" | "deleted" => self.state.unseen = param != Some(0),
            "pard" => {
                self.state.outline = None;
                self.state.style = 0;
                self.state.in_table = false;
                self.state.list_level = 0;
                self.state.in_list = false;
            }
            "ls" => self.state.in_list = true,
            "s" => self.state.style = n,
            "outlinelevel" => self.state.outline = u8::try_from(n).ok().filter(|l| *l < 9),
            "ilvl" => self.state.list_level = u8::try_from(n).unwrap_or(0).min(8),
            "intbl" => self.state.in_table = true,
            "cell" | "nestcell" => self.end_cell(),
            "row" => self.end_row(),
            "ftnalt" => {
                if let Some((_, collect @ Collect::Section(Section::Footnotes))) =
                    self.open_groups.last_mut()
                {
                    *collect = Collect::Section(Section::Endnotes);
                }
            }
            _ => {}
        }
    }

    /// The character of `\uN` (a high surrogate waits for its pair);
    /// the fallback characters that follow are skipped.
    fn unicode(&mut self, n: i32) -> Option<char> {
        self.skip_chars = self.state.uc;
        let unit = if n < 0 { n + 65536 } else { n };
        let unit = u16::try_from(unit).ok()?;
        if (0xD800..0xDC00).contains(&unit) {
            self.high_surrogate = Some(unit);
            return None;
        }
        if (0xDC00..0xE000).contains(&unit) {
            let high = self.high_surrogate.take()?;
            return char::decode_utf16([high, unit]).next()?.ok();
        }
        self.high_surrogate = None;
        char::from_u32(u32::from(unit))
    }

    /// Interpret a control symbol.
    fn symbol(&mut self, symbol: u8) {
        let shown = match symbol {
            b'*' => {
                self.ignorable = true;
                return;
            }
            b'\\' | b'{' | b'}' => symbol as char,
            b'~' => '\u{a0}',
            b'_' => '-',
            b'\n' | b'\r' if matches!(self.state.dest, Dest::Text) => {
                self.end_paragraph();
                return;
            }
            _ => return,
        };
        self.emit(&shown.to_string());
    }

    /// Decode the waiting bytes in the current font's code page.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let bytes = std::mem::take(&mut self.pending);
        let text = codepage::decode(&bytes, self.encoding());
        self.emit(&text);
    }

    /// The code page text in the current font is in.
    fn encoding(&self) -> Option<&'static Encoding> {
        let font = self.state.font.or(self.default_font);
        let cp = font
            .and_then(|f| self.font_pages.get(&f))
            .copied()
            .unwrap_or(self.default_cp);
        codepage::encoding(cp)
    }

    /// Send text where the current destination wants it.
    fn emit(&mut self, text: &str) {
        match self.state.dest {
            Dest::Text => {
                if self.state.unseen || (text.trim().is_empty() && !self.flow.in_paragraph()) {
                    return;
                }
                self.ensure_paragraph();
                self.flow.push_text(text);
            }
            Dest::Property(_) => self.property.push_str(text),
            Dest::StyleSheet => self.style_entry.name.push_str(text),
            Dest::ListText => self.list_prefix.push_str(text),
            Dest::Skip | Dest::FontTable | Dest::Info => {}
        }
    }

    /// The table context of the innermost container.
    fn table(&mut self) -> &mut TableState {
        if self.tables.is_empty() {
            self.tables.push(TableState::default());
        }
        let last = self.tables.len() - 1;
        &mut self.tables[last]
    }

    /// Open a paragraph for text, entering or leaving a table as the
    /// paragraph's `\intbl` says.
    fn ensure_paragraph(&mut self) {
        if self.state.in_table {
            self.ensure_cell();
        } else if self.table().table {
            self.end_table();
        }
        if !self.flow.in_paragraph() {
            self.flow.open_paragraph();
        }
    }

    fn ensure_cell(&mut self) {
        let t = *self.table();
        if !t.table {
            self.flow.open_table();
        }
        if !t.row {
            self.flow.open_row();
        }
        if !t.cell {
            self.flow.open_container();
        }
        *self.table() = TableState {
            table: true,
            row: true,
            cell: true,
        };
    }

    /// Close the open paragraph with the role its properties give.
    fn end_paragraph(&mut self) {
        if self.flow.in_paragraph() {
            let level = self
                .state
                .outline
                .or_else(|| self.styles.get(&self.state.style).copied());
            let mark = match self.list_prefix.trim() {
                "" if self.state.in_list => next_mark(&self.last_mark),
                mark => mark.to_string(),
            };
            if !mark.is_empty() {
                self.last_mark.clone_from(&mark);
            }
            let prefix = list_prefix(&mark, self.state.list_level);
            let role = match level {
                Some(level) => Role::Heading(level + 1),
                None if !prefix.is_empty() => Role::ListItem,
                None => Role::Body,
            };
            let prefix = if matches!(role, Role::ListItem) {
                prefix
            } else {
                String::new()
            };
            self.flow.close_paragraph(role, &prefix);
            let in_box = self.open_groups.iter().any(|(_, c)| *c == Collect::TextBox);
            if !in_box {
                let boxes = std::mem::take(&mut self.boxes);
                self.flow.place_items(boxes);
            }
        }
        self.list_prefix.clear();
    }

    fn end_cell(&mut self) {
        self.ensure_cell();
        self.end_paragraph();
        self.flow.close_cell();
        self.table().cell = false;
    }

    fn end_row(&mut self) {
        if self.table().cell {
            self.end_cell();
        }
        self.table().row = false;
    }

    fn end_table(&mut self) {
        let t = *self.table();
        if !t.table {
            return;
        }
        if t.cell {
            self.end_paragraph();
            self.flow.close_cell();
        }
        self.flow.close_table();
        *self.table() = TableState::default();
    }
}

/// The property an `\info` destination word holds.
fn info_field(word: &str) -> Option<Field> {
    Some(match word {
        "title" => Field::Title,
        "author" => Field::Author,
        "operator" => Field::LastModifiedBy,
        "subject" => Field::Subject,
        "keywords" => Field::Keywords,
        "doccomm" => Field::Description,
        _ => return None,
    })
}

/// A list item's prefix from its mark (`1.`, a bullet symbol), indented
/// by its level: bullets (symbols, or a lone letter such as Word's `o`)
/// become `- `.
fn list_prefix(mark: &str, level: u8) -> String {
    if mark.is_empty() {
        return String::new();
    }
    let indent = "  ".repeat(usize::from(level));
    let lone_letter = mark.chars().count() == 1 && mark.chars().all(char::is_alphabetic);
    if mark.chars().any(char::is_alphanumeric) && !lone_letter {
        format!("{indent}{mark} ")
    } else {
        format!("{indent}- ")
    }
}

/// The mark of a list item that has none of its own (old-style lists
/// give only the first item's): the last number plus one, else the last
/// bullet.
fn next_mark(last: &str) -> String {
    let digits: String = last.chars().take_while(char::is_ascii_digit).collect();
    match digits.parse::<u32>() {
        Ok(n) => format!("{}{}", n.saturating_add(1), &last[digits.len()..]),
        Err(_) if last.is_empty() => "-".to_string(),
        Err(_) => last.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab_plugin_sdk::BlockKind;

    fn doc(rtf: &str) -> Document {
        parse(rtf.as_bytes()).unwrap()
    }

    fn texts(d: &Document) -> Vec<&str> {
        d.blocks.iter().map(|b| b.text.as_str()).collect()
    }

    #[test]
    fn paragraphs_unicode_and_code_pages() {
        let d = doc(
            r"{\rtf1\ansi\ansicpg1252\uc1{\fonttbl{\f0\fswiss Arial;}{\f1\fcharset129 Gulim;}}
            {\colortbl;\red0\green0\blue0;}Caf\'e9 \u54620?\u44397?\par
            {\f1 \'c7\'d1\'b1\'db}\par \u-10179?\u-8704?\par}",
        );
        assert_eq!(texts(&d), vec!["Café 한국", "한글", "😀"]);
    }

    #[test]
    fn headings_from_outline_levels_and_styles() {
        let d = doc(
            r"{\rtf1{\stylesheet{\s0 Normal;}{\s1\outlinelevel0 heading 1;}{\s2 heading 2;}}
            \pard\s1 Intro\par\pard\s2 Deeper\par\pard Body text\par\pard\outlinelevel0 Next\par}",
        );
        let kinds: Vec<BlockKind> = d.blocks.iter().map(|b| b.kind).collect();
        assert_eq!(
            kinds[..3],
            [BlockKind::Heading, BlockKind::Heading, BlockKind::Paragraph]
        );
        assert_eq!(d.blocks[2].heading_path, vec!["Intro", "Deeper"]);
        assert_eq!(d.blocks[3].heading_path, vec!["Next"]);
    }

    #[test]
    fn info_fields_tables_lists_and_notes() {
        let d = doc(
            r"{\rtf1{\info{\upr{\title The ?itle}{\*\ud{\title The Title}}}{\author Kim}{\creatim\yr2024\mo3\dy5\hr9\min7}}
            {\*\generator Thing;}{\header \pard Head\par}
            {\field{\*\fldinst HYPERLINK x}{\fldrslt link}} text{\footnote \pard note body\par}\par
            \trowd\cellx1000\cellx2000\pard\intbl A\cell B\cell\row\pard\intbl C\cell D\cell\row
            \pard{\listtext\'b7\tab}item\par}",
        );
        assert_eq!(d.title.as_deref(), Some("The Title"));
        assert!(
            d.metadata
                .contains(&("created".to_string(), "2024-03-05T09:07:00".to_string()))
        );
        assert_eq!(
            texts(&d),
            vec![
                "link text",
                "| A | B |\n| C | D |",
                "- item",
                "Head",
                "note body"
            ]
        );
        assert_eq!(d.blocks[3].heading_path, vec!["Header"]);
        assert_eq!(d.blocks[4].heading_path, vec!["Footnotes"]);
    }

    #[test]
    fn old_style_lists_continue_their_numbers() {
        let d = doc(
            r"{\rtf1{\pntext 1.\tab}\ls3 A\par B\par\pard{\pntext\'b7\tab}\ls5 C\par D\par\pard{\listtext o\tab}E\par}",
        );
        assert_eq!(texts(&d), vec!["1. A", "2. B", "- C", "- D", "- E"]);
    }

    #[test]
    fn hostile_nesting_and_garbage_do_not_panic() {
        let deep = format!("{{\\rtf1 {}x{}}}", "{".repeat(100_000), "}".repeat(100_000));
        assert_eq!(texts(&doc(&deep)), vec!["x"]);
        let _ = parse(b"{\\rtf1 }}}}}\\u-99999999 \\'zz \\bin-5 \\uc99999");
        assert!(parse(b"").is_err());
    }
}
