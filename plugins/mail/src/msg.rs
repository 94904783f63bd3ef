//! Outlook messages (`.msg`, MS-OXMSG): an OLE compound file of MAPI
//! properties, read with the `cfb` crate (which, fed thousands of
//! corrupted `.msg` files, returned errors and never panicked, where
//! `msg_parser` 0.3 panicked on about one in twenty).
//!
//! - Subject `0x0037`; sender name `0x0C1A` (or `0x0042`) and SMTP address
//!   (`0x5D01`, `0x0C1F`, `0x5D02`, `0x0065` when their address type is
//!   SMTP); recipients from the recipient storages (`0x0C15` type,
//!   `0x3001` name, `0x39FE`/`0x3003` address), else the display lists
//!   `0x0E04` (To) and `0x0E03` (Cc); date `0x0039` (submitted), else
//!   `0x0E06` (delivered); Message-ID `0x1035`. 8-bit strings are read in
//!   the first code page they are valid in among the message code page
//!   `0x3FFD`, UTF-8, the locale's (`0x3FF1`) code page, the Internet code
//!   page `0x3FDE` and Windows-1252 (the order Apache POI's tests confirm). What is missing is taken
//!   from the transport headers (`0x007D`) when the message has them.
//! - Body: `0x1000` (plain text), else the HTML body `0x1013` as text (in
//!   the code page `0x3FDE`), else the compressed RTF body `0x1009` as text
//!   (see [`crate::rtf`]).
//! - Attachments: the attachment storages' data `0x3701` named by `0x3707`
//!   (long file name), `0x3704` or `0x3001`. A message embedded in an
//!   attachment is read the same way (at most
//!   [`MAX_EMBEDDED_DEPTH`] levels, [`MAX_EMBEDDED_MESSAGES`] in all, read
//!   level by level without recursion) and handed over as
//!   `<subject>.eml`, its own attachments inside it.

use std::borrow::Cow;
use std::io::Cursor;
use std::path::Path;

use cfb::CompoundFile;
use kebab_plugin_sdk::{LogLevel, PluginError, log};
use mail_parser::MessageParser;

use crate::codepage;
use crate::eml;
use crate::html;
use crate::limits::{
    MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS, MAX_BODY_BYTES, MAX_EMBEDDED_DEPTH,
    MAX_EMBEDDED_MESSAGES, MAX_FIELD_BYTES, MAX_RECIPIENTS,
};
use crate::lzfu;
use crate::mail::{Mail, MailDate, eml_file_name, file_name, format_address};
use crate::mapi::{Cfb, Header, Properties};
use crate::mime;
use crate::rtf;

/// The signature of an OLE compound file.
const COMPOUND_FILE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// Property ids (MS-OXPROPS).
mod id {
    pub const MESSAGE_CLASS: u16 = 0x001A;
    pub const SUBJECT: u16 = 0x0037;
    pub const CLIENT_SUBMIT_TIME: u16 = 0x0039;
    pub const SENT_REPRESENTING_NAME: u16 = 0x0042;
    pub const SENT_REPRESENTING_ADDRESS_TYPE: u16 = 0x0064;
    pub const SENT_REPRESENTING_ADDRESS: u16 = 0x0065;
    pub const TRANSPORT_HEADERS: u16 = 0x007D;
    pub const RECIPIENT_TYPE: u16 = 0x0C15;
    pub const SENDER_NAME: u16 = 0x0C1A;
    pub const SENDER_ADDRESS_TYPE: u16 = 0x0C1E;
    pub const SENDER_ADDRESS: u16 = 0x0C1F;
    pub const DISPLAY_CC: u16 = 0x0E03;
    pub const DISPLAY_TO: u16 = 0x0E04;
    pub const DELIVERY_TIME: u16 = 0x0E06;
    pub const BODY: u16 = 0x1000;
    pub const RTF_COMPRESSED: u16 = 0x1009;
    pub const HTML: u16 = 0x1013;
    pub const INTERNET_MESSAGE_ID: u16 = 0x1035;
    pub const DISPLAY_NAME: u16 = 0x3001;
    pub const ADDRESS_TYPE: u16 = 0x3002;
    pub const EMAIL_ADDRESS: u16 = 0x3003;
    pub const ATTACH_DATA: u16 = 0x3701;
    pub const ATTACH_FILENAME: u16 = 0x3704;
    pub const ATTACH_METHOD: u16 = 0x3705;
    pub const ATTACH_LONG_FILENAME: u16 = 0x3707;
    pub const SMTP_ADDRESS: u16 = 0x39FE;
    pub const INTERNET_CODE_PAGE: u16 = 0x3FDE;
    pub const MESSAGE_LOCALE_ID: u16 = 0x3FF1;
    pub const MESSAGE_CODE_PAGE: u16 = 0x3FFD;
    pub const SENDER_SMTP_ADDRESS: u16 = 0x5D01;
    pub const SENT_REPRESENTING_SMTP_ADDRESS: u16 = 0x5D02;
}

