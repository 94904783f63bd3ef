//! AsciiDoc: section titles `= Title` … `====== Title`; delimited blocks
//! (`----` listing, `....` literal, `|===` table, `____` quote, `====`,
//! `****`, `++++`, `--`) kept whole together with their `[source,lang]`
//! attribute line and `.Title` line; `////` comment blocks and `//` lines
//! dropped; header attributes (`:name: value`) skipped; paragraphs and
//! lists by blank lines.

use kebab_plugin_sdk::{BlockKind, Document};

use crate::outline::{Outline, blank, prose_kind, run_end};

/// Parse AsciiDoc.
pub fn parse(text: &str) -> Document {
    let mut out = Outline::new(text);
    let lines: Vec<&str> = out.lines().to_vec();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if blank(line) || (line.starts_with("//") && !line.starts_with("////")) {
            i += 1;
            continue;
        }
        if let Some((level, title)) = section(line) {
            if level == 1 {
                out.title(title);
            }
            out.heading(level, title, i, i);
            i += 1;
            continue;
        }
        if attribute_entry(line) {
            i += 1;
            continue;
        }
        // Block attribute (`[source,python]`) and title (`.Example`) lines
        // belong to the block that follows.
        let mut start = i;
        let mut lang = None;
        while start < lines.len() && (block_attributes(lines[start]) || block_title(lines[start])) {
            if let Some(l) = source_lang(lines[start]) {
                lang = Some(l);
            }
            start += 1;
        }
        if start >= lines.len() {
            out.block(BlockKind::Paragraph, i, lines.len() - 1, None);
            break;
        }
        if let Some(kind) = delimiter(lines[start]) {
            let fence = lines[start].trim_end();
            let close = (start + 1..lines.len())
                .find(|&j| lines[j].trim_end() == fence)
                .unwrap_or(lines.len() - 1);
            if let Some(kind) = kind {
                let lang = if kind == BlockKind::Code { lang } else { None };
                out.block(kind, i, close, lang);
            }
            i = close + 1;
            continue;
        }
        let end = run_end(&lines, start, |l| !blank(l) && delimiter(l).is_none());
        out.block(prose_kind(lines[start]), i, end.max(start + 1) - 1, None);
        i = end.max(start + 1);
    }
    out.finish()
}

/// `(level, title)` of a section title line: `=` is the document title
/// (level 1), `==` level 2, and so on to six.
fn section(line: &str) -> Option<(u8, &str)> {
    let level = line.chars().take_while(|&c| c == '=').count();
    let title = line[level..].strip_prefix(' ')?;
    ((1..=6).contains(&level) && !title.trim().is_empty()).then_some((level as u8, title.trim()))
}

/// `:name: value` header attribute entries.
fn attribute_entry(line: &str) -> bool {
    line.strip_prefix(':')
        .and_then(|rest| rest.split_once(':'))
        .is_some_and(|(name, _)| !name.is_empty() && !name.contains(' '))
}

/// `[…]` block attribute lines.
fn block_attributes(line: &str) -> bool {
    let t = line.trim_end();
    t.starts_with('[') && t.ends_with(']') && !t.starts_with("[[")
}

/// `.Title` block title lines.
fn block_title(line: &str) -> bool {
    line.strip_prefix('.')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_alphanumeric()))
}

/// The language of `[source,python]`.
fn source_lang(line: &str) -> Option<String> {
    let inner = line.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut parts = inner.split(',').map(str::trim);
    (parts.next()? == "source")
        .then(|| {
            parts
                .next()
                .filter(|l| !l.is_empty())
                .map(str::to_ascii_lowercase)
        })
        .flatten()
}

/// For a block delimiter line, the kind of block it opens (`None` inside
/// for a comment block, which is dropped).
fn delimiter(line: &str) -> Option<Option<BlockKind>> {
    let t = line.trim_end();
    if t == "--" {
        return Some(Some(BlockKind::Paragraph));
    }
    if t == "|===" {
        return Some(Some(BlockKind::Table));
    }
    let c = t.chars().next()?;
    if t.chars().count() < 4 || !t.chars().all(|x| x == c) {
        return None;
    }
    Some(match c {
        '-' | '.' => Some(BlockKind::Code),
        '_' => Some(BlockKind::Quote),
        '=' | '*' | '+' => Some(BlockKind::Paragraph),
        '/' => None,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::testing::{path, summary};

    #[test]
    fn sections_listings_tables_and_comments() {
        let src = "\
= Operator Guide
:toc: left
:author: Ops

Opening paragraph.

== Install

.Install with cargo
[source,bash]
----
cargo install kebab

cargo --version
----

* item one
* item two

////
a comment block
////

=== Tables

|===
| a | b
| c | d
|===

// a line comment
== Appendix

Last words.
";
        let doc = parse(src);
        assert_eq!(doc.title.as_deref(), Some("Operator Guide"));
        use BlockKind::*;
        assert_eq!(
            summary(&doc),
            vec![
                (Heading, path(&["Operator Guide"]), (1, 1)),
                (Paragraph, path(&["Operator Guide"]), (5, 5)),
                (Heading, path(&["Operator Guide", "Install"]), (7, 7)),
                (Code, path(&["Operator Guide", "Install"]), (9, 15)),
                (List, path(&["Operator Guide", "Install"]), (17, 18)),
                (
                    Heading,
                    path(&["Operator Guide", "Install", "Tables"]),
                    (24, 24)
                ),
                (
                    Table,
                    path(&["Operator Guide", "Install", "Tables"]),
                    (26, 29)
                ),
                (Heading, path(&["Operator Guide", "Appendix"]), (32, 32)),
                (Paragraph, path(&["Operator Guide", "Appendix"]), (34, 34)),
            ]
        );
        assert_eq!(doc.blocks[3].lang.as_deref(), Some("bash"));
        assert!(doc.blocks[3].text.contains("cargo --version"));
        assert!(
            !doc.blocks
                .iter()
                .any(|b| b.text.contains("a comment block"))
        );
    }
}
