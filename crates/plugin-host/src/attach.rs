//! Files inside a file (API 1.2.0's `attachments` import): what a plugin
//! may hand over during one call, and how the chunks the attachment's own
//! plugin made are placed into the document that holds it — under the
//! heading path the holding plugin gave plus the attachment's name, every
//! span wrapped as [`SourceSpan::Attachment`] so a citation reads
//! `mail.eml › report.pdf#page=2` and IDs never collide with the holder's.
//! Routing and running the attachment's plugin is the caller's (ingest);
//! the rule of how the two become one document lives here, once.

use kebab_core::document::{Chunk, Document};
use kebab_core::sanitize::bounded;
use kebab_core::spans::SourceSpan;

/// Most attachments one call may hand over.
pub const MAX_ATTACHMENTS: usize = 256;
/// Most bytes all attachments of one call may hold together.
pub const MAX_ATTACHMENT_BYTES: usize = 128 << 20;
/// Longest attachment name kept, in bytes.
const MAX_NAME_BYTES: usize = 255;

/// A file a plugin handed over, in kebab's own types.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// Its own file name (directories and control characters removed).
    pub name: String,
    pub bytes: Vec<u8>,
    /// The holder's headings its chunks go under.
    pub heading_path: Vec<String>,
    /// The part of the holding file it belongs to (a mailbox's message).
    pub within: Option<SourceSpan>,
}

/// What one call handed over, and what it was refused.
#[derive(Debug, Default)]
pub struct Handed {
    pub taken: Vec<Attachment>,
    bytes: usize,
    /// Why attachments were refused, one line each.
    pub refused: Vec<String>,
}

impl Handed {
    /// Take `attachment` unless the call is past its bounds; whether taken.
    pub fn offer(&mut self, mut attachment: Attachment) -> bool {
        attachment.name = clean_name(&attachment.name);
        if self.taken.len() >= MAX_ATTACHMENTS {
            self.refuse(format!(
                "attachment {} not read: more than {MAX_ATTACHMENTS} in one file",
                attachment.name
            ));
            return false;
        }
        if self.bytes + attachment.bytes.len() > MAX_ATTACHMENT_BYTES {
            self.refuse(format!(
                "attachment {} not read: attachments past {} MiB in one file",
                attachment.name,
                MAX_ATTACHMENT_BYTES >> 20
            ));
            return false;
        }
        self.bytes += attachment.bytes.len();
        self.taken.push(attachment);
        true
    }

    fn refuse(&mut self, why: String) {
        // One line per refusal, but never more lines than attachments allowed.
        if self.refused.len() < MAX_ATTACHMENTS {
            self.refused.push(why);
        }
    }
}

/// The file name part of `name` (after the last `/` or `\`), without
/// control characters, bounded; `attachment` when nothing is left.
pub fn clean_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let kept: String = base.chars().filter(|c| !c.is_control()).collect();
    let kept = kept.trim();
    if kept.is_empty() || kept == "." || kept == ".." {
        "attachment".to_string()
    } else {
        bounded(kept, MAX_NAME_BYTES)
    }
}

/// Place the document and chunks read from `attachment` into `holder`:
/// blocks and chunks appended, heading paths under the holder's heading
/// path and the attachment's name, block indices moved past the holder's,
/// spans wrapped.
pub fn merge(
    holder: &mut Document,
    holder_chunks: &mut Vec<Chunk>,
    attachment: &Attachment,
    document: Document,
    chunks: Vec<Chunk>,
) {
    let offset = holder.blocks.len() as u32;
    let path = |inner: Vec<String>| {
        let mut path = attachment.heading_path.clone();
        path.push(attachment.name.clone());
        path.extend(inner);
        path
    };
    let wrap = |span: SourceSpan| SourceSpan::Attachment {
        name: attachment.name.clone(),
        within: attachment.within.clone().map(Box::new),
        span: Box::new(span),
    };
    for mut block in document.blocks {
        block.heading_path = path(block.heading_path);
        block.span = wrap(block.span);
        holder.blocks.push(block);
    }
    for mut chunk in chunks {
        chunk.heading_path = path(chunk.heading_path);
        chunk.blocks = chunk.blocks.iter().map(|b| b + offset).collect();
        chunk.spans = chunk.spans.into_iter().map(wrap).collect();
        holder_chunks.push(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab_core::document::{Block, BlockKind};
    use kebab_core::spans::PartUnit;

    fn doc(texts: &[&str], span: SourceSpan) -> (Document, Vec<Chunk>) {
        let blocks: Vec<Block> = texts
            .iter()
            .map(|t| Block {
                kind: BlockKind::Paragraph,
                heading_path: vec!["Inner".into()],
                span: span.clone(),
                text: t.to_string(),
                level: None,
                lang: None,
            })
            .collect();
        let chunks = vec![Chunk {
            text: texts.join("\n"),
            heading_path: vec!["Inner".into()],
            blocks: (0..texts.len() as u32).collect(),
            spans: vec![span],
        }];
        (
            Document {
                title: None,
                lang: None,
                blocks,
                metadata: vec![],
            },
            chunks,
        )
    }

    #[test]
    fn an_attachment_lands_under_its_holder_with_wrapped_spans() {
        let message = SourceSpan::Part {
            unit: PartUnit::Message,
            first: 2,
            last: 2,
        };
        let (mut holder, mut holder_chunks) = doc(&["a", "b"], message.clone());
        let attachment = Attachment {
            name: "report.pdf".into(),
            bytes: vec![],
            heading_path: vec!["Re: budget".into()],
            within: Some(message.clone()),
        };
        let (inner, inner_chunks) = doc(&["page text"], SourceSpan::Page { page: 2 });
        merge(
            &mut holder,
            &mut holder_chunks,
            &attachment,
            inner,
            inner_chunks,
        );
        assert_eq!(holder.blocks.len(), 3);
        assert_eq!(
            holder.blocks[2].heading_path,
            vec!["Re: budget", "report.pdf", "Inner"]
        );
        let last = holder_chunks.last().unwrap();
        assert_eq!(last.blocks, vec![2]);
        assert_eq!(
            last.spans,
            vec![SourceSpan::Attachment {
                name: "report.pdf".into(),
                within: Some(Box::new(message)),
                span: Box::new(SourceSpan::Page { page: 2 }),
            }]
        );
    }

    #[test]
    fn names_are_file_names_and_bounds_hold() {
        assert_eq!(clean_name("../../etc/passwd"), "passwd");
        assert_eq!(clean_name("C:\\x\\a\u{7}.pdf"), "a.pdf");
        assert_eq!(clean_name(" .. "), "attachment");
        let mut handed = Handed::default();
        let one = |n: usize| Attachment {
            name: format!("{n}.txt"),
            bytes: vec![b'x'; 10],
            heading_path: vec![],
            within: None,
        };
        for n in 0..MAX_ATTACHMENTS {
            assert!(handed.offer(one(n)));
        }
        assert!(!handed.offer(one(999)));
        assert_eq!(handed.refused.len(), 1);
        let mut big = Handed::default();
        assert!(!big.offer(Attachment {
            bytes: vec![0; MAX_ATTACHMENT_BYTES + 1],
            ..one(1)
        }));
    }
}
