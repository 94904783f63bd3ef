//! 8-bit text a message does not declare: a raw (not RFC 2047 encoded)
//! subject or address, or a text part without a `charset` (or labelled
//! UTF-8 or ASCII when it is neither). Old mail is full of both,
//! in the sender's own charset (EUC-KR subjects from Korean clients,
//! Latin-1 from European ones); read as UTF-8 it turns into replacement
//! characters. Such text is read again from the message's bytes in the
//! first charset the message declares anywhere (other than UTF-8), else in
//! Windows-1252.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use mail_parser::decoders::base64::base64_decode;
use mail_parser::decoders::quoted_printable::quoted_printable_decode;
use mail_parser::{Encoding as TransferEncoding, HeaderName, Message, MessagePart, MimeHeaders};

use crate::mail::one_line;

/// The charset undeclared 8-bit text of `message` is most likely in.
fn fallback(message: &Message<'_>) -> &'static Encoding {
    message
        .parts
        .iter()
        .filter_map(|p| p.content_type()?.attribute("charset"))
        .filter_map(|label| Encoding::for_label(label.trim().as_bytes()))
        .find(|&e| e != UTF_8)
        .unwrap_or(WINDOWS_1252)
}

/// The subject, read again from its raw bytes when they are not UTF-8.
pub fn subject(message: &Message<'_>) -> Option<String> {
    let parsed = message.subject()?;
    if !parsed.contains('\u{FFFD}') {
        return Some(parsed.to_string());
    }
    Some(header(message, HeaderName::Subject).map_or_else(|| parsed.to_string(), |s| one_line(&s)))
}

/// The value of the header field `name`, decoded in the fallback charset,
/// when its raw bytes are not UTF-8.
pub fn header(message: &Message<'_>, name: HeaderName<'_>) -> Option<String> {
    let field = message
        .root_part()
        .headers
        .iter()
        .find(|h| h.name == name)?;
    let raw = message
        .raw_message()
        .get(field.offset_start as usize..field.offset_end as usize)?;
    if std::str::from_utf8(raw).is_ok() {
        return None;
    }
    let (text, _, _) = fallback(message).decode(raw);
    Some(text.into_owned())
}

/// The text of a part that declares no charset (or UTF-8 or ASCII) and did
/// not decode as such, read again from the message's bytes; `None` when the
/// part's text stands as parsed.
pub fn part_text(message: &Message<'_>, part: &MessagePart<'_>, parsed: &str) -> Option<String> {
    let declared = part
        .content_type()
        .and_then(|ct| ct.attribute("charset"))
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()));
    let trusted = declared.is_some_and(|e| e != UTF_8 && e != WINDOWS_1252);
    if trusted || !parsed.contains('\u{FFFD}') {
        return None;
    }
    let raw = message
        .raw_message()
        .get(part.offset_body as usize..part.offset_end as usize)?;
    let bytes = match part.encoding {
        TransferEncoding::QuotedPrintable => quoted_printable_decode(raw)?,
        TransferEncoding::Base64 => base64_decode(raw)?,
        TransferEncoding::None => raw.to_vec(),
    };
    if std::str::from_utf8(&bytes).is_ok() {
        return None;
    }
    let (text, _, _) = fallback(message).decode(&bytes);
    Some(text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mail_parser::MessageParser;

    #[test]
    fn raw_euc_kr_subject_and_body_follow_the_declared_charset() {
        let mut raw = b"From: a@example.kr\r\nSubject: ".to_vec();
        raw.extend_from_slice(b"\xc8\xb8\xc0\xc7 \xbe\xc8\xb3\xbb");
        raw.extend_from_slice(
            b"\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\n\
              Content-Type: text/plain; charset=euc-kr\r\n\r\nok\r\n--x\r\n\
              Content-Type: text/plain\r\n\r\n\xc7\xd1\xb1\xb9\r\n--x--\r\n",
        );
        let message = MessageParser::default().parse(&raw).expect("parses");
        assert_eq!(subject(&message).as_deref(), Some("회의 안내"));
        let part = message.part(2).expect("second text part");
        let parsed = part.text_contents().unwrap_or_default();
        assert_eq!(
            part_text(&message, part, parsed).as_deref().map(str::trim),
            Some("한국")
        );
    }

    #[test]
    fn mislabelled_latin1_and_raw_header_values_are_read_again() {
        let raw = b"To: J\xfcrgen <j@example.de>\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\nFr\xf6sche\r\n";
        let message = MessageParser::default().parse(&raw[..]).expect("parses");
        assert_eq!(
            header(&message, HeaderName::To).as_deref().map(str::trim),
            Some("Jürgen <j@example.de>")
        );
        let part = message.part(0).expect("body");
        let parsed = part.text_contents().unwrap_or_default();
        assert_eq!(
            part_text(&message, part, parsed).as_deref().map(str::trim),
            Some("Frösche")
        );
    }

    #[test]
    fn undeclared_latin1_falls_back_to_windows_1252() {
        let raw = b"Subject: Fr\xf6sche\r\n\r\nM\xfcller\r\n";
        let message = MessageParser::default().parse(&raw[..]).expect("parses");
        assert_eq!(subject(&message).as_deref(), Some("Frösche"));
        let part = message.part(0).expect("body");
        let parsed = part.text_contents().unwrap_or_default();
        assert_eq!(
            part_text(&message, part, parsed).as_deref().map(str::trim),
            Some("Müller")
        );
    }
}
