//! Single messages (`.eml`): header block, paragraphs numbered from the
//! header block, decoding (encoded words, quoted-printable, base64, EUC-KR,
//! ISO-2022-JP, format=flowed, HTML), attachments and nested messages.

use kebab_plugin_sdk::{BlockKind, PartUnit, PluginError};

use crate::common::{block_with, chunks, fixture, parse, parse_fixture, part, path, texts};

const REPORT: &str = "분기 보고서 — Q3 budget";

#[test]
fn a_multipart_message_gives_its_header_and_plain_paragraphs() {
    let (doc, _) = parse_fixture("report.eml");
    assert_eq!(doc.title.as_deref(), Some(REPORT));
    assert_eq!(
        texts(&doc),
        vec![
            "From: 김민수 <minsu@example.com>\n\
             To: Lee Jiwoo <jiwoo@example.com>, team@example.com\n\
             Cc: Park Seo-yeon <seoyeon@example.com>\n\
             Date: 2024-03-05T09:30:00+09:00\n\
             Subject: 분기 보고서 — Q3 budget\n\
             Attachments: report.pdf, notes.docx",
            "안녕하세요 팀 여러분,",
            "The Q3 budget report is attached. Travel spending fell by 12% while\n\
             équipement costs rose slightly.",
            "- Review the PDF before Thursday\n- Add comments to notes.docx",
            "--\nKim Minsu\nPlanning team",
        ]
    );
    for (i, block) in doc.blocks.iter().enumerate() {
        let n = i as u32 + 1;
        assert_eq!(block.span, part(PartUnit::Paragraph, n, n));
        assert_eq!(block.heading_path, path(REPORT));
    }
    assert_eq!(doc.blocks[0].kind, BlockKind::Heading);
    assert_eq!(
        block_with(&doc, "Travel spending").span,
        part(PartUnit::Paragraph, 3, 3)
    );
    let meta: Vec<(&str, &str)> = doc
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        meta,
        vec![
            ("from", "김민수 <minsu@example.com>"),
            ("to", "Lee Jiwoo <jiwoo@example.com>, team@example.com"),
            ("cc", "Park Seo-yeon <seoyeon@example.com>"),
            ("date", "2024-03-05T09:30:00+09:00"),
            ("subject", REPORT),
            ("message_id", "report-1@example.com"),
        ]
    );
}

#[test]
fn attachments_are_handed_over_under_the_subject() {
    let (_, handed) = parse_fixture("report.eml");
    let names: Vec<&str> = handed.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["report.pdf", "notes.docx"]);
    let pdf = &handed[0].bytes;
    assert!(pdf.starts_with(b"%PDF-1.4\n"));
    assert!(pdf.windows(20).any(|w| w == b"travel spending fell"));
    assert!(pdf.ends_with(b"%%EOF\n"));
    assert!(handed[1].bytes.starts_with(b"PK\x03\x04"));
    for a in &handed {
        assert_eq!(a.heading_path, path(REPORT));
        assert_eq!(a.within, None);
    }
}

#[test]
fn chunks_cite_paragraph_ranges_under_the_subject() {
    let (doc, _) = parse_fixture("report.eml");
    let chunks = chunks(&doc);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].spans, vec![part(PartUnit::Paragraph, 1, 5)]);
    assert_eq!(chunks[0].heading_path, path(REPORT));
    assert_eq!(chunks[0].blocks, vec![0, 1, 2, 3, 4]);
    assert!(chunks[0].text.starts_with("From: 김민수"));
}

#[test]
fn an_html_only_body_reads_as_a_person_sees_it() {
    let (doc, _) = parse_fixture("html-only.eml");
    assert_eq!(
        texts(&doc)[1..],
        [
            "Spring & summer",
            "Café hours change on April 15.\n한국어 안내: 한국",
            "- Longer opening hours\n- New terrace",
            "Day | Hours\nSat | 9–18",
            "> Best coffee in town.",
        ]
    );
    assert_eq!(block_with(&doc, "Best coffee").kind, BlockKind::Quote);
    let all = texts(&doc).join("\n");
    for hidden in ["track()", "color", "preheader", "ignored"] {
        assert!(!all.contains(hidden), "{hidden} leaked");
    }
}

