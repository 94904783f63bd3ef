//! Which files a plugin being installed would take from the plugins already
//! there. Installed plugins route before built-in ones, so a plugin whose
//! patterns claim another plugin's files silently takes them; install asks
//! for consent first (see `install::install`).
//!
//! Globs are compared on the names they are written for: each pattern's
//! *examples* (its literal text, each `*` or `**` filled, a class by one
//! character it admits, one name per `{a,b}` alternative). A new plugin
//! takes an existing pattern when it claims one of that pattern's examples
//! (a file anywhere in the tree with that name, for a name pattern: `*`,
//! `**`, `*.{md,txt}`, `docs/**` take `*.md`), or when that pattern claims
//! one of the new plugin's examples (`notes.md`, `README*.md` are inside
//! `*.md`). Corner files two unrelated globs share (`Dockerfile.*` and
//! `*.csv` both claim `Dockerfile.csv`) are not a take-over.

use crate::patterns::{Patterns, glob};
use crate::runtime::LoadError;

/// Most examples one pattern expands to (brace alternatives multiply).
const MAX_EXAMPLES: usize = 64;

/// The characters tried first for a `[…]` class (then the class's own).
const CLASS_CANDIDATES: &str = "xa0_.-";

/// The names (paths, for a pattern with `/`) `pattern` is written for, with
/// each `*` / `**` run filled by `filler`.
pub fn examples(pattern: &str, filler: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = vec![String::new()];
    let mut i = 0;
    let push = |out: &mut Vec<String>, piece: &str| {
        for s in out.iter_mut() {
            s.push_str(piece);
        }
    };
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() => {
                push(&mut out, &chars[i + 1].to_string());
                i += 2;
            }
            '*' => {
                while i < chars.len() && chars[i] == '*' {
                    i += 1;
                }
                push(&mut out, filler);
            }
            '?' => {
                push(&mut out, "x");
                i += 1;
            }
            '[' => match class_end(&chars, i) {
                Some(end) => {
                    let body: String = chars[i + 1..end].iter().collect();
                    push(&mut out, &class_member(&body).to_string());
                    i = end + 1;
                }
                None => {
                    push(&mut out, "[");
                    i += 1;
                }
            },
            '{' => match brace_end(&chars, i) {
                Some(end) => {
                    let body: String = chars[i + 1..end].iter().collect();
                    let alternatives: Vec<String> = split_top_level(&body)
                        .iter()
                        .flat_map(|alt| examples(alt, filler))
                        .collect();
                    out = out
                        .iter()
                        .flat_map(|prefix| alternatives.iter().map(move |a| format!("{prefix}{a}")))
                        .take(MAX_EXAMPLES)
                        .collect();
                    i = end + 1;
                }
                None => {
                    push(&mut out, "{");
                    i += 1;
                }
            },
            c => {
                push(&mut out, &c.to_string());
                i += 1;
            }
        }
    }
    out
}

/// The index of the `]` closing the class opened at `open` (a `]` right
/// after `[`, `[!` or `[^` is a member).
fn class_end(chars: &[char], open: usize) -> Option<usize> {
    let mut j = open + 1;
    if matches!(chars.get(j), Some('!' | '^')) {
        j += 1;
    }
    if chars.get(j) == Some(&']') {
        j += 1;
    }
    (j..chars.len()).find(|&k| chars[k] == ']')
}

