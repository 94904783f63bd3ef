//! Outlook messages: a real one (`ascii.msg`, written by Aspose.Email,
//! from msg-parser-rs' test data) and messages built here as MS-OXMSG lays
//! them out, with the `cfb` crate: recipients, code pages, an HTML-only
//! body, attachments and an embedded message handed over as `.eml`.

use std::io::{Cursor, Write};

use cfb::CompoundFile;
use kebab_plugin_sdk::{PartUnit, PluginError};

use crate::common::{fixture, parse, parse_fixture, part, path, texts};

/// Property types.
const LONG: u16 = 0x0003;
const SYSTIME: u16 = 0x0040;

/// 2024-03-05T00:30:00Z as a FILETIME.
const MARCH_5: u64 = (1_709_598_600 + 11_644_473_600) * 10_000_000;

/// A `.msg` being built: one compound file, storages and streams by path.
struct Msg {
    file: CompoundFile<Cursor<Vec<u8>>>,
}

impl Msg {
    fn new() -> Msg {
        Msg {
            file: CompoundFile::create(Cursor::new(Vec::new())).expect("create"),
        }
    }

    fn storage(&mut self, path: &str) -> &mut Msg {
        self.file.create_storage(path).expect("storage");
        self
    }

    fn stream(&mut self, path: &str, bytes: &[u8]) -> &mut Msg {
        let mut stream = self.file.create_stream(path).expect("stream");
        stream.write_all(bytes).expect("write");
        self
    }

    /// A UTF-16 string property `id` of the object at `at`.
    fn unicode(&mut self, at: &str, id: u16, text: &str) -> &mut Msg {
        let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        self.stream(&format!("{at}/__substg1.0_{id:04X}001F"), &bytes)
    }

    /// An 8-bit string property (bytes in the message's code page).
    fn string8(&mut self, at: &str, id: u16, bytes: &[u8]) -> &mut Msg {
        self.stream(&format!("{at}/__substg1.0_{id:04X}001E"), bytes)
    }

    fn binary(&mut self, at: &str, id: u16, bytes: &[u8]) -> &mut Msg {
        self.stream(&format!("{at}/__substg1.0_{id:04X}0102"), bytes)
    }

