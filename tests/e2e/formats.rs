//! Every format a person keeps, through the real binary and the real
//! sandboxed plugins: Word, OpenDocument, RTF and legacy Word files cited by
//! paragraph; PowerPoint and OpenDocument presentations by slide;
//! spreadsheets by sheet and cell range; EPUB books by chapter; e-mail and
//! mailboxes by paragraph and message, their attachments read by their own
//! plugins and cited through the message; encrypted, corrupt and hostile
//! files each one file's clear outcome while the run goes on.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Kb, NO_EMBEDDINGS, item};

fn fixtures(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/formats")
        .join(kind)
}

/// A corpus of the fixtures `names` of `kind`, indexed lexically.
fn indexed(kind: &str, names: &[&str]) -> (Kb, tempfile::TempDir, Value) {
    let corpus = tempfile::tempdir().unwrap();
    for name in names {
        std::fs::copy(fixtures(kind).join(name), corpus.path().join(name))
            .unwrap_or_else(|e| panic!("{kind}/{name}: {e}"));
    }
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let report = kb.ingest(corpus.path());
    (kb, corpus, report)
}

/// The hits of a lexical search, best first.
fn hits(kb: &Kb, query: &str) -> Vec<Value> {
    let (resp, code) = kb.json(&["search", query, "--mode", "lexical", "--k", "10"]);
    assert!(code == 0 || code == 1, "{query}: {resp}");
    resp["hits"].as_array().cloned().unwrap_or_default()
}

/// The best hit in `path` for `query`, with its citation.
fn hit_in(kb: &Kb, query: &str, path: &str) -> Value {
    hits(kb, query)
        .into_iter()
        .find(|h| h["doc_path"] == path)
        .unwrap_or_else(|| panic!("`{query}` not found in {path}: {:#?}", hits(kb, query)))
}

#[test]
fn word_and_opendocument_text_are_cited_by_heading_and_paragraph() {
    let files = [
        "report.docx",
        "report.rtf",
        "report.doc",
        "notes.odt",
        "notes.fodt",
        "notes.docx",
        "notes.doc",
        "notes.rtf",
        "long_table.docx",
        "encrypted.docx",
        "corrupt.docx",
        "empty.docx",
    ];
    let (kb, _corpus, report) = indexed("office", &files);
    for name in &files[..9] {
        let it = item(&report, name);
        assert_eq!(it["plugin"], "office", "{name}: {it}");
        assert!(it["chunk_count"].as_u64().unwrap() > 0, "{name}: {it}");
    }
    // Never silently binary: an encrypted file is named with a hint, a
    // corrupt one is that file's error.
    let encrypted = item(&report, "encrypted.docx");
    assert_eq!(encrypted["reason"], "unsupported", "{encrypted}");
    assert!(encrypted.to_string().contains("encrypted"), "{encrypted}");
    assert!(
        encrypted.to_string().contains("remove the password"),
        "{encrypted}"
    );
    assert_eq!(item(&report, "corrupt.docx")["kind"], "error");
    assert_eq!(report["skipped_binary"], 0, "{report:#}");

    let hit = hit_in(&kb, "sales grew steadily in every region", "report.docx");
    let citation = &hit["citation"];
    assert_eq!(citation["kind"], "part", "{citation}");
    assert_eq!(citation["unit"], "paragraph", "{citation}");
    assert!(
        citation["uri"]
            .as_str()
            .unwrap()
            .starts_with("report.docx#para="),
        "{citation}"
    );
    assert_eq!(hit["heading_path"][0], "Conclusion", "{hit}");
    // The same document saved by Word and by LibreOffice as RTF and .doc
    // numbers its paragraphs the same way. A legacy .doc has no headings
    // (its styles are not read), so its chunk is wider but holds the same
    // paragraph numbers.
    let range = |path: &str| {
        let citation = &hit_in(&kb, "sales grew steadily in every region", path)["citation"];
        (
            citation["first"].as_u64().unwrap(),
            citation["last"].as_u64().unwrap(),
        )
    };
    let docx = range("report.docx");
    assert_eq!(range("report.rtf"), docx);
    let doc = range("report.doc");
    assert!(doc.0 <= docx.0 && doc.1 == docx.1, "{doc:?} holds {docx:?}");
    // Header, footnote-like back matter and tables are text too.
    hit_in(&kb, "ACME Corp Confidential", "report.docx");
    // A long table is split with its header row repeated in each piece.
    let pieces: Vec<Value> = hits(&kb, "inventory")
        .into_iter()
        .filter(|h| h["doc_path"] == "long_table.docx")
        .collect();
    assert!(!pieces.is_empty());
}

