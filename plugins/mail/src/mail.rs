//! One e-mail message as the document builder needs it, whatever file it
//! came from (MIME text in a `.eml` or a mailbox, an Outlook `.msg`):
//! decoded header values, the body as plain text and the attached files.

use std::borrow::Cow;

use kebab_plugin_sdk::{LogLevel, log};

use crate::limits::{MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS, MAX_SUBJECT_CHARS};

/// The heading of a message without a subject.
pub const NO_SUBJECT: &str = "(no subject)";

/// A decoded message.
#[derive(Debug, Default)]
pub struct Mail<'a> {
    /// Senders, each `Name <address>` or a bare address.
    pub from: Vec<String>,
    /// Recipients, formatted as `from` is.
    pub to: Vec<String>,
    /// Copied recipients, formatted as `from` is.
    pub cc: Vec<String>,
    /// When it was sent (or delivered, for an Outlook message without a
    /// sending time).
    pub date: Option<MailDate>,
    /// The subject, decoded.
    pub subject: Option<String>,
    /// The Message-ID without its angle brackets.
    pub message_id: Option<String>,
    /// The body as a person reads it: lines, blank lines between
    /// paragraphs, quoted lines starting with `>`.
    pub body: String,
    /// Files attached to the message (and inline parts with a file name).
    pub attachments: Vec<Attachment<'a>>,
}

/// A point in time as a message states it.
#[derive(Debug, Clone, PartialEq)]
pub struct MailDate {
    /// RFC 3339, in the sender's offset when the message gives one.
    pub rfc3339: String,
    /// Seconds since the Unix epoch, for ordering.
    pub timestamp: i64,
}

impl MailDate {
    /// The date of a parsed header (or converted timestamp), when it is a
    /// real calendar date.
    pub fn from_parsed(date: &mail_parser::DateTime) -> Option<MailDate> {
        date.is_valid().then(|| MailDate {
            rfc3339: date.to_rfc3339(),
            timestamp: date.to_timestamp(),
        })
    }

    /// The UTC date `seconds` after the Unix epoch.
    pub fn from_timestamp(seconds: i64) -> Option<MailDate> {
        MailDate::from_parsed(&mail_parser::DateTime::from_timestamp(seconds))
    }
}

/// A file found in a message.
#[derive(Debug)]
pub struct Attachment<'a> {
    /// Its file name, without directories.
    pub name: String,
    /// Its content, transfer encoding undone.
    pub bytes: Cow<'a, [u8]>,
}

impl<'a> Mail<'a> {
    /// The subject as a heading: whitespace collapsed, at most
    /// [`MAX_SUBJECT_CHARS`] characters, [`NO_SUBJECT`] when there is none.
    pub fn heading(&self) -> String {
        let subject = one_line(self.subject.as_deref().unwrap_or(""));
        if subject.is_empty() {
            return NO_SUBJECT.to_string();
        }
        shorten(&subject, MAX_SUBJECT_CHARS)
    }

    /// Keep an attachment, renamed `name (2).ext` when an earlier one has
    /// its name; one over [`MAX_ATTACHMENT_BYTES`], or past
    /// [`MAX_ATTACHMENTS`], is left out and logged.
    pub fn add_attachment(&mut self, name: String, bytes: Cow<'a, [u8]>) {
        if self.attachments.len() >= MAX_ATTACHMENTS {
            log(
                LogLevel::Warn,
                &format!("attachment {name} left out: a message keeps at most {MAX_ATTACHMENTS}"),
            );
            return;
        }
        if bytes.len() > MAX_ATTACHMENT_BYTES {
            log(
                LogLevel::Warn,
                &format!(
                    "attachment {name} left out: {} bytes, over the {MAX_ATTACHMENT_BYTES}-byte bound",
                    bytes.len()
                ),
            );
            return;
        }
        let name = self.unique_name(name);
        self.attachments.push(Attachment { name, bytes });
    }

    /// `name`, or `stem (n).ext` with the first `n` from 2 no attachment
    /// has taken.
    fn unique_name(&self, name: String) -> String {
        let taken = |candidate: &str| self.attachments.iter().any(|a| a.name == candidate);
        if !taken(&name) {
            return name;
        }
        let (stem, ext) = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => (stem.to_string(), format!(".{ext}")),
            _ => (name.clone(), String::new()),
        };
        (2..)
            .map(|n| format!("{stem} ({n}){ext}"))
            .find(|candidate| !taken(candidate))
            .unwrap_or(name)
    }
}

/// `text` on one line: runs of whitespace (line breaks included) become one
/// space, and the ends are trimmed.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` characters, the cut marked with `…`.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if text.chars().count() > max => format!("{}…", &text[..at]),
        _ => text.to_string(),
    }
}

