//! Mailboxes (`.mbox`, `.mbx`): the messages of the file, in file order.
//!
//! - A message starts at a `From ` line (the envelope line) at the start of
//!   the file or after a blank line. The line must look like an envelope
//!   (`From <sender> <date>`: a sender and a digit after it), so a body
//!   line that happens to start with "From " is not taken for one.
//! - mboxrd/mboxo escaping is undone: a body line `>From …` (any number of
//!   `>`) loses one `>`.
//! - mboxcl/mboxcl2: a `Content-Length:` header is honoured only when it is
//!   consistent (the body it measures ends at the end of the file or right
//!   before the next envelope line); then that body may hold unescaped
//!   `From ` lines. Otherwise it is ignored.
//! - Both LF and CRLF line ends are read.

use std::borrow::Cow;

use memchr::memmem;

/// The messages of a mailbox, in file order, without envelope lines.
pub struct Messages<'a> {
    data: &'a [u8],
    /// Where the next message's envelope line starts.
    pos: usize,
}

/// Iterate the messages of `data`. A file that does not start with an
/// envelope line (after blank lines) is read as one message.
pub fn messages(data: &[u8]) -> Messages<'_> {
    Messages {
        data,
        pos: skip_blank_lines(data, 0),
    }
}

/// Whether the file starts (after blank lines) with an envelope line.
pub fn starts_with_envelope(data: &[u8]) -> bool {
    let start = skip_blank_lines(data, 0);
    is_envelope(line_at(data, start))
}

impl<'a> Iterator for Messages<'a> {
    type Item = Cow<'a, [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.data.len() {
            return None;
        }
        let data = self.data;
        let first = line_at(data, self.pos);
        let content_start = if is_envelope(first) {
            next_line(data, self.pos)
        } else {
            self.pos
        };
        let end =
            measured_end(data, content_start).unwrap_or_else(|| next_envelope(data, content_start));
        self.pos = end;
        Some(unescape(&data[content_start..end]))
    }
}

/// The offset after the line starting at `pos` (past its line break).
fn next_line(data: &[u8], pos: usize) -> usize {
    data[pos..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(data.len(), |i| pos + i + 1)
}

/// The line starting at `pos`, without its line break.
fn line_at(data: &[u8], pos: usize) -> &[u8] {
    let end = next_line(data, pos);
    let line = &data[pos.min(end)..end];
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

fn skip_blank_lines(data: &[u8], mut pos: usize) -> usize {
    while pos < data.len() && is_blank(line_at(data, pos)) {
        pos = next_line(data, pos);
    }
    pos
}

/// Whether a line is an envelope line: `From `, a sender, and a date (some
/// digit) after it.
fn is_envelope(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"From ") else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    let Some(space) = rest.iter().position(|&b| b == b' ' || b == b'\t') else {
        return false;
    };
    space > 0 && rest[space..].iter().any(u8::is_ascii_digit)
}

/// The start of the next envelope line after `from` that follows a blank
/// line, or the end of the data.
fn next_envelope(data: &[u8], from: usize) -> usize {
    let rest = data.get(from..).unwrap_or_default();
    for at in memmem::find_iter(rest, b"\nFrom ") {
        let line_break = from + at;
        let line = line_break + 1;
        if follows_blank_line(data, from, line_break) && is_envelope(line_at(data, line)) {
            return line;
        }
    }
    data.len()
}

/// Whether the line ended by the line break at `line_break` is blank
/// (`from`, where the search started, is a line start).
fn follows_blank_line(data: &[u8], from: usize, line_break: usize) -> bool {
    let start = memchr::memrchr(b'\n', &data[from..line_break]).map_or(from, |i| from + i + 1);
    is_blank(&data[start..line_break])
}

/// The end of a message whose header states a consistent `Content-Length`:
/// the body it measures ends at the end of the data, or is followed by an
/// envelope line (after at most one blank line).
fn measured_end(data: &[u8], start: usize) -> Option<usize> {
    let mut pos = start;
    let mut length: Option<usize> = None;
    loop {
        if pos >= data.len() {
            return None;
        }
        let line = line_at(data, pos);
        pos = next_line(data, pos);
        if is_blank(line) {
            break;
        }
        if let Some(value) = header_value(line, b"content-length") {
            length = std::str::from_utf8(value).ok()?.trim().parse().ok();
        }
    }
    let end = pos.checked_add(length?)?;
    if end > data.len() {
        return None;
    }
    if end == data.len() {
        return Some(end);
    }
    let after = if is_blank(line_at(data, end)) {
        next_line(data, end)
    } else {
        end
    };
    (after >= data.len() || is_envelope(line_at(data, after))).then_some(after)
}

/// The value of a header line named `name` (lower case).
fn header_value<'l>(line: &'l [u8], name: &[u8]) -> Option<&'l [u8]> {
    let colon = line.iter().position(|&b| b == b':')?;
    line[..colon]
        .trim_ascii()
        .eq_ignore_ascii_case(name)
        .then(|| &line[colon + 1..])
}