    /// The fixed-size properties of the object at `at`, behind a header of
    /// `header` bytes.
    fn fixed(&mut self, at: &str, header: usize, values: &[(u16, u16, u64)]) -> &mut Msg {
        let mut bytes = vec![0u8; header];
        for &(id, kind, value) in values {
            bytes.extend_from_slice(&((u32::from(id) << 16) | u32::from(kind)).to_le_bytes());
            bytes.extend_from_slice(&6u32.to_le_bytes());
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        self.stream(&format!("{at}/__properties_version1.0"), &bytes)
    }

    fn finish(self) -> Vec<u8> {
        let mut file = self.file;
        file.flush().expect("flush");
        file.into_inner().into_inner()
    }
}

const PDF: &[u8] = b"%PDF-1.4\n% a stand-in for a report\n%%EOF\n";

/// A Unicode message: recipients (To, Cc, Bcc), a file attachment, an
/// attachment that is only a link, and an embedded message with a file of
/// its own.
fn unicode_message() -> Vec<u8> {
    let mut msg = Msg::new();
    let root = "";
    msg.unicode(root, 0x001A, "IPM.Note")
        .unicode(root, 0x0037, "분기 예산 검토 (Outlook)")
        .unicode(root, 0x0C1A, "김민수")
        .unicode(root, 0x0C1E, "SMTP")
        .unicode(root, 0x0C1F, "minsu@example.com")
        .unicode(root, 0x0E04, "Lee Jiwoo")
        .unicode(
            root,
            0x1000,
            "안녕하세요,\r\n\r\nPlease review the attached budget before Friday.\r\n",
        )
        .unicode(root, 0x1035, "<outlook-1@example.com>\0")
        .fixed(
            root,
            32,
            &[(0x0039, SYSTIME, MARCH_5), (0x3FFD, LONG, 1200)],
        );
    let recipients = [
        (1, "Lee Jiwoo", Some("jiwoo@example.com"), None),
        (2, "Park Seo-yeon", None, Some("seoyeon@example.com")),
        (3, "Hidden Copy", Some("bcc@example.com"), None),
    ];
    for (i, (kind, name, smtp, address)) in recipients.into_iter().enumerate() {
        let at = format!("/__recip_version1.0_#{i:08X}");
        msg.storage(&at)
            .unicode(&at, 0x3001, name)
            .fixed(&at, 8, &[(0x0C15, LONG, kind)]);
        if let Some(smtp) = smtp {
            msg.unicode(&at, 0x39FE, smtp);
        }
        if let Some(address) = address {
            msg.unicode(&at, 0x3002, "SMTP")
                .unicode(&at, 0x3003, address);
        }
    }
    let file = "/__attach_version1.0_#00000000";
    msg.storage(file)
        .fixed(file, 8, &[(0x3705, LONG, 1)])
        .unicode(file, 0x3704, "budget~1.pdf")
        .unicode(file, 0x3707, "budget.pdf")
        .binary(file, 0x3701, PDF);
    let embedded = "/__attach_version1.0_#00000001";
    let inner = format!("{embedded}/__substg1.0_3701000D");
    let inner_file = format!("{inner}/__attach_version1.0_#00000000");
    msg.storage(embedded)
        .fixed(embedded, 8, &[(0x3705, LONG, 5)])
        .unicode(embedded, 0x3001, "Venue contract")
        .storage(&inner)
        .fixed(&inner, 24, &[(0x0E06, SYSTIME, MARCH_5)])
        .unicode(&inner, 0x0037, "Venue contract")
        .unicode(&inner, 0x0C1A, "Venue Office")
        .unicode(&inner, 0x5D01, "venue@example.com")
        .unicode(&inner, 0x1000, "The signed contract is attached.\r\n")
        .storage(&inner_file)
        .fixed(&inner_file, 8, &[(0x3705, LONG, 1)])
        .unicode(&inner_file, 0x3707, "terms.txt")
        .binary(&inner_file, 0x3701, b"Room: Hall B");
    let link = "/__attach_version1.0_#00000002";
    msg.storage(link)
        .fixed(link, 8, &[(0x3705, LONG, 2)])
        .unicode(link, 0x3707, "shared.xlsx");
    msg.finish()
}

#[test]
fn an_outlook_message_gives_header_body_and_attachments() {
    let (doc, handed) = parse("budget.msg", &unicode_message());
    let doc = doc.expect("parses");
    let subject = "분기 예산 검토 (Outlook)";
    assert_eq!(doc.title.as_deref(), Some(subject));
    assert_eq!(
        texts(&doc),
        vec![
            "From: 김민수 <minsu@example.com>\nTo: Lee Jiwoo <jiwoo@example.com>\n\
             Cc: Park Seo-yeon <seoyeon@example.com>\nDate: 2024-03-05T00:30:00Z\n\
             Subject: 분기 예산 검토 (Outlook)\nAttachments: budget.pdf, Venue contract.eml",
            "안녕하세요,",
            "Please review the attached budget before Friday.",
        ]
    );
    assert_eq!(doc.blocks[2].span, part(PartUnit::Paragraph, 3, 3));
    assert!(doc.metadata.contains(&(
        "message_id".to_string(),
        "outlook-1@example.com".to_string()
    )));
    let names: Vec<&str> = handed.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["budget.pdf", "Venue contract.eml"]);
    assert_eq!(handed[0].bytes, PDF);
    assert_eq!(handed[0].heading_path, path(subject));
    assert_eq!(handed[0].within, None);
}

