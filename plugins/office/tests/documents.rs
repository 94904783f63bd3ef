//! Word-processing fixtures made by real producers (python-docx, odfpy,
//! LibreOffice): exact text, paragraph numbers, heading paths, back
//! matter and metadata, and the same numbering whichever format holds
//! the same document.

mod common;

use common::{block, meta, paragraphs_of, parse, path_of, texts};
use kebab_plugin_sdk::{BlockKind, ChunkPolicy, PartUnit, Span};

fn strings(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_python_docx_report_reads_as_written() {
    let doc = parse("report.docx");
    assert_eq!(doc.title.as_deref(), Some("Quarterly Report"));
    assert_eq!(doc.lang.as_deref(), Some("en-US"));
    assert_eq!(meta(&doc, "author"), Some("Kim Minji"));
    assert_eq!(meta(&doc, "created"), Some("2024-03-05T09:07:00Z"));
    assert_eq!(meta(&doc, "format"), Some("docx"));

    assert_eq!(paragraphs_of(&doc, "This report covers"), (3, 3));
    assert_eq!(
        path_of(&doc, "This report covers"),
        strings(&["Introduction"])
    );
    let korean = block(&doc, "한국어");
    assert_eq!(
        korean.text,
        "한국어 문서 처리 시험입니다. 검색이 잘 되어야 합니다."
    );
    let details = block(&doc, "Details");
    assert_eq!(details.kind, BlockKind::Heading);
    assert_eq!(details.level, Some(2));
    assert_eq!(details.heading_path, strings(&["Introduction", "Details"]));

    assert_eq!(block(&doc, "Apples").text, "- Apples are red");
    assert_eq!(block(&doc, "Second step").text, "2. Second step");
    assert_eq!(block(&doc, "Second step").kind, BlockKind::List);

    let table = block(&doc, "| Region");
    assert_eq!(table.kind, BlockKind::Table);
    assert_eq!(
        table.text,
        "| Region | Sales | 지역 |\n| North | 120 | 북부 |\n| South | 95 | 남부 |\n| East | 77 | 동부 |"
    );
    assert_eq!(paragraphs_of(&doc, "| Region"), (10, 21));

    assert_eq!(block(&doc, "Kept text").text, "Kept text added words");
    assert_eq!(block(&doc, "page number").text, "The page number is 1.");
    assert_eq!(block(&doc, "Visible").text, "Visible text.");
    assert!(
        doc.blocks
            .iter()
            .all(|b| !b.text.contains("removed") && !b.text.contains("secret"))
    );
    assert_eq!(paragraphs_of(&doc, "content control"), (26, 26));
    assert_eq!(
        block(&doc, "Visit").text,
        "Visit the example site for more."
    );
    assert_eq!(path_of(&doc, "Sales grew"), strings(&["Conclusion"]));

    assert_eq!(path_of(&doc, "ACME Corp"), strings(&["Header"]));
    assert_eq!(
        path_of(&doc, "Quarterly Report footer"),
        strings(&["Footer"])
    );
    let comment = block(&doc, "Check these numbers");
    assert_eq!(comment.heading_path, strings(&["Comments"]));
    assert_eq!(comment.kind, BlockKind::Quote);
    assert_eq!(paragraphs_of(&doc, "Check these numbers"), (32, 32));
}

#[test]
fn the_same_notes_number_alike_in_five_formats() {
    for name in [
        "notes.odt",
        "notes.docx",
        "notes.fodt",
        "notes.rtf",
        "notes.doc",
    ] {
        let doc = parse(name);
        assert_eq!(doc.title.as_deref(), Some("Field Notes"), "{name}");
        assert_eq!(paragraphs_of(&doc, "Birds were counted"), (3, 3), "{name}");
        assert_eq!(
            block(&doc, "Birds were counted").text,
            "Birds were counted along the bank.",
            "{name}"
        );
        assert_eq!(paragraphs_of(&doc, "강물이 맑았고"), (4, 4), "{name}");
        assert_eq!(paragraphs_of(&doc, "Anchor paragraph"), (20, 20), "{name}");
        assert_eq!(
            paragraphs_of(&doc, "Text inside the box."),
            (21, 21),
            "{name}"
        );
        assert_eq!(
            path_of(&doc, "Field Notes header"),
            strings(&["Header"]),
            "{name}"
        );
        assert_eq!(
            path_of(&doc, "Page footer text"),
            strings(&["Footer"]),
            "{name}"
        );
        assert_eq!(
            path_of(&doc, "Counted with binoculars."),
            strings(&["Footnotes"]),
            "{name}"
        );
        assert_eq!(
            paragraphs_of(&doc, "Counted with binoculars."),
            (24, 24),
            "{name}"
        );
        assert_eq!(
            path_of(&doc, "Weather data"),
            strings(&["Endnotes"]),
            "{name}"
        );
        assert_eq!(
            path_of(&doc, "Confirm the date."),
            strings(&["Comments"]),
            "{name}"
        );
        assert_eq!(
            doc.blocks.last().map(|b| b.text.as_str()),
            Some("Confirm the date."),
            "{name}"
        );
    }
}

#[test]
fn structured_formats_keep_headings_lists_and_tables() {
    for name in ["notes.odt", "notes.docx", "notes.fodt", "notes.rtf"] {
        let doc = parse(name);
        let species = block(&doc, "Species");
        assert_eq!(species.kind, BlockKind::Heading, "{name}");
        assert_eq!(
            species.heading_path,
            strings(&["Observations", "Species"]),
            "{name}"
        );
        assert_eq!(
            path_of(&doc, "A quiet day"),
            strings(&["Summary"]),
            "{name}"
        );
        assert_eq!(block(&doc, "Heron").text, "- Heron", "{name}");
        assert_eq!(block(&doc, "두루미").text, "- 두루미", "{name}");
        assert_eq!(block(&doc, "Stay quiet").text, "2. Stay quiet", "{name}");
        assert_eq!(
            block(&doc, "| Bird").text,
            "| Bird | Count |\n| Heron | 3 |\n| Kingfisher | 5 |",
            "{name}"
        );
        assert_eq!(paragraphs_of(&doc, "| Bird"), (11, 16), "{name}");
    }
    assert_eq!(parse("notes.odt").lang.as_deref(), Some("ko-KR"));
}

#[test]
fn legacy_word_keeps_text_without_revisions_or_hidden_runs() {
    let doc = parse("report.doc");
    assert_eq!(doc.title.as_deref(), Some("Quarterly Report"));
    assert_eq!(meta(&doc, "author"), Some("Kim Minji"));
    assert_eq!(paragraphs_of(&doc, "This report covers"), (3, 3));
    assert_eq!(
        block(&doc, "한국어").text,
        "한국어 문서 처리 시험입니다. 검색이 잘 되어야 합니다."
    );
    assert_eq!(paragraphs_of(&doc, "북부"), (15, 15));
    assert_eq!(block(&doc, "Kept text").text, "Kept text added words");
    assert_eq!(block(&doc, "Visible").text, "Visible text.");
    assert_eq!(block(&doc, "page number").text, "The page number is 1.");
    assert_eq!(path_of(&doc, "ACME Corp"), strings(&["Header"]));
    assert_eq!(
        path_of(&doc, "Quarterly Report footer"),
        strings(&["Footer"])
    );
    assert_eq!(path_of(&doc, "Check these numbers"), strings(&["Comments"]));
}

#[test]
fn rtf_reads_headings_lists_fields_and_drops_revisions() {
    let doc = parse("report.rtf");
    assert_eq!(doc.title.as_deref(), Some("Quarterly Report"));
    assert_eq!(
        path_of(&doc, "Apples"),
        strings(&["Introduction", "Details"])
    );
    assert_eq!(block(&doc, "First step").text, "1. First step");
    assert_eq!(block(&doc, "Kept text").text, "Kept text added words");
    assert_eq!(block(&doc, "Visible").text, "Visible text.");
    assert_eq!(block(&doc, "page number").text, "The page number is 1.");
    assert_eq!(
        block(&doc, "한국어").text,
        "한국어 문서 처리 시험입니다. 검색이 잘 되어야 합니다."
    );
    assert_eq!(paragraphs_of(&doc, "Check these numbers"), (32, 32));
}

#[test]
fn an_empty_document_has_no_blocks_and_no_chunks() {
    let doc = parse("empty.docx");
    assert!(doc.blocks.is_empty(), "{:?}", texts(&doc));
    let policy = ChunkPolicy {
        target_tokens: 400,
        overlap_tokens: 50,
    };
    assert!(kebab_plugin_office::chunk(&doc, &policy).is_empty());
}

#[test]
fn chunks_follow_sections_and_cite_paragraphs() {
    let doc = parse("report.docx");
    let policy = ChunkPolicy {
        target_tokens: 400,
        overlap_tokens: 0,
    };
    let chunks = kebab_plugin_office::chunk(&doc, &policy);
    let details = chunks
        .iter()
        .find(|c| c.text.contains("Apples"))
        .expect("a chunk with the list");
    assert_eq!(details.heading_path, strings(&["Introduction", "Details"]));
    assert!(
        details
            .text
            .contains("- Apples are red\n- Bananas are yellow")
    );
    assert_eq!(details.spans, vec![Span::parts(PartUnit::Paragraph, 5, 21)]);
    for chunk in &chunks {
        assert!(!chunk.text.trim().is_empty());
        assert!(!chunk.spans.is_empty());
        assert!(
            chunk
                .blocks
                .iter()
                .all(|&b| (b as usize) < doc.blocks.len())
        );
    }
    let comments = chunks.last().expect("chunks");
    assert_eq!(comments.heading_path, strings(&["Comments"]));
}

#[test]
fn a_long_table_splits_between_rows_repeating_its_header() {
    let doc = parse("long_table.docx");
    let table = block(&doc, "| Item | Quantity | 비고 |");
    assert_eq!(table.heading_path, strings(&["Inventory"]));
    assert_eq!(paragraphs_of(&doc, "| Item | Quantity"), (3, 455));
    let policy = ChunkPolicy {
        target_tokens: 120,
        overlap_tokens: 20,
    };
    let chunks = kebab_plugin_office::chunk(&doc, &policy);
    let table_chunks: Vec<_> = chunks
        .iter()
        .filter(|c| c.text.contains("| Item number"))
        .collect();
    assert!(table_chunks.len() > 5, "{}", table_chunks.len());
    let mut rows_seen = Vec::new();
    for chunk in &table_chunks {
        let from = chunk
            .text
            .find("| Item | Quantity | 비고 |")
            .expect("the header row");
        let mut lines = chunk.text[from..].lines();
        assert_eq!(lines.next(), Some("| Item | Quantity | 비고 |"));
        rows_seen.extend(
            lines
                .filter(|l| l.starts_with("| Item number"))
                .map(str::to_string),
        );
        assert_eq!(chunk.heading_path, strings(&["Inventory"]));
        let cites_header = chunk.spans.iter().any(|s| {
            matches!(s,
            Span::Part(p) if p.unit == PartUnit::Paragraph && p.first <= 3 && p.last >= 5)
        });
        assert!(cites_header, "{:?}", chunk.spans);
    }
    assert_eq!(rows_seen.len(), 150, "every row once, none split");
    assert_eq!(rows_seen[41], "| Item number 42 | 294 | 메모 42 |");
    let with_row_42 = table_chunks
        .iter()
        .find(|c| c.text.contains("| Item number 42 |"))
        .expect("row 42");
    let row_42_first = 3 + 3 * 42;
    assert!(with_row_42.spans.iter().any(|s| matches!(s,
        Span::Part(p) if p.first <= row_42_first && p.last >= row_42_first + 2)));
    assert_eq!(
        table_chunks[1].spans.len(),
        2,
        "header and rows, apart: {:?}",
        table_chunks[1].spans
    );
}
