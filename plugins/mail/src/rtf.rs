//! The text of an RTF body (an Outlook message whose only body is RTF).
//!
//! Outlook's RTF usually wraps another body (MS-OXRTFEX): with `\fromhtml1`
//! the HTML is rebuilt (the text of `{\*\htmltag …}` groups and of the body
//! outside `\htmlrtf` … `\htmlrtf0`) and read as HTML; with `\fromtext` the
//! plain text is what lies outside `\htmlrtf`. Other RTF is read as RTF:
//! destinations (font and colour tables, styles, pictures, fields'
//! instructions, `{\* …}` groups) are skipped, `\par` and `\line` break
//! lines, `\cell` separates table cells, `\'hh` bytes are decoded in the
//! `\ansicpg` code page and `\uN` is a Unicode character (its `\ucN`
//! fallback skipped). Groups nest on an explicit stack.

use crate::codepage;
use crate::html;

/// Groups tracked on the stack; deeper ones share their parent's state.
const MAX_GROUP_DEPTH: usize = 512;

/// Destinations whose text is never shown.
const SKIPPED: &[&str] = &[
    "fonttbl",
    "colortbl",
    "stylesheet",
    "info",
    "pict",
    "object",
    "header",
    "headerl",
    "headerr",
    "headerf",
    "footer",
    "footerl",
    "footerr",
    "footerf",
    "fldinst",
    "listtable",
    "listoverridetable",
    "rsidtbl",
    "generator",
    "xmlnstbl",
    "themedata",
    "colorschememapping",
    "latentstyles",
    "datastore",
    "filetbl",
    "revtbl",
    "bkmkstart",
    "bkmkend",
];

/// What the RTF wraps.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Wrapped {
    Rtf,
    Html,
    Text,
}

/// The state of one group.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// Text here is not shown.
    skip: bool,
    /// Inside `\htmlrtf` … `\htmlrtf0`: RTF-only text of a wrapped body.
    html_rtf: bool,
    /// A `{\*\htmltag …}` group: its text is the wrapped HTML.
    html_tag: bool,
    /// Fallback characters after `\uN` (`\ucN`).
    fallback: usize,
}

