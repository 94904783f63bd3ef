//! HTML: `<h1>`–`<h6>` open sections; the text of paragraphs, list items,
//! table rows, quotes and `<pre>` blocks without tags, entities decoded,
//! and nothing of `<script>`, `<style>`, `<template>`, `<head>` or
//! comments. Each block keeps the line structure of its source (one text
//! line per source line, tags blanked out), so its citation is the lines
//! it came from. `<title>` names the document.

use kebab_plugin_sdk::html_tag::{self, Tag, tag_end};
use kebab_plugin_sdk::text::LineIndex;
use kebab_plugin_sdk::{BlockKind, Document};

use crate::outline::Outline;

/// Elements whose content is never text.
const SKIPPED: &[&str] = &["script", "style", "template", "noscript", "svg"];

/// Elements that end the text block before them and start a new one.
const BLOCK_LEVEL: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "ul",
    "ol",
    "li",
    "dl",
    "dt",
    "dd",
    "table",
    "tr",
    "blockquote",
    "pre",
    "hr",
    "br",
    "figure",
    "figcaption",
    "form",
    "body",
    "html",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "details",
    "summary",
];

/// A text block being collected: kind, the byte offset where its text
/// starts, the text so far (newlines kept), and the code language.
struct Open {
    kind: BlockKind,
    start: Option<usize>,
    text: String,
    lang: Option<String>,
    /// The heading level of an `<hN>`.
    level: Option<u8>,
}

impl Open {
    fn new(kind: BlockKind) -> Open {
        Open {
            kind,
            start: None,
            text: String::new(),
            lang: None,
            level: None,
        }
    }
}

/// Parse HTML.
pub fn parse(text: &str) -> Document {
    let mut out = Outline::new(text);
    let index = LineIndex::new(text);
    let mut open = Open::new(BlockKind::Paragraph);
    // Enclosing block elements that set the kind of text inside them.
    let mut context: Vec<BlockKind> = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let Some(lt) = text[pos..].find('<').map(|i| pos + i) else {
            add_text(&mut open, text, pos, text.len());
            break;
        };
        add_text(&mut open, text, pos, lt);
        let Some(tag) = read_tag(text, lt) else {
            add_text(&mut open, text, lt, lt + 1);
            pos = lt + 1;
            continue;
        };
        pos = tag.end;
        if let Some(after) = non_block_tag(&mut out, &mut open, text, lt, &tag) {
            pos = after;
            continue;
        }
        let name = tag.name.as_str();
        flush(&mut out, &index, &mut open);
        let heading =
            name.len() == 2 && name.starts_with('h') && name.as_bytes()[1].is_ascii_digit();
        if tag.closing {
            if !heading {
                context.pop();
            }
        } else if heading {
            open.kind = BlockKind::Heading;
            open.level = Some(name.as_bytes()[1] - b'0');
        } else if name == "pre" {
            let (mut code, after) = pre_block(text, lt, pos);
            flush(&mut out, &index, &mut code);
            pos = after;
            open = Open::new(context.last().copied().unwrap_or(BlockKind::Paragraph));
            continue;
        } else if !matches!(name, "br" | "hr") {
            context.push(match name {
                "ul" | "ol" | "li" | "dl" | "dt" | "dd" => BlockKind::List,
                "table" | "tr" => BlockKind::Table,
                "blockquote" => BlockKind::Quote,
                _ => context.last().copied().unwrap_or(BlockKind::Paragraph),
            });
        }
        if open.kind != BlockKind::Heading {
            open.kind = context.last().copied().unwrap_or(BlockKind::Paragraph);
        }
    }
    flush(&mut out, &index, &mut open);
    out.finish()
}

/// Handle a tag that does not start a block: comments and doctype,
/// `<title>` (names the document), skipped elements (`<script>`, …),
/// table cells (joined with ` | `) and inline tags. The offset to go on
/// from, or `None` for a block-level tag.
fn non_block_tag(
    out: &mut Outline<'_>,
    open: &mut Open,
    text: &str,
    lt: usize,
    tag: &Tag,
) -> Option<usize> {
    let name = tag.name.as_str();
    if tag.special {
        newlines(open, &text[lt..tag.end]);
        return Some(tag.end);
    }
    if (name == "title" || SKIPPED.contains(&name)) && !tag.closing {
        let close = find_close(text, tag.end, name);
        if name == "title" {
            out.title(&decode(&text[tag.end..close.0]));
        }
        newlines(open, &text[lt..close.1]);
        return Some(close.1);
    }
    if matches!(name, "td" | "th") {
        // Cells of a row stay one block, separated like a table row.
        if !tag.closing && open.start.is_some() {
            open.text.push_str(" | ");
        }
        newlines(open, &text[lt..tag.end]);
        return Some(tag.end);
    }
    if !BLOCK_LEVEL.contains(&name) {
        newlines(open, &text[lt..tag.end]);
        return Some(tag.end);
    }
    None
}