#[test]
fn presentations_are_cited_by_slide_in_presentation_order() {
    let (kb, _corpus, report) =
        indexed("office", &["deck.pptx", "deck.odp", "deck.ppt", "talk.odp"]);
    for name in ["deck.pptx", "deck.odp", "deck.ppt", "talk.odp"] {
        assert_eq!(item(&report, name)["plugin"], "office", "{name}");
    }
    let hit = hit_in(&kb, "Mention the beta users", "deck.pptx");
    let citation = &hit["citation"];
    assert_eq!(citation["kind"], "page", "{citation}");
    assert_eq!(citation["unit"], "slide", "{citation}");
    // Presentation order, not part order: "Numbers" (slide3.xml) is shown
    // second, so "Goals" (slide2.xml) with its speaker notes is slide 3.
    assert_eq!(citation["page"], 3, "speaker notes of slide 3: {citation}");
    assert_eq!(citation["uri"], "deck.pptx#slide=3");
    let table = hit_in(&kb, "Quarter Users", "deck.pptx");
    assert_eq!(table["citation"]["page"], 2, "a table on slide 2: {table}");
    let grouped = hit_in(&kb, "Grouped text box", "deck.pptx");
    assert_eq!(grouped["citation"]["page"], 4, "{grouped}");
    let korean = hit_in(&kb, "한국어 검색 지원", "deck.pptx");
    assert_eq!(korean["citation"]["page"], 3, "{korean}");
}

