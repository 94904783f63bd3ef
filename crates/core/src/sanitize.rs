//! Text that came from outside kebab's control — plugin output, plugin
//! errors and log lines, file names — made safe to print and bounded to
//! store.
//!
//! A plugin or a file name can hold ANSI escapes, carriage returns or
//! newlines that would rewrite the user's terminal or forge report lines.
//! Everything such text passes through on its way to a terminal or a report
//! goes through [`escape_control`]; everything stored from it is cut by
//! [`bounded`].

use std::borrow::Cow;
use std::fmt::Write;

/// Control characters (C0, DEL, C1) written as visible escapes: `\n`, `\r`,
/// `\t`, `\e` for ESC, `\u{…}` for the rest. Text without any is returned
/// as is.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{1b}' => out.push_str("\\e"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Like [`escape_control`] but keeps line breaks, for multi-line text
/// (snippets, answers) shown as it is laid out.
pub fn escape_control_keep_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for line in text.split('\n') {
        out.push_str(&escape_control(line));
        out.push('\n');
    }
    out.pop();
    Cow::Owned(out)
}

/// `text` with control characters escaped, cut to at most `max_bytes`
/// (on a character boundary) with `…` marking the cut.
pub fn bounded(text: &str, max_bytes: usize) -> String {
    let escaped = escape_control(text);
    if escaped.len() <= max_bytes {
        return escaped.into_owned();
    }
    let mut cut = max_bytes.saturating_sub('…'.len_utf8());
    while !escaped.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &escaped[..cut])
}

/// Warnings of one kind shown one by one; the rest are counted in one
/// more line.
pub const MAX_WARNINGS: usize = 20;

/// The first [`MAX_WARNINGS`] of `warnings`, then `… and N more {what}`
/// when there are more (so 200 000 unknown keys print 21 lines).
pub fn summarise_warnings(warnings: impl IntoIterator<Item = String>, what: &str) -> Vec<String> {
    let mut warnings = warnings.into_iter();
    let mut out: Vec<String> = warnings.by_ref().take(MAX_WARNINGS).collect();
    let more = warnings.count();
    if more > 0 {
        out.push(format!("… and {more} more {what} (not listed)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible_escapes() {
        assert_eq!(escape_control("plain ü"), "plain ü");
        assert!(matches!(escape_control("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape_control("a\u{1b}[31mred\r\nforged\u{7}\u{9b}"),
            "a\\e[31mred\\r\\nforged\\u{7}\\u{9b}"
        );
    }

    #[test]
    fn line_breaks_can_be_kept() {
        assert_eq!(
            escape_control_keep_lines("one\ntwo\u{1b}[2J\r\nthree"),
            "one\ntwo\\e[2J\\r\nthree"
        );
        assert_eq!(escape_control_keep_lines("a\nb\n"), "a\nb\n");
    }

    #[test]
    fn bounded_cuts_on_a_character_boundary() {
        assert_eq!(bounded("short", 10), "short");
        let cut = bounded(&"한".repeat(100), 20);
        assert!(cut.len() <= 20, "{cut}");
        assert!(cut.ends_with('…'));
        assert_eq!(bounded("\u{1b}\u{1b}\u{1b}", 100), "\\e\\e\\e");
    }
}
