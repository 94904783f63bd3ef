//! Hostile and broken inputs: zip bombs, encryption, deep nesting,
//! entity expansion, corrupt and mislabelled files, and random damage to
//! every fixture — each ends in a clear error or a bounded document,
//! never a panic.

mod common;

use common::{docx_with_body, error, fixture, w_p, zip_of};
use kebab_plugin_sdk::{ChunkPolicy, PluginError};

#[test]
fn an_encrypted_office_file_is_unsupported_with_the_remedy() {
    let err = error("encrypted.docx", &fixture("encrypted.docx"));
    assert!(
        matches!(&err, PluginError::Unsupported(m) if m.contains("encrypted") && m.contains("remove the password")),
        "{err:?}"
    );
}

#[test]
fn an_encrypted_opendocument_file_is_unsupported() {
    let manifest = br#"<manifest:manifest><manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data manifest:checksum-type="SHA1/1K"/></manifest:file-entry></manifest:manifest>"#;
    let odt = zip_of(&[
        ("mimetype", b"application/vnd.oasis.opendocument.text"),
        ("META-INF/manifest.xml", manifest),
        ("content.xml", b"\x8f\x00garbage"),
    ]);
    let err = error("secret.odt", &odt);
    assert!(
        matches!(&err, PluginError::Unsupported(m) if m.contains("encrypted")),
        "{err:?}"
    );
}

#[test]
fn a_zip_bomb_is_malformed_naming_the_bound() {
    let body = w_p("x").repeat(2_400_000);
    assert!(body.len() > 64 << 20);
    let bomb = docx_with_body(&body);
    assert!(
        bomb.len() < 4 << 20,
        "the bomb should be small: {}",
        bomb.len()
    );
    let err = error("bomb.docx", &bomb);
    assert!(
        matches!(&err, PluginError::Malformed(m) if m.contains("64 MiB") && m.contains("zip bomb")),
        "{err:?}"
    );
}

#[test]
fn a_document_past_the_block_bound_stops_there() {
    let body: String = (0..110_000)
        .map(|i| w_p(&format!("Paragraph {i}")))
        .collect();
    let doc = kebab_plugin_office::parse("huge.docx", &docx_with_body(&body)).unwrap();
    assert_eq!(doc.blocks.len(), 100_000);
    assert_eq!(
        doc.blocks.last().map(|b| b.text.as_str()),
        Some("Paragraph 99999")
    );
}

#[test]
fn a_hundred_thousand_nested_content_controls_do_not_overflow() {
    let depth = 100_000;
    let body = format!(
        "{}{}{}{}",
        "<w:sdt><w:sdtContent>".repeat(depth),
        w_p("buried"),
        "</w:sdtContent></w:sdt>".repeat(depth),
        w_p("after the nesting")
    );
    let doc = kebab_plugin_office::parse("deep.docx", &docx_with_body(&body)).unwrap();
    assert_eq!(common::texts(&doc), vec!["after the nesting"]);
}

#[test]
fn deep_rtf_groups_and_odf_spans_do_not_overflow() {
    let rtf = format!(
        "{{\\rtf1 {}deep text{}}}",
        "{".repeat(200_000),
        "}".repeat(200_000)
    );
    let doc = kebab_plugin_office::parse("deep.rtf", rtf.as_bytes()).unwrap();
    assert_eq!(common::texts(&doc), vec!["deep text"]);
    let spans = format!(
        "<office:document office:mimetype=\"application/vnd.oasis.opendocument.text\"><office:body><office:text><text:p>{}x{}</text:p><text:p>shallow</text:p></office:text></office:body></office:document>",
        "<text:span>".repeat(100_000),
        "</text:span>".repeat(100_000)
    );
    let doc = kebab_plugin_office::parse("deep.fodt", spans.as_bytes()).unwrap();
    assert_eq!(common::texts(&doc), vec!["shallow"]);
}

