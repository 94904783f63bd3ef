//! Mailboxes: messages numbered in file order, `>From ` unescaped, quotes
//! and signatures already in earlier messages left out, chunks that never
//! span two messages, attachments within their message, and the bound on
//! messages per file.

use std::time::Instant;

use kebab_plugin_mail::limits::MAX_MESSAGES;
use kebab_plugin_sdk::{BlockKind, Document, PartUnit, PluginError, Span};

use crate::common::{block_with, chunks, parse, parse_fixture, part, path};

/// The texts of message `n`'s blocks.
fn message(doc: &Document, n: u32) -> Vec<&str> {
    doc.blocks
        .iter()
        .filter(|b| b.span == part(PartUnit::Message, n, n))
        .map(|b| b.text.as_str())
        .collect()
}

#[test]
fn every_message_is_cited_by_its_number() {
    let (doc, _) = parse_fixture("thread.mbox");
    assert_eq!(doc.title.as_deref(), Some("thread.mbox"));
    assert_eq!(
        message(&doc, 1),
        vec![
            "From: Kim Minsu <minsu@example.com>\nTo: Lee Jiwoo <jiwoo@example.com>\n\
             Date: 2024-03-05T09:30:00+09:00\nSubject: Budget review",
            "Can we move the budget review to Thursday afternoon?\nThe venue is booked until noon.",
            "From the finance side, nothing changes.",
            "--\nKim Minsu\nPlanning team",
        ]
    );
    assert_eq!(
        block_with(&doc, "예산 자료를 첨부합니다").span,
        part(PartUnit::Message, 4, 4)
    );
    for block in &doc.blocks {
        let Span::Part(p) = &block.span else {
            panic!("a message span: {:?}", block.span);
        };
        assert_eq!((p.unit, p.first), (PartUnit::Message, p.last));
    }
    let headings: Vec<&Vec<String>> = doc
        .blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Heading)
        .map(|b| &b.heading_path)
        .collect();
    assert_eq!(
        headings,
        [
            &path("Budget review"),
            &path("Re: Budget review"),
            &path("Re: Budget review"),
            &path("예산 자료 첨부"),
            &path("(no subject)"),
        ]
    );
    let meta: Vec<(&str, &str)> = doc
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        meta,
        vec![
            ("messages", "5"),
            (
                "date_range",
                "2024-03-05T09:30:00+09:00/2024-03-07T08:00:00+09:00"
            ),
            ("first_date", "2024-03-05T09:30:00+09:00"),
            ("last_date", "2024-03-07T08:00:00+09:00"),
        ]
    );
}

#[test]
fn replies_leave_out_what_earlier_messages_said() {
    let (doc, _) = parse_fixture("thread.mbox");
    assert_eq!(
        message(&doc, 2)[1..],
        [
            "Thursday at 2 pm works for me. I will bring the travel figures.",
            "--\nLee Jiwoo",
        ]
    );
    assert_eq!(
        message(&doc, 3)[1..],
        ["Great, see you Thursday. Room 401 is ours from 2 pm."]
    );
    assert_eq!(message(&doc, 5)[1..], ["Count me in for Thursday."]);
    let repeated = doc
        .blocks
        .iter()
        .filter(|b| b.text.contains("venue is booked"))
        .count();
    assert_eq!(repeated, 1, "the quoted sentence is indexed once");
}

#[test]
fn chunks_never_span_two_messages() {
    let (doc, _) = parse_fixture("thread.mbox");
    let chunks = chunks(&doc);
    assert_eq!(chunks.len(), 5);
    for (i, chunk) in chunks.iter().enumerate() {
        let n = i as u32 + 1;
        assert_eq!(chunk.spans, vec![part(PartUnit::Message, n, n)]);
        for &b in &chunk.blocks {
            assert_eq!(doc.blocks[b as usize].span, part(PartUnit::Message, n, n));
        }
    }
    assert_eq!(chunks[3].heading_path, path("예산 자료 첨부"));
}

#[test]
fn attachments_belong_to_their_message() {
    let (doc, handed) = parse_fixture("thread.mbox");
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].name, "budget.pdf");
    assert!(handed[0].bytes.starts_with(b"%PDF-1.4"));
    assert_eq!(handed[0].heading_path, path("예산 자료 첨부"));
    assert_eq!(handed[0].within, Some(part(PartUnit::Message, 4, 4)));
    assert!(message(&doc, 4)[0].ends_with("Attachments: budget.pdf"));
}

/// A mailbox of `count` short messages, each quoting the one before.
fn big_mailbox(count: usize) -> Vec<u8> {
    let mut out = String::with_capacity(count * 420);
    for i in 0..count {
        out.push_str(&format!(
            "From user{i}@example.com Mon Jan  1 00:00:00 2024\n\
             From: User {i} <user{i}@example.com>\nTo: list@example.com\n\
             Subject: Topic {}\nDate: Mon, 1 Jan 2024 00:{:02}:00 +0000\n\
             Message-ID: <m{i}@example.com>\n\n\
             Message number {i} says something about item {i} of the list.\n\
             A second line for message {i}, with more words in it.\n\n\
             On Monday, user {} wrote:\n> Message number {} says something about item {} of the list.\n\n\
             -- \nUser {i}\n\n",
            i % 500,
            i % 60,
            i.saturating_sub(1),
            i.saturating_sub(1),
            i.saturating_sub(1),
        ));
    }
    out.into_bytes()
}

#[test]
fn a_hundred_thousand_messages_stop_at_the_bound_in_time() {
    let mailbox = big_mailbox(100_000);
    let started = Instant::now();
    let (doc, _) = parse("big.mbox", &mailbox);
    let elapsed = started.elapsed();
    let doc = doc.expect("parses");
    let meta = |key: &str| {
        doc.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(meta("messages"), Some("100000"));
    assert_eq!(
        meta("messages_indexed"),
        Some(MAX_MESSAGES.to_string().as_str())
    );
    let last = MAX_MESSAGES as u32;
    assert_eq!(
        doc.blocks.last().map(|b| b.span.clone()),
        Some(part(PartUnit::Message, last, last))
    );
    assert!(
        !doc.blocks
            .iter()
            .skip_while(|b| b.span == part(PartUnit::Message, 1, 1))
            .any(|b| b.text.starts_with('>') || b.text.contains("wrote:")),
        "every later quote repeats the message before it"
    );
    let chunks = chunks(&doc);
    assert!(chunks.len() >= MAX_MESSAGES && chunks.len() <= 100_000);
    // Optimised builds only: an unoptimised test build is several times
    // slower than the component the host runs.
    if !cfg!(debug_assertions) {
        assert!(elapsed.as_secs_f64() < 3.0, "took {elapsed:?}");
    }
}

#[test]
fn a_mailbox_that_is_not_mail_is_refused() {
    let (doc, _) = parse("notes.mbox", b"just some notes\nthat are not mail\n");
    assert!(matches!(doc, Err(PluginError::Malformed(_))), "{doc:?}");
    let (doc, _) = parse("empty.mbox", b"");
    let doc = doc.expect("an empty mailbox parses");
    assert!(doc.blocks.is_empty());
    assert_eq!(
        doc.metadata,
        vec![("messages".to_string(), "0".to_string())]
    );
}
