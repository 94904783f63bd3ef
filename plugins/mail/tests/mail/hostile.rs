//! Hostile and damaged input: deep MIME nesting, thousands of attachments
//! and recipients, enormous lines and subjects, tag soup, and randomly
//! corrupted copies of every fixture. Nothing may panic, and every output
//! must pass the host's checks (bounded texts and headings, chunks with
//! text and spans, no twin chunks).

use std::collections::HashSet;
use std::time::Instant;

use kebab_plugin_mail::limits::{MAX_ATTACHMENTS, MAX_BLOCK_BYTES, MAX_SUBJECT_CHARS};
use kebab_plugin_sdk::Document;

use crate::common::{chunks, fixture, parse};

/// What the host checks of an output (its default bounds).
fn assert_valid(doc: &Document) {
    for block in &doc.blocks {
        assert!(block.text.len() <= 4 << 20);
        assert!(block.heading_path.iter().all(|h| h.len() <= 16 << 10));
    }
    let chunks = chunks(doc);
    assert!(chunks.len() <= 100_000);
    let mut seen = HashSet::new();
    for chunk in &chunks {
        assert!(!chunk.text.trim().is_empty());
        assert!(!chunk.spans.is_empty());
        assert!(
            chunk
                .blocks
                .iter()
                .all(|&b| (b as usize) < doc.blocks.len())
        );
        assert!(
            seen.insert(format!("{:?}{:?}", chunk.blocks, chunk.spans)),
            "twin chunks"
        );
    }
}

fn message(headers: &str, body: &str) -> Vec<u8> {
    format!("From: a@example.com\r\nSubject: hostile\r\n{headers}\r\n{body}").into_bytes()
}

#[test]
fn deep_multipart_nesting_is_read_without_recursion_trouble() {
    let depth = 5_000;
    let mut body = String::new();
    for i in 0..depth {
        body.push_str(&format!(
            "--b{i}\r\nContent-Type: multipart/mixed; boundary=\"b{}\"\r\n\r\n",
            i + 1
        ));
    }
    body.push_str(&format!(
        "--b{depth}\r\nContent-Type: text/plain\r\n\r\ndeep text\r\n"
    ));
    let bytes = message("Content-Type: multipart/mixed; boundary=\"b0\"\r\n", &body);
    let started = Instant::now();
    let (doc, _) = parse("deep.eml", &bytes);
    let doc = doc.expect("parses");
    assert!(started.elapsed().as_secs() < 5);
    assert_valid(&doc);
}

#[test]
fn deeply_nested_messages_are_read() {
    let mut inner = "Subject: innermost\r\n\r\nthe bottom\r\n".to_string();
    for i in 0..2_000 {
        inner = format!("Subject: level {i}\r\nContent-Type: message/rfc822\r\n\r\n{inner}");
    }
    let (doc, handed) = parse(
        "nested.eml",
        &message("Content-Type: message/rfc822\r\n", &inner),
    );
    assert_valid(&doc.expect("parses"));
    assert!(handed.len() <= 1);
}

#[test]
fn attachments_past_the_bound_are_left_out() {
    let mut body = String::new();
    for i in 0..1_000 {
        body.push_str(&format!(
            "--x\r\nContent-Type: text/plain; name=\"f{i}.txt\"\r\n\
             Content-Disposition: attachment; filename=\"f{i}.txt\"\r\n\r\nfile {i}\r\n"
        ));
    }
    body.push_str("--x--\r\n");
    let bytes = message("Content-Type: multipart/mixed; boundary=\"x\"\r\n", &body);
    let (doc, handed) = parse("many.eml", &bytes);
    let doc = doc.expect("parses");
    assert_eq!(handed.len(), MAX_ATTACHMENTS);
    assert_eq!(handed[0].name, "f0.txt");
    assert_valid(&doc);
}

#[test]
fn huge_lines_subjects_and_address_lists_stay_within_bounds() {
    let line = "가나다 ".repeat(700_000);
    let to: Vec<String> = (0..100_000).map(|i| format!("u{i}@example.com")).collect();
    let bytes = format!(
        "From: a@example.com\r\nTo: {}\r\nSubject: {}\r\n\r\n{line}\r\n",
        to.join(", "),
        "long ".repeat(200_000)
    );
    let (doc, _) = parse("huge.eml", bytes.as_bytes());
    let doc = doc.expect("parses");
    assert!(
        doc.blocks
            .iter()
            .skip(1)
            .all(|b| b.text.len() <= MAX_BLOCK_BYTES)
    );
    assert_eq!(
        doc.blocks[0].heading_path[0].chars().count(),
        MAX_SUBJECT_CHARS
    );
    assert!(doc.blocks[0].text.len() < 64 << 10);
    let body: String = doc.blocks[1..]
        .iter()
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(body.split_whitespace().count(), 700_000);
    assert_valid(&doc);
}

#[test]
fn tag_soup_html_is_read_in_linear_time() {
    let html = format!(
        "{}{}<p>end</p>{}",
        "<div><span style='display:none'>".repeat(100_000),
        "<b>".repeat(100_000),
        "<a href=\"x".repeat(10)
    );
    let bytes = message("Content-Type: text/html\r\n", &html);
    let started = Instant::now();
    let (doc, _) = parse("soup.eml", &bytes);
    assert_valid(&doc.expect("parses"));
    assert!(started.elapsed().as_secs() < 5);
}

/// xorshift64: deterministic noise for corrupting fixtures.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn corrupted_fixtures_never_panic() {
    let fixtures = [
        "report.eml",
        "thread.mbox",
        "ascii.msg",
        "forward.eml",
        "html-only.eml",
        "broken.eml",
    ];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for name in fixtures {
        let original = fixture(name);
        for _ in 0..150 {
            let mut bytes = original.clone();
            for _ in 0..1 + next(&mut state) % 24 {
                let at = (next(&mut state) as usize) % bytes.len();
                bytes[at] = next(&mut state) as u8;
            }
            if next(&mut state).is_multiple_of(4) {
                bytes.truncate((next(&mut state) as usize) % bytes.len());
            }
            if let (Ok(doc), _) = parse(name, &bytes) {
                assert_valid(&doc);
            }
        }
    }
}

#[test]
fn random_bytes_are_refused_under_any_name() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for name in ["x.eml", "x.mbox", "x.msg"] {
        for len in [1usize, 7, 512, 8_192] {
            let bytes: Vec<u8> = (0..len).map(|_| next(&mut state) as u8).collect();
            if let (Ok(doc), _) = parse(name, &bytes) {
                assert_valid(&doc);
            }
        }
        let mut cfb = vec![0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
        cfb.extend((0..4_096).map(|_| next(&mut state) as u8));
        assert!(parse(name, &cfb).0.is_err());
    }
}