#[test]
fn declared_entities_are_never_expanded() {
    let lol = "&lol9;";
    let doctype = r#"<!DOCTYPE w:document [<!ENTITY lol "lol"><!ENTITY lol9 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>"#;
    let document = format!(
        r#"<?xml version="1.0"?>{doctype}<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>a{lol}b &amp; &#x41;</w:t></w:r></w:p></w:body></w:document>"#
    );
    let package = zip_of(&[
        ("_rels/.rels", br#"<Relationships><Relationship Id="r" Type="x/officeDocument" Target="word/document.xml"/></Relationships>"#),
        ("word/document.xml", document.as_bytes()),
    ]);
    let doc = kebab_plugin_office::parse("lol.docx", &package).unwrap();
    assert_eq!(common::texts(&doc), vec!["ab & A"]);
}

#[test]
fn corrupt_and_mislabelled_files_say_what_they_are() {
    let err = error("corrupt.docx", &fixture("corrupt.docx"));
    assert!(
        matches!(&err, PluginError::Malformed(m) if m.contains("ZIP")),
        "{err:?}"
    );
    let err = error("notes.doc", b"just some plain text, not a document");
    assert!(
        matches!(&err, PluginError::Malformed(m) if m.contains("not a Word")),
        "{err:?}"
    );
    let err = error("empty.docx", b"");
    assert!(
        matches!(&err, PluginError::Malformed(m) if m.contains("empty")),
        "{err:?}"
    );
    let err = error(
        "page.doc",
        b"<html><body><p>Saved as a web page</p></body></html>",
    );
    assert!(
        matches!(&err, PluginError::Unsupported(m) if m.contains(".html")),
        "{err:?}"
    );
    let workbook = zip_of(&[
        ("_rels/.rels", br#"<Relationships><Relationship Id="r" Type="x/officeDocument" Target="xl/workbook.xml"/></Relationships>"#),
        ("xl/workbook.xml", b"<workbook/>"),
    ]);
    let err = error("book.docx", &workbook);
    assert!(
        matches!(&err, PluginError::Malformed(m) if m.contains("Excel")),
        "{err:?}"
    );
    let bad_xml = docx_with_body("<w:p><w:r><w:t>unclosed</w:r>");
    assert!(
        kebab_plugin_office::parse("bad.docx", &bad_xml).is_ok()
            || matches!(error("bad.docx", &bad_xml), PluginError::Malformed(_))
    );
}

#[test]
fn a_presentation_named_docx_is_read_for_what_it_is() {
    let doc = kebab_plugin_office::parse("really-a-deck.docx", &fixture("deck.pptx")).unwrap();
    assert_eq!(common::meta(&doc, "format"), Some("pptx"));
}

/// A small deterministic generator (xorshift) for damage positions.
struct Damage(u64);

impl Damage {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }
}

#[test]
fn damaged_fixtures_never_panic() {
    let names = [
        "report.docx",
        "notes.odt",
        "notes.fodt",
        "notes.rtf",
        "notes.doc",
        "deck.pptx",
        "deck.ppt",
        "talk.fodp",
    ];
    let policy = ChunkPolicy {
        target_tokens: 50,
        overlap_tokens: 10,
    };
    let mut damage = Damage(0x9E37_79B9_7F4A_7C15);
    for name in names {
        let original = fixture(name);
        for round in 0..60 {
            let mut bytes = original.clone();
            if round % 3 == 0 {
                bytes.truncate(damage.next() % bytes.len());
            } else {
                for _ in 0..1 + round % 8 {
                    let at = damage.next() % bytes.len();
                    bytes[at] = damage.next() as u8;
                }
            }
            if let Ok(doc) = kebab_plugin_office::parse(name, &bytes) {
                for chunk in kebab_plugin_office::chunk(&doc, &policy) {
                    assert!(
                        !chunk.text.is_empty() && !chunk.spans.is_empty(),
                        "{name} round {round}"
                    );
                }
            }
        }
    }
}