#[test]
fn spreadsheets_are_cited_by_sheet_and_cell_range_with_the_header_in_every_chunk() {
    let files = [
        "budget.xlsx",
        "budget.ods",
        "budget.xls",
        "quoted.csv",
        "semicolon.csv",
        "encrypted.xlsx",
    ];
    let (kb, _corpus, report) = indexed("sheets", &files);
    for name in &files[..5] {
        assert_eq!(item(&report, name)["plugin"], "sheets", "{name}");
    }
    assert_eq!(item(&report, "encrypted.xlsx")["reason"], "unsupported");
    for path in ["budget.xlsx", "budget.ods", "budget.xls"] {
        let hit = hit_in(&kb, "Rent", path);
        let citation = &hit["citation"];
        assert_eq!(citation["kind"], "cells", "{path}: {citation}");
        assert_eq!(citation["sheet"], "Budget", "{path}: {citation}");
        assert!(
            citation["uri"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{path}#sheet=Budget&range=")),
            "{path}: {citation}"
        );
        // Formulas' values and dates as dates, the header row carried.
        let text = hit["snippet"].as_str().unwrap().to_string() + &hit.to_string();
        assert!(text.contains("2450"), "{path}: the total 1200+1250: {hit}");
        assert!(
            text.contains("2024-03-01"),
            "{path}: a date as a date: {hit}"
        );
    }
    let log = hit_in(&kb, "Event number 37 happened", "budget.xlsx");
    assert_eq!(log["citation"]["sheet"], "Log", "{log}");
    let korean = hit_in(&kb, "김철수", "budget.xlsx");
    assert_eq!(korean["citation"]["sheet"], "데이터");
}

#[test]
fn a_later_window_of_rows_carries_the_header_row_and_cites_it_apart() {
    let corpus = tempfile::tempdir().unwrap();
    let mut csv = String::from("Day,Event,Count\n");
    for i in 1..=2000 {
        csv.push_str(&format!(
            "2024-01-{:02},Event number {i} happened,{}\n",
            i % 28 + 1,
            i * 3
        ));
    }
    std::fs::write(corpus.path().join("log.csv"), csv).unwrap();
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let report = kb.ingest(corpus.path());
    assert_eq!(item(&report, "log.csv")["plugin"], "sheets", "{report:#}");
    let later = hit_in(&kb, "Event number 1937 happened", "log.csv");
    let (chunk, _) = kb.json(&["fetch", "chunk", later["chunk_id"].as_str().unwrap()]);
    let text = chunk["chunk"]["text"].as_str().unwrap();
    assert!(text.starts_with("Day | Event | Count"), "{text}");
    assert!(text.contains("Event number 1937 happened"), "{text}");
    let range = later["citation"]["range"].as_str().unwrap();
    assert!(
        range.starts_with("A1:C1,"),
        "header row listed apart: {range}"
    );
}

#[test]
fn an_epub_is_cited_by_chapter_with_its_headings() {
    let files = [
        "ebooklib-epub3.epub",
        "ncx-only-epub2.epub",
        "drm.epub",
        "zip-bomb.epub",
        "missing-opf.epub",
    ];
    let (kb, _corpus, report) = indexed("epub", &files);
    assert_eq!(item(&report, "ebooklib-epub3.epub")["plugin"], "epub");
    assert_eq!(item(&report, "ncx-only-epub2.epub")["plugin"], "epub");
    assert_eq!(item(&report, "drm.epub")["reason"], "unsupported");
    assert!(item(&report, "drm.epub").to_string().contains("DRM"));
    for bad in ["zip-bomb.epub", "missing-opf.epub"] {
        assert_eq!(item(&report, bad)["kind"], "error", "{bad}");
    }
    let docs: Vec<Value> = kb.json(&["list", "docs"]).0.as_array().cloned().unwrap();
    let book = docs
        .iter()
        .find(|d| d["doc_path"] == "ebooklib-epub3.epub")
        .unwrap();
    assert!(book["title"].is_string(), "{book}");
    let korean: Vec<Value> = hits(&kb, "봄의 노래")
        .into_iter()
        .filter(|h| h["doc_path"] == "ebooklib-epub3.epub")
        .collect();
    let hit = korean.first().expect("the Korean chapter");
    let citation = &hit["citation"];
    assert_eq!(citation["kind"], "part", "{citation}");
    assert_eq!(citation["unit"], "chapter", "{citation}");
    assert_eq!(
        citation["uri"], "ebooklib-epub3.epub#chapter=3",
        "{citation}"
    );
    assert_eq!(hit["heading_path"][0], "제1장 봄", "{hit}");
}

#[test]
fn mail_is_cited_by_message_and_its_attachments_through_it() {
    let files = [
        "report.eml",
        "thread.mbox",
        "euc-kr.eml",
        "iso-2022-jp.eml",
        "html-only.eml",
        "ascii.msg",
        "broken.eml",
        "not-mail.eml",
    ];
    let (kb, _corpus, report) = indexed("mail", &files);
    for name in &files[..7] {
        assert_eq!(item(&report, name)["plugin"], "mail", "{name}: {report:#}");
    }
    // Headers are searchable; the body is cited by paragraph.
    let body = hit_in(&kb, "costs rose slightly", "report.eml");
    assert_eq!(body["citation"]["unit"], "paragraph", "{body}");
    let from = hit_in(&kb, "minsu example", "report.eml");
    assert!(from.to_string().contains("From:"), "{from}");
    // The attached PDF, read by the PDF plugin, cited through the message.
    let attached = hit_in(&kb, "travel spending fell by 12 percent", "report.eml");
    let citation = &attached["citation"];
    assert_eq!(citation["attachment"], "report.pdf", "{citation}");
    assert_eq!(citation["kind"], "page", "{citation}");
    assert_eq!(
        citation["uri"], "report.eml › report.pdf#page=1",
        "{citation}"
    );
    // A mailbox: each message addressable.
    let messages: Vec<Value> = hits(&kb, "budget")
        .into_iter()
        .filter(|h| h["doc_path"] == "thread.mbox")
        .collect();
    assert!(!messages.is_empty(), "{:#?}", hits(&kb, "budget"));
    for m in &messages {
        let uri = m["citation"]["uri"].as_str().unwrap();
        assert!(uri.starts_with("thread.mbox#message="), "{uri}");
    }
    hit_in(&kb, "주간 회의 안내", "euc-kr.eml");
    hit_in(&kb, "会議の議事録", "iso-2022-jp.eml");
}

/// Whether this machine's Tesseract can read (scripts/setup-ocr.sh installs
/// it; the tests require it as they require ctags).
fn tesseract_installed() -> bool {
    let ok = Path::new("/usr/share/tesseract-ocr/5/tessdata/Hangul.traineddata").is_file();
    assert!(
        ok,
        "Tesseract's data is missing: run scripts/setup-ocr.sh (scripts/test.sh does)"
    );
    ok
}

#[test]
fn scans_and_photos_are_read_by_ocr_and_cited_by_region_or_page() {
    tesseract_installed();
    let files = [
        "text.png",
        "text.jpg",
        "pages.tif",
        "exif.jpg",
        "scan-dct.pdf",
        "mixed.pdf",
        "blank.png",
        "truncated.png",
    ];
    let (kb, _corpus, report) = indexed("image", &files);
    assert_eq!(item(&report, "text.png")["plugin"], "image", "{report:#}");
    assert!(report["ocr_images"].as_u64().unwrap() >= 4, "{report:#}");
    let photo = hit_in(&kb, "quick brown fox", "text.png");
    let citation = &photo["citation"];
    assert_eq!(citation["kind"], "region", "{citation}");
    assert!(
        citation["uri"]
            .as_str()
            .unwrap()
            .starts_with("text.png#xywh="),
        "{citation}"
    );
    assert!(
        citation["ocr_confidence"].as_f64().unwrap() > 0.5,
        "{citation}"
    );
    let korean = hit_in(&kb, "한국어 문서 인식", "text.png");
    assert_eq!(korean["citation"]["kind"], "region");
    // A scanned PDF page keeps its page citation, marked as read by OCR.
    let scanned = hit_in(&kb, "Invoice", "scan-dct.pdf");
    assert_eq!(scanned["citation"]["kind"], "page", "{scanned}");
    assert_eq!(scanned["citation"]["page"], 1);
    assert!(
        scanned["citation"]["ocr_confidence"].is_number(),
        "{scanned}"
    );
    // A mixed PDF: its text page as text, its scanned page by OCR.
    let text_page = hit_in(&kb, "Annual summary", "mixed.pdf");
    assert!(
        text_page["citation"]["ocr_confidence"].is_null(),
        "{text_page}"
    );
    // Bad images are that file's outcome only.
    assert_eq!(item(&report, "truncated.png")["kind"], "error");
    assert_eq!(item(&report, "blank.png")["kind"], "skipped");

    // Read again (a forced re-index): every image comes from the cache.
    let (again, code) = kb.json(&["reindex", "--plugin", "image"]);
    assert_eq!(code, 0, "{again:#}");
    assert_eq!(again["ocr_images"], again["ocr_cached"], "{again:#}");
    assert!(again["ocr_cached"].as_u64().unwrap() >= 3, "{again:#}");
}
