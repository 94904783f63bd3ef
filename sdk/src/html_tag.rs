//! HTML tags read by hand, without a DOM: what a plugin turning HTML into
//! text needs to step over markup (the markup plugin's HTML, mail bodies).
//! Forgiving as browsers are: a `<` not followed by a letter, `/` and a
//! letter, `!` or `?` is text; quoted attribute values may hold `>`.

use std::ops::Range;

/// A tag read at `<`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// Lower-case element name (empty for comments and declarations).
    pub name: String,
    /// `</name>`.
    pub closing: bool,
    /// `<name … />`.
    pub self_closing: bool,
    /// A comment, `<!DOCTYPE …>`, `<![if …]>` or processing instruction.
    pub special: bool,
    /// Where its attributes are in the text (after the name, before `>`).
    pub attributes: Range<usize>,
    /// The offset after the tag.
    pub end: usize,
    /// It ends with `>`; an unterminated tag runs to the end of the text,
    /// as browsers read it.
    pub terminated: bool,
}

/// The tag starting at `lt` (where `html` has a `<`), or `None` when the
/// `<` is plain text.
pub fn read_tag(html: &str, lt: usize) -> Option<Tag> {
    let rest = &html[lt..];
    if let Some(comment) = rest.strip_prefix("<!--") {
        let end = comment.find("-->").map(|i| lt + 4 + i + 3);
        return Some(special(html, end));
    }
    if rest.starts_with("<!") || rest.starts_with("<?") {
        let end = rest.find('>').map(|i| lt + i + 1);
        return Some(special(html, end));
    }
    let closing = rest.starts_with("</");
    let name_start = lt + if closing { 2 } else { 1 };
    let name_len = html.as_bytes()[name_start..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b':' | b'_'))
        .count();
    let name = html[name_start..name_start + name_len].to_ascii_lowercase();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let name_end = name_start + name.len();
    let (end, attributes, terminated) = match tag_end(html, name_end) {
        Some(end) => (end, name_end..end - 1, true),
        None => (html.len(), name_end..html.len(), false),
    };
    Some(Tag {
        closing,
        self_closing: html[attributes.clone()].trim_end().ends_with('/'),
        name,
        special: false,
        attributes,
        end,
        terminated,
    })
}

/// A comment or declaration ending at `end` (the text's end when `None`).
fn special(html: &str, end: Option<usize>) -> Tag {
    let at = end.unwrap_or(html.len());
    Tag {
        name: String::new(),
        closing: false,
        self_closing: false,
        special: true,
        attributes: at..at,
        end: at,
        terminated: end.is_some(),
    }
}

/// The offset after the `>` that ends a tag, skipping quoted attribute
/// values; `None` when the tag never ends.
pub fn tag_end(html: &str, from: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in html[from..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(from + i + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_comments_and_plain_text() {
        let html = r#"a < b <P class="x>y" /><!-- c --></o:p><br"#;
        assert_eq!(read_tag(html, 2), None, "`< ` is text");
        let p = read_tag(html, 6).unwrap();
        assert_eq!(
            (p.name.as_str(), p.closing, p.self_closing),
            ("p", false, true)
        );
        assert_eq!(&html[p.attributes.clone()], r#" class="x>y" /"#);
        assert!(p.terminated);
        let comment = read_tag(html, p.end).unwrap();
        assert!(comment.special && comment.terminated);
        let close = read_tag(html, comment.end).unwrap();
        assert_eq!((close.name.as_str(), close.closing), ("o:p", true));
        let open = read_tag(html, close.end).unwrap();
        assert_eq!(
            (open.name.as_str(), open.terminated, open.end),
            ("br", false, html.len())
        );
    }
}
