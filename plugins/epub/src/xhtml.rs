//! A chapter's XHTML as text blocks: headings (`h1`–`h6`), paragraphs and
//! other block elements, lists (one block per outermost list, an item a
//! line, ordered items numbered), tables (one block per outermost table, a
//! row a line, cells joined by ` | `), quotes and `<pre>` code; nothing of
//! `<head>` (but its `<title>`), scripts, styles, SVG or ruby annotations.
//! Footnotes (`<aside epub:type="footnote">`) stay where they sit, as
//! paragraphs. Whitespace is collapsed as a browser shows it, except in
//! `<pre>`.
//!
//! The walk keeps an explicit stack of open elements, bounded by
//! [`MAX_DEPTH`] (deeper elements only add their text), and tolerates
//! HTML written as XHTML: void elements left open (`<br>`), end tags that
//! close several elements or none. Where the XML breaks beyond that, the
//! text before the break is kept and the break reported.

use kebab_plugin_sdk::BlockKind;
use quick_xml::events::{BytesStart, Event};

use crate::xml;

/// The most open elements tracked; deeper nesting only adds text.
const MAX_DEPTH: usize = 256;

/// Elements that never have content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Elements whose content is not text a reader sees (MathML annotations
/// are other encodings of the formula shown).
const SKIPPED: &[&str] = &[
    "head",
    "script",
    "style",
    "template",
    "noscript",
    "svg",
    "rt",
    "rp",
    "annotation",
    "annotation-xml",
];

/// Elements that end the text before them and start a new block.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "aside",
    "header",
    "footer",
    "main",
    "nav",
    "figure",
    "figcaption",
    "caption",
    "address",
    "center",
    "hgroup",
    "details",
    "summary",
    "fieldset",
    "legend",
    "form",
    "body",
    "html",
    "hr",
];

/// A block of text found in a chapter.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// What it is.
    pub kind: BlockKind,
    /// The heading level (1–6) of a heading.
    pub level: Option<u8>,
    /// Its text: one line for a heading, a line per list item or table
    /// row, source lines for code.
    pub text: String,
}

/// What a chapter holds.
#[derive(Debug, Default)]
pub struct Page {
    /// The text of its `<title>`.
    pub title: Option<String>,
    /// Its blocks in order.
    pub pieces: Vec<Piece>,
    /// Where and why the XML broke, when it did.
    pub error: Option<String>,
    /// Whether the budget ran out before the chapter's end.
    pub cut: bool,
}

/// How much text may still be taken from the book.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Bytes of block text.
    pub bytes: usize,
    /// Blocks.
    pub pieces: usize,
}

/// What an element does to the text in it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    Skip,
    Title,
    Heading(u8),
    Pre,
    Quote,
    List { ordered: bool },
    Item,
    Table,
    Row,
    Cell,
    Block,
    Inline,
}

/// An open element: its lower-case local name, role, and a counter (the
/// next number of an ordered list, the cells seen in a row).
struct Frame {
    name: String,
    role: Role,
    count: u32,
}

