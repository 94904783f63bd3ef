//! The `mail` plugin: e-mail messages (`.eml`), mailboxes (`.mbox`, `.mbx`)
//! and Outlook messages (`.msg`).
//!
//! A message becomes a header block and its body's paragraphs under the
//! heading path `[subject]` (see [`document`] for blocks and spans); a
//! mailbox is its messages in file order, each cited as a numbered message,
//! with what a reply repeats from earlier messages left out (see
//! [`quotes`]). Attachments are handed to the host, which reads each with
//! the plugin that claims its name and cites it through the message
//! (`mail.eml › report.pdf#page=2`). Chunks come from the SDK's heading
//! chunker: every message starts with a heading block, so no chunk spans
//! two messages.
//!
//! What a file is comes from its bytes first (an OLE compound file is an
//! Outlook message whatever its name), then from its extension.

pub mod body;
pub mod codepage;
pub mod document;
pub mod eml;
pub mod html;
pub mod limits;
pub mod lzfu;
pub mod mail;
pub mod mapi;
pub mod mbox;
pub mod mime;
pub mod msg;
pub mod quotes;
pub mod rtf;
pub mod undeclared;

use std::borrow::Cow;

use kebab_plugin_sdk::heading_chunker;
use kebab_plugin_sdk::{
    Chunk, ChunkPolicy, Document, Guest, LogLevel, PluginError, PluginInfo, log,
};

use crate::document::{Builder, Place, single_metadata};
use crate::limits::{MAX_MAILBOX_BODY_BYTES, MAX_MESSAGES};
use crate::mail::{Mail, MailDate};

/// The parser label stored with every document this plugin makes.
pub const PARSER_VERSION: &str = "mail-v1";

/// The plugin type exported to the host.
pub struct Plugin;

impl Guest for Plugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "mail".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: PARSER_VERSION.into(),
            chunker_version: heading_chunker::CHUNKER_VERSION.into(),
            handles: ["*.eml", "*.mbox", "*.mbx", "*.msg"]
                .map(String::from)
                .to_vec(),
            accepts_binary: true,
        }
    }

    fn parse(path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        parse(&path, &bytes)
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(heading_chunker::chunk(&doc, &policy))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(Plugin);

/// Parse a file at workspace path `path`.
pub fn parse(path: &str, bytes: &[u8]) -> Result<Document, PluginError> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let extension = file
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if msg::is_compound_file(bytes) {
        return Ok(single(msg::read(bytes)?));
    }
    let is_mailbox = matches!(extension.as_str(), "mbox" | "mbx");
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(empty(file, is_mailbox));
    }
    if is_mailbox {
        return mailbox(file, bytes);
    }
    if extension == "msg" && !mime::looks_like_mail(bytes) {
        return Err(PluginError::Malformed(
            "not an Outlook message: the file is not an OLE compound file".into(),
        ));
    }
    let content = first_message(bytes);
    let message = mime::parse(&content, true)?;
    Ok(single(mime::to_mail(&message)))
}

/// The message of a single-message file: the file itself, or, when it was
/// saved from a mailbox (it starts with a `From ` envelope line), the first
/// message after that line.
fn first_message(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !mbox::starts_with_envelope(bytes) {
        return Cow::Borrowed(bytes);
    }
    mbox::messages(bytes).next().unwrap_or(Cow::Borrowed(bytes))
}

/// The document of one message.
fn single(mail: Mail<'_>) -> Document {
    let mut builder = Builder::default();
    builder.add(&mail, &mail.body, Place::Single);
    Document {
        title: Some(mail.heading()),
        lang: None,
        blocks: builder.finish(),
        metadata: single_metadata(&mail),
    }
}

/// The document of an empty file: no blocks; a mailbox says it holds no
/// messages.
fn empty(file: &str, is_mailbox: bool) -> Document {
    Document {
        title: Some(file.to_string()),
        lang: None,
        blocks: Vec::new(),
        metadata: if is_mailbox {
            vec![("messages".into(), "0".into())]
        } else {
            Vec::new()
        },
    }
}

