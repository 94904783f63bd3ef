//! The `epub` plugin: an EPUB (2 or 3) book read chapter by chapter in
//! spine order. Every block cites its chapter (`book.epub#chapter=3`, the
//! chapter's 1-based spine position) and carries the heading path
//! `[chapter title, headings inside the chapter…]`; the book's Dublin
//! Core metadata becomes the document's title, language and metadata.
//! Chunks come from the SDK's heading-aware chunker, so no chunk spans two
//! chapters.
//!
//! DRM-protected books are refused as unsupported; a file without a
//! container or package document is malformed; a chapter whose XHTML
//! breaks keeps the text before the break.

pub mod book;
pub mod chapters;
pub mod container;
pub mod encoding;
pub mod encryption;
pub mod members;
pub mod metadata;
pub mod package;
pub mod paths;
pub mod toc;
pub mod xhtml;
pub mod xml;

use kebab_plugin_sdk::heading_chunker::{self, CHUNKER_VERSION};
use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

/// The parser label stored with every document this plugin makes.
pub const PARSER_VERSION: &str = "epub-v1";

/// The plugin type exported to the host.
pub struct Plugin;

impl Guest for Plugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "epub".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: PARSER_VERSION.into(),
            chunker_version: CHUNKER_VERSION.into(),
            handles: vec!["*.epub".into()],
            accepts_binary: true,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        book::parse(&bytes)
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(heading_chunker::chunk(&doc, &policy))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(Plugin);
