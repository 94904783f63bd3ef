//! The plugin on real EPUB files made by `ebooklib` and by hand
//! (`tests/fixtures/formats/epub/make_epub.py`): chapter numbers, titles
//! and heading paths of known sentences, metadata, chunks, and the errors
//! for DRM, missing parts, zip bombs and corrupt files.

use kebab_plugin_epub::Plugin;
use kebab_plugin_sdk::{BlockKind, ChunkPolicy, Document, Guest, PartUnit, PluginError, Span};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/formats/epub/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn parse(name: &str) -> Result<Document, PluginError> {
    Plugin::parse(name.to_string(), fixture(name))
}

/// A block as compared: chapter, kind, heading path, text.
type Row = (u32, BlockKind, Vec<String>, String);

fn row(chapter: u32, kind: BlockKind, path: &[&str], text: &str) -> Row {
    let path = path.iter().map(|s| s.to_string()).collect();
    (chapter, kind, path, text.to_string())
}

fn chapter_of(span: &Span) -> u32 {
    match span {
        Span::Part(p) if p.unit == PartUnit::Chapter && p.first == p.last => p.first,
        other => panic!("not a one-chapter span: {other:?}"),
    }
}

fn rows(doc: &Document) -> Vec<Row> {
    doc.blocks
        .iter()
        .map(|b| {
            (
                chapter_of(&b.span),
                b.kind,
                b.heading_path.clone(),
                b.text.clone(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn an_epub3_made_by_ebooklib() {
    let doc = parse("ebooklib-epub3.epub").unwrap();
    assert_eq!(doc.title.as_deref(), Some("Kebab Test Book: 시험"));
    assert_eq!(doc.lang.as_deref(), Some("ko"));
    assert_eq!(
        doc.metadata,
        pairs(&[
            ("title", "Kebab Test Book: 시험"),
            ("author", r#"["Kim Minji","John Smith"]"#),
            ("language", "ko"),
            ("publisher", "Kebab Press"),
            ("date", "2024-03-01"),
            (
                "identifier",
                "urn:uuid:12345678-1234-5678-1234-567812345678"
            ),
            ("subject", r#"["Testing","전자책"]"#),
        ])
    );
    use BlockKind::*;
    let intro = ["Introduction"];
    let why = ["Introduction", "Why read books"];
    let spring = ["제1장 봄"];
    let song = ["제1장 봄", "봄의 노래"];
    let small = ["제1장 봄", "봄의 노래", "작은 절"];
    let tables = ["Tables and Notes"];
    let prices = ["Tables and Notes", "Prices"];
    let code = ["Tables and Notes", "Prices", "Code sample"];
    // Chapter 1 is the navigation document (skipped, numbered); the spine
    // reads intro, korean, appendix (linear="no", in place), tables — not
    // the manifest's order (tables first).
    assert_eq!(
        rows(&doc),
        vec![
            row(2, Heading, &intro, "Introduction"),
            row(
                2,
                Paragraph,
                &intro,
                "This book tests the kebab EPUB reader."
            ),
            row(2, Heading, &why, "Why read books"),
            row(2, Paragraph, &why, "Swifts sleep on the wing.1"),
            row(
                2,
                Paragraph,
                &why,
                "Footnote: swifts can stay aloft for ten months."
            ),
            row(2, List, &why, "first point\nsecond point"),
            row(3, Heading, &spring, "제1장 봄"),
            row(3, Paragraph, &spring, "봄이 오면 산에 들에 진달래 피네."),
            row(3, Heading, &song, "봄의 노래"),
            row(
                3,
                Paragraph,
                &song,
                "나는 한국어 문장을 검색할 수 있어야 한다."
            ),
            row(3, Heading, &small, "작은 절"),
            row(3, Paragraph, &small, "English and 한국어 mixed sentence."),
            row(4, Heading, &["Appendix A"], "Appendix A"),
            row(
                4,
                Paragraph,
                &["Appendix A"],
                "Auxiliary content outside the main flow."
            ),
            row(5, Heading, &tables, "Tables and Notes"),
            row(5, Paragraph, &tables, "Prices follow."),
            row(5, Heading, &prices, "Prices"),
            row(5, Table, &prices, "Item | Price\nKebab | 9.50\n김밥 | 3.00"),
            row(5, Heading, &code, "Code sample"),
            row(5, Code, &code, "let x = 1;\n  indented();"),
        ]
    );
    let levels: Vec<Option<u8>> = doc.blocks.iter().map(|b| b.level).collect();
    assert_eq!(levels[..3], [Some(1), None, Some(2)]);
    assert_eq!(levels[10], Some(3));
}

#[test]
fn an_epub2_with_only_an_ncx() {
    let doc = parse("ncx-only-epub2.epub").unwrap();
    assert_eq!(doc.title.as_deref(), Some("Hand-made NCX Book"));
    assert_eq!(doc.lang.as_deref(), Some("en-GB"));
    assert_eq!(
        doc.metadata,
        pairs(&[
            ("title", "Hand-made NCX Book"),
            ("author", "Jane Austen"),
            ("language", "en-GB"),
            ("publisher", "T. Egerton"),
            ("date", "1813-01-28"),
            ("identifier", "978-0-00-000000-2"),
        ])
    );
    use BlockKind::*;
    let one = ["Chapter One: 시작"];
    let one_h = ["Chapter One: 시작", "Chapter One"];
    let section = ["Chapter One: 시작", "Chapter One", "A section"];
    let two = ["Chapter Two"];
    let skipped = ["Chapter Two", "Skipped level"];
    // Chapter 1 is a cover page without text; chapter 2 (`장 1.xhtml`,
    // a percent-encoded href) takes its title from the NCX, chapter 3
    // continues it without a TOC entry or heading.
    assert_eq!(
        rows(&doc),
        vec![
            row(2, Heading, &one, "Chapter One: 시작"),
            row(2, Heading, &one_h, "Chapter One"),
            row(
                2,
                Paragraph,
                &one_h,
                "It is a truth universally acknowledged\u{2014}so the story goes\u{2019}s start."
            ),
            row(2, Heading, &section, "A section"),
            row(2, Paragraph, &section, "Elizabeth walked to Netherfield."),
            row(3, Heading, &one, "Chapter One: 시작"),
            row(
                3,
                Paragraph,
                &one,
                "The continuation of chapter one has no heading of its own."
            ),
            row(4, Heading, &two, "Chapter Two"),
            row(4, Quote, &two, "A quoted letter."),
            row(4, Heading, &skipped, "Skipped level"),
            row(4, List, &skipped, "1. Longbourn\n2. Pemberley"),
            row(5, Heading, &["Notes"], "Notes"),
            row(5, Paragraph, &["Notes"], "1. A note kept as text."),
        ]
    );
}

#[test]
fn chunks_cite_one_chapter_each_under_its_title() {
    let doc = parse("ebooklib-epub3.epub").unwrap();
    let policy = ChunkPolicy {
        target_tokens: 400,
        overlap_tokens: 40,
    };
    let chunks = Plugin::chunk_document(doc.clone(), policy).unwrap();
    assert_eq!(chunks.len(), 9);
    for chunk in &chunks {
        assert_eq!(chunk.spans.len(), 1, "{chunk:?}");
        let chapter = chapter_of(&chunk.spans[0]);
        assert!(!chunk.text.trim().is_empty());
        for &b in &chunk.blocks {
            let block = &doc.blocks[b as usize];
            assert_eq!(chapter_of(&block.span), chapter);
            assert_eq!(block.heading_path[0], chunk.heading_path[0]);
        }
    }
    let korean = chunks
        .iter()
        .find(|c| c.text.contains("나는 한국어 문장을 검색할 수"))
        .unwrap();
    assert_eq!(korean.heading_path, ["제1장 봄", "봄의 노래"]);
    assert_eq!(korean.spans, [Span::parts(PartUnit::Chapter, 3, 3)]);
    assert_eq!(
        korean.text,
        "봄의 노래\n\n나는 한국어 문장을 검색할 수 있어야 한다."
    );
    let table = chunks
        .iter()
        .find(|c| c.text.contains("김밥 | 3.00"))
        .unwrap();
    assert_eq!(table.heading_path, ["Tables and Notes", "Prices"]);
    assert_eq!(table.spans, [Span::parts(PartUnit::Chapter, 5, 5)]);
}

#[test]
fn a_broken_chapter_keeps_the_text_before_the_break() {
    let doc = parse("broken-chapter.epub").unwrap();
    assert_eq!(
        rows(&doc),
        vec![
            row(1, BlockKind::Heading, &["Whole"], "Whole"),
            row(1, BlockKind::Paragraph, &["Whole"], "A whole chapter."),
            row(2, BlockKind::Heading, &["Two"], "Two"),
            row(2, BlockKind::Paragraph, &["Two"], "Before the break."),
        ]
    );
}

#[test]
fn a_book_without_text_is_an_empty_document() {
    let doc = parse("empty.epub").unwrap();
    assert!(doc.blocks.is_empty());
    assert_eq!(doc.title.as_deref(), Some("Small Book"));
    assert_eq!(doc.lang.as_deref(), Some("en"));
    assert!(
        Plugin::chunk_document(
            doc,
            ChunkPolicy {
                target_tokens: 400,
                overlap_tokens: 0
            }
        )
        .unwrap()
        .is_empty()
    );
}

fn error(name: &str) -> PluginError {
    parse(name).expect_err(name)
}

#[test]
fn drm_protected_books_are_unsupported() {
    let PluginError::Unsupported(message) = error("drm.epub") else {
        panic!("not unsupported");
    };
    assert!(
        message.starts_with("DRM-protected (encrypted) EPUB: OEBPS/ch1.xhtml"),
        "{message}"
    );
}

#[test]
fn broken_books_are_malformed_with_the_cause() {
    let cases = [
        ("missing-opf.epub", "the package document OEBPS/content.opf"),
        ("zip-bomb.epub", "zip bomb"),
        ("truncated.epub", "not a readable ZIP archive"),
    ];
    for (name, cause) in cases {
        match error(name) {
            PluginError::Malformed(m) => assert!(m.contains(cause), "{name}: {m}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    let not_zip = Plugin::parse("x.epub".into(), b"<html>not a zip</html>".to_vec());
    assert!(matches!(not_zip, Err(PluginError::Malformed(_))));
    assert!(matches!(
        Plugin::parse("x.epub".into(), Vec::new()),
        Err(PluginError::Malformed(_))
    ));
}

#[test]
fn info_claims_epub_files() {
    let info = Plugin::info();
    assert_eq!(info.name, "epub");
    assert_eq!(info.handles, ["*.epub"]);
    assert!(info.accepts_binary);
}
