//! The package document (OPF): the book's metadata, its manifest (every
//! member with its media type and properties) and its spine (the reading
//! order). Hrefs are resolved against the OPF's folder.

use std::collections::HashMap;

use kebab_plugin_sdk::{LogLevel, PluginError, log};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::metadata::{self, Metadata, Value};
use crate::{paths, xml};

/// The most spine entries read; a longer spine is cut (with a warning).
pub const MAX_SPINE: usize = 10_000;

/// The most manifest items read.
const MAX_MANIFEST: usize = 100_000;

/// One manifest item.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The member it names.
    pub path: String,
    /// Its media type, lower case (`application/xhtml+xml`).
    pub media_type: String,
    /// Its space-separated `properties` (`nav`, `cover-image`).
    pub properties: String,
}

impl Item {
    /// Whether this item is the EPUB 3 navigation document.
    pub fn is_nav(&self) -> bool {
        self.properties.split_whitespace().any(|p| p == "nav")
    }

    /// Whether the item is read as a chapter: a text item other than the
    /// navigation document (whose text is the table of contents itself).
    pub fn is_chapter(&self) -> bool {
        self.is_text() && !self.is_nav()
    }

    /// Whether the item is a content document whose text is read: XHTML
    /// (or HTML, or an OEB 1 document), by media type or, without one, by
    /// extension.
    pub fn is_text(&self) -> bool {
        match self.media_type.as_str() {
            "application/xhtml+xml" | "text/html" | "text/x-oeb1-document" => true,
            "" => {
                let lower = self.path.to_ascii_lowercase();
                [".xhtml", ".html", ".htm", ".xml"]
                    .iter()
                    .any(|ext| lower.ends_with(ext))
            }
            _ => false,
        }
    }
}

/// One spine entry. (`linear="no"` entries are read in place like the
/// others: the attribute only tells a reading system to show them out of
/// the main flow.)
#[derive(Debug, Clone, PartialEq)]
pub struct SpineEntry {
    /// The manifest id it refers to.
    pub idref: String,
}

/// What the package document says.
#[derive(Debug, Default)]
pub struct Package {
    /// The id of the identifier that is the book's unique one.
    pub unique_id: Option<String>,
    /// Dublin Core metadata.
    pub metadata: Metadata,
    /// Manifest items by id.
    pub manifest: HashMap<String, Item>,
    /// Manifest ids in document order.
    pub manifest_order: Vec<String>,
    /// The spine in reading order.
    pub spine: Vec<SpineEntry>,
    /// The spine's `toc`: the manifest id of the EPUB 2 NCX.
    pub ncx_id: Option<String>,
}

impl Package {
    /// The manifest item the spine entry refers to.
    pub fn item(&self, entry: &SpineEntry) -> Option<&Item> {
        self.manifest.get(&entry.idref)
    }

    /// The EPUB 3 navigation document.
    pub fn nav(&self) -> Option<&Item> {
        self.manifest_order
            .iter()
            .filter_map(|id| self.manifest.get(id))
            .find(|item| item.is_nav())
    }

    /// The EPUB 2 NCX: the spine's `toc`, else an item of the NCX media type.
    pub fn ncx(&self) -> Option<&Item> {
        self.ncx_id
            .as_ref()
            .and_then(|id| self.manifest.get(id))
            .or_else(|| {
                self.manifest_order
                    .iter()
                    .filter_map(|id| self.manifest.get(id))
                    .find(|item| item.media_type == "application/x-dtbncx+xml")
            })
    }
}

