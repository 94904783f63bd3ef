//! The plugin's bounds on generated hostile and huge books: deep nesting,
//! entity bombs, oversized paragraphs, a spine past its bound, more blocks
//! than the host takes; and its throughput on a large book (an ignored
//! test: run it with `--release -- --ignored --nocapture`).

use std::io::{Cursor, Write};
use std::time::Instant;

use kebab_plugin_epub::Plugin;
use kebab_plugin_epub::book::MAX_BLOCKS;
use kebab_plugin_epub::chapters::MAX_BLOCK_TOKENS;
use kebab_plugin_epub::package::MAX_SPINE;
use kebab_plugin_sdk::text::estimate_tokens;
use kebab_plugin_sdk::{ChunkPolicy, Document, Guest, Span};

/// An EPUB 3 whose spine lists `spine` (manifest ids) over the chapters
/// `(id, XHTML)`, each stored as `OEBPS/<id>.xhtml`.
fn book(chapters: &[(&str, String)], spine: &[&str]) -> Vec<u8> {
    let manifest: String = chapters
        .iter()
        .map(|(id, _)| {
            format!(r#"<item id="{id}" href="{id}.xhtml" media-type="application/xhtml+xml"/>"#)
        })
        .collect();
    let itemrefs: String = spine
        .iter()
        .map(|id| format!(r#"<itemref idref="{id}"/>"#))
        .collect();
    let opf = format!(
        r#"<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata
xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Generated</dc:title></metadata>
<manifest>{manifest}</manifest><spine>{itemrefs}</spine></package>"#
    );
    let container = r#"<container><rootfiles><rootfile full-path="OEBPS/content.opf"
media-type="application/oebps-package+xml"/></rootfiles></container>"#;
    let mut out = Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut add = |name: &str, data: &[u8]| {
        zip.start_file(name, options).unwrap();
        zip.write_all(data).unwrap();
    };
    add("mimetype", b"application/epub+zip");
    add("META-INF/container.xml", container.as_bytes());
    add("OEBPS/content.opf", opf.as_bytes());
    for (id, xhtml) in chapters {
        add(&format!("OEBPS/{id}.xhtml"), xhtml.as_bytes());
    }
    zip.finish().unwrap();
    out.into_inner()
}

fn page(body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>{body}</body></html>"#
    )
}

fn parse(bytes: Vec<u8>) -> Document {
    Plugin::parse("generated.epub".into(), bytes).unwrap()
}

fn last_chapter(doc: &Document) -> u32 {
    match doc.blocks.last().map(|b| &b.span) {
        Some(Span::Part(p)) => p.last,
        other => panic!("{other:?}"),
    }
}

#[test]
fn deep_nesting_and_entity_bombs_stay_inert() {
    let depth = 100_000;
    let deep = page(&format!(
        "{}deep text{}<p>after</p>",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    ));
    let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE html [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Bomb</h1><p>a &lol3; b</p></body></html>"#;
    let doc = parse(book(
        &[("deep", deep), ("bomb", bomb.to_string())],
        &["deep", "bomb"],
    ));
    let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
    assert_eq!(texts, ["t", "deep text", "after", "Bomb", "a &lol3; b"]);
}

#[test]
fn oversized_paragraphs_are_cut_into_blocks_the_chunker_can_pack() {
    let huge = "검색 word ".repeat(20_000);
    let doc = parse(book(&[("c", page(&format!("<p>{huge}</p>")))], &["c"]));
    assert!(doc.blocks.len() > 20);
    assert!(
        doc.blocks
            .iter()
            .all(|b| estimate_tokens(&b.text) <= MAX_BLOCK_TOKENS)
    );
    let joined: Vec<&str> = doc.blocks[1..].iter().map(|b| b.text.as_str()).collect();
    assert_eq!(joined.join(" "), huge.trim_end());
    let chunks = Plugin::chunk_document(
        doc,
        ChunkPolicy {
            target_tokens: 512,
            overlap_tokens: 0,
        },
    )
    .unwrap();
    assert!(chunks.iter().all(|c| estimate_tokens(&c.text) <= 1_100));
}

#[test]
fn a_spine_past_its_bound_is_cut() {
    let spine = vec!["c"; MAX_SPINE + 50];
    let doc = parse(book(&[("c", page("<p>same</p>"))], &spine));
    assert_eq!(last_chapter(&doc), MAX_SPINE as u32);
    assert_eq!(doc.blocks.len(), 2 * MAX_SPINE);
}

#[test]
fn blocks_stop_at_the_bound_the_host_takes() {
    let body = "<p>x</p>".repeat(MAX_BLOCKS + 10);
    let doc = parse(book(
        &[("a", page(&body)), ("b", page("<p>b</p>"))],
        &["a", "b"],
    ));
    assert_eq!(doc.blocks.len(), MAX_BLOCKS);
    assert_eq!(last_chapter(&doc), 1);
}

/// Chapters per second on a large generated book (release build).
#[test]
#[ignore = "a measurement: run with --release -- --ignored --nocapture"]
fn throughput() {
    let chapter = |n: usize| {
        let para = format!(
            "<p>Chapter {n}: it is a truth universally acknowledged that a single man in \
             possession of a good fortune must be in want of a wife. 한국어 문장도 있다.</p>"
        );
        page(&format!(
            "<h1>Chapter {n}</h1>{}<h2>Part</h2>{}<table><tr><td>a</td><td>b</td></tr></table>",
            para.repeat(20),
            para.repeat(20)
        ))
    };
    let count = 2_000;
    let ids: Vec<String> = (0..count).map(|n| format!("c{n}")).collect();
    let chapters: Vec<(&str, String)> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| (id.as_str(), chapter(n)))
        .collect();
    let spine: Vec<&str> = ids.iter().map(String::as_str).collect();
    let bytes = book(&chapters, &spine);
    let started = Instant::now();
    let doc = parse(bytes.clone());
    let parsed = started.elapsed();
    let chunks = Plugin::chunk_document(
        doc.clone(),
        ChunkPolicy {
            target_tokens: 400,
            overlap_tokens: 40,
        },
    )
    .unwrap();
    let total = started.elapsed();
    assert_eq!(last_chapter(&doc), count as u32);
    #[allow(clippy::disallowed_macros)] // a measurement prints its result
    {
        eprintln!(
            "{count} chapters, {} KiB zipped, {} blocks, {} chunks: parse {:.0} chapters/s \
             ({:.1} ms), parse+chunk {:.1} ms",
            bytes.len() >> 10,
            doc.blocks.len(),
            chunks.len(),
            count as f64 / parsed.as_secs_f64(),
            parsed.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3
        );
    }
}