/// Read the chapter `text`, taking at most `budget` (which is reduced by
/// what was taken).
pub fn read(text: &str, budget: &mut Budget) -> Page {
    let mut walker = Walker::new(*budget);
    let mut reader = xml::reader(text);
    while !walker.cut {
        match reader.read_event() {
            Ok(Event::Start(e)) => walker.start(&e),
            Ok(Event::Empty(e)) => {
                walker.start(&e);
                walker.end(&name_of(&e));
            }
            Ok(Event::End(e)) => walker.end(&xml::local(e.name()).to_ascii_lowercase()),
            Ok(Event::Text(t)) => walker.text(&t.xml10_content()),
            Ok(Event::CData(t)) => walker.text(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) => {
                let mut resolved = String::new();
                xml::push_reference(&mut resolved, &r);
                walker.text(&resolved);
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => {
                walker.page.error = Some(format!("{e} (at byte {})", reader.error_position()));
                break;
            }
        }
    }
    walker.flush();
    *budget = walker.budget;
    let mut page = walker.page;
    page.title = Some(xml::collapse(&walker.title)).filter(|t| !t.is_empty());
    page
}

fn name_of(start: &BytesStart<'_>) -> String {
    xml::local(start.name()).to_ascii_lowercase()
}

/// The role of an element, by its lower-case local name.
fn role(name: &str) -> Role {
    match name {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => Role::Heading(name.as_bytes()[1] - b'0'),
        "title" => Role::Title,
        "pre" => Role::Pre,
        "blockquote" => Role::Quote,
        "ol" => Role::List { ordered: true },
        "ul" | "dl" | "menu" => Role::List { ordered: false },
        "li" | "dt" | "dd" => Role::Item,
        "table" => Role::Table,
        "tr" => Role::Row,
        "td" | "th" => Role::Cell,
        _ if SKIPPED.contains(&name) => Role::Skip,
        _ if BLOCKS.contains(&name) => Role::Block,
        _ => Role::Inline,
    }
}

/// The walk's state.
struct Walker {
    stack: Vec<Frame>,
    /// Elements opened past [`MAX_DEPTH`] and not yet closed.
    overflow: usize,
    /// Open skipped elements.
    skipping: usize,
    /// Open `<title>` elements (inside `<head>`).
    in_title: usize,
    /// Open `<pre>` elements.
    pre: usize,
    /// Open lists and tables: text inside them is one block.
    containers: usize,
    /// Open tables.
    tables: usize,
    /// Open table cells.
    cells: usize,
    /// The text of the block being collected.
    text: String,
    title: String,
    page: Page,
    budget: Budget,
    cut: bool,
}

impl Walker {
    fn new(budget: Budget) -> Walker {
        Walker {
            stack: Vec::new(),
            overflow: 0,
            skipping: 0,
            in_title: 0,
            pre: 0,
            containers: 0,
            tables: 0,
            cells: 0,
            text: String::new(),
            title: String::new(),
            page: Page::default(),
            budget,
            cut: false,
        }
    }

    fn start(&mut self, start: &BytesStart<'_>) {
        let name = name_of(start);
        if VOID.contains(&name.as_str()) {
            self.void(&name);
            return;
        }
        if self.overflow == 0 {
            self.close_implied(&name);
        }
        if self.stack.len() >= MAX_DEPTH {
            self.overflow += 1;
            return;
        }
        let mut role = role(&name);
        if role == Role::Title && self.stack.last().is_none_or(|f| f.name != "head") {
            role = Role::Skip;
        }
        let count = self.enter(role, start);
        self.stack.push(Frame { name, role, count });
    }

    /// HTML written as XHTML leaves `<p>`, `<li>`, rows and cells open: a
    /// new one closes the open one of its name, unless something that
    /// scopes it (a list for an item, a table for a row) comes first.
    fn close_implied(&mut self, name: &str) {
        let Some(scoped) = implied_end_scope(name) else {
            return;
        };
        for at in (0..self.stack.len()).rev() {
            if self.stack[at].name == name {
                while self.stack.len() > at {
                    self.leave_top();
                }
                return;
            }
            if scoped(self.stack[at].role) {
                return;
            }
        }
    }

    /// A void element: a line break, or the end of a block.
    fn void(&mut self, name: &str) {
        match name {
            "br" => self.line_break(),
            "hr" => self.boundary(),
            _ => {}
        }
    }

    /// What opening an element of `role` does; its frame's counter.
    fn enter(&mut self, role: Role, start: &BytesStart<'_>) -> u32 {
        match role {
            Role::Skip => self.skipping += 1,
            Role::Title => self.in_title += 1,
            Role::Heading(_) | Role::Quote | Role::Block => self.boundary(),
            Role::Pre => {
                self.boundary();
                self.pre += 1;
            }
            Role::List { .. } | Role::Table => {
                self.container_edge();
                self.containers += 1;
                if role == Role::Table {
                    self.tables += 1;
                }
                return first_number(start);
            }
            Role::Item => {
                self.line_break();
                self.number_item();
            }
            Role::Row => self.row_edge(),
            Role::Cell => {
                self.cell_separator();
                self.cells += 1;
            }
            Role::Inline => {}
        }
        0
    }

    /// Close the innermost open element named `name` and all opened inside
    /// it; an end tag that matches nothing open is ignored.
    fn end(&mut self, name: &str) {
        if VOID.contains(&name) {
            return;
        }
        if self.overflow > 0 {
            self.overflow -= 1;
            return;
        }
        let Some(at) = self.stack.iter().rposition(|f| f.name == name) else {
            return;
        };
        while self.stack.len() > at {
            self.leave_top();
        }
    }

    /// Close the innermost open element.
    fn leave_top(&mut self) {
        let Some(role) = self.stack.last().map(|f| f.role) else {
            return;
        };
        match role {
            Role::Heading(_) | Role::Quote | Role::Block | Role::Pre => self.boundary(),
            Role::List { .. } | Role::Table if self.containers == 1 => self.flush(),
            Role::List { .. } | Role::Table | Role::Item => self.line_break(),
            Role::Row => self.row_edge(),
            _ => {}
        }
        self.stack.pop();
        match role {
            Role::Skip => self.skipping -= 1,
            Role::Title => self.in_title -= 1,
            Role::Pre => self.pre -= 1,
            Role::List { .. } => self.containers -= 1,
            Role::Table => {
                self.containers -= 1;
                self.tables -= 1;
            }
            Role::Cell => self.cells -= 1,
            _ => {}
        }
    }

    /// Text content.
    fn text(&mut self, text: &str) {
        if self.in_title > 0 && self.title.len() < xml::MAX_LABEL_CHARS * 4 {
            self.title.push_str(text);
        }
        if self.skipping > 0 {
            return;
        }
        if self.pre > 0 && self.cells == 0 {
            let shown = text
                .chars()
                .filter(|&c| c == '\n' || c == '\t' || !invisible(c));
            self.text.extend(shown.map(nbsp_as_space));
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                self.space();
            } else if !invisible(c) {
                self.text.push(c);
            }
        }
    }

    /// One space, unless the text is empty or already ends with one.
    fn space(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with([' ', '\n']) {
            self.text.push(' ');
        }
    }

    /// End the current line of the block.
    fn line_break(&mut self) {
        if self.cells > 0 {
            self.space();
            return;
        }
        let kept = self.text.trim_end_matches(' ').len();
        self.text.truncate(kept);
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }

    /// The edge of a block element: inside a list or table a new line,
    /// elsewhere the end of the block.
    fn boundary(&mut self) {
        if self.containers > 0 {
            self.line_break();
        } else {
            self.flush();
        }
    }

    /// The start of a list or table: a block of its own, or a new line in
    /// the one that holds it.
    fn container_edge(&mut self) {
        if self.containers == 0 {
            self.flush();
        } else {
            self.line_break();
        }
    }

    /// The edge of a table row: a new line, or a space in a nested table
    /// (which reads as part of its cell).
    fn row_edge(&mut self) {
        if self.tables > 1 {
            self.space();
        } else {
            self.line_break();
        }
    }

    /// ` | ` before every cell of a row but its first.
    fn cell_separator(&mut self) {
        let Some(row) = self.stack.iter_mut().rev().find(|f| f.role == Role::Row) else {
            self.space();
            return;
        };
        row.count += 1;
        if row.count > 1 {
            let kept = self.text.trim_end_matches(' ').len();
            self.text.truncate(kept);
            self.text.push_str(" | ");
        }
    }

    /// `N. ` before an item of an ordered list.
    fn number_item(&mut self) {
        let Some(list) = self
            .stack
            .iter_mut()
            .rev()
            .find(|f| matches!(f.role, Role::List { .. }))
        else {
            return;
        };
        if list.role == (Role::List { ordered: true }) {
            let number = list.count;
            list.count = list.count.saturating_add(1);
            self.text.push_str(&format!("{number}. "));
        }
    }

    /// The kind (and heading level) of the block being collected: the
    /// outermost list or table around it, else the innermost heading,
    /// `<pre>` or quote, else a paragraph.
    fn kind(&self) -> (BlockKind, Option<u8>) {
        if self.containers > 0 {
            let outer = self.stack.iter().find_map(|f| match f.role {
                Role::List { .. } => Some(BlockKind::List),
                Role::Table => Some(BlockKind::Table),
                _ => None,
            });
            return (outer.unwrap_or(BlockKind::Paragraph), None);
        }
        self.stack
            .iter()
            .rev()
            .find_map(|f| match f.role {
                Role::Heading(level) => Some((BlockKind::Heading, Some(level))),
                Role::Pre => Some((BlockKind::Code, None)),
                Role::Quote => Some((BlockKind::Quote, None)),
                _ => None,
            })
            .unwrap_or((BlockKind::Paragraph, None))
    }

    /// Emit the block collected so far, if it holds text.
    fn flush(&mut self) {
        let raw = std::mem::take(&mut self.text);
        let (kind, level) = self.kind();
        let text = tidy(&raw, kind);
        if text.is_empty() || self.cut {
            return;
        }
        if self.budget.pieces == 0 || self.budget.bytes < text.len() {
            self.cut = true;
            self.page.cut = true;
            return;
        }
        self.budget.pieces -= 1;
        self.budget.bytes -= text.len();
        self.page.pieces.push(Piece { kind, level, text });
    }
}

