//! Throughput on large generated files (paragraphs and slides per second,
//! parse and chunk). Ignored by default; run it optimised:
//! `cargo test -p kebab-plugin-office --release --test throughput -- --ignored --nocapture`.

mod common;

use std::io::Write;
use std::time::Instant;

use common::{docx_with_body, w_p, zip_of};
use kebab_plugin_sdk::ChunkPolicy;

const POLICY: ChunkPolicy = ChunkPolicy {
    target_tokens: 400,
    overlap_tokens: 50,
};

/// Parse and chunk `bytes` named `name`, reporting `units` per second.
fn measure(name: &str, bytes: &[u8], units: usize, unit: &str) -> f64 {
    let start = Instant::now();
    let doc = kebab_plugin_office::parse(name, bytes).unwrap();
    let parsed = start.elapsed();
    let chunks = kebab_plugin_office::chunk(&doc, &POLICY);
    let total = start.elapsed();
    let rate = units as f64 / total.as_secs_f64();
    let _ = writeln!(
        std::io::stderr(),
        "{name}: {} KiB, {units} {unit}, {} blocks, {} chunks; parse {parsed:?}, parse+chunk {total:?}: {rate:.0} {unit}/s",
        bytes.len() >> 10,
        doc.blocks.len(),
        chunks.len()
    );
    rate
}

#[test]
#[ignore]
fn paragraphs_and_slides_per_second() {
    let paragraphs = 100_000;
    let mut body = String::new();
    for i in 0..paragraphs {
        if i % 50 == 0 {
            body.push_str(&format!(
                r#"<w:p><w:pPr><w:outlineLvl w:val="{}"/></w:pPr><w:r><w:t>Section {i}</w:t></w:r></w:p>"#,
                (i / 50) % 3
            ));
        } else {
            body.push_str(&w_p(&format!(
                "Paragraph {i} says something about the quarterly numbers, 한국어 문장도 있습니다."
            )));
        }
    }
    let docx = docx_with_body(&body);
    let rate = measure("big.docx", &docx, paragraphs, "paragraphs");
    assert!(rate > 10_000.0, "{rate} paragraphs/s");

    let rtf: String = std::iter::once("{\\rtf1\\ansi\\ansicpg1252 ".to_string())
        .chain((0..paragraphs).map(|i| {
            format!("\\pard Paragraph {i} with caf\\'e9 and \\u54620?\\u44397? text.\\par\n")
        }))
        .chain(std::iter::once("}".to_string()))
        .collect();
    measure("big.rtf", rtf.as_bytes(), paragraphs, "paragraphs");

    let slides = 5_000;
    let deck = big_pptx(slides);
    let rate = measure("big.pptx", &deck, slides, "slides");
    assert!(rate > 1_000.0, "{rate} slides/s");
}

/// A presentation of `slides` slides, each with a title, a body and a
/// two-row table.
fn big_pptx(slides: usize) -> Vec<u8> {
    let mut ids = String::new();
    let mut rels = String::new();
    let mut parts: Vec<(String, String)> = Vec::new();
    for n in 1..=slides {
        ids.push_str(&format!(r#"<p:sldId id="{}" r:id="rId{n}"/>"#, 255 + n));
        rels.push_str(&format!(
            r#"<Relationship Id="rId{n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide{n}.xml"/>"#
        ));
        parts.push((
            format!("ppt/slides/slide{n}.xml"),
            format!(
                r#"<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree>
                <p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Slide title {n}</a:t></a:r></a:p></p:txBody></p:sp>
                <p:sp><p:txBody><a:p><a:r><a:t>First point of slide {n}</a:t></a:r></a:p><a:p><a:r><a:t>두 번째 요점</a:t></a:r></a:p></p:txBody></p:sp>
                <p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>Key</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>Value</a:t></a:r></a:p></a:txBody></a:tc></a:tr>
                <a:tr><a:tc><a:txBody><a:p><a:r><a:t>k{n}</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>v{n}</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>
                </p:spTree></p:cSld></p:sld>"#
            ),
        ));
    }
    let presentation = format!(
        r#"<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"#
    );
    let presentation_rels = format!(r#"<Relationships>{rels}</Relationships>"#);
    let root_rels = r#"<Relationships><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="ppt/presentation.xml"/></Relationships>"#;
    let mut members: Vec<(&str, &[u8])> = vec![
        ("_rels/.rels", root_rels.as_bytes()),
        ("ppt/presentation.xml", presentation.as_bytes()),
        (
            "ppt/_rels/presentation.xml.rels",
            presentation_rels.as_bytes(),
        ),
    ];
    members.extend(
        parts
            .iter()
            .map(|(name, xml)| (name.as_str(), xml.as_bytes())),
    );
    zip_of(&members)
}
