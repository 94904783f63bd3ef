//! Messages into blocks, metadata and attachments handed to the host.
//!
//! Each message gives a header block (kind `heading`, level 1: `From:`,
//! `To:`, `Cc:`, `Date:` (RFC 3339), `Subject:` and `Attachments:` lines,
//! values decoded) and then one block per body paragraph (kind `quote` when
//! every line is quoted, else `paragraph`), all under the heading path
//! `[subject]` (`["(no subject)"]` without one). Because every message
//! starts with a heading block, the heading chunker never lets a chunk span
//! two messages.
//!
//! Spans: a single message (`.eml`, `.msg`) numbers its blocks as
//! paragraphs from 1, the header block being paragraph 1 (`#para=3` is the
//! second body paragraph); a mailbox cites every block of message `n` (from
//! 1, in file order) as message `n` (`#message=12`).

use kebab_plugin_sdk::{Block, BlockKind, LogLevel, PartUnit, Span, attachments, log};

use crate::body::paragraphs;
use crate::limits::{MAX_BLOCKS, MAX_TEXT_BYTES};
use crate::mail::{Mail, NO_SUBJECT, one_line, shorten};

/// Addresses listed per header field; more are counted (`and 12 more`).
const MAX_LISTED_ADDRESSES: usize = 100;

/// Characters of one listed address, subject line or metadata value.
const MAX_VALUE_CHARS: usize = 4_096;

/// Where a message sits in its file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Place {
    /// The only message of the file: blocks are numbered paragraphs.
    Single,
    /// Message `n` (from 1) of a mailbox.
    Message(u32),
}

impl Place {
    /// What the attachments of the message belong to.
    fn within(self) -> Option<Span> {
        match self {
            Place::Single => None,
            Place::Message(n) => Some(Span::parts(PartUnit::Message, n, n)),
        }
    }
}

/// The blocks of a document being built, within the document bounds.
#[derive(Default)]
pub struct Builder {
    blocks: Vec<Block>,
    text_bytes: usize,
    /// A bound was reached: nothing more is added.
    full: bool,
}

impl Builder {
    /// Add the blocks of a message whose body (after any quote removal) is
    /// `body`, and hand its attachments to the host. `false` once a
    /// document bound is reached (logged; the rest of the message is left
    /// out).
    pub fn add(&mut self, mail: &Mail<'_>, body: &str, place: Place) -> bool {
        let heading = vec![mail.heading()];
        if !self.push(BlockKind::Heading, header_text(mail), &heading, place) {
            return false;
        }
        for paragraph in paragraphs(body) {
            let kind = if paragraph.quoted {
                BlockKind::Quote
            } else {
                BlockKind::Paragraph
            };
            if !self.push(kind, paragraph.text, &heading, place) {
                return false;
            }
        }
        hand_over(mail, &heading, place.within());
        true
    }

    fn push(&mut self, kind: BlockKind, text: String, heading: &[String], place: Place) -> bool {
        if self.full {
            return false;
        }
        if self.blocks.len() >= MAX_BLOCKS || self.text_bytes + text.len() > MAX_TEXT_BYTES {
            self.full = true;
            log(
                LogLevel::Warn,
                &format!(
                    "stopped at {} blocks and {} bytes of text (bounds: {MAX_BLOCKS} blocks, \
                     {MAX_TEXT_BYTES} bytes): the rest of the file is not indexed",
                    self.blocks.len(),
                    self.text_bytes
                ),
            );
            return false;
        }
        let span = match place {
            Place::Single => {
                let n = self.blocks.len() as u32 + 1;
                Span::parts(PartUnit::Paragraph, n, n)
            }
            Place::Message(n) => Span::parts(PartUnit::Message, n, n),
        };
        self.text_bytes += text.len();
        self.blocks.push(Block {
            kind,
            heading_path: heading.to_vec(),
            span,
            text,
            level: (kind == BlockKind::Heading).then_some(1),
            lang: None,
        });
        true
    }

