//! A decoded message written back as an Internet message (`.eml`): how a
//! message embedded in an Outlook message is handed to the host, which
//! reads it with this plugin as a file of its own.
//!
//! Header values are written as UTF-8 (RFC 6532), one line each; the body
//! is `text/plain; charset=utf-8`; attachments follow as base64 parts named
//! with RFC 2231 `filename*`. The output depends only on the message, so
//! the same file always hands over the same bytes.

use std::fmt::Write;

use crate::mail::{Mail, one_line};

/// Base64 characters per encoded line (RFC 2045).
const BASE64_LINE: usize = 76;

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The message as `.eml` bytes.
pub fn write(mail: &Mail<'_>) -> Vec<u8> {
    let mut out = String::new();
    let date = mail
        .date
        .as_ref()
        .map(|d| mail_parser::DateTime::from_timestamp(d.timestamp).to_rfc822());
    let message_id = mail.message_id.as_ref().map(|id| format!("<{id}>"));
    let fields = [
        ("From", Some(mail.from.join(", "))),
        ("To", Some(mail.to.join(", "))),
        ("Cc", Some(mail.cc.join(", "))),
        ("Date", date),
        ("Subject", mail.subject.clone()),
        ("Message-ID", message_id),
    ];
    for (name, value) in fields {
        let value = one_line(value.as_deref().unwrap_or(""));
        if !value.is_empty() {
            let _ = write!(out, "{name}: {value}\r\n");
        }
    }
    out.push_str("MIME-Version: 1.0\r\n");
    let body = crlf(&mail.body);
    if mail.attachments.is_empty() {
        out.push_str(TEXT_PART_HEADERS);
        out.push_str("\r\n");
        out.push_str(&body);
        return out.into_bytes();
    }
    let boundary = boundary_for(&body);
    let _ = write!(
        out,
        "Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n--{boundary}\r\n{TEXT_PART_HEADERS}\r\n{body}\r\n"
    );
    for attachment in &mail.attachments {
        let _ = write!(
            out,
            "--{boundary}\r\nContent-Type: application/octet-stream\r\n\
             Content-Disposition: attachment; filename*=UTF-8''{}\r\n\
             Content-Transfer-Encoding: base64\r\n\r\n",
            percent_encode(&attachment.name)
        );
        base64_lines(&attachment.bytes, &mut out);
    }
    let _ = write!(out, "--{boundary}--\r\n");
    out.into_bytes()
}

/// The headers of the UTF-8 text part.
const TEXT_PART_HEADERS: &str =
    "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n";

/// Line breaks as CRLF.
fn crlf(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\r\n")
}

/// A multipart boundary that does not occur in the body (base64 parts can
/// hold neither `=` mid-line nor `_`).
fn boundary_for(body: &str) -> String {
    (0u32..)
        .map(|n| format!("=_kebab_{n}"))
        .find(|b| !body.contains(b.as_str()))
        .unwrap_or_default()
}

/// RFC 2231 percent-encoding of a UTF-8 value (`attr-char`s kept).
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for &b in value.as_bytes() {
        if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `bytes` in base64, [`BASE64_LINE`] characters a line, each line ended
/// with CRLF.
fn base64_lines(bytes: &[u8], out: &mut String) {
    let mut line = 0;
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            let c = if i <= group.len() {
                char::from(BASE64[((n >> shift) & 63) as usize])
            } else {
                '='
            };
            out.push(c);
        }
        line += 4;
        if line >= BASE64_LINE {
            out.push_str("\r\n");
            line = 0;
        }
    }
    if line > 0 {
        out.push_str("\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::MailDate;
    use crate::mime;
    use std::borrow::Cow;

    #[test]
    fn written_messages_read_back_the_same() {
        let mut mail = Mail {
            from: vec!["김민수 <minsu@example.com>".into()],
            to: vec!["Lee <lee@example.com>".into()],
            date: MailDate::from_timestamp(1_709_600_000),
            subject: Some("회의록: budget".into()),
            message_id: Some("abc@example.com".into()),
            body: "첫 줄\n\nsecond paragraph".into(),
            ..Mail::default()
        };
        mail.add_attachment(
            "보고서 v2.pdf".into(),
            Cow::Owned(b"%PDF-1.4 any bytes \x00\xff".to_vec()),
        );
        let bytes = write(&mail);
        let parsed = mime::parse(&bytes, true).expect("parses");
        let read = mime::to_mail(&parsed);
        assert_eq!(read.from, mail.from);
        assert_eq!(read.to, mail.to);
        assert_eq!(read.subject, mail.subject);
        assert_eq!(read.message_id, mail.message_id);
        assert_eq!(read.date, mail.date);
        assert_eq!(read.body.replace("\r\n", "\n"), mail.body);
        assert_eq!(read.attachments.len(), 1);
        assert_eq!(read.attachments[0].name, "보고서 v2.pdf");
        assert_eq!(&*read.attachments[0].bytes, &*mail.attachments[0].bytes);
    }

    #[test]
    fn base64_matches_the_standard_alphabet() {
        let mut out = String::new();
        base64_lines(b"Man is", &mut out);
        assert_eq!(out, "TWFuIGlz\r\n");
        out.clear();
        base64_lines(b"Ma", &mut out);
        assert_eq!(out, "TWE=\r\n");
        out.clear();
        base64_lines(&[0u8; 60], &mut out);
        assert_eq!(out.lines().map(str::len).collect::<Vec<_>>(), vec![76, 4]);
    }
}