/// The index of the `}` closing the alternatives opened at `open`.
fn brace_end(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0;
    for (k, c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// `a,b{c,d}` → `a`, `b{c,d}`.
fn split_top_level(body: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0;
    for c in body.chars() {
        match c {
            ',' if depth == 0 => parts.push(String::new()),
            _ => {
                depth += match c {
                    '{' => 1,
                    '}' => -1,
                    _ => 0,
                };
                if let Some(last) = parts.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    parts
}

/// One character the class `[body]` admits (`x` when none of the tried ones
/// does).
fn class_member(body: &str) -> char {
    let Ok(matcher) = glob(&format!("[{body}]")).map(|g| g.compile_matcher()) else {
        return 'x';
    };
    CLASS_CANDIDATES
        .chars()
        .chain(body.chars())
        .find(|c| *c != '/' && matcher.is_match(c.to_string()))
        .unwrap_or('x')
}

/// The patterns of `theirs` that a plugin claiming `mine` would take files
/// from (see the module comment).
pub fn taken(mine: &[String], theirs: &[String]) -> Result<Vec<String>, LoadError> {
    let claims = Patterns::new(mine).map_err(LoadError::BadInfo)?;
    let my_examples: Vec<String> = mine.iter().flat_map(|p| examples(p, "x")).collect();
    let my_path_patterns: Vec<&String> = mine.iter().filter(|p| p.contains('/')).collect();
    let mut out = Vec::new();
    for pattern in theirs {
        let theirs_alone =
            Patterns::new(std::slice::from_ref(pattern)).map_err(LoadError::BadInfo)?;
        let claims_theirs = |example: &String| {
            if pattern.contains('/') {
                return claims.matches(example);
            }
            claims.matches(example)
                || claims.matches(&format!("x/{example}"))
                || my_path_patterns.iter().any(|mine| {
                    examples(mine, example).iter().any(|path| {
                        path.rsplit('/').next() == Some(example.as_str()) && claims.matches(path)
                    })
                })
        };
        if examples(pattern, "x").iter().any(claims_theirs)
            || my_examples.iter().any(|e| theirs_alone.matches(e))
        {
            out.push(pattern.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken_from(mine: &[&str], theirs: &[&str]) -> Vec<String> {
        let v = |s: &[&str]| s.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        taken(&v(mine), &v(theirs)).unwrap()
    }

    #[test]
    fn examples_fill_wildcards_classes_and_alternatives() {
        assert_eq!(examples("*.md", "x"), ["x.md"]);
        assert_eq!(examples("**/*.{md,txt}", "x"), ["x/x.md", "x/x.txt"]);
        assert_eq!(examples("*.[!a-c]d", "x"), ["x.xd"]);
        assert_eq!(examples("docs/**", "a.md"), ["docs/a.md"]);
        assert_eq!(examples(r"a\*b?", "x"), ["a*bx"]);
    }

    #[test]
    fn supersets_and_slices_of_a_plugins_files_are_taken() {
        let markdown = ["*.md", "*.markdown"];
        for mine in [
            &["*"][..],
            &["**"],
            &["**/*"],
            &["*.*"],
            &["*.md"],
            &["*.MD"],
            &["*.M[dD]"],
            &["**/*.md"],
            &["docs/**"],
            &["notes/*.md"],
            &["*.{md,txt}"],
            &["?*"],
            &["[!.]*"],
            &["*.m*"],
            &["README.md"],
            &["README*.md"],
            &["*.csv", "*.markdown"],
        ] {
            assert!(
                !taken_from(mine, &markdown).is_empty(),
                "{mine:?} takes markdown files"
            );
        }
        assert_eq!(
            taken_from(&["*.markdown"], &markdown),
            ["*.markdown"],
            "only the pattern it overlaps is named"
        );
        assert_eq!(
            taken_from(&["*"], &["deploy/*.yaml"]),
            ["deploy/*.yaml"],
            "path patterns too"
        );
    }

    #[test]
    fn unrelated_patterns_take_nothing() {
        let code = [
            "*.rs",
            "*.h",
            "Dockerfile",
            "Dockerfile.*",
            "requirements.txt",
        ];
        for mine in [
            &["*.hostile"][..],
            &["*.csv", "*.tsv"],
            &["*.ipynb"],
            &["*.h0", "*.h1"],
            &["*.mdx"],
            &[],
        ] {
            assert!(taken_from(mine, &code).is_empty(), "{mine:?}");
            assert!(taken_from(mine, &["*.md"]).is_empty(), "{mine:?}");
        }
        assert!(taken_from(&["docs/*.txt"], &["*.md"]).is_empty());
        assert_eq!(taken_from(&["*.txt"], &code), ["requirements.txt"]);
    }
}
