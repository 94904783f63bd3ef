//! The bounds this plugin stops at, in one place so they are documented
//! together: a hostile or merely huge file makes the plugin index a bounded
//! prefix and log what it left out, never fail or run past the host's 10 s
//! deadline, 512 MiB memory cap or output caps (200 000 blocks, 100 000
//! chunks, 4 MiB per text, 16 KiB per heading).

/// Messages of a mailbox that are read; later ones are counted, not read.
/// 20 000 typical messages parse in well under a second natively; the bound
/// also keeps a mailbox under the host's chunk cap (a message is at least
/// one chunk).
pub const MAX_MESSAGES: usize = 20_000;

/// Bytes of message bodies (plain text and HTML, decoded) a mailbox's
/// messages may hold together; messages past it are counted, not read.
/// Converting HTML runs at 60–200 MB/s natively, so this bounds the time
/// a mailbox of markup-heavy newsletters takes.
pub const MAX_MAILBOX_BODY_BYTES: usize = 160 << 20;

/// Blocks of one document. Every chunk of the heading chunker holds at
/// least one block of its own, so chunks stay under this count too.
pub const MAX_BLOCKS: usize = 100_000;

/// Bytes of text all blocks of one document hold together (the host caps a
/// whole output, blocks and chunks together, at 256 MiB).
pub const MAX_TEXT_BYTES: usize = 96 << 20;

/// Bytes of one block's text: a longer paragraph is cut at line breaks (or,
/// for one enormous line, at a character boundary) into several blocks.
pub const MAX_BLOCK_BYTES: usize = 8 << 10;

/// Attachments handed to the host per message.
pub const MAX_ATTACHMENTS: usize = 64;

/// Bytes of one attachment handed to the host.
pub const MAX_ATTACHMENT_BYTES: usize = 32 << 20;

/// Characters of a subject used as a heading (the host caps headings at
/// 16 KiB; a longer subject is shortened with `…`).
pub const MAX_SUBJECT_CHARS: usize = 300;

/// Characters of an attachment's file name.
pub const MAX_NAME_CHARS: usize = 200;

/// Recipients of one Outlook message that are listed.
pub const MAX_RECIPIENTS: usize = 1_000;

/// Levels of Outlook messages embedded in messages that are read (a message
/// attached to a message attached to a message …); deeper ones are left out.
pub const MAX_EMBEDDED_DEPTH: usize = 4;

/// Embedded Outlook messages read from one file, all levels together.
pub const MAX_EMBEDDED_MESSAGES: usize = 256;

/// Bytes of an Outlook message's body (plain, HTML or RTF) that are read.
pub const MAX_BODY_BYTES: u64 = 32 << 20;

/// Bytes of any other Outlook text property (subject, names, headers).
pub const MAX_FIELD_BYTES: u64 = 1 << 20;

/// Elements an HTML body may nest before deeper ones stop being tracked
/// (their text is still kept).
pub const MAX_HTML_DEPTH: usize = 256;
