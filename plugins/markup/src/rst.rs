//! reStructuredText: section titles by their underline (and optional
//! overline) adornment, levels in order of first appearance as docutils
//! assigns them; directives (`.. code-block:: python` and the rest) and
//! literal blocks (`::`) kept whole with their indented body; paragraphs
//! and lists by blank lines.

use kebab_plugin_sdk::{BlockKind, Document};

use crate::outline::{Outline, blank, prose_kind, run_end};

/// Characters docutils accepts in section adornments.
const ADORNMENT: &str = "=-`:'\"~^_*+#<>.";

/// Directives whose body is source code, kept as a code block.
const CODE_DIRECTIVES: &[&str] = &["code-block", "code", "sourcecode", "literalinclude"];

/// Parse reStructuredText.
pub fn parse(text: &str) -> Document {
    let mut out = Outline::new(text);
    let lines: Vec<&str> = out.lines().to_vec();
    // Adornment styles in order of first use: (character, overlined).
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut level_of = |style: (char, bool)| {
        if !styles.contains(&style) {
            styles.push(style);
        }
        styles.iter().position(|s| *s == style).unwrap_or(0) as u8 + 1
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if blank(line) {
            i += 1;
            continue;
        }
        if let Some((title, c, overlined, used)) = section_title(&lines, i) {
            let level = level_of((c, overlined));
            out.heading(level, title, i, i + used - 1);
            i += used;
            continue;
        }
        if adornment(line).is_some() {
            // A transition (a lone adornment line between paragraphs).
            i += 1;
            continue;
        }
        if let Some(rest) = line.strip_prefix(".. ") {
            let end = indented_end(&lines, i + 1);
            let (name, argument) = directive(rest);
            let kind = match name {
                Some(n) if CODE_DIRECTIVES.contains(&n) => BlockKind::Code,
                _ => BlockKind::Paragraph,
            };
            let lang = (kind == BlockKind::Code)
                .then(|| {
                    argument
                        .filter(|a| !a.is_empty())
                        .map(str::to_ascii_lowercase)
                })
                .flatten();
            out.block(kind, i, end - 1, lang);
            i = end;
            continue;
        }
        let end = run_end(&lines, i, |l| !blank(l));
        out.block(prose_kind(line), i, end - 1, None);
        i = end;
        if lines[end - 1].trim_end().ends_with("::") {
            // A literal block: the indented lines after the paragraph.
            let start = (i..lines.len()).find(|&j| !blank(lines[j])).unwrap_or(i);
            if start < lines.len() && lines[start].starts_with([' ', '\t']) {
                let end = indented_end(&lines, start);
                out.block(BlockKind::Code, start, end - 1, None);
                i = end;
            }
        }
    }
    out.finish()
}

/// The adornment character of a line made of one repeated punctuation
/// character (at least two), if it is one.
fn adornment(line: &str) -> Option<char> {
    let t = line.trim_end();
    let c = t.chars().next()?;
    (t.chars().count() >= 2 && ADORNMENT.contains(c) && t.chars().all(|x| x == c)).then_some(c)
}

/// A section title at line `i`: its text, adornment character, whether it
/// is overlined, and how many lines it takes.
fn section_title<'a>(lines: &[&'a str], i: usize) -> Option<(&'a str, char, bool, usize)> {
    let width = |s: &str| s.trim().chars().count();
    if let Some(c) = adornment(lines[i])
        && let (Some(title), Some(under)) = (lines.get(i + 1), lines.get(i + 2))
        && !blank(title)
        && adornment(title).is_none()
        && adornment(under) == Some(c)
        && width(under) >= width(title)
    {
        return Some((title.trim(), c, true, 3));
    }
    let under = lines.get(i + 1)?;
    let c = adornment(under)?;
    let title = lines[i];
    (!title.starts_with([' ', '\t']) && adornment(title).is_none() && width(under) >= width(title))
        .then(|| (title.trim(), c, false, 2))
}

/// The index after a directive or literal block: every following line
/// that is indented or blank, without trailing blank lines.
fn indented_end(lines: &[&str], start: usize) -> usize {
    run_end(lines, start, |l| blank(l) || l.starts_with([' ', '\t']))
}

/// `name:: argument` of a directive line (after `.. `); `None` for a
/// comment, a target (`_label:`) or a substitution definition.
fn directive(rest: &str) -> (Option<&str>, Option<&str>) {
    match rest.split_once("::") {
        Some((name, argument))
            if !name.is_empty() && !name.starts_with(['_', '|', '[']) && !name.contains(' ') =>
        {
            (Some(name.trim()), Some(argument.trim()))
        }
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::testing::{path, summary};

    #[test]
    fn sections_directives_and_literal_blocks() {
        let src = "\
=========
 Requests
=========

Intro paragraph
spanning two lines.

Install
=======

Use pip::

    pip install requests
    pip list

.. code-block:: python

   import requests

   r = requests.get(url)

Sessions
--------

- one
- two

.. note::
   Sessions keep cookies.

API
===

Text.
";
        let doc = parse(src);
        assert_eq!(doc.title.as_deref(), Some("Requests"));
        use BlockKind::*;
        assert_eq!(
            summary(&doc),
            vec![
                (Heading, path(&["Requests"]), (1, 3)),
                (Paragraph, path(&["Requests"]), (5, 6)),
                (Heading, path(&["Requests", "Install"]), (8, 9)),
                (Paragraph, path(&["Requests", "Install"]), (11, 11)),
                (Code, path(&["Requests", "Install"]), (13, 14)),
                (Code, path(&["Requests", "Install"]), (16, 20)),
                (
                    Heading,
                    path(&["Requests", "Install", "Sessions"]),
                    (22, 23)
                ),
                (List, path(&["Requests", "Install", "Sessions"]), (25, 26)),
                (
                    Paragraph,
                    path(&["Requests", "Install", "Sessions"]),
                    (28, 29)
                ),
                (Heading, path(&["Requests", "API"]), (31, 32)),
                (Paragraph, path(&["Requests", "API"]), (34, 34)),
            ]
        );
        assert_eq!(doc.blocks[5].lang.as_deref(), Some("python"));
        assert!(doc.blocks[5].text.contains("r = requests.get(url)"));
    }

    #[test]
    fn transitions_and_short_underlines_are_not_titles() {
        let doc = parse("Para one.\n\n----------\n\nToo long a title\n===\n");
        assert!(doc.blocks.iter().all(|b| b.kind != BlockKind::Heading));
    }
}