/// The code block of a `<pre>` whose tag starts at `lt` and whose content
/// starts at `content`: its text verbatim (inner tags blanked out), its
/// language from a `language-x` class; and the offset after `</pre>`.
fn pre_block(text: &str, lt: usize, content: usize) -> (Open, usize) {
    let close = find_close(text, content, "pre");
    let mut code = Open::new(BlockKind::Code);
    code.lang = code_lang(&text[lt..close.0]);
    let mut inner = content;
    while inner < close.0 {
        let next = text[inner..close.0]
            .find('<')
            .map_or(close.0, |i| inner + i);
        add_text(&mut code, text, inner, next);
        inner = match read_tag(text, next) {
            Some(t) if next < close.0 => {
                newlines(&mut code, &text[next..t.end]);
                t.end
            }
            _ => next + 1,
        };
    }
    (code, close.1)
}

/// The tag at `lt`, when it is one and ends (an unterminated `<name` is
/// text here, so the lines after it keep their place).
fn read_tag(text: &str, lt: usize) -> Option<Tag> {
    html_tag::read_tag(text, lt).filter(|tag| tag.terminated)
}

/// `(start of </name>, end of it)` after `from`; the text's end if it
/// never closes.
fn find_close(text: &str, from: usize, name: &str) -> (usize, usize) {
    let lower = text[from..].to_ascii_lowercase();
    let needle = format!("</{name}");
    match lower.find(&needle) {
        Some(i) => {
            let start = from + i;
            let end = tag_end(text, start + needle.len()).unwrap_or(text.len());
            (start, end)
        }
        None => (text.len(), text.len()),
    }
}

/// Append the text of `text[from..to]` (entities decoded) to the block;
/// the block starts at its first non-blank character.
fn add_text(open: &mut Open, text: &str, from: usize, to: usize) {
    let piece = &text[from..to];
    if open.start.is_none() {
        let Some(first) = piece.find(|c: char| !c.is_whitespace()) else {
            return;
        };
        open.start = Some(from + first);
        open.text.push_str(&decode(&piece[first..]));
        return;
    }
    open.text.push_str(&decode(piece));
}

/// Keep the line breaks of markup that is dropped, so text lines stay on
/// their source lines.
fn newlines(open: &mut Open, markup: &str) {
    if open.start.is_some() {
        open.text
            .extend(std::iter::repeat_n('\n', markup.matches('\n').count()));
    }
}

/// Emit the collected block (if it holds text) and start an empty one of
/// the same kind.
fn flush(out: &mut Outline<'_>, index: &LineIndex, open: &mut Open) {
    let next = Open::new(if open.kind == BlockKind::Heading {
        BlockKind::Paragraph
    } else {
        open.kind
    });
    let done = std::mem::replace(open, next);
    let Some(start) = done.start else {
        return;
    };
    let first = index.line_of(start) as usize - 1;
    let text: String = done
        .text
        .trim_end()
        .lines()
        .map(|l| {
            if done.kind == BlockKind::Code {
                l.trim_end().to_string()
            } else {
                l.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    if done.kind == BlockKind::Heading {
        let title = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let last = first + text.lines().count().max(1) - 1;
        out.heading_text(done.level.unwrap_or(1), &title, first, last, text);
    } else {
        out.block_text(done.kind, first, text, done.lang);
    }
}

/// `language-x` / `lang-x` in a `<pre>` (or its `<code>`) class.
fn code_lang(markup: &str) -> Option<String> {
    let lower = markup.to_ascii_lowercase();
    ["language-", "lang-"].iter().find_map(|prefix| {
        let at = lower.find(prefix)? + prefix.len();
        let lang: String = lower[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '_'))
            .collect();
        (!lang.is_empty()).then_some(lang)
    })
}

/// Decode character references: the common named ones and numeric ones.
fn decode(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::testing::{path, summary_with_text};

    #[test]
    fn sections_text_without_tags_and_source_lines() {
        let src = "\
<!DOCTYPE html>
<html>
<head>
  <title>Field notes</title>
  <style>p { color: red }</style>
  <script>var secret = 1;</script>
</head>
<body>
<h1>Birds &amp; <em>bats</em></h1>
<p>Swifts sleep
   on the wing.</p>
<!-- a comment -->
<h2>Lists</h2>
<ul>
  <li>one</li>
  <li>two &lt;3</li>
</ul>
<pre class=\"language-python\">x = 1
if x &gt; 0:
    print(x)</pre>
<h2>Table</h2>
<table><tr><td>a</td><td>b</td></tr></table>
</body>
</html>
";
        let doc = parse(src);
        assert_eq!(doc.title.as_deref(), Some("Field notes"));
        use BlockKind::*;
        let row = |kind, p: &[&str], lines, text: &str| ((kind, path(p), lines), text.to_string());
        let birds = ["Birds & bats"];
        let lists = ["Birds & bats", "Lists"];
        let table = ["Birds & bats", "Table"];
        assert_eq!(
            summary_with_text(&doc),
            vec![
                row(Heading, &birds, (9, 9), "Birds & bats"),
                row(Paragraph, &birds, (10, 11), "Swifts sleep\non the wing."),
                row(Heading, &lists, (13, 13), "Lists"),
                row(List, &lists, (15, 15), "one"),
                row(List, &lists, (16, 16), "two <3"),
                row(Code, &lists, (18, 20), "x = 1\nif x > 0:\n    print(x)"),
                row(Heading, &table, (21, 21), "Table"),
                row(Table, &table, (22, 22), "a | b"),
            ]
        );
        assert_eq!(doc.blocks[5].lang.as_deref(), Some("python"));
        assert!(
            !doc.blocks
                .iter()
                .any(|b| b.text.contains("secret") || b.text.contains("color"))
        );
    }
}
