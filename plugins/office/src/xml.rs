//! A bounded pull reader over one XML part (a member of an Office Open XML
//! or OpenDocument package, or a flat XML file).
//!
//! It hands out element openings, closings and text, with entity
//! references resolved — only the five predefined ones and character
//! references: entities a DTD declares are never expanded, so a "billion
//! laughs" part costs nothing. Elements nested deeper than
//! [`MAX_XML_DEPTH`] are skipped whole (iteratively, never recursively) and
//! the skip is remembered so the caller can log it.

use std::borrow::Cow;

use kebab_plugin_sdk::PluginError;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use crate::limits::MAX_XML_DEPTH;

/// One step through an XML part.
pub enum Node<'a> {
    /// An element opens (an empty element opens and closes at once: a
    /// [`Node::Close`] follows).
    Open(BytesStart<'a>),
    /// The innermost open element closes.
    Close,
    /// Character data, entity references resolved.
    Text(Cow<'a, str>),
}

/// A pull reader over one XML text.
pub struct XmlCursor<'a> {
    reader: Reader<&'a [u8]>,
    part: &'a str,
    depth: usize,
    close_pending: bool,
    skipped_deep: bool,
}

impl<'a> XmlCursor<'a> {
    /// A reader over `text`, the part named `part` (for error messages).
    pub fn new(text: &'a str, part: &'a str) -> XmlCursor<'a> {
        let mut reader = Reader::from_str(text);
        reader.config_mut().check_end_names = false;
        XmlCursor {
            reader,
            part,
            depth: 0,
            close_pending: false,
            skipped_deep: false,
        }
    }

    /// Whether some content was nested too deeply and skipped.
    pub fn skipped_deep(&self) -> bool {
        self.skipped_deep
    }

    /// The number of elements open now.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The next node, or `None` at the end of the text.
    pub fn next_node(&mut self) -> Result<Option<Node<'a>>, PluginError> {
        if self.close_pending {
            self.close_pending = false;
            self.depth = self.depth.saturating_sub(1);
            return Ok(Some(Node::Close));
        }
        loop {
            match self.read()? {
                Event::Start(e) => {
                    if self.depth >= MAX_XML_DEPTH {
                        self.skipped_deep = true;
                        self.skip_levels(1)?;
                        continue;
                    }
                    self.depth += 1;
                    return Ok(Some(Node::Open(e)));
                }
                Event::Empty(e) => {
                    if self.depth >= MAX_XML_DEPTH {
                        self.skipped_deep = true;
                        continue;
                    }
                    self.depth += 1;
                    self.close_pending = true;
                    return Ok(Some(Node::Open(e)));
                }
                Event::End(_) => {
                    if self.depth == 0 {
                        continue;
                    }
                    self.depth -= 1;
                    return Ok(Some(Node::Close));
                }
                Event::Text(t) => return Ok(Some(Node::Text(t.xml10_content()))),
                Event::CData(c) => return Ok(Some(Node::Text(c.xml10_content()))),
                Event::GeneralRef(r) => {
                    if let Some(text) = resolve_reference(&r.into_inner()) {
                        return Ok(Some(Node::Text(Cow::Owned(text))));
                    }
                }
                Event::Eof => return Ok(None),
                Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
            }
        }
    }

    /// Skip the rest of the element whose [`Node::Open`] was just read, its
    /// closing included.
    pub fn skip(&mut self) -> Result<(), PluginError> {
        if self.close_pending {
            self.close_pending = false;
        } else {
            self.skip_levels(1)?;
        }
        self.depth = self.depth.saturating_sub(1);
        Ok(())
    }

    /// The text inside the element just opened, its markup dropped, read to
    /// its closing.
    pub fn text_content(&mut self) -> Result<String, PluginError> {
        let mut out = String::new();
        let floor = self.depth;
        while self.depth >= floor {
            match self.next_node()? {
                Some(Node::Text(t)) => out.push_str(&t),
                Some(_) => {}
                None => break,
            }
        }
        Ok(out)
    }

    /// Read past `levels` open elements' closings without reporting them.
    fn skip_levels(&mut self, mut levels: usize) -> Result<(), PluginError> {
        while levels > 0 {
            match self.read()? {
                Event::Start(_) => levels += 1,
                Event::End(_) => levels -= 1,
                Event::Eof => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }

    fn read(&mut self) -> Result<Event<'a>, PluginError> {
        self.reader.read_event().map_err(|e| {
            PluginError::Malformed(format!(
                "bad XML in {} near byte {}: {e}",
                self.part,
                self.reader.buffer_position()
            ))
        })
    }
}