/// `Name <address>`, the bare address when there is no name (or the name is
/// the address), or the bare name when there is no address.
pub fn format_address(name: Option<&str>, address: Option<&str>) -> Option<String> {
    let name = one_line(name.unwrap_or(""))
        .trim_matches('"')
        .trim()
        .to_string();
    let address = address.map(str::trim).unwrap_or("");
    match (name.is_empty(), address.is_empty()) {
        (true, true) => None,
        (false, true) => Some(name),
        (true, false) => Some(address.to_string()),
        (false, false) if name.eq_ignore_ascii_case(address) => Some(address.to_string()),
        (false, false) => Some(format!("{name} <{address}>")),
    }
}

/// A file name safe to hand over: the part after the last `/` or `\`,
/// control characters dropped, whitespace collapsed, at most
/// [`crate::limits::MAX_NAME_CHARS`] characters (the extension kept);
/// `None` when nothing is left.
pub fn file_name(raw: &str) -> Option<String> {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let cleaned: String = last.chars().filter(|c| !c.is_control()).collect();
    let name = one_line(&cleaned);
    let name = name.trim_matches('.').trim();
    if name.is_empty() {
        return None;
    }
    let max = crate::limits::MAX_NAME_CHARS;
    if name.chars().count() <= max {
        return Some(name.to_string());
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if ext.chars().count() <= 16 => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    let keep = max.saturating_sub(ext.chars().count() + 1);
    Some(format!("{}{ext}", shorten(stem, keep + 1)))
}

/// The file name of a message handed over as a file: its own name with
/// `.eml` for `.eml` (or `.msg`) or added after another one, else
/// `<subject>.eml` (`(no subject).eml`).
pub fn eml_file_name(name: Option<String>, subject: Option<&str>) -> String {
    let stem = name
        .map(|n| {
            let lower = n.to_ascii_lowercase();
            match lower
                .strip_suffix(".eml")
                .or_else(|| lower.strip_suffix(".msg"))
            {
                Some(stem) => n[..stem.len()].to_string(),
                None => n,
            }
        })
        .or_else(|| subject.and_then(|s| file_name(&s.replace(['/', '\\'], "-"))))
        .unwrap_or_else(|| NO_SUBJECT.to_string());
    format!("{stem}.eml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_become_one_line_headings() {
        let mail = Mail {
            subject: Some("  Quarterly\r\n  report ".into()),
            ..Mail::default()
        };
        assert_eq!(mail.heading(), "Quarterly report");
        assert_eq!(Mail::default().heading(), NO_SUBJECT);
        let long = Mail {
            subject: Some("가".repeat(1000)),
            ..Mail::default()
        };
        assert_eq!(long.heading().chars().count(), MAX_SUBJECT_CHARS);
        assert!(long.heading().ends_with('…'));
    }

    #[test]
    fn addresses_and_file_names_are_formatted() {
        let f = |n: Option<&str>, a: Option<&str>| format_address(n, a);
        assert_eq!(
            f(Some("Kim"), Some("k@x.org")).as_deref(),
            Some("Kim <k@x.org>")
        );
        assert_eq!(
            f(Some("\"k@x.org\""), Some("k@x.org")).as_deref(),
            Some("k@x.org")
        );
        assert_eq!(f(None, Some("k@x.org")).as_deref(), Some("k@x.org"));
        assert_eq!(f(Some(" "), None), None);
        assert_eq!(
            file_name("C:\\tmp\\../report.pdf").as_deref(),
            Some("report.pdf")
        );
        assert_eq!(file_name("a\u{0}b\n.txt").as_deref(), Some("ab.txt"));
        assert_eq!(file_name(" .. "), None);
        let long = file_name(&format!("{}.pdf", "x".repeat(500))).unwrap_or_default();
        assert_eq!(long.chars().count(), crate::limits::MAX_NAME_CHARS);
        assert!(long.ends_with("….pdf"));
        assert_eq!(eml_file_name(Some("fwd.msg".into()), Some("x")), "fwd.eml");
        assert_eq!(eml_file_name(Some("Notes".into()), None), "Notes.eml");
        assert_eq!(
            eml_file_name(None, Some("Re: plan/budget")),
            "Re: plan-budget.eml"
        );
        assert_eq!(eml_file_name(None, None), "(no subject).eml");
    }

    #[test]
    fn attachments_get_unique_names_and_are_bounded() {
        let mut mail = Mail::default();
        for _ in 0..3 {
            mail.add_attachment("a.pdf".into(), Cow::Borrowed(b"%PDF"));
        }
        mail.add_attachment("README".into(), Cow::Borrowed(b""));
        mail.add_attachment("README".into(), Cow::Borrowed(b""));
        let names: Vec<&str> = mail.attachments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            ["a.pdf", "a (2).pdf", "a (3).pdf", "README", "README (2)"]
        );
        for i in 0..100 {
            mail.add_attachment(format!("{i}.txt"), Cow::Borrowed(b"x"));
        }
        assert_eq!(mail.attachments.len(), MAX_ATTACHMENTS);
        let mut big = Mail::default();
        big.add_attachment(
            "big.bin".into(),
            Cow::Owned(vec![0; MAX_ATTACHMENT_BYTES + 1]),
        );
        assert!(big.attachments.is_empty());
    }
}