/// The code page number of UTF-8.
const UTF_8_CODE_PAGE: u32 = 65001;

/// `PR_ATTACH_METHOD` of an OLE object (not a file; not read).
const ATTACH_OLE: u32 = 6;

/// The storage of a message embedded in an attachment.
const EMBEDDED_STORAGE: &str = "__substg1.0_3701000D";

/// Whether `bytes` are an OLE compound file.
pub fn is_compound_file(bytes: &[u8]) -> bool {
    bytes.starts_with(&COMPOUND_FILE_MAGIC)
}

/// Read an Outlook message.
pub fn read(bytes: &[u8]) -> Result<Mail<'static>, PluginError> {
    let mut file = CompoundFile::open(Cursor::new(bytes)).map_err(|e| {
        PluginError::Malformed(format!("corrupt Outlook message (compound file): {e}"))
    })?;
    let mut root = Properties::read(&mut file, Path::new("/"), Header::Message);
    root.code_pages = code_pages(&root);
    if root.is_empty() {
        return Err(PluginError::Malformed(
            "not an Outlook message: a compound file without message properties \
             (a legacy Word, Excel or PowerPoint file?)"
                .into(),
        ));
    }
    let mut queue = vec![Pending {
        props: root,
        depth: 0,
        parent: None,
    }];
    let mut read: Vec<(Mail<'static>, Option<(usize, usize)>)> = Vec::new();
    while let Some(pending) = queue.get_mut(read.len()) {
        let props = std::mem::take(&mut pending.props);
        let (depth, parent) = (pending.depth, pending.parent);
        let (mail, embedded) = read_message(&mut file, &props, depth);
        for (slot, child) in embedded {
            if queue.len() > MAX_EMBEDDED_MESSAGES {
                log(
                    LogLevel::Warn,
                    &format!(
                        "more than {MAX_EMBEDDED_MESSAGES} embedded messages: the rest are left out"
                    ),
                );
                break;
            }
            queue.push(Pending {
                props: child,
                depth: depth + 1,
                parent: Some((read.len(), slot)),
            });
        }
        read.push((mail, parent));
    }
    Ok(assemble(read))
}