/// Parse the package document `text`, stored at `path`. A document that
/// breaks after its spine was read keeps what was read (with a warning).
pub fn parse(text: &str, path: &str) -> Result<Package, PluginError> {
    let mut package = Package::default();
    let base = paths::folder(path);
    let mut reader = xml::reader(text);
    let mut in_metadata = false;
    loop {
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(e) if package.spine.is_empty() => {
                return Err(PluginError::Malformed(format!(
                    "the package document {path} is not XML: {e}"
                )));
            }
            Err(e) => {
                log(
                    LogLevel::Warn,
                    &format!("the package document {path} breaks after its spine: {e}"),
                );
                break;
            }
        };
        match event {
            Event::Start(e) if in_metadata && is_dc_element(&e) => {
                read_metadata_value(&mut reader, &e, &mut package.metadata);
            }
            Event::Start(e) if in_metadata && is_title_type(&e) => {
                read_title_type(&mut reader, &e, &mut package.metadata);
            }
            Event::Start(e) | Event::Empty(e) => {
                in_metadata |= is_metadata(&e);
                read_element(&e, base, &mut package);
            }
            Event::End(e) => {
                let name = xml::local(e.name());
                if name.eq_ignore_ascii_case("metadata") || name.eq_ignore_ascii_case("dc-metadata")
                {
                    in_metadata = false;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    cut_spine(&mut package.spine);
    Ok(package)
}

/// The metadata section: EPUB's `metadata`, or OEB 1's `dc-metadata`.
fn is_metadata(start: &BytesStart<'_>) -> bool {
    xml::is(start, "metadata") || xml::is(start, "dc-metadata")
}

fn is_dc_element(start: &BytesStart<'_>) -> bool {
    metadata::ELEMENTS.iter().any(|name| xml::is(start, name))
}

/// An EPUB 3 refinement saying what kind of title a `dc:title` is.
fn is_title_type(start: &BytesStart<'_>) -> bool {
    xml::is(start, "meta") && xml::attr(start, "property").is_some_and(|p| p.trim() == "title-type")
}

/// Mark the title a `title-type` refinement of `main` refines.
fn read_title_type(reader: &mut Reader<&[u8]>, start: &BytesStart<'_>, into: &mut Metadata) {
    let refined = xml::attr(start, "refines");
    if let (Ok(kind), Some(refined)) = (xml::inner_text(reader), refined)
        && kind == "main"
    {
        into.mark_main_title(refined.trim().trim_start_matches('#'));
    }
}

/// Read a Dublin Core element's text into the metadata.
fn read_metadata_value(reader: &mut Reader<&[u8]>, start: &BytesStart<'_>, into: &mut Metadata) {
    let id = xml::attr(start, "id");
    let event = xml::prefixed_attr(start, "event").map(|e| e.to_ascii_lowercase());
    let Ok(text) = xml::inner_text(reader) else {
        return;
    };
    let name = xml::local(start.name()).to_string();
    into.add(&name, Value { id, event, text });
}

/// Record what a structural element of the package says.
fn read_element(start: &BytesStart<'_>, base: &str, package: &mut Package) {
    if xml::is(start, "package") {
        package.unique_id = xml::attr(start, "unique-identifier");
    } else if xml::is(start, "item") {
        add_item(start, base, package);
    } else if xml::is(start, "itemref") {
        if let Some(idref) = xml::attr(start, "idref") {
            package.spine.push(SpineEntry { idref });
        }
    } else if xml::is(start, "spine") {
        package.ncx_id = xml::attr(start, "toc");
    }
}

fn add_item(start: &BytesStart<'_>, base: &str, package: &mut Package) {
    if package.manifest.len() >= MAX_MANIFEST {
        return;
    }
    let (Some(id), Some(href)) = (xml::attr(start, "id"), xml::attr(start, "href")) else {
        return;
    };
    let Some(path) = paths::resolve(base, &href) else {
        return;
    };
    let item = Item {
        path,
        media_type: xml::attr(start, "media-type")
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase(),
        properties: xml::attr(start, "properties").unwrap_or_default(),
    };
    if package.manifest.insert(id.clone(), item).is_none() {
        package.manifest_order.push(id);
    }
}

/// Keep at most [`MAX_SPINE`] entries, saying how many were left out.
fn cut_spine(spine: &mut Vec<SpineEntry>) {
    if spine.len() > MAX_SPINE {
        log(
            LogLevel::Warn,
            &format!(
                "the spine lists {} items: only the first {MAX_SPINE} are read",
                spine.len()
            ),
        );
        spine.truncate(MAX_SPINE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPF: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="BookId">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
    <dc:title>A &amp; B</dc:title>
    <dc:creator opf:role="aut">Kim</dc:creator>
    <dc:identifier id="BookId">id-1</dc:identifier>
    <dc:date opf:event="publication">2001</dc:date>
    <meta name="cover" content="cover-img"/>
  </metadata>
  <manifest>
    <item id="c2" href="Text/Chapter%202.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="Text/c1.xhtml" media-type="application/xhtml+xml"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
    <item id="img" href="../img.png" media-type="image/png"/>
  </manifest>
  <spine toc="ncx">
    <itemref idref="c1"/>
    <itemref idref="c2" linear="no"/>
  </spine>
</package>"#;

    #[test]
    fn manifest_spine_and_metadata_are_read() {
        let p = parse(OPF, "OEBPS/content.opf").unwrap();
        assert_eq!(p.metadata.title(), Some("A & B"));
        assert_eq!(p.manifest_order, ["c2", "c1", "ncx", "img"]);
        assert_eq!(p.manifest["c2"].path, "OEBPS/Text/Chapter 2.xhtml");
        assert_eq!(p.manifest["img"].path, "img.png");
        assert!(p.manifest["c1"].is_text() && !p.manifest["img"].is_text());
        let spine: Vec<&str> = p.spine.iter().map(|s| s.idref.as_str()).collect();
        assert_eq!(spine, ["c1", "c2"]);
        assert_eq!(p.ncx().map(|i| i.path.as_str()), Some("OEBPS/toc.ncx"));
        assert!(p.nav().is_none());
        let pairs = p.metadata.pairs(p.unique_id.as_deref());
        assert!(pairs.contains(&("identifier".into(), "id-1".into())));
    }

    #[test]
    fn a_package_broken_before_its_spine_is_malformed() {
        let err = parse("<package <<<", "content.opf").unwrap_err();
        assert!(matches!(err, PluginError::Malformed(m) if m.contains("content.opf")));
        let kept = parse(
            "<package><manifest><item id='a' href='a.xhtml'/></manifest>\
             <spine><itemref idref='a'/></spine><guide",
            "content.opf",
        )
        .unwrap();
        assert_eq!(kept.spine.len(), 1);
        assert!(kept.manifest["a"].is_text());
    }
}
