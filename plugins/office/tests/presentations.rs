//! Presentation fixtures made by real producers (python-pptx, odfpy,
//! LibreOffice): slides in presentation order, titles, notes, tables,
//! groups, hidden slides, and one chunk per slide.

mod common;

use common::{block, meta, parse};
use kebab_plugin_sdk::{BlockKind, ChunkPolicy, Span};

fn slide_of(doc: &kebab_plugin_sdk::Document, needle: &str) -> u32 {
    match block(doc, needle).span {
        Span::Slide(n) => n,
        ref other => panic!("{needle:?} cites {other:?}"),
    }
}

#[test]
fn the_deck_in_three_formats_keeps_presentation_order_notes_and_groups() {
    for name in ["deck.pptx", "deck.odp", "deck.ppt"] {
        let doc = parse(name);
        assert_eq!(doc.title.as_deref(), Some("Team Deck"), "{name}");
        assert_eq!(meta(&doc, "slides"), Some("5"), "{name}");
        assert_eq!(meta(&doc, "hidden_slides"), Some("1"), "{name}");
        assert_eq!(slide_of(&doc, "Team Update"), 1, "{name}");
        assert_eq!(slide_of(&doc, "Numbers"), 2, "{name}");
        assert_eq!(slide_of(&doc, "1800"), 2, "{name}");
        assert_eq!(slide_of(&doc, "Ship the search feature"), 3, "{name}");
        let title = block(&doc, "Goals");
        assert_eq!(title.kind, BlockKind::Heading, "{name}");
        assert_eq!(
            title.heading_path,
            vec!["Slide 3: Goals".to_string()],
            "{name}"
        );
        assert_eq!(
            block(&doc, "Ship").text,
            "Ship the search feature\n한국어 검색 지원",
            "{name}"
        );
        let notes = block(&doc, "Mention the beta users.");
        assert_eq!(notes.text, "Notes:\nMention the beta users.", "{name}");
        assert_eq!(notes.span, Span::Slide(3), "{name}");
        assert_eq!(slide_of(&doc, "Grouped text box"), 4, "{name}");
        assert_eq!(slide_of(&doc, "Second grouped box"), 4, "{name}");
        assert_eq!(
            block(&doc, "Grouped").heading_path,
            vec!["Slide 4".to_string()],
            "{name}"
        );
        assert_eq!(
            block(&doc, "Hidden slide content").heading_path,
            vec!["Slide 5 (hidden): Backup".to_string()],
            "{name}"
        );
    }
}

#[test]
fn tables_on_slides_read_as_rows() {
    for name in ["deck.pptx", "deck.odp"] {
        let doc = parse(name);
        let table = block(&doc, "| Quarter");
        assert_eq!(table.kind, BlockKind::Table, "{name}");
        assert_eq!(
            table.text, "| Quarter | Users |\n| Q1 | 1200 |\n| Q2 | 1800 |",
            "{name}"
        );
    }
}

#[test]
fn opendocument_talks_packaged_and_flat() {
    let packaged = parse("talk.odp");
    assert_eq!(packaged.title.as_deref(), Some("River Talk"));
    assert_eq!(
        block(&packaged, "Birds").heading_path,
        vec!["Slide 2: Birds".to_string()]
    );
    for (name, doc) in [("talk.odp", packaged), ("talk.fodp", parse("talk.fodp"))] {
        assert_eq!(slide_of(&doc, "물총새: 5"), 2, "{name}");
        assert_eq!(block(&doc, "Herons").text, "Herons: 3\n물총새: 5", "{name}");
        assert_eq!(
            block(&doc, "Point at the chart.").text,
            "Notes:\nPoint at the chart.",
            "{name}"
        );
        assert_eq!(slide_of(&doc, "Point at the chart."), 2, "{name}");
        assert!(
            block(&doc, "Not shown").heading_path[0].starts_with("Slide 3 (hidden)"),
            "{name}"
        );
        assert_eq!(meta(&doc, "hidden_slides"), Some("1"), "{name}");
    }
}

#[test]
fn one_chunk_per_slide_and_long_slides_split_citing_their_slide() {
    let doc = parse("deck.pptx");
    let policy = ChunkPolicy {
        target_tokens: 400,
        overlap_tokens: 40,
    };
    let chunks = kebab_plugin_office::chunk(&doc, &policy);
    assert_eq!(chunks.len(), 5);
    assert_eq!(chunks[2].spans, vec![Span::Slide(3)]);
    assert_eq!(
        chunks[2].text,
        "Goals\n\nShip the search feature\n한국어 검색 지원\n\nNotes:\nMention the beta users."
    );
    let tiny = ChunkPolicy {
        target_tokens: 5,
        overlap_tokens: 1,
    };
    let pieces = kebab_plugin_office::chunk(&doc, &tiny);
    let third: Vec<_> = pieces
        .iter()
        .filter(|c| c.spans == vec![Span::Slide(3)])
        .collect();
    assert!(third.len() > 2);
    assert!(
        third
            .iter()
            .all(|c| c.heading_path == vec!["Slide 3: Goals".to_string()])
    );
    assert!(third.iter().any(|c| c.text.contains("beta users")));
}