    /// The blocks built.
    pub fn finish(self) -> Vec<Block> {
        self.blocks
    }
}

/// The header block's text: one `Field: value` line per field the message
/// has; the subject line always (`(no subject)` without one).
pub fn header_text(mail: &Mail<'_>) -> String {
    let subject = one_line(mail.subject.as_deref().unwrap_or(""));
    let subject = if subject.is_empty() {
        NO_SUBJECT.to_string()
    } else {
        shorten(&subject, MAX_VALUE_CHARS)
    };
    let names: Vec<String> = mail.attachments.iter().map(|a| a.name.clone()).collect();
    let fields = [
        ("From", listed(&mail.from)),
        ("To", listed(&mail.to)),
        ("Cc", listed(&mail.cc)),
        (
            "Date",
            mail.date
                .as_ref()
                .map(|d| d.rfc3339.clone())
                .unwrap_or_default(),
        ),
        ("Subject", subject),
        ("Attachments", names.join(", ")),
    ];
    fields
        .iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(field, value)| format!("{field}: {value}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Addresses joined with `, `, at most [`MAX_LISTED_ADDRESSES`] of them
/// (`and N more` after), each at most [`MAX_VALUE_CHARS`] characters.
fn listed(addresses: &[String]) -> String {
    let mut text = addresses
        .iter()
        .take(MAX_LISTED_ADDRESSES)
        .map(|a| shorten(a, MAX_VALUE_CHARS))
        .collect::<Vec<_>>()
        .join(", ");
    if addresses.len() > MAX_LISTED_ADDRESSES {
        text.push_str(&format!(
            " and {} more",
            addresses.len() - MAX_LISTED_ADDRESSES
        ));
    }
    text
}

/// The document metadata of a single message: `from`, `to`, `cc`, `date`,
/// `subject` and `message_id`, each when the message has it.
pub fn single_metadata(mail: &Mail<'_>) -> Vec<(String, String)> {
    let fields = [
        ("from", listed(&mail.from)),
        ("to", listed(&mail.to)),
        ("cc", listed(&mail.cc)),
        (
            "date",
            mail.date
                .as_ref()
                .map(|d| d.rfc3339.clone())
                .unwrap_or_default(),
        ),
        (
            "subject",
            shorten(
                &one_line(mail.subject.as_deref().unwrap_or("")),
                MAX_VALUE_CHARS,
            ),
        ),
        (
            "message_id",
            shorten(
                mail.message_id.as_deref().unwrap_or("").trim(),
                MAX_VALUE_CHARS,
            ),
        ),
    ];
    fields
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(key, value)| (key.to_string(), value))
        .collect()
}

/// Hand every attachment to the host, under the message's heading, within
/// its message in a mailbox; log the ones the host did not take.
fn hand_over(mail: &Mail<'_>, heading: &[String], within: Option<Span>) {
    for attachment in &mail.attachments {
        if !attachments::add(&attachment.name, &attachment.bytes, heading, within.clone()) {
            log(
                LogLevel::Info,
                &format!("the host did not take attachment {}", attachment.name),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::MailDate;
    use std::borrow::Cow;

    #[test]
    fn header_lines_name_what_the_message_has() {
        let mut mail = Mail {
            from: vec!["Kim <kim@example.com>".into()],
            to: (0..102).map(|i| format!("u{i}@example.com")).collect(),
            date: MailDate::from_timestamp(1_709_600_000),
            ..Mail::default()
        };
        mail.add_attachment("a.pdf".into(), Cow::Borrowed(b"%PDF"));
        let text = header_text(&mail);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "From: Kim <kim@example.com>");
        assert!(lines[1].starts_with("To: u0@example.com, u1@example.com"));
        assert!(lines[1].ends_with("u99@example.com and 2 more"));
        assert_eq!(lines[2], "Date: 2024-03-05T00:53:20Z");
        assert_eq!(lines[3], "Subject: (no subject)");
        assert_eq!(lines[4], "Attachments: a.pdf");
    }
}
