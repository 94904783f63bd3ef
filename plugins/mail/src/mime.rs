//! Internet messages (RFC 5322 with MIME, as in `.eml` files and mailboxes)
//! read with `mail-parser`: encoded words, quoted-printable and base64,
//! charsets (ISO-2022-JP, EUC-KR, … through `encoding_rs`; undeclared
//! 8-bit text through [`crate::undeclared`]),
//! `multipart/alternative` and nested `message/rfc822` parts.
//!
//! The body is the text/plain part (`format=flowed` joined back), or the
//! HTML part as text when there is no plain one. Attachments are the parts
//! with a file name that are not the body; a nested message is one too,
//! named after its subject (`<subject>.eml`). Signature parts (S/MIME,
//! PGP) are not attachments anyone reads. Broken MIME (lost boundaries, bad
//! base64, unknown charsets) gives what `mail-parser` recovers: the text of
//! a part whose boundary never closes joins the body, and an attachment
//! that does not decode is left out (logged).

use std::borrow::Cow;

use kebab_plugin_sdk::{LogLevel, PluginError, log};
use mail_parser::{
    Address, Encoding, HeaderName, Message, MessageParser, MessagePart, MimeHeaders, PartType,
};

use crate::body::unflow;
use crate::html;
use crate::mail::{Mail, MailDate, eml_file_name, file_name, format_address};
use crate::undeclared;

/// Header fields of which at least one shows that a file is a message.
const MAIL_HEADERS: &[&str] = &[
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "message-id",
    "received",
    "return-path",
    "mime-version",
    "content-type",
    "sender",
    "reply-to",
    "in-reply-to",
    "references",
    "delivered-to",
    "x-mailer",
];

/// Header lines read when deciding whether a file is a message.
const SNIFFED_HEADER_LINES: usize = 200;

/// Lines that are not header fields tolerated among them (a damaged
/// message still reads).
const MAX_BROKEN_HEADER_LINES: usize = 2;

/// Content types of parts that only sign or wrap a message.
const SIGNATURES: &[&str] = &[
    "application/pkcs7-signature",
    "application/x-pkcs7-signature",
    "application/pgp-signature",
    "application/pgp-keys",
];

/// Parse a message. `strict` (a file claimed as one message) first checks
/// that it starts with header fields a message has, so that a file that is
/// not mail is refused as malformed; a mailbox's messages are read as they
/// come.
pub fn parse(bytes: &[u8], strict: bool) -> Result<Message<'_>, PluginError> {
    if strict && !looks_like_mail(bytes) {
        return Err(PluginError::Malformed(
            "not an e-mail message: it does not start with header fields such as \
             From, To, Subject or Date"
                .into(),
        ));
    }
    MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| PluginError::Malformed("not an e-mail message: no header fields".into()))
}

/// Whether `bytes` start (after an optional mbox `From ` line) with a
/// header section holding at least one field every message has (among at
/// most [`MAX_BROKEN_HEADER_LINES`] lines that are not fields).
pub fn looks_like_mail(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64 << 10)];
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty()).peekable();
    if lines.peek().is_some_and(|l| l.starts_with("From ")) {
        lines.next();
    }
    let mut known = 0;
    let mut broken = 0;
    for line in lines.take(SNIFFED_HEADER_LINES) {
        if line.trim().is_empty() || broken > MAX_BROKEN_HEADER_LINES {
            break;
        }
        if line.starts_with([' ', '\t']) {
            continue;
        }
        match line.split_once(':') {
            Some((name, _)) if !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic()) => {
                known += usize::from(MAIL_HEADERS.contains(&name.to_ascii_lowercase().as_str()));
            }
            _ => broken += 1,
        }
    }
    known > 0
}

/// The message as the document builder needs it.
pub fn to_mail<'m>(message: &'m Message<'_>) -> Mail<'m> {
    let mut mail = Mail {
        from: address_field(message, HeaderName::From),
        to: address_field(message, HeaderName::To),
        cc: address_field(message, HeaderName::Cc),
        date: message.date().and_then(MailDate::from_parsed),
        subject: undeclared::subject(message),
        message_id: message.message_id().map(str::to_string),
        body: body(message),
        attachments: Vec::new(),
    };
    add_attachments(message, &mut mail);
    mail
}

/// The addresses of the header field `name` (`From` falls back on
/// `Sender`); raw 8-bit names are read again in the message's charset.
fn address_field(message: &Message<'_>, name: HeaderName<'static>) -> Vec<String> {
    let parsed = match name {
        HeaderName::From => message.from().or_else(|| message.sender()),
        _ => message.header(name.clone()).and_then(|v| v.as_address()),
    };
    let list = addresses(parsed);
    if !list.iter().any(|a| a.contains('\u{FFFD}')) {
        return list;
    }
    let Some(text) = undeclared::header(message, name.clone()) else {
        return list;
    };
    let field = format!("{}: {}\r\n\r\n", name.as_str(), text.trim());
    MessageParser::default()
        .parse_headers(field.as_bytes())
        .map_or(list, |m| {
            addresses(m.header(name).and_then(|v| v.as_address()))
        })
}

/// `Name <address>` for each address of a header (group members too).
fn addresses(address: Option<&Address<'_>>) -> Vec<String> {
    let Some(address) = address else {
        return Vec::new();
    };
    address
        .iter()
        .filter_map(|a| format_address(a.name.as_deref(), a.address.as_deref()))
        .collect()
}