/// The code pages the 8-bit strings of a message may be in, in the order
/// they are tried: the message code page; UTF-8 (text that is valid UTF-8
/// is hardly anything else); the code page of the message's locale (what
/// Outlook writes 8-bit strings in when it records no code page, whatever
/// the Internet code page says); the Internet code page; Windows-1252.
fn code_pages(props: &Properties) -> Vec<u32> {
    [
        props.long(id::MESSAGE_CODE_PAGE),
        Some(UTF_8_CODE_PAGE),
        props.long(id::MESSAGE_LOCALE_ID).map(codepage::for_locale),
        props.long(id::INTERNET_CODE_PAGE),
        Some(1252),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A message still to read: its properties, how deeply it is embedded,
/// and the attachment slot of the message it fills.
struct Pending {
    props: Properties,
    depth: usize,
    parent: Option<(usize, usize)>,
}

/// Put each embedded message (as `.eml` bytes) into its parent's
/// attachment slot, deepest first, and return the top message.
fn assemble(mut read: Vec<(Mail<'static>, Option<(usize, usize)>)>) -> Mail<'static> {
    while read.len() > 1 {
        let Some((mut mail, parent)) = read.pop() else {
            break;
        };
        mail.attachments.retain(|a| !a.bytes.is_empty());
        let Some((index, slot)) = parent else {
            continue;
        };
        let bytes = eml::write(&mail);
        let Some(attachment) = read
            .get_mut(index)
            .and_then(|(m, _)| m.attachments.get_mut(slot))
        else {
            continue;
        };
        if bytes.len() > MAX_ATTACHMENT_BYTES {
            log(
                LogLevel::Warn,
                &format!(
                    "embedded message {} left out: over the size bound",
                    attachment.name
                ),
            );
            continue;
        }
        attachment.bytes = Cow::Owned(bytes);
    }
    let mut top = read.pop().map(|(mail, _)| mail).unwrap_or_default();
    top.attachments.retain(|a| !a.bytes.is_empty());
    top
}

/// One message and the messages embedded in its attachments (their slot
/// among its attachments, their properties).
fn read_message(
    file: &mut Cfb<'_>,
    props: &Properties,
    depth: usize,
) -> (Mail<'static>, Vec<(usize, Properties)>) {
    let transport = Transport::read(file, props);
    let (to, cc) = recipients(file, props);
    let mut mail = Mail {
        from: sender(file, props).map_or(transport.from.clone(), |s| vec![s]),
        to: if to.is_empty() {
            transport.to.clone()
        } else {
            to
        },
        cc: if cc.is_empty() {
            transport.cc.clone()
        } else {
            cc
        },
        date: props
            .time(id::CLIENT_SUBMIT_TIME)
            .or_else(|| props.time(id::DELIVERY_TIME))
            .or(transport.date.clone()),
        subject: field(file, props, id::SUBJECT),
        message_id: field(file, props, id::INTERNET_MESSAGE_ID)
            .map(|m| {
                m.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
            .or(transport.message_id.clone()),
        body: body(file, props),
        attachments: Vec::new(),
    };
    let embedded = attachments(file, props, depth, &mut mail);
    (mail, embedded)
}

/// A short text property.
fn field(file: &mut Cfb<'_>, props: &Properties, id: u16) -> Option<String> {
    props
        .string(file, id, MAX_FIELD_BYTES)
        .filter(|s| !s.trim().is_empty())
}

/// The sender as `Name <address>`.
fn sender(file: &mut Cfb<'_>, props: &Properties) -> Option<String> {
    let name = field(file, props, id::SENDER_NAME)
        .or_else(|| field(file, props, id::SENT_REPRESENTING_NAME));
    let candidates = [
        (id::SENDER_SMTP_ADDRESS, None),
        (id::SENDER_ADDRESS, Some(id::SENDER_ADDRESS_TYPE)),
        (id::SENT_REPRESENTING_SMTP_ADDRESS, None),
        (
            id::SENT_REPRESENTING_ADDRESS,
            Some(id::SENT_REPRESENTING_ADDRESS_TYPE),
        ),
    ];
    let address = candidates
        .iter()
        .find_map(|&(address, kind)| smtp(file, props, address, kind));
    format_address(name.as_deref(), address.as_deref())
}

/// The address property `address` when it is an SMTP address (its type
/// property `kind`, if any, says `SMTP`).
fn smtp(file: &mut Cfb<'_>, props: &Properties, address: u16, kind: Option<u16>) -> Option<String> {
    if let Some(kind) = kind {
        let kind = field(file, props, kind)?;
        if !kind.trim().eq_ignore_ascii_case("SMTP") {
            return None;
        }
    }
    field(file, props, address).filter(|a| a.contains('@'))
}

/// The To and Cc recipients.
fn recipients(file: &mut Cfb<'_>, props: &Properties) -> (Vec<String>, Vec<String>) {
    let mut to = Vec::new();
    let mut cc = Vec::new();
    let storages = props.storages("__recip_version1.0_#");
    if storages.len() > MAX_RECIPIENTS {
        log(
            LogLevel::Warn,
            &format!(
                "{} recipients: the first {MAX_RECIPIENTS} are listed",
                storages.len()
            ),
        );
    }
    for path in storages.iter().take(MAX_RECIPIENTS) {
        let mut recipient = Properties::read(file, path, Header::Part);
        recipient.code_pages.clone_from(&props.code_pages);
        let name = field(file, &recipient, id::DISPLAY_NAME);
        let address = smtp(file, &recipient, id::SMTP_ADDRESS, None)
            .or_else(|| smtp(file, &recipient, id::EMAIL_ADDRESS, Some(id::ADDRESS_TYPE)));
        let Some(formatted) = format_address(name.as_deref(), address.as_deref()) else {
            continue;
        };
        match recipient.long(id::RECIPIENT_TYPE).map(|t| t & 0x0F) {
            Some(2) => cc.push(formatted),
            Some(3) => {}
            _ => to.push(formatted),
        }
    }
    if to.is_empty() && cc.is_empty() {
        to = display_list(file, props, id::DISPLAY_TO);
        cc = display_list(file, props, id::DISPLAY_CC);
    }
    (to, cc)
}

/// A `;`-separated display list (`PR_DISPLAY_TO`).
fn display_list(file: &mut Cfb<'_>, props: &Properties, id: u16) -> Vec<String> {
    field(file, props, id)
        .map(|list| {
            list.split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The body: plain text, else the HTML body as text.
fn body(file: &mut Cfb<'_>, props: &Properties) -> String {
    if let Some(text) = props
        .string(file, id::BODY, MAX_BODY_BYTES)
        .filter(|t| !t.trim().is_empty())
    {
        return text;
    }
    let html = props.string(file, id::HTML, MAX_BODY_BYTES).or_else(|| {
        let bytes = props.binary(file, id::HTML, MAX_BODY_BYTES)?;
        let pages: Vec<u32> = props
            .long(id::INTERNET_CODE_PAGE)
            .into_iter()
            .chain(props.code_pages.iter().copied())
            .collect();
        Some(codepage::decode_first(&bytes, &pages))
    });
    if let Some(html) = html {
        return html::to_text(&html);
    }
    let rtf = props
        .binary(file, id::RTF_COMPRESSED, MAX_BODY_BYTES)
        .and_then(|data| lzfu::decompress(&data, MAX_BODY_BYTES as usize));
    if let Some(rtf) = rtf {
        return rtf::to_text(&rtf);
    }
    let class = field(file, props, id::MESSAGE_CLASS).unwrap_or_default();
    let why = if class.to_ascii_uppercase().starts_with("IPM.NOTE.SMIME") {
        "the body is encrypted or signed (S/MIME)"
    } else {
        "the message has no body"
    };
    log(
        LogLevel::Info,
        &format!("{why}: only its header is indexed"),
    );
    String::new()
}

/// Collect the attachments; the embedded messages to read next (their
/// slot among the attachments and their properties).
fn attachments(
    file: &mut Cfb<'_>,
    props: &Properties,
    depth: usize,
    mail: &mut Mail<'static>,
) -> Vec<(usize, Properties)> {
    let storages = props.storages("__attach_version1.0_#");
    if storages.len() > MAX_ATTACHMENTS {
        log(
            LogLevel::Warn,
            &format!(
                "{} attachments: the first {MAX_ATTACHMENTS} are read",
                storages.len()
            ),
        );
    }
    let mut embedded = Vec::new();
    for path in storages.iter().take(MAX_ATTACHMENTS) {
        let mut attachment = Properties::read(file, path, Header::Part);
        attachment.code_pages.clone_from(&props.code_pages);
        let name = [
            id::ATTACH_LONG_FILENAME,
            id::ATTACH_FILENAME,
            id::DISPLAY_NAME,
        ]
        .iter()
        .find_map(|&id| field(file, &attachment, id).and_then(|n| file_name(&n)));
        if attachment.long(id::ATTACH_METHOD) == Some(ATTACH_OLE) {
            log(LogLevel::Info, "an embedded OLE object is not read");
        } else if let Some(storage) = attachment.storage(EMBEDDED_STORAGE) {
            if let Some(message) = embedded_message(file, &storage, depth, name, &props.code_pages)
            {
                let slot = mail.attachments.len();
                mail.add_attachment(message.0, Cow::Owned(Vec::new()));
                embedded.push((slot, message.1));
            }
        } else if let Some(name) = name {
            add_file(file, &attachment, name, mail);
        }
    }
    embedded
}

/// An attachment that is a file: its data handed over under `name`.
fn add_file(file: &mut Cfb<'_>, attachment: &Properties, name: String, mail: &mut Mail<'static>) {
    let Some(len) = attachment.binary_len(id::ATTACH_DATA) else {
        log(
            LogLevel::Info,
            &format!("attachment {name} has no data (a link to a file?)"),
        );
        return;
    };
    if len > MAX_ATTACHMENT_BYTES as u64 {
        log(
            LogLevel::Warn,
            &format!(
                "attachment {name} left out: {len} bytes, over the {MAX_ATTACHMENT_BYTES}-byte bound"
            ),
        );
        return;
    }
    if let Some(bytes) = attachment.binary(file, id::ATTACH_DATA, len) {
        mail.add_attachment(name, Cow::Owned(bytes));
    }
}

/// The `.eml` name and properties of a message embedded at `storage`, if it
/// is within the bounds on nesting. Its strings are tried in its own code
/// pages, then in those of the message it is in (`outer_pages`).
fn embedded_message(
    file: &mut Cfb<'_>,
    storage: &Path,
    depth: usize,
    name: Option<String>,
    outer_pages: &[u32],
) -> Option<(String, Properties)> {
    if depth + 1 > MAX_EMBEDDED_DEPTH {
        log(
            LogLevel::Warn,
            &format!("a message embedded {} levels deep is left out", depth + 1),
        );
        return None;
    }
    let mut props = Properties::read(file, storage, Header::Embedded);
    props.code_pages = code_pages(&props);
    props.code_pages.extend_from_slice(outer_pages);
    let subject = field(file, &props, id::SUBJECT);
    Some((eml_file_name(name, subject.as_deref()), props))
}

/// What the transport headers (`PR_TRANSPORT_MESSAGE_HEADERS`) say, for
/// fields the properties lack.
#[derive(Default)]
struct Transport {
    from: Vec<String>,
    to: Vec<String>,
    cc: Vec<String>,
    date: Option<MailDate>,
    message_id: Option<String>,
}

impl Transport {
    fn read(file: &mut Cfb<'_>, props: &Properties) -> Transport {
        let Some(headers) = field(file, props, id::TRANSPORT_HEADERS) else {
            return Transport::default();
        };
        let Some(message) = MessageParser::default().parse_headers(headers.as_bytes()) else {
            return Transport::default();
        };
        let mail = mime::to_mail(&message);
        Transport {
            from: mail.from,
            to: mail.to,
            cc: mail.cc,
            date: mail.date,
            message_id: mail.message_id,
        }
    }
}