/// A message with `>From ` escaping undone (one `>` removed from lines
/// that are `>`s then `From `); borrowed when no line is escaped.
fn unescape(message: &[u8]) -> Cow<'_, [u8]> {
    if memmem::find(message, b">From ").is_none() {
        return Cow::Borrowed(message);
    }
    let escaped = |line: &[u8]| {
        let quotes = line.iter().take_while(|&&b| b == b'>').count();
        quotes > 0 && line[quotes..].starts_with(b"From ")
    };
    let mut pos = 0;
    let mut out: Option<Vec<u8>> = None;
    while pos < message.len() {
        let end = next_line(message, pos);
        let line = &message[pos..end];
        match (&mut out, escaped(line)) {
            (None, false) => {}
            (None, true) => {
                let mut copy = message[..pos].to_vec();
                copy.extend_from_slice(&line[1..]);
                out = Some(copy);
            }
            (Some(copy), true) => copy.extend_from_slice(&line[1..]),
            (Some(copy), false) => copy.extend_from_slice(line),
        }
        pos = end;
    }
    out.map_or(Cow::Borrowed(message), Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(data: &str) -> Vec<String> {
        messages(data.as_bytes())
            .map(|m| String::from_utf8_lossy(&m).into_owned())
            .collect()
    }

    #[test]
    fn messages_split_at_envelope_lines_after_blank_lines() {
        let mbox = "From a@x Mon Jan  1 00:00:00 2024\nSubject: one\n\nFrom here on, text.\n\
                    >From the escaped line\n>>From twice\n\nFrom b@x Tue Jan  2 00:00:00 2024\n\
                    Subject: two\n\nbody two\n";
        assert_eq!(
            split(mbox),
            vec![
                "Subject: one\n\nFrom here on, text.\nFrom the escaped line\n>From twice\n\n",
                "Subject: two\n\nbody two\n",
            ]
        );
        assert!(starts_with_envelope(mbox.as_bytes()));
        assert!(!starts_with_envelope(b"Subject: x\n\nFrom a@x 2024\n"));
    }

    #[test]
    fn a_consistent_content_length_keeps_unescaped_from_lines() {
        let body = "line\n\nFrom a@x Mon Jan  1 00:00:00 2024 in the body\n";
        let mbox = format!(
            "From a@x Mon Jan  1 00:00:00 2024\r\nContent-Length: {}\r\n\r\n{body}\nFrom b@x 2024\nSubject: b\n\nB\n",
            body.len()
        );
        let parts = split(&mbox);
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert!(parts[0].ends_with("in the body\n\n"));
        let wrong = "From a@x 2024\nContent-Length: 3\n\nlong body\n\nFrom b@x 2024\n\nB\n";
        assert_eq!(split(wrong).len(), 2);
        assert_eq!(split(wrong)[0], "Content-Length: 3\n\nlong body\n\n");
    }

    #[test]
    fn thunderbird_and_gmail_envelopes_split_too() {
        let mbox = "\r\nFrom - Tue Mar 05 09:30:00 2024\r\nSubject: a\r\n\r\nA\r\n\r\n\
                    From 1790000000000000000@xxx Wed Mar 06 14:00:00 +0000 2024\r\nSubject: b\r\n\r\nB\r\n";
        assert_eq!(
            split(mbox),
            vec!["Subject: a\r\n\r\nA\r\n\r\n", "Subject: b\r\n\r\nB\r\n"]
        );
        assert!(!is_envelope(b"From the desk of Kim"));
        assert!(!is_envelope(b"From: kim@example.com 2024"));
    }

    #[test]
    fn a_file_without_envelope_is_one_message_and_empty_is_none() {
        assert_eq!(split("Subject: x\n\nbody"), vec!["Subject: x\n\nbody"]);
        assert!(split("").is_empty());
        assert!(split("\n\n").is_empty());
    }
}
