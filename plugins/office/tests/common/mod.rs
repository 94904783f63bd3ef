//! Helpers shared by the office plugin's integration tests: fixtures from
//! `tests/fixtures/formats/office/`, packages built in memory, and
//! lookups of blocks by their text.

#![allow(dead_code)]

use std::io::{Cursor, Write};

use kebab_plugin_sdk::{Block, Document, PartRange, PartUnit, PluginError, Span};

/// The bytes of fixture `name`.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/formats/office/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Fixture `name` parsed.
pub fn parse(name: &str) -> Document {
    kebab_plugin_office::parse(name, &fixture(name)).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

/// The error parsing `bytes` named `name` gives.
pub fn error(name: &str, bytes: &[u8]) -> PluginError {
    match kebab_plugin_office::parse(name, bytes) {
        Ok(doc) => panic!("{name} parsed: {} blocks", doc.blocks.len()),
        Err(e) => e,
    }
}

/// The block whose text contains `needle`.
pub fn block<'d>(doc: &'d Document, needle: &str) -> &'d Block {
    doc.blocks
        .iter()
        .find(|b| b.text.contains(needle))
        .unwrap_or_else(|| panic!("no block holds {needle:?}: {:#?}", texts(doc)))
}

/// The paragraph numbers the block holding `needle` cites.
pub fn paragraphs_of(doc: &Document, needle: &str) -> (u32, u32) {
    match &block(doc, needle).span {
        Span::Part(PartRange {
            unit: PartUnit::Paragraph,
            first,
            last,
        }) => (*first, *last),
        other => panic!("{needle:?} cites {other:?}"),
    }
}

/// The heading path of the block holding `needle`.
pub fn path_of(doc: &Document, needle: &str) -> Vec<String> {
    block(doc, needle).heading_path.clone()
}

/// Every block's text.
pub fn texts(doc: &Document) -> Vec<&str> {
    doc.blocks.iter().map(|b| b.text.as_str()).collect()
}

/// The value of metadata `key`.
pub fn meta<'d>(doc: &'d Document, key: &str) -> Option<&'d str> {
    doc.metadata
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A ZIP archive of `members`, deflated.
pub fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    let mut writer = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in members {
        writer.start_file(*name, options).unwrap();
        writer.write_all(data).unwrap();
    }
    writer.finish().unwrap();
    out.into_inner()
}

/// A minimal Word package whose body is `body` (WordprocessingML inside
/// `w:body`).
pub fn docx_with_body(body: &str) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
    );
    zip_of(&[
        ("[Content_Types].xml", CONTENT_TYPES.as_bytes()),
        ("_rels/.rels", ROOT_RELS.as_bytes()),
        ("word/document.xml", document.as_bytes()),
    ])
}

/// A paragraph of WordprocessingML holding `text`.
pub fn w_p(text: &str) -> String {
    format!("<w:p><w:r><w:t>{text}</w:t></w:r></w:p>")
}

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#;