#[test]
fn legacy_korean_and_japanese_charsets_are_decoded() {
    let (doc, _) = parse_fixture("euc-kr.eml");
    assert_eq!(doc.title.as_deref(), Some("주간 회의 안내"));
    assert_eq!(
        texts(&doc),
        vec![
            "From: 인사팀 <hr@example.kr>\nTo: staff@example.kr\n\
             Date: 2024-03-06T10:00:00+09:00\nSubject: 주간 회의 안내",
            "이번 주 회의는 목요일 오후 3시입니다.",
            "장소: 3층 회의실",
        ]
    );
    let (doc, _) = parse_fixture("iso-2022-jp.eml");
    assert_eq!(doc.title.as_deref(), Some("会議の議事録"));
    assert_eq!(
        texts(&doc)[1..],
        ["本日の会議の議事録を送ります。", "予算は承認されました。"]
    );
}

#[test]
fn flowed_text_is_joined_back() {
    let (doc, _) = parse_fixture("flowed.eml");
    assert_eq!(
        texts(&doc)[1..],
        [
            "This paragraph was wrapped by the sender's mail client at a narrow width, \
             and joins back into one line.",
            "> A quoted line that also wraps.",
        ]
    );
}

#[test]
fn a_forwarded_message_is_handed_over_as_eml_and_reads_back() {
    let (doc, handed) = parse_fixture("forward.eml");
    assert!(
        doc.blocks[0]
            .text
            .ends_with("Attachments: Venue contract.eml")
    );
    assert_eq!(
        texts(&doc)[1],
        "Forwarding the venue contract for your records."
    );
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].name, "Venue contract.eml");
    assert_eq!(handed[0].heading_path, path("Fwd: Venue contract"));
    let (inner, inner_handed) = parse(&handed[0].name, &handed[0].bytes);
    let inner = inner.expect("the nested message parses");
    assert_eq!(inner.title.as_deref(), Some("Venue contract"));
    assert_eq!(
        texts(&inner),
        vec![
            "From: venue@example.com\nTo: minsu@example.com\nDate: 2024-03-04T15:00:00+09:00\n\
             Subject: Venue contract\nAttachments: terms.txt",
            "The signed venue contract is attached.",
        ]
    );
    assert_eq!(inner_handed.len(), 1);
    assert_eq!(inner_handed[0].name, "terms.txt");
    assert_eq!(
        String::from_utf8_lossy(&inner_handed[0].bytes).replace("\r\n", "\n"),
        "Room: Hall B\nCapacity: 120\n"
    );
}

#[test]
fn broken_mime_indexes_what_parses() {
    let (doc, handed) = parse_fixture("broken.eml");
    assert_eq!(
        texts(&doc),
        vec![
            "From: sender@example.com\nTo: receiver@example.com\n\
             Date: 2024-03-09T09:00:00Z\nSubject: Broken parts",
            "The text part survives an unknown charset.",
            "A second part whose closing boundary never comes.",
        ]
    );
    assert!(
        handed.is_empty(),
        "an attachment that does not decode is left out"
    );
}

#[test]
fn a_message_without_body_is_its_header_block() {
    let (doc, _) = parse_fixture("headers-only.eml");
    assert_eq!(
        texts(&doc),
        vec![
            "From: sender@example.com\nTo: receiver@example.com\n\
             Date: 2024-03-10T09:00:00Z\nSubject: Only headers"
        ]
    );
}

#[test]
fn empty_files_give_empty_documents_and_text_that_is_not_mail_is_refused() {
    let (doc, _) = parse_fixture("empty.eml");
    assert!(doc.blocks.is_empty());
    let (err, _) = parse("not-mail.eml", &fixture("not-mail.eml"));
    match err {
        Err(PluginError::Malformed(m)) => assert!(m.starts_with("not an e-mail message"), "{m}"),
        other => panic!("expected malformed, got {other:?}"),
    }
}

#[test]
fn a_message_saved_from_a_mailbox_or_misnamed_still_reads() {
    let saved = b"From kim@example.com Mon Jan  1 00:00:00 2024\n\
                  From: kim@example.com\nSubject: Saved from a mailbox\n\n\
                  >From the archive.\n";
    for name in ["saved.eml", "saved.msg"] {
        let (doc, _) = parse(name, saved);
        let doc = doc.unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(
            texts(&doc),
            vec![
                "From: kim@example.com\nSubject: Saved from a mailbox",
                "From the archive.",
            ]
        );
    }
}