/// The text of an RTF document.
pub fn to_text(rtf: &[u8]) -> String {
    let mut reader = Reader::new(rtf);
    reader.run();
    let text = reader.finish();
    match reader.wrapped {
        Wrapped::Html => html::to_text(&text),
        Wrapped::Rtf | Wrapped::Text => text,
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    stack: Vec<Group>,
    /// Groups opened past [`MAX_GROUP_DEPTH`] and not closed yet.
    overflow: usize,
    group: Group,
    /// A `\*` was read: the group's first control word names a
    /// destination to skip unless it is known.
    starred: bool,
    /// At the start of a group (its first control word may be a
    /// destination).
    group_start: bool,
    wrapped: Wrapped,
    code_page: Option<u32>,
    /// Undecoded bytes (`\'hh` and plain bytes) waiting for the code page.
    bytes: Vec<u8>,
    out: String,
    /// Fallback characters still to skip after a `\uN`.
    skip_chars: usize,
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8]) -> Reader<'a> {
        Reader {
            data,
            pos: 0,
            stack: Vec::new(),
            overflow: 0,
            group: Group {
                skip: false,
                html_rtf: false,
                html_tag: false,
                fallback: 1,
            },
            starred: false,
            group_start: false,
            wrapped: Wrapped::Rtf,
            code_page: None,
            bytes: Vec::new(),
            out: String::new(),
            skip_chars: 0,
        }
    }

    fn run(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            match b {
                b'{' => self.open(),
                b'}' => self.close(),
                b'\\' => self.control(),
                b'\r' | b'\n' => {}
                _ => self.byte(b),
            }
        }
    }

    fn open(&mut self) {
        if self.stack.len() < MAX_GROUP_DEPTH {
            self.stack.push(self.group);
        } else {
            self.overflow += 1;
        }
        self.group.html_tag = false;
        self.group_start = true;
        self.starred = false;
        self.skip_chars = 0;
    }

    fn close(&mut self) {
        if self.overflow > 0 {
            self.overflow -= 1;
        } else if let Some(parent) = self.stack.pop() {
            self.group = parent;
        }
        self.group_start = false;
        self.starred = false;
    }

    /// A control word or control symbol after `\`.
    fn control(&mut self) {
        let Some(&next) = self.data.get(self.pos) else {
            return;
        };
        if !next.is_ascii_alphabetic() {
            self.pos += 1;
            self.symbol(next);
            return;
        }
        let start = self.pos;
        while self.data.get(self.pos).is_some_and(u8::is_ascii_alphabetic) && self.pos - start < 32
        {
            self.pos += 1;
        }
        let word = String::from_utf8_lossy(&self.data[start..self.pos]).into_owned();
        let param_start = self.pos;
        if self.data.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        while self.data.get(self.pos).is_some_and(u8::is_ascii_digit) && self.pos - param_start < 11
        {
            self.pos += 1;
        }
        let param = std::str::from_utf8(&self.data[param_start..self.pos])
            .ok()
            .and_then(|p| p.parse::<i64>().ok());
        if self.data.get(self.pos) == Some(&b' ') {
            self.pos += 1;
        }
        self.word(&word, param);
    }

    fn symbol(&mut self, symbol: u8) {
        match symbol {
            b'\'' => {
                let hex = self.data.get(self.pos..self.pos + 2);
                self.pos = (self.pos + 2).min(self.data.len());
                let value = hex
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(value) = value {
                    self.byte(value);
                }
            }
            b'*' => self.starred = true,
            b'~' => self.text("\u{A0}"),
            b'_' => self.text("-"),
            b'\r' | b'\n' => self.text("\n"),
            b'{' | b'}' | b'\\' => self.byte(symbol),
            _ => {}
        }
    }

    fn word(&mut self, word: &str, param: Option<i64>) {
        let destination = std::mem::take(&mut self.group_start);
        let starred = std::mem::take(&mut self.starred);
        match word {
            "fromhtml" => self.wrapped = Wrapped::Html,
            "fromtext" => self.wrapped = Wrapped::Text,
            "ansicpg" => self.code_page = param.and_then(|p| u32::try_from(p).ok()),
            "htmltag" if destination && starred => self.group.html_tag = true,
            "htmlrtf" => self.group.html_rtf = param != Some(0),
            "uc" => self.group.fallback = param.and_then(|p| usize::try_from(p).ok()).unwrap_or(1),
            "u" => {
                if let Some(p) = param {
                    let code = if p < 0 { p + 65_536 } else { p };
                    let c = u32::try_from(code).ok().and_then(char::from_u32);
                    self.text(&c.unwrap_or('\u{FFFD}').to_string());
                    self.skip_chars = self.group.fallback;
                }
            }
            "par" | "line" | "sect" | "page" | "row" => self.text("\n"),
            "tab" => self.text("\t"),
            "cell" => self.text(" | "),
            "emdash" => self.text("—"),
            "endash" => self.text("–"),
            "bullet" => self.text("•"),
            "lquote" => self.text("‘"),
            "rquote" => self.text("’"),
            "ldblquote" => self.text("“"),
            "rdblquote" => self.text("”"),
            _ if destination && (starred || SKIPPED.contains(&word)) => self.group.skip = true,
            _ => {}
        }
    }

    /// Whether text read now belongs to the output.
    fn shown(&self) -> bool {
        if self.group.skip {
            return false;
        }
        match self.wrapped {
            Wrapped::Rtf => true,
            Wrapped::Html => self.group.html_tag || !self.group.html_rtf,
            Wrapped::Text => !self.group.html_rtf,
        }
    }

    /// A byte of text in the code page.
    fn byte(&mut self, b: u8) {
        self.group_start = false;
        if self.skip_chars > 0 {
            self.skip_chars -= 1;
            return;
        }
        if self.shown() {
            self.bytes.push(b);
        }
    }

    /// Text that is already Unicode.
    fn text(&mut self, text: &str) {
        self.group_start = false;
        if self.shown() {
            self.flush_bytes();
            self.out.push_str(text);
        }
    }

    fn flush_bytes(&mut self) {
        if !self.bytes.is_empty() {
            let bytes = std::mem::take(&mut self.bytes);
            self.out.push_str(&codepage::decode(&bytes, self.code_page));
        }
    }

    fn finish(&mut self) -> String {
        self.flush_bytes();
        std::mem::take(&mut self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_rtf_is_read_without_its_tables() {
        let rtf = br"{\rtf1\ansi\ansicpg1252{\fonttbl{\f0 Arial;}}{\colortbl;\red0;}
{\*\generator Riched20;}\pard Caf\'e9 \b opens\b0  at 9.\par
Second line\line third\tab tab \u54620?\u44397?.\par
{\field{\*\fldinst HYPERLINK x}{\fldrslt link text}}}";
        assert_eq!(
            to_text(rtf),
            "Café opens at 9.\nSecond line\nthird\ttab 한국.\nlink text"
        );
    }

    #[test]
    fn wrapped_html_is_rebuilt_and_read_as_html() {
        let rtf = br"{\rtf1\ansi\ansicpg949\fromhtml1 \deff0{\fonttbl{\f0 Arial;}}
{\*\htmltag19 <html>}{\*\htmltag34 <body>}
{\*\htmltag64 <p>}\htmlrtf {\htmlrtf0 Hello\htmlrtf }\htmlrtf0
{\*\htmltag72 </p>}\htmlrtf \par\htmlrtf0 {\*\htmltag64 <p>}\'c7\'d1\'b1\'b9 &amp; more
{\*\htmltag72 </p>}{\*\htmltag27 </body>}{\*\htmltag27 </html>}}";
        assert_eq!(to_text(rtf), "Hello\n\n한국 & more");
    }

    #[test]
    fn unbalanced_and_deep_groups_are_harmless() {
        let deep = format!("{{\\rtf1 {}x{}", "{".repeat(10_000), "}".repeat(20_000));
        assert_eq!(to_text(deep.as_bytes()), "x");
        assert_eq!(to_text(b"{\\rtf1 \\'zz\\u"), "");
    }
}
