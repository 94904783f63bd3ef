//! The `office-v1` chunker: slides for presentations, heading sections of
//! paragraphs for word-processing documents, chosen by the blocks' spans
//! (a presentation's blocks cite slides).
//!
//! - A presentation gets one chunk per slide; a slide longer than the
//!   target is cut into pieces that all cite it.
//! - A text document is cut at headings (and where back matter —
//!   headers, notes, comments — begins); blocks are packed up to the
//!   target, a long paragraph is cut into overlapping pieces citing it,
//!   and a long table into groups of whole rows that each repeat its
//!   header row and cite exactly their rows' paragraphs.

mod paragraphs;
mod slides;
mod split;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, LogLevel, Span, log};

use crate::limits::MAX_CHUNKS;

/// The chunker label stored with every chunk.
pub const CHUNKER_VERSION: &str = "office-v1";

/// Chunk a document this plugin parsed.
pub fn chunk(doc: &Document, policy: &ChunkPolicy) -> Vec<Chunk> {
    let target = policy.target_tokens.max(1);
    let overlap = policy.overlap_tokens.min(target / 2);
    let mut chunks = if doc.blocks.iter().any(|b| matches!(b.span, Span::Slide(_))) {
        slides::chunk(doc, target, overlap)
    } else {
        paragraphs::chunk(doc, target, overlap)
    };
    if chunks.len() > MAX_CHUNKS {
        log(
            LogLevel::Warn,
            &format!(
                "{} chunks past the first {MAX_CHUNKS} were left out",
                chunks.len() - MAX_CHUNKS
            ),
        );
        chunks.truncate(MAX_CHUNKS);
    }
    chunks
}