/// The body text: the plain parts, or the HTML parts as text; then the
/// text of unnamed parts `mail-parser` recovered from broken MIME (a part
/// whose boundary never closes).
fn body(message: &Message<'_>) -> String {
    let ids = if message.text_body.is_empty() {
        &message.html_body
    } else {
        &message.text_body
    };
    let recovered = message
        .attachments
        .iter()
        .filter_map(|&id| message.part(id))
        .filter(|p| p.is_encoding_problem && p.attachment_name().is_none());
    let texts: Vec<String> = ids
        .iter()
        .filter_map(|&id| message.part(id))
        .chain(recovered)
        .filter_map(|part| part_text(message, part))
        .filter(|t| !t.trim().is_empty())
        .collect();
    if texts.is_empty() && is_encrypted(message) {
        log(
            LogLevel::Info,
            "the message body is encrypted (S/MIME or PGP): only its header is indexed",
        );
    }
    texts.join("\n\n")
}

/// The bytes of the body parts a message's body is read from.
pub fn body_len(message: &Message<'_>) -> usize {
    message
        .text_body
        .iter()
        .chain(&message.html_body)
        .filter_map(|&id| message.part(id))
        .map(MessagePart::len)
        .sum()
}

/// The text of a body part (undeclared 8-bit text read again in the
/// message's charset).
fn part_text(message: &Message<'_>, part: &MessagePart<'_>) -> Option<String> {
    match &part.body {
        PartType::Text(text) => {
            let text =
                undeclared::part_text(message, part, text).unwrap_or_else(|| text.to_string());
            Some(match flowed(part) {
                Some(delete_space) => unflow(&text, delete_space),
                None => text,
            })
        }
        PartType::Html(markup) => {
            let reread = undeclared::part_text(message, part, markup);
            Some(html::to_text(reread.as_deref().unwrap_or(markup)))
        }
        _ => None,
    }
}

/// `Some(delsp)` for a `format=flowed` text part.
fn flowed(part: &MessagePart<'_>) -> Option<bool> {
    let content_type = part.content_type()?;
    let format = content_type.attribute("format")?;
    format.eq_ignore_ascii_case("flowed").then(|| {
        content_type
            .attribute("delsp")
            .is_some_and(|d| d.eq_ignore_ascii_case("yes"))
    })
}

fn is_encrypted(message: &Message<'_>) -> bool {
    message.parts.iter().any(|p| {
        p.content_type().is_some_and(|ct| {
            let subtype = ct.subtype().unwrap_or("");
            (ct.ctype().eq_ignore_ascii_case("multipart")
                && subtype.eq_ignore_ascii_case("encrypted"))
                || subtype.eq_ignore_ascii_case("pkcs7-mime")
                || subtype.eq_ignore_ascii_case("x-pkcs7-mime")
        })
    })
}

/// Collect the attachments: named parts that are not the body, and nested
/// messages; parts whose transfer encoding does not decode are left out.
fn add_attachments<'m>(message: &'m Message<'_>, mail: &mut Mail<'m>) {
    for &id in &message.attachments {
        let Some(part) = message.part(id) else {
            continue;
        };
        if is_signature(part) {
            continue;
        }
        if part.is_encoding_problem {
            if let Some(name) = part.attachment_name() {
                log(
                    LogLevel::Warn,
                    &format!(
                        "attachment {name} is damaged (its encoding does not decode): left out"
                    ),
                );
            }
            continue;
        }
        let named = part.attachment_name().and_then(file_name);
        let (name, bytes) = match &part.body {
            PartType::Message(nested) => (
                eml_file_name(named, nested.subject()),
                nested_bytes(message, part, nested),
            ),
            _ => match named {
                Some(name) => (name, part.contents()),
                None => continue,
            },
        };
        mail.add_attachment(name, Cow::Borrowed(bytes));
    }
}

fn is_signature(part: &MessagePart<'_>) -> bool {
    part.content_type().is_some_and(|ct| {
        let full = format!("{}/{}", ct.ctype(), ct.subtype().unwrap_or(""));
        SIGNATURES.iter().any(|s| full.eq_ignore_ascii_case(s))
    })
}

/// The bytes of a nested message: decoded when the part was encoded, else
/// its span of the enclosing message (`mail-parser` keeps the enclosing
/// message's bytes for a nested message it read in place).
fn nested_bytes<'m>(
    message: &'m Message<'_>,
    part: &'m MessagePart<'_>,
    nested: &'m Message<'_>,
) -> &'m [u8] {
    if part.encoding != Encoding::None {
        return nested.raw_message();
    }
    message
        .raw_message()
        .get(part.offset_body as usize..part.offset_end as usize)
        .unwrap_or(nested.raw_message())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mail_is_told_from_other_text() {
        assert!(looks_like_mail(b"From: a@b.c\r\nSubject: x\r\n\r\nbody"));
        assert!(looks_like_mail(
            b"From a@b.c Mon Jan  1 00:00:00 2024\nX-Id: 1\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nhi"
        ));
        assert!(!looks_like_mail(
            b"# Title\n\nSome markdown: with a colon\n"
        ));
        assert!(!looks_like_mail(b"name: value\nother: thing\n"));
        assert!(!looks_like_mail(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        assert!(!looks_like_mail(b""));
    }
}
