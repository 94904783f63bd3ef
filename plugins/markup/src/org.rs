//! Org-mode: headlines (`*`, `**`, … with TODO keywords, priorities and
//! tags removed from the title); `#+BEGIN_SRC lang` … `#+END_SRC` and the
//! other `#+BEGIN_x` blocks kept whole; tables (`|` lines) whole; property
//! and logbook drawers and `#+KEYWORD:` lines skipped (`#+TITLE:` names
//! the document); paragraphs and lists by blank lines.

use kebab_plugin_sdk::{BlockKind, Document};

use crate::outline::{Outline, blank, prose_kind, run_end};

/// Keywords a headline may start with.
const TODO_KEYWORDS: &[&str] = &["TODO", "DONE", "NEXT", "WAITING", "CANCELLED", "CANCELED"];

/// Parse Org-mode.
pub fn parse(text: &str) -> Document {
    let mut out = Outline::new(text);
    let lines: Vec<&str> = out.lines().to_vec();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if blank(line) || line.trim_start().starts_with("# ") || line.trim() == "#" {
            i += 1;
            continue;
        }
        if let Some((level, title)) = headline(line) {
            out.heading(level, &title, i, i);
            i += 1;
            continue;
        }
        let trimmed = line.trim_start();
        if let Some(name) = begin(trimmed) {
            let end_marker = format!("#+end_{}", name.to_ascii_lowercase());
            let close = (i + 1..lines.len())
                .find(|&j| lines[j].trim().to_ascii_lowercase() == end_marker)
                .unwrap_or(lines.len() - 1);
            let (kind, lang) = match name.to_ascii_lowercase().as_str() {
                "src" => (BlockKind::Code, src_lang(trimmed)),
                "example" => (BlockKind::Code, None),
                "quote" => (BlockKind::Quote, None),
                _ => (BlockKind::Paragraph, None),
            };
            out.block(kind, i, close, lang);
            i = close + 1;
            continue;
        }
        if let Some(value) = keyword(trimmed, "title") {
            out.title(value);
            i += 1;
            continue;
        }
        if trimmed.starts_with("#+") {
            i += 1;
            continue;
        }
        if drawer_start(trimmed) {
            i = (i + 1..lines.len())
                .find(|&j| lines[j].trim().eq_ignore_ascii_case(":END:"))
                .map_or(i + 1, |j| j + 1);
            continue;
        }
        if trimmed.starts_with('|') {
            let end = run_end(&lines, i, |l| l.trim_start().starts_with('|'));
            out.block(BlockKind::Table, i, end - 1, None);
            i = end;
            continue;
        }
        let end = run_end(&lines, i, |l| {
            !blank(l) && headline(l).is_none() && begin(l.trim_start()).is_none()
        });
        out.block(prose_kind(line), i, end - 1, None);
        i = end;
    }
    out.finish()
}

/// `(level, title)` of a headline: stars at the start of the line, then a
/// space; the title without TODO keyword, `[#A]` priority and `:tags:`.
fn headline(line: &str) -> Option<(u8, String)> {
    let stars = line.chars().take_while(|&c| c == '*').count();
    let rest = line[stars..].strip_prefix(' ')?;
    if stars == 0 {
        return None;
    }
    let mut words: Vec<&str> = rest.split_whitespace().collect();
    if words.first().is_some_and(|w| TODO_KEYWORDS.contains(w)) {
        words.remove(0);
    }
    if words
        .first()
        .is_some_and(|w| w.starts_with("[#") && w.ends_with(']'))
    {
        words.remove(0);
    }
    if words
        .last()
        .is_some_and(|w| w.len() > 2 && w.starts_with(':') && w.ends_with(':'))
    {
        words.pop();
    }
    let title = words.join(" ");
    (!title.is_empty()).then_some((stars.min(255) as u8, title))
}

/// The block name of a `#+BEGIN_name` line.
fn begin(line: &str) -> Option<&str> {
    let lower = line.get(..8)?;
    if !lower.eq_ignore_ascii_case("#+begin_") {
        return None;
    }
    line[8..].split_whitespace().next()
}

/// The language of `#+BEGIN_SRC python :results output`.
fn src_lang(line: &str) -> Option<String> {
    line.split_whitespace()
        .nth(1)
        .filter(|l| !l.starts_with(':'))
        .map(str::to_ascii_lowercase)
}

/// The value of `#+KEY: value`.
fn keyword<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix("#+")?;
    let (name, value) = rest.split_once(':')?;
    name.eq_ignore_ascii_case(key).then_some(value.trim())
}

/// `:PROPERTIES:`, `:LOGBOOK:` and other drawer openings.
fn drawer_start(line: &str) -> bool {
    let t = line.trim();
    t.len() > 2
        && t.starts_with(':')
        && t.ends_with(':')
        && !t.eq_ignore_ascii_case(":END:")
        && t[1..t.len() - 1]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::testing::{path, summary};

    #[test]
    fn headlines_blocks_drawers_and_tables() {
        let src = "\
#+TITLE: Lab notebook
#+STARTUP: overview

Preamble text.

* TODO [#A] Experiments :lab:work:
:PROPERTIES:
:ID: 42
:END:
Ran the centrifuge.

** Code
#+BEGIN_SRC python :results output
print(1)

print(2)
#+END_SRC

| a | b |
|---+---|
| 1 | 2 |

- first
- second
* Results
Done.
";
        let doc = parse(src);
        assert_eq!(doc.title.as_deref(), Some("Lab notebook"));
        use BlockKind::*;
        assert_eq!(
            summary(&doc),
            vec![
                (Paragraph, path(&[]), (4, 4)),
                (Heading, path(&["Experiments"]), (6, 6)),
                (Paragraph, path(&["Experiments"]), (10, 10)),
                (Heading, path(&["Experiments", "Code"]), (12, 12)),
                (Code, path(&["Experiments", "Code"]), (13, 17)),
                (Table, path(&["Experiments", "Code"]), (19, 21)),
                (List, path(&["Experiments", "Code"]), (23, 24)),
                (Heading, path(&["Results"]), (25, 25)),
                (Paragraph, path(&["Results"]), (26, 26)),
            ]
        );
        assert_eq!(doc.blocks[4].lang.as_deref(), Some("python"));
        assert!(doc.blocks[4].text.contains("print(2)"));
    }
}
