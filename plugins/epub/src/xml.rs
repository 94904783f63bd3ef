//! What every XML part of an EPUB is read with: a lenient quick-xml reader
//! (real books hold unmatched end tags and stray ampersands), names compared
//! without their namespace prefix, attributes and entity references
//! resolved from fixed tables only — entities a document declares in its
//! DTD are never expanded, so an entity bomb stays inert text.

use quick_xml::Reader;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::QName;

/// The most characters a title or metadata value keeps.
pub const MAX_LABEL_CHARS: usize = 1_000;

/// A reader over `text` that tolerates what real-world XHTML gets wrong:
/// end tags that match no start tag, `&` not starting a reference.
pub fn reader(text: &str) -> Reader<&[u8]> {
    let mut reader = Reader::from_str(text);
    let config = reader.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    config.allow_dangling_amp = true;
    config.check_comments = false;
    reader
}

/// The local part of an element or attribute name (`dc:title` → `title`).
pub fn local(name: QName<'_>) -> &str {
    let full = name.0;
    full.rsplit_once(':').map_or(full, |(_, local)| local)
}

/// Whether the element's local name is `expected`, ignoring ASCII case.
pub fn is(start: &BytesStart<'_>, expected: &str) -> bool {
    local(start.name()).eq_ignore_ascii_case(expected)
}

/// The value of the attribute whose local name is `name` (any prefix, or
/// none), references resolved; `None` when absent.
pub fn attr(start: &BytesStart<'_>, name: &str) -> Option<String> {
    attrs(start)
        .find(|a| local(a.key).eq_ignore_ascii_case(name))
        .map(|a| value(&a))
}

/// The value of a namespaced attribute (`epub:type`, `opf:role`) whose local
/// name is `name`: an unprefixed attribute of that name is another one.
pub fn prefixed_attr(start: &BytesStart<'_>, name: &str) -> Option<String> {
    attrs(start)
        .find(|a| a.key.0.contains(':') && local(a.key).eq_ignore_ascii_case(name))
        .map(|a| value(&a))
}

fn attrs<'a>(start: &'a BytesStart<'_>) -> impl Iterator<Item = Attribute<'a>> {
    let mut all = start.html_attributes();
    all.with_checks(false);
    all.filter_map(Result::ok)
}

fn value(attribute: &Attribute<'_>) -> String {
    attribute
        .normalized_value_with(quick_xml::XmlVersion::Implicit1_0, 1, entity)
        .map_or_else(|_| attribute.value.to_string(), |v| v.into_owned())
}

/// The replacement of a named entity: XML's five and HTML's named
/// character references.
fn entity(name: &str) -> Option<&'static str> {
    quick_xml::escape::resolve_html5_entity(name)
}

/// Append what a reference stands for: its character, or the reference
/// itself as written when it names nothing known.
pub fn push_reference(out: &mut String, reference: &BytesRef<'_>) {
    if let Ok(Some(c)) = reference.resolve_char_ref() {
        out.push(c);
    } else if let Some(text) = entity(reference) {
        out.push_str(text);
    } else {
        out.push('&');
        out.push_str(reference);
        out.push(';');
    }
}

/// The text inside the element whose start tag was just read, up to its
/// end tag, whitespace collapsed and cut at [`MAX_LABEL_CHARS`].
pub fn inner_text(reader: &mut Reader<&[u8]>) -> Result<String, quick_xml::Error> {
    let mut text = String::new();
    let mut depth = 0usize;
    loop {
        let event = reader.read_event()?;
        let full = text.len() > MAX_LABEL_CHARS * 4;
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) if depth == 0 => break,
            Event::End(_) => depth -= 1,
            Event::Eof => break,
            _ if full => {}
            Event::Text(t) => text.push_str(&t.xml10_content()),
            Event::CData(t) => text.push_str(&t.xml10_content()),
            Event::GeneralRef(r) => push_reference(&mut text, &r),
            _ => {}
        }
    }
    Ok(collapse(&text))
}

/// Whitespace runs made one space, ends trimmed, cut at
/// [`MAX_LABEL_CHARS`] characters.
pub fn collapse(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    match joined.char_indices().nth(MAX_LABEL_CHARS) {
        Some((cut, _)) => joined[..cut].to_string(),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_start(xml: &str) -> (Reader<&[u8]>, BytesStart<'_>) {
        let mut r = reader(xml);
        loop {
            if let Ok(Event::Start(s)) = r.read_event() {
                return (r, s);
            }
        }
    }

    #[test]
    fn names_attributes_and_text_are_read_without_prefixes() {
        let xml = r#"<dc:title opf:file-as="T &amp; U" id='x'>  The &mdash; &#x41;&unknown;
            <b>bold</b>  &amp;  end</dc:title>"#;
        let (mut r, start) = first_start(xml);
        assert!(is(&start, "TITLE"));
        assert_eq!(attr(&start, "id").as_deref(), Some("x"));
        assert_eq!(prefixed_attr(&start, "file-as").as_deref(), Some("T & U"));
        assert_eq!(prefixed_attr(&start, "id"), None);
        assert_eq!(inner_text(&mut r).unwrap(), "The — A&unknown; bold & end");
    }

    #[test]
    fn collapse_cuts_long_labels() {
        let long = "가".repeat(MAX_LABEL_CHARS + 5);
        assert_eq!(collapse(&long).chars().count(), MAX_LABEL_CHARS);
        assert_eq!(collapse(" a \n b "), "a b");
    }
}
