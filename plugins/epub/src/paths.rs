//! Member names from the references an EPUB makes: hrefs in the package
//! document, the navigation document and the NCX are relative to the file
//! that holds them, percent-encoded, and may carry a `#fragment`; the ZIP
//! stores plain, root-relative names.

/// The folder holding a member (`OEBPS/text/c1.xhtml` → `OEBPS/text`; a
/// member at the root → the empty string).
pub fn folder(member: &str) -> &str {
    member.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The member an `href` written in a file in `base` (a folder) names: the
/// fragment and query dropped, percent-escapes decoded, `.` and `..`
/// resolved. `None` for a reference to another place (a URL with a scheme,
/// a bare fragment).
pub fn resolve(base: &str, href: &str) -> Option<String> {
    let target = href.split(['#', '?']).next().unwrap_or_default().trim();
    if target.is_empty() || has_scheme(target) {
        return None;
    }
    let decoded = percent_decode(target);
    let joined = match decoded.strip_prefix('/') {
        Some(absolute) => absolute.to_string(),
        None if base.is_empty() => decoded,
        None => format!("{base}/{decoded}"),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Whether a reference starts with a URL scheme (`http:`, `mailto:`).
fn has_scheme(target: &str) -> bool {
    let Some((scheme, _)) = target.split_once(':') else {
        return false;
    };
    scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `%XX` escapes decoded as UTF-8 (invalid sequences replaced); a `%` not
/// followed by two hex digits stays as written.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes
            .get(i + 1..i + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[i], escaped) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_resolve_against_their_folder() {
        assert_eq!(folder("OEBPS/text/c1.xhtml"), "OEBPS/text");
        assert_eq!(folder("content.opf"), "");
        let r = |base, href| resolve(base, href);
        assert_eq!(
            r("OEBPS", "text/c1.xhtml#p3").as_deref(),
            Some("OEBPS/text/c1.xhtml")
        );
        assert_eq!(
            r("OEBPS/text", "../nav.xhtml").as_deref(),
            Some("OEBPS/nav.xhtml")
        );
        assert_eq!(
            r("", "./a%20b%ED%95%9C.xhtml").as_deref(),
            Some("a b한.xhtml")
        );
        assert_eq!(r("OEBPS", "/root.xhtml").as_deref(), Some("root.xhtml"));
        assert_eq!(r("OEBPS", "#note"), None);
        assert_eq!(r("OEBPS", "https://example.com/x.html"), None);
        assert_eq!(r("OEBPS", "../../.."), None);
    }

    #[test]
    fn bad_escapes_stay_as_written() {
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%41%42"), "AB");
    }
}
