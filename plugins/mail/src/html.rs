//! HTML bodies as the text a mail client shows: tags dropped, character
//! references decoded, nothing of `<head>`, `<style>`, `<script>`, comments
//! or elements hidden with `display:none` (a newsletter's preheader).
//!
//! Layout follows what a reader sees: `<p>`, headings, lists, tables,
//! `<blockquote>` and `<pre>` are paragraphs (a blank line between), `<div>`
//! and `<br>` break lines (webmail writes one `<div>` per line), list items
//! start with `- ` or their number, table cells are joined with ` | `, and
//! the lines of a `<blockquote>` start with `> ` (one `>` per level), so a
//! quoted reply reads as it would in a plain-text message.
//!
//! A small reader of its own: the markup plugin's HTML reader cites source
//! lines, and its crate exports a plugin of its own, so it cannot be linked
//! into this component.

use std::borrow::Cow;

use kebab_plugin_sdk::html_tag::{Tag, read_tag};

use crate::limits::MAX_HTML_DEPTH;

/// Elements whose content is never shown.
const HIDDEN: &[&str] = &[
    "head", "script", "style", "template", "title", "noscript", "svg", "xml", "object", "iframe",
];

/// Elements that never have content or a closing tag.
const VOID: &[&str] = &[
    "br", "hr", "img", "meta", "link", "input", "wbr", "col", "area", "base", "source", "track",
    "embed", "param",
];

/// Elements set apart by a blank line.
const PARAGRAPHS: &[&str] = &[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "dl",
    "table",
    "blockquote",
    "pre",
    "hr",
    "figure",
];

/// Elements that start on a line of their own.
const LINES: &[&str] = &[
    "div",
    "li",
    "tr",
    "dt",
    "dd",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "address",
    "center",
    "form",
    "fieldset",
    "caption",
    "figcaption",
    "details",
    "summary",
    "body",
    "html",
];

/// The text of an HTML body.
pub fn to_text(html: &str) -> String {
    let mut writer = Writer::default();
    let mut open: Vec<Element> = Vec::new();
    let mut pos = 0;
    while pos < html.len() {
        let hidden = open.last().is_some_and(|e| e.content_hidden);
        let rest = &html[pos..];
        let Some(lt) = rest.find('<') else {
            writer.text(rest, hidden);
            break;
        };
        writer.text(&rest[..lt], hidden);
        pos += lt;
        match read_tag(html, pos) {
            Some(tag) => pos = handle_tag(html, &tag, &mut open, &mut writer),
            None => {
                writer.text("<", hidden);
                pos += 1;
            }
        }
    }
    writer.finish()
}

/// What an element does to the layout.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Layout {
    Inline,
    /// Starts on a line of its own.
    Line,
    /// Set apart by blank lines.
    Paragraph,
    /// A list: a paragraph whose items are marked.
    List,
    Quote,
    Pre,
}

fn layout(name: &str) -> Layout {
    match name {
        "blockquote" => Layout::Quote,
        "pre" => Layout::Pre,
        "ul" | "ol" => Layout::List,
        _ if PARAGRAPHS.contains(&name) => Layout::Paragraph,
        _ if LINES.contains(&name) => Layout::Line,
        _ => Layout::Inline,
    }
}

/// An open element.
struct Element {
    /// A hash of its lower-case name, to match its closing tag.
    key: u64,
    layout: Layout,
    /// It was opened where text is shown (its layout counts).
    shown: bool,
    /// Its content is not shown (it or an enclosing element is hidden).
    content_hidden: bool,
    /// The item counter of an `<ol>`.
    counter: Option<u32>,
}

