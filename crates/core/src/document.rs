//! kebab's own form of what a parser plugin returns: a canonical document
//! of blocks and the chunks cut from it. The plugin host converts a
//! plugin's WIT values into these types the moment a call returns (and
//! validates them), so ingest, IDs, spans and the store never depend on
//! the WebAssembly bindings of any contract version.

use std::collections::BTreeMap;

use crate::spans::SourceSpan;

/// A plugin's settings from `[plugins.config.<name>]`, values as text.
pub type Settings = BTreeMap<String, String>;

/// The structural kind of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    Heading,
    Paragraph,
    List,
    Code,
    Table,
    Quote,
    ImageRef,
    Page,
}

impl BlockKind {
    /// Lowercase name of the kind, as stored.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Heading => "heading",
            BlockKind::Paragraph => "paragraph",
            BlockKind::List => "list",
            BlockKind::Code => "code",
            BlockKind::Table => "table",
            BlockKind::Quote => "quote",
            BlockKind::ImageRef => "image_ref",
            BlockKind::Page => "page",
        }
    }
}

/// One structural unit of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub kind: BlockKind,
    /// Titles of the enclosing headings, outermost first (for a heading
    /// block: including its own title).
    pub heading_path: Vec<String>,
    pub span: SourceSpan,
    /// The block's text as it is indexed and shown.
    pub text: String,
    /// Heading level (1–6) for headings.
    pub level: Option<u8>,
    /// Language label for code blocks (`rust`, `shell`, …).
    pub lang: Option<String>,
}

/// The canonical form of one parsed file.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub title: Option<String>,
    /// Natural language of the document (`en`, `ko`) when known.
    pub lang: Option<String>,
    pub blocks: Vec<Block>,
    /// Free-form key/value metadata (frontmatter keys and the like); values
    /// that are not plain strings are JSON-encoded.
    pub metadata: Vec<(String, String)>,
}

/// One retrieval unit produced by a chunker.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub text: String,
    pub heading_path: Vec<String>,
    /// Indices into the document's `blocks` that this chunk covers.
    pub blocks: Vec<u32>,
    /// Source spans of the chunk's text, in order.
    pub spans: Vec<SourceSpan>,
}

/// How large chunks should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkPolicy {
    pub target_tokens: u32,
    pub overlap_tokens: u32,
}