#[test]
fn an_embedded_message_reads_back_as_eml_with_its_own_attachment() {
    let (_, handed) = parse("budget.msg", &unicode_message());
    let (inner, inner_handed) = parse(&handed[1].name, &handed[1].bytes);
    let inner = inner.expect("the embedded message parses");
    assert_eq!(
        texts(&inner),
        vec![
            "From: Venue Office <venue@example.com>\nDate: 2024-03-05T00:30:00Z\n\
             Subject: Venue contract\nAttachments: terms.txt",
            "The signed contract is attached.",
        ]
    );
    assert_eq!(inner_handed.len(), 1);
    assert_eq!(inner_handed[0].name, "terms.txt");
    assert_eq!(inner_handed[0].bytes, b"Room: Hall B");
}

#[test]
fn eight_bit_strings_and_html_bodies_follow_the_code_page() {
    let mut msg = Msg::new();
    let (subject, _, _) = encoding_rs::EUC_KR.encode("주간 보고");
    let (html, _, _) = encoding_rs::EUC_KR
        .encode("<html><p>보고서를 확인하세요.</p><p>Thanks &amp; regards</p></html>");
    msg.string8("", 0x0037, &subject)
        .string8("", 0x0C1A, b"Kim")
        .string8("", 0x0E04, b"Lee; Park")
        .binary("", 0x1013, &html)
        .fixed("", 32, &[(0x3FFD, LONG, 949), (0x3FDE, LONG, 949)]);
    let (doc, _) = parse("weekly.msg", &msg.finish());
    let doc = doc.expect("parses");
    assert_eq!(
        texts(&doc),
        vec![
            "From: Kim\nTo: Lee, Park\nSubject: 주간 보고",
            "보고서를 확인하세요.",
            "Thanks & regards",
        ]
    );
}

#[test]
fn an_rtf_only_body_is_decompressed_and_read() {
    // MS-OXRTFCP 4.1's compressed "{\rtf1\ansi\ansicpg1252\pard hello world}".
    let compressed = [
        0x2d, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xf1, 0xc5, 0xc7,
        0xa7, 0x03, 0x00, 0x0a, 0x00, 0x72, 0x63, 0x70, 0x67, 0x31, 0x32, 0x35, 0x42, 0x32, 0x0a,
        0xf3, 0x20, 0x68, 0x65, 0x6c, 0x09, 0x00, 0x20, 0x62, 0x77, 0x05, 0xb0, 0x6c, 0x64, 0x7d,
        0x0a, 0x80, 0x0f, 0xa0,
    ];
    let mut msg = Msg::new();
    msg.unicode("", 0x0037, "RTF only")
        .binary("", 0x1009, &compressed)
        .fixed("", 32, &[]);
    let (doc, _) = parse("rtf.msg", &msg.finish());
    assert_eq!(texts(&doc.expect("parses"))[1..], ["hello world"]);
}

#[test]
fn a_real_outlook_file_reads() {
    let (doc, handed) = parse_fixture("ascii.msg");
    assert_eq!(
        texts(&doc),
        vec![
            "From: from@domain.com\nTo: to@domain.com\nSubject: creating an outlook message file",
            "This message is created by Aspose.Email",
        ]
    );
    assert_eq!(
        doc.title.as_deref(),
        Some("creating an outlook message file")
    );
    assert!(handed.is_empty());
}

#[test]
fn broken_and_foreign_compound_files_are_refused() {
    let (doc, _) = parse("corrupt.msg", &fixture("corrupt.msg"));
    match doc {
        Err(PluginError::Malformed(m)) => assert!(m.starts_with("corrupt Outlook message"), "{m}"),
        other => panic!("expected malformed, got {other:?}"),
    }
    let mut word = Msg::new();
    word.stream("/WordDocument", b"not mail");
    let (doc, _) = parse("report.msg", &word.finish());
    match doc {
        Err(PluginError::Malformed(m)) => assert!(m.starts_with("not an Outlook message"), "{m}"),
        other => panic!("expected malformed, got {other:?}"),
    }
    let (doc, _) = parse("text.msg", b"plain text, not a compound file");
    assert!(matches!(doc, Err(PluginError::Malformed(_))), "{doc:?}");
}