/// FNV-1a of an element name.
fn name_key(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Apply one tag; the offset to go on from (past a skipped element's
/// content for `<script>` and the like).
fn handle_tag(html: &str, tag: &Tag, open: &mut Vec<Element>, writer: &mut Writer) -> usize {
    let name = tag.name.as_str();
    if tag.special || name.is_empty() {
        return tag.end;
    }
    if tag.closing {
        close(name, open, writer);
        return tag.end;
    }
    if HIDDEN.contains(&name) && !tag.self_closing {
        return skip_element(html, tag.end, name);
    }
    let shown = !open.last().is_some_and(|e| e.content_hidden);
    let layout = layout(name);
    if shown {
        open_layout(name, layout, open, writer);
    }
    if !VOID.contains(&name) && !tag.self_closing && open.len() < MAX_HTML_DEPTH {
        open.push(Element {
            key: name_key(name),
            layout,
            shown,
            content_hidden: !shown || is_hidden(&html[tag.attributes.clone()]),
            counter: (name == "ol").then_some(0),
        });
    }
    tag.end
}

/// The layout an opening tag asks for.
fn open_layout(name: &str, layout: Layout, open: &mut [Element], writer: &mut Writer) {
    match (name, layout) {
        ("br", _) => writer.line_break(),
        ("li", _) => {
            writer.breaks(1);
            let counter = open
                .iter_mut()
                .rev()
                .find(|e| e.layout == Layout::List)
                .and_then(|list| list.counter.as_mut());
            writer.bullet = Some(match counter {
                Some(n) => {
                    *n += 1;
                    format!("{n}. ")
                }
                None => "- ".to_string(),
            });
        }
        ("td" | "th", _) => {
            if writer.cells_in_row > 0 {
                writer.separator = true;
            }
            writer.cells_in_row += 1;
        }
        ("tr", _) => {
            writer.breaks(1);
            writer.cells_in_row = 0;
        }
        (_, Layout::Quote) => {
            writer.breaks(2);
            writer.quote_depth += 1;
        }
        (_, Layout::Pre) => {
            writer.breaks(2);
            writer.preformatted += 1;
        }
        (_, Layout::Paragraph | Layout::List) => writer.breaks(2),
        (_, Layout::Line) => writer.breaks(1),
        (_, Layout::Inline) => {}
    }
}

/// Close the innermost open `name` (and what is still open inside it),
/// with the layout of each element that was opened where text is shown.
/// A stray `</p>` or `</br>` acts as browsers read it.
fn close(name: &str, open: &mut Vec<Element>, writer: &mut Writer) {
    let key = name_key(name);
    let Some(at) = open.iter().rposition(|e| e.key == key) else {
        match name {
            "p" => writer.breaks(2),
            "br" => writer.line_break(),
            _ => {}
        }
        return;
    };
    while open.len() > at {
        let Some(element) = open.pop() else {
            break;
        };
        if !element.shown {
            continue;
        }
        match element.layout {
            Layout::Quote => {
                writer.breaks(2);
                writer.quote_depth = writer.quote_depth.saturating_sub(1);
                writer.blank_depth = writer.blank_depth.min(writer.quote_depth);
            }
            Layout::Pre => {
                writer.breaks(2);
                writer.preformatted = writer.preformatted.saturating_sub(1);
            }
            Layout::Paragraph | Layout::List => writer.breaks(2),
            Layout::Line => writer.breaks(1),
            Layout::Inline => {}
        }
    }
}

/// The offset after `</name>` (or the end of the text), for an element
/// whose content is skipped.
fn skip_element(html: &str, from: usize, name: &str) -> usize {
    let mut pos = from;
    while let Some(i) = html[pos..].find("</") {
        let at = pos + i;
        let after = at + 2;
        let candidate = html.get(after..after + name.len());
        if candidate.is_some_and(|c| c.eq_ignore_ascii_case(name)) {
            return html[after..]
                .find('>')
                .map_or(html.len(), |j| after + j + 1);
        }
        pos = after;
    }
    html.len()
}

/// Whether attributes hide the element: `display:none` in its style, or
/// the `hidden` attribute.
fn is_hidden(attributes: &str) -> bool {
    let bytes = attributes.as_bytes();
    let display_none = (0..bytes.len()).any(|i| {
        starts_with_ignore_case(&bytes[i..], b"display") && {
            let rest = bytes[i + 7..].iter().filter(|b| !b.is_ascii_whitespace());
            rest.take(5)
                .map(u8::to_ascii_lowercase)
                .eq(b":none".iter().copied())
        }
    });
    display_none
        || attributes
            .split(|c: char| c.is_whitespace() || c == '/')
            .any(|word| word.eq_ignore_ascii_case("hidden"))
}

fn starts_with_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .get(..needle.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(needle))
}

/// The text being written, with the layout still owed before the next word.
#[derive(Default)]
struct Writer {
    out: String,
    /// Line breaks owed before the next text (2 = a blank line).
    owed: u8,
    /// A space owed before the next word.
    space: bool,
    /// Text was written on the current line.
    line_has_text: bool,
    quote_depth: usize,
    /// The quote depth of a blank line owed: the shallowest depth since the
    /// last text, so the blank line before a quote is not quoted.
    blank_depth: usize,
    /// Inside `<pre>`: whitespace is kept.
    preformatted: usize,
    /// The marker owed to the next list item's text.
    bullet: Option<String>,
    /// Cells opened in the current table row.
    cells_in_row: usize,
    /// A ` | ` owed before the next cell's text.
    separator: bool,
}

impl Writer {
    /// Owe at least `n` line breaks (1: a new line, 2: a blank line).
    fn breaks(&mut self, n: u8) {
        if !self.out.is_empty() {
            self.owed = self.owed.max(n);
        }
        self.space = false;
    }

    /// A `<br>`: one more line break than owed so far (at most a blank
    /// line), so `<br><br>` leaves a blank line.
    fn line_break(&mut self) {
        if !self.out.is_empty() {
            self.owed = (self.owed + 1).min(2);
        }
        self.space = false;
    }

    /// Write the text between tags, unless an open element hides it.
    fn text(&mut self, raw: &str, hidden: bool) {
        if raw.is_empty() || hidden {
            return;
        }
        let decoded = decode_references(raw);
        if self.preformatted > 0 {
            for (i, line) in decoded.split('\n').enumerate() {
                if i > 0 {
                    self.owed = self.owed.max(1);
                    self.flush_breaks();
                }
                self.word(line.trim_end_matches('\r'));
            }
            return;
        }
        if decoded.starts_with(char::is_whitespace) {
            self.space = true;
        }
        let mut words = decoded.split_whitespace().peekable();
        while let Some(word) = words.next() {
            self.word(word);
            if words.peek().is_some() {
                self.space = true;
            }
        }
        if decoded.ends_with(char::is_whitespace) {
            self.space = true;
        }
    }

    /// Write one piece of text with the layout owed before it.
    fn word(&mut self, word: &str) {
        if word.is_empty() {
            return;
        }
        self.flush_breaks();
        if !self.line_has_text {
            for _ in 0..self.quote_depth {
                self.out.push('>');
            }
            if self.quote_depth > 0 {
                self.out.push(' ');
            }
            if let Some(bullet) = self.bullet.take() {
                self.out.push_str(&bullet);
            }
        } else if self.separator {
            self.out.push_str(" | ");
        } else if self.space {
            self.out.push(' ');
        }
        self.separator = false;
        self.space = false;
        self.line_has_text = true;
        self.blank_depth = self.quote_depth;
        self.out.push_str(word);
    }

    fn flush_breaks(&mut self) {
        if self.owed == 0 || self.out.is_empty() {
            self.owed = 0;
            return;
        }
        for i in 0..self.owed {
            if i > 0 {
                // A blank line inside a quote is still quoted.
                for _ in 0..self.blank_depth.min(self.quote_depth) {
                    self.out.push('>');
                }
            }
            self.out.push('\n');
        }
        self.owed = 0;
        self.line_has_text = false;
        self.separator = false;
    }

    fn finish(self) -> String {
        self.out
    }
}

/// Decode character references (`&amp;`, `&#233;`, `&eacute;`, the whole
/// HTML5 set); a `&` that starts none stays as it is. Non-breaking and
/// zero-width spaces become spaces or nothing.
fn decode_references(text: &str) -> Cow<'_, str> {
    if text.is_ascii() && !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest
            .char_indices()
            .take(34)
            .skip(1)
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '#'))
            .filter(|&(_, c)| c == ';')
            .map(|(i, _)| i);
        match end {
            Some(semi) => {
                mail_parser::decoders::html::add_html_token(
                    &mut out,
                    &rest.as_bytes()[..=semi],
                    false,
                );
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(
        out.chars()
            .filter(|c| {
                !matches!(
                    c,
                    '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{FEFF}' | '\u{AD}'
                )
            })
            .map(|c| if c == '\u{A0}' { ' ' } else { c })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_lines_lists_and_tables() {
        let html = "<html><head><title>t</title><style>p{color:red}</style></head>\
            <body><h1>Plan &amp; budget</h1><p>First  paragraph\nwraps.</p>\
            <div>line one</div><div>line two<br>line three</div>\
            <ul><li>apples</li><li>pears</li></ul><ol><li>one</li><li>two</li></ol>\
            <table><tr><th>Item</th><th>Cost</th></tr><tr><td>Tea</td><td>&euro;3</td></tr></table>\
            <script>alert(1)</script><!-- note --><p>caf&eacute; &#54620;&#xAD6D;</p></body></html>";
        assert_eq!(
            to_text(html),
            "Plan & budget\n\nFirst paragraph wraps.\n\nline one\nline two\nline three\n\n\
             - apples\n- pears\n\n1. one\n2. two\n\nItem | Cost\nTea | €3\n\ncafé 한국"
        );
    }

    #[test]
    fn blockquotes_are_quoted_and_hidden_text_dropped() {
        let html = "<div>Sounds good.</div><div><br></div>\
            <div class=\"gmail_quote\"><div>On Mon, Kim wrote:<br></div>\
            <blockquote><div>Lunch at noon?</div><div>Bring &lt;notes&gt;.</div></blockquote></div>\
            <span style=\"display: none; color:#fff\">preheader <b>text</b></span><p hidden>x</p>";
        assert_eq!(
            to_text(html),
            "Sounds good.\n\nOn Mon, Kim wrote:\n\n> Lunch at noon?\n> Bring <notes>."
        );
        assert_eq!(
            to_text("<blockquote><p>a</p><blockquote>b</blockquote><p>c</p></blockquote>d"),
            "> a\n>\n>> b\n>\n> c\n\nd"
        );
    }

    #[test]
    fn broken_markup_keeps_its_text() {
        assert_eq!(to_text("a < b and <b>c</i> & d"), "a < b and c & d");
        assert_eq!(to_text("<p>unclosed <a href=\"x"), "unclosed");
        assert_eq!(
            to_text("<pre>x  = 1\n  y</pre>after"),
            "x  = 1\n  y\n\nafter"
        );
        assert_eq!(to_text(&"<div>".repeat(100_000)), "");
        assert_eq!(to_text("<script>never closed"), "");
    }
}
