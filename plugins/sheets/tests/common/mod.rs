//! Helpers shared by the integration tests: fixtures, parsing and chunking
//! through the plugin's exported functions, spans in A1 notation (as the
//! host renders them), and small workbooks built in memory.

#![allow(dead_code)]

use std::io::{Cursor, Write};

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, Span};
use kebab_plugin_sheets::Plugin;

/// The bytes of fixture `name`.
pub fn fixture(name: &str) -> Vec<u8> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/formats/sheets"
    );
    std::fs::read(format!("{dir}/{name}")).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// Parse `bytes` as the file `name`.
pub fn parse(name: &str, bytes: Vec<u8>) -> Result<Document, PluginError> {
    Plugin::parse(format!("docs/{name}"), bytes)
}

/// Chunk a document with a target of `target` tokens.
pub fn chunk(doc: &Document, target: u32) -> Vec<Chunk> {
    let policy = ChunkPolicy {
        target_tokens: target,
        overlap_tokens: 20,
    };
    Plugin::chunk_document(doc.clone(), policy).expect("chunking never fails")
}

/// A metadata value of `doc`.
pub fn meta<'a>(doc: &'a Document, key: &str) -> Option<&'a str> {
    doc.metadata
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A cells span as the host cites it: `Sheet!A1:F40`.
pub fn a1(span: &Span) -> String {
    let Span::Cells(r) = span else {
        panic!("not a cells span: {span:?}");
    };
    format!(
        "{}!{}{}:{}{}",
        r.sheet,
        column(r.first_column),
        r.first_row,
        column(r.last_column),
        r.last_row
    )
}

/// A 1-based column number in letters (1 → `A`, 16384 → `XFD`).
pub fn column(mut n: u32) -> String {
    let mut letters = Vec::new();
    while n > 0 {
        letters.push(b'A' + ((n - 1) % 26) as u8);
        n = (n - 1) / 26;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap()
}

/// Each chunk as (heading path, spans in A1 notation, text).
pub fn summary(chunks: &[Chunk]) -> Vec<(Vec<String>, Vec<String>, String)> {
    chunks
        .iter()
        .map(|c| {
            (
                c.heading_path.clone(),
                c.spans.iter().map(a1).collect(),
                c.text.clone(),
            )
        })
        .collect()
}

/// A minimal `.xlsx` package with one sheet named `name` whose
/// `<sheetData>` is written by `rows` (inline strings and numbers only),
/// deflated fast.
pub fn xlsx(name: &str, rows: impl FnOnce(&mut dyn Write)) -> Vec<u8> {
    xlsx_at_level(name, 1, rows)
}

/// [`xlsx`] deflated at compression `level` (1 fast … 9 small).
pub fn xlsx_at_level(name: &str, level: i64, rows: impl FnOnce(&mut dyn Write)) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(level))
        .large_file(true);
    let parts = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>"#.to_string(),
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string(),
        ),
        (
            "xl/workbook.xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="{name}" sheetId="1" r:id="rId1"/></sheets></workbook>"#
            ),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.to_string(),
        ),
    ];
    for (part, text) in parts {
        zip.start_file(part, options).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.start_file("xl/worksheets/sheet1.xml", options).unwrap();
    zip.write_all(br#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#).unwrap();
    rows(&mut zip);
    zip.write_all(b"</sheetData></worksheet>").unwrap();
    zip.finish().unwrap();
    out.into_inner()
}

/// An `.ods` package whose `content.xml` body (inside
/// `office:spreadsheet`) is written by `body`.
pub fn ods(body: impl FnOnce(&mut dyn Write)) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("mimetype", stored).unwrap();
    zip.write_all(b"application/vnd.oasis.opendocument.spreadsheet")
        .unwrap();
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1));
    zip.start_file("content.xml", options).unwrap();
    zip.write_all(br#"<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet>"#).unwrap();
    body(&mut zip);
    zip.write_all(b"</office:spreadsheet></office:body></office:document-content>")
        .unwrap();
    zip.finish().unwrap();
    out.into_inner()
}