/// For an element HTML closes when another of its name starts: the roles
/// that end the search for the open one.
fn implied_end_scope(name: &str) -> Option<fn(Role) -> bool> {
    match name {
        "p" => Some(|role| role != Role::Inline),
        "li" | "dt" | "dd" => Some(|role| matches!(role, Role::List { .. } | Role::Table)),
        "td" | "th" => Some(|role| matches!(role, Role::Row | Role::Table)),
        "tr" => Some(|role| role == Role::Table),
        _ => None,
    }
}

/// The first number of an ordered list (`start`), 1 by default.
fn first_number(start: &BytesStart<'_>) -> u32 {
    xml::attr(start, "start")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1)
}

/// Characters a reader does not see: control codes, soft hyphens, zero
/// width spaces, word joiners, invisible math operators, byte-order marks.
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}' | '\u{200b}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
        )
}

fn nbsp_as_space(c: char) -> char {
    if c == '\u{a0}' { ' ' } else { c }
}

/// A block's final text: code keeps its lines (trailing spaces and blank
/// lines at either end dropped), a heading is one line, other blocks keep
/// their non-blank lines, trimmed.
fn tidy(raw: &str, kind: BlockKind) -> String {
    match kind {
        BlockKind::Code => {
            let lines: Vec<&str> = raw.lines().map(str::trim_end).collect();
            let first = lines.iter().position(|l| !l.is_empty());
            let last = lines.iter().rposition(|l| !l.is_empty());
            match (first, last) {
                (Some(first), Some(last)) => lines[first..=last].join("\n"),
                _ => String::new(),
            }
        }
        BlockKind::Heading => raw.split_whitespace().collect::<Vec<_>>().join(" "),
        _ => raw
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOMY: Budget = Budget {
        bytes: usize::MAX,
        pieces: usize::MAX,
    };

    fn rows(page: &Page) -> Vec<(BlockKind, Option<u8>, &str)> {
        page.pieces
            .iter()
            .map(|p| (p.kind, p.level, p.text.as_str()))
            .collect()
    }

    #[test]
    fn blocks_of_an_xhtml_chapter() {
        let chapter = r##"<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>Ch &amp; 1</title><style>p { color: red }</style>
<script>var secret = 1;</script></head>
<body>
<section epub:type="chapter">
<h1 class="title">Chapter <span>One</span></h1>
<p>Call me   Ishmael.<a epub:type="noteref" href="#n1">1</a> Some&nbsp;years&#160;ago&#x2014;never
   mind how long.</p>
<p>Line one<br/>line two<br>line three</p>
<h2>Lists</h2>
<ul><li>first <em>item</em></li><li><p>second</p><ol start="3"><li>three</li><li>four</li></ol></li></ul>
<table><caption>Cap</caption><thead><tr><th>Name</th><th>Value</th></tr></thead>
<tbody><tr><td><p>a</p><p>b</p></td><td>1</td></tr></tbody></table>
<blockquote><p>Quoted</p></blockquote>
<pre><code>fn main() {
    x &lt; y;
}</code></pre>
<aside epub:type="footnote" id="n1"><p>1. The note.</p></aside>
<p>so&#xad;ft&#x1;&#x200b; <ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby> <svg><text>no</text></svg>end</p>
<div>Loose text<p>inner</p>tail</div>
</section>
</body>
</html>"##;
        let page = read(chapter, &mut ROOMY.clone());
        assert_eq!(page.title.as_deref(), Some("Ch & 1"));
        assert_eq!(page.error, None);
        use BlockKind::*;
        assert_eq!(
            rows(&page),
            vec![
                (Heading, Some(1), "Chapter One"),
                (
                    Paragraph,
                    None,
                    "Call me Ishmael.1 Some years ago\u{2014}never mind how long."
                ),
                (Paragraph, None, "Line one\nline two\nline three"),
                (Heading, Some(2), "Lists"),
                (List, None, "first item\nsecond\n3. three\n4. four"),
                (Table, None, "Cap\nName | Value\na b | 1"),
                (Quote, None, "Quoted"),
                (Code, None, "fn main() {\n    x < y;\n}"),
                (Paragraph, None, "1. The note."),
                (Paragraph, None, "soft 漢 end"),
                (Paragraph, None, "Loose text"),
                (Paragraph, None, "inner"),
                (Paragraph, None, "tail"),
            ]
        );
    }

    #[test]
    fn broken_xhtml_keeps_the_text_before_the_break() {
        let page = read(
            "<html><body><p>kept</p><p>also <b>kept</b></p></x></body><p a=\"1\" a=\"2\"<<<",
            &mut ROOMY.clone(),
        );
        assert_eq!(page.pieces[0].text, "kept");
        assert_eq!(page.pieces[1].text, "also kept");
        assert!(page.error.is_some(), "{page:?}");
    }

    #[test]
    fn html_void_tags_and_stray_end_tags_are_tolerated() {
        let page = read(
            "<body><p>a<img src='x'>b</span></p><hr><p>c &amp d & e</p></body>",
            &mut ROOMY.clone(),
        );
        assert_eq!(page.error, None);
        let texts: Vec<&str> = page.pieces.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["ab", "c &amp d & e"]);
    }

    #[test]
    fn html_paragraphs_items_and_cells_left_open_close_each_other() {
        let doc = "<body>".to_string()
            + &"<p>para <b>bold".repeat(MAX_DEPTH * 2)
            + "<ul><li>one<li><p>two<li>three</ul><table><tr><td>a<td>b<tr><td>c</table></body>";
        let page = read(&doc, &mut ROOMY.clone());
        assert_eq!(page.pieces.len(), MAX_DEPTH * 2 + 2);
        assert_eq!(page.pieces[1].text, "para bold");
        let tail: Vec<&str> = page.pieces[MAX_DEPTH * 2..]
            .iter()
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(tail, ["one\ntwo\nthree", "a | b\nc"]);
    }

    #[test]
    fn nesting_past_the_bound_only_adds_text() {
        let depth = MAX_DEPTH * 40;
        let doc = format!(
            "<body>{}deep{}<p>after</p></body>",
            "<div><span>".repeat(depth),
            "</span></div>".repeat(depth)
        );
        let page = read(&doc, &mut ROOMY.clone());
        let texts: Vec<&str> = page.pieces.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["deep", "after"]);
    }

    #[test]
    fn the_budget_stops_the_walk() {
        let doc = "<body><p>one</p><p>two</p><p>three</p></body>";
        let mut budget = Budget {
            bytes: 100,
            pieces: 2,
        };
        let page = read(doc, &mut budget);
        assert!(page.cut);
        assert_eq!(page.pieces.len(), 2);
        assert_eq!(budget.pieces, 0);
        assert_eq!(budget.bytes, 100 - 6);
        let mut budget = Budget {
            bytes: 5,
            pieces: 10,
        };
        let page = read(doc, &mut budget);
        assert_eq!(page.pieces.len(), 1);
        assert!(page.cut);
    }
}