/// The text of an XML part's bytes: UTF-16 when it starts with a UTF-16
/// byte-order mark (the packaging conventions allow it), else UTF-8
/// (a byte-order mark dropped, invalid sequences replaced).
pub fn decode(bytes: &[u8]) -> String {
    let (text, _) = match bytes {
        [0xFF, 0xFE, rest @ ..] => encoding_rs::UTF_16LE.decode_without_bom_handling(rest),
        [0xFE, 0xFF, rest @ ..] => encoding_rs::UTF_16BE.decode_without_bom_handling(rest),
        [0xEF, 0xBB, 0xBF, rest @ ..] => encoding_rs::UTF_8.decode_without_bom_handling(rest),
        _ => encoding_rs::UTF_8.decode_without_bom_handling(bytes),
    };
    text.into_owned()
}

/// The text of a predefined entity or character reference (`amp`, `#x41`);
/// `None` for anything else (entities declared in a DTD are never
/// expanded).
fn resolve_reference(name: &str) -> Option<String> {
    let text = match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            return char::from_u32(code).map(String::from);
        }
    };
    Some(text.to_string())
}

/// The local name of an element (`p` for `w:p`).
pub fn local<'b>(e: &'b BytesStart<'_>) -> &'b str {
    let name = e.name().into_inner();
    name.rsplit(':').next().unwrap_or(name)
}

/// The value of the attribute whose local name is `name` (any prefix),
/// references resolved.
pub fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.local_name().into_inner() == name)
        .map(|a| value(&a))
}

/// The value of the namespaced attribute (one with a prefix) whose local
/// name is `name`: `r:id`, where the element has a plain `id` too.
pub fn prefixed_attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.prefix().is_some() && a.key.local_name().into_inner() == name)
        .map(|a| value(&a))
}

/// An attribute's value, normalised and with references resolved (the
/// raw value when it holds a malformed reference).
fn value(a: &Attribute<'_>) -> String {
    a.normalized_value(XmlVersion::Implicit1_0)
        .map(Cow::into_owned)
        .unwrap_or_else(|_| a.value.to_string())
}

/// Whether the element `name` opening directly inside an
/// `mc:AlternateContent` (whose branch-taken flag is `taken`) is a branch
/// to skip: the first `mc:Choice` or `mc:Fallback` is read (and `taken`
/// set), later ones are renderings of the same content.
pub fn skips_alternate(taken: &mut bool, name: &str) -> bool {
    if !matches!(name, "Choice" | "Fallback") {
        return false;
    }
    std::mem::replace(taken, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(xml: &str) -> (Vec<String>, bool) {
        let mut cursor = XmlCursor::new(xml, "test.xml");
        let mut out = Vec::new();
        while let Some(node) = cursor.next_node().unwrap() {
            match node {
                Node::Open(e) => out.push(format!("<{}>", local(&e))),
                Node::Close => out.push("/".into()),
                Node::Text(t) => out.push(t.into_owned()),
            }
        }
        (out, cursor.skipped_deep())
    }

    #[test]
    fn references_resolve_but_declared_entities_do_not_expand() {
        let xml = r#"<!DOCTYPE r [<!ENTITY lol "lololol">]><w:r>a&amp;b&#x41;&#66;&lol;</w:r>"#;
        let (nodes, _) = texts(xml);
        assert_eq!(nodes.concat(), "<r>a&bAB/");
    }

    #[test]
    fn parts_decode_from_utf8_or_utf16() {
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("<a>한</a>".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16), "<a>한</a>");
        assert_eq!(decode(b"\xef\xbb\xbf<a/>"), "<a/>");
        assert_eq!(decode(b"<a>\xff</a>"), "<a>\u{fffd}</a>");
    }

    #[test]
    fn empty_elements_open_and_close() {
        let (nodes, _) = texts("<a><b x='1'/>t</a>");
        assert_eq!(nodes, vec!["<a>", "<b>", "/", "t", "/"]);
    }

    #[test]
    fn deep_nesting_is_skipped_without_recursion() {
        let depth = 100_000;
        let xml = format!("{}x{}", "<d>".repeat(depth), "</d>".repeat(depth));
        let (nodes, deep) = texts(&xml);
        assert!(deep);
        assert_eq!(nodes.iter().filter(|n| *n == "<d>").count(), MAX_XML_DEPTH);
        assert!(!nodes.contains(&"x".to_string()));
    }

    #[test]
    fn attributes_match_by_local_name() {
        let mut cursor = XmlCursor::new(r#"<w:p w:val="a&amp;b" p:x="1"/>"#, "t");
        let Some(Node::Open(e)) = cursor.next_node().unwrap() else {
            panic!("an opening");
        };
        assert_eq!(attr(&e, "val").as_deref(), Some("a&b"));
        assert_eq!(prefixed_attr(&e, "x").as_deref(), Some("1"));
        assert_eq!(attr(&e, "missing"), None);
    }
}