/// The document of a mailbox: its messages in file order (at most
/// [`MAX_MESSAGES`], with bodies of at most [`MAX_MAILBOX_BODY_BYTES`]
/// together, within the document bounds of [`Builder`]), repeated quotes
/// and signatures left out.
fn mailbox(file: &str, bytes: &[u8]) -> Result<Document, PluginError> {
    if !mbox::starts_with_envelope(bytes) && !mime::looks_like_mail(bytes) {
        return Err(PluginError::Malformed(
            "not a mailbox: it neither starts with a `From ` line nor with a message's \
             header fields"
                .into(),
        ));
    }
    let mut mailbox = Mailbox::default();
    for raw in mbox::messages(bytes) {
        mailbox.add(&raw);
    }
    Ok(mailbox.finish(file))
}

/// A mailbox being read, message by message.
#[derive(Default)]
struct Mailbox {
    builder: Builder,
    seen: quotes::Seen,
    dates: DateRange,
    /// Messages met so far.
    count: usize,
    /// The number of the last message read.
    indexed: usize,
    /// Bytes of the bodies read so far.
    body_bytes: usize,
    /// A bound was reached: later messages are only counted.
    stopped: bool,
}

impl Mailbox {
    /// Read the next message (or only count it, past a bound).
    fn add(&mut self, raw: &[u8]) {
        self.count += 1;
        let n = self.count;
        if self.stopped || n > MAX_MESSAGES {
            return;
        }
        let Ok(message) = mime::parse(raw, false) else {
            log(
                LogLevel::Warn,
                &format!("message {n}: no header fields; left out"),
            );
            return;
        };
        self.body_bytes += mime::body_len(&message);
        if self.body_bytes > MAX_MAILBOX_BODY_BYTES {
            log(
                LogLevel::Warn,
                &format!(
                    "message {n}: the mailbox's bodies pass {MAX_MAILBOX_BODY_BYTES} bytes; \
                     this and later messages are not indexed"
                ),
            );
            self.stopped = true;
            return;
        }
        let mail = mime::to_mail(&message);
        let body = self.seen.strip(&mail.body);
        self.stopped = !self.builder.add(&mail, &body, Place::Message(n as u32));
        self.indexed = n;
        self.dates.add(mail.date.as_ref());
    }

    /// The document: blocks, `messages` (and `messages_indexed` when a
    /// bound left some out) and the date range.
    fn finish(self, file: &str) -> Document {
        if self.count > MAX_MESSAGES {
            log(
                LogLevel::Warn,
                &format!(
                    "mailbox holds {} messages: indexed the first {MAX_MESSAGES} \
                     (the bound on messages per file)",
                    self.count
                ),
            );
        }
        let mut metadata = vec![("messages".to_string(), self.count.to_string())];
        if self.indexed < self.count {
            metadata.push(("messages_indexed".to_string(), self.indexed.to_string()));
        }
        metadata.extend(self.dates.metadata());
        Document {
            title: Some(file.to_string()),
            lang: None,
            blocks: self.builder.finish(),
            metadata,
        }
    }
}

/// The earliest and latest date of a mailbox's messages.
#[derive(Default)]
struct DateRange {
    first: Option<MailDate>,
    last: Option<MailDate>,
}

impl DateRange {
    fn add(&mut self, date: Option<&MailDate>) {
        let Some(date) = date else {
            return;
        };
        if self
            .first
            .as_ref()
            .is_none_or(|f| date.timestamp < f.timestamp)
        {
            self.first = Some(date.clone());
        }
        if self
            .last
            .as_ref()
            .is_none_or(|l| date.timestamp > l.timestamp)
        {
            self.last = Some(date.clone());
        }
    }

    /// `first_date`, `last_date` and `date_range` (`first/last`, an ISO 8601
    /// interval), when any message is dated.
    fn metadata(self) -> Vec<(String, String)> {
        let (Some(first), Some(last)) = (self.first, self.last) else {
            return Vec::new();
        };
        vec![
            (
                "date_range".into(),
                format!("{}/{}", first.rfc3339, last.rfc3339),
            ),
            ("first_date".into(), first.rfc3339),
            ("last_date".into(), last.rfc3339),
        ]
    }
}
