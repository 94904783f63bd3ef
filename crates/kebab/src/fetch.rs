//! `kebab fetch`: verbatim text of a chunk (with neighbours), a whole
//! document, or a line span, as indexed.

use serde::Serialize;

use kebab_core::spans::SourceSpan;
use kebab_store::{ChunkRow, DocRef, Store, StoreError};

/// Fetch failures, each with its `error.v1` code.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("no chunk with id {0}")]
    ChunkNotFound(String),
    #[error("no document with id {0}")]
    DocNotFound(String),
    #[error(
        "{0} is cited by page, slide, cells or part, not by line: fetch the doc or a chunk instead"
    )]
    SpanNotSupported(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl FetchError {
    /// `error.v1` code.
    pub fn code(&self) -> &'static str {
        match self {
            FetchError::ChunkNotFound(_) => "chunk_not_found",
            FetchError::DocNotFound(_) => "doc_not_found",
            FetchError::SpanNotSupported(_) => "span_not_supported",
            FetchError::Store(_) => "io_error",
        }
    }
}

/// `chunk_inspection.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChunkInspection {
    pub schema_version: &'static str,
    pub chunk_id: String,
    pub doc_id: String,
    pub doc_path: String,
    pub heading_path: Vec<String>,
    pub text: String,
    pub source_spans: Vec<SourceSpan>,
    pub block_ids: Vec<String>,
    pub token_estimate: u32,
    pub chunker_version: String,
    /// The vectors the index holds for this chunk, one per embedding model
    /// (empty when no model has embedded it).
    pub embeddings: Vec<ChunkEmbedding>,
}

/// One vector of a chunk in `chunk_inspection.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChunkEmbedding {
    /// The embedding model's name (`all-minilm-l6-v2`).
    pub model: String,
    /// Its version as vectors are keyed (`v1`, `v1+int8`).
    pub version: String,
    pub dimensions: usize,
    pub embedding_id: String,
}

/// `fetch_result.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FetchResult {
    pub schema_version: &'static str,
    pub kind: &'static str,
    pub doc_id: String,
    /// The root (tree) of the document; `doc_path` is relative to it.
    pub root: String,
    pub doc_path: String,
    pub indexed_at: String,
    /// The file changed (or vanished) since it was indexed.
    pub stale: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk: Option<ChunkInspection>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_before: Vec<ChunkInspection>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_after: Vec<ChunkInspection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_start: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_end: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_end: Option<u32>,
    pub truncated: bool,
}

impl FetchResult {
    fn new(kind: &'static str, doc: &DocRef) -> FetchResult {
        FetchResult {
            schema_version: "fetch_result.v1",
            kind,
            doc_id: doc.doc_id.clone(),
            root: doc.root.clone(),
            doc_path: doc.workspace_path.clone(),
            indexed_at: doc.updated_at.clone(),
            stale: is_stale(doc),
            chunk: None,
            context_before: Vec::new(),
            context_after: Vec::new(),
            text: None,
            line_start: None,
            line_end: None,
            effective_end: None,
            truncated: false,
        }
    }
}

fn is_stale(doc: &DocRef) -> bool {
    std::fs::read(kebab_core::paths::unescape_path(&doc.source_uri)).map_or(true, |bytes| {
        kebab_core::ids::checksum(&bytes) != doc.checksum
    })
}

fn inspection(store: &Store, c: ChunkRow, doc_path: &str) -> Result<ChunkInspection, FetchError> {
    let embeddings = store
        .chunk_embeddings(&c.chunk_id)?
        .into_iter()
        .map(|e| ChunkEmbedding {
            model: e.model,
            version: e.version,
            dimensions: e.dimensions,
            embedding_id: e.embedding_id,
        })
        .collect();
    Ok(ChunkInspection {
        schema_version: "chunk_inspection.v1",
        chunk_id: c.chunk_id,
        doc_id: c.doc_id,
        doc_path: doc_path.to_string(),
        heading_path: c.heading_path,
        text: c.text,
        source_spans: c.spans,
        block_ids: c.block_ids,
        token_estimate: c.token_estimate,
        chunker_version: c.chunker_version,
        embeddings,
    })
}

fn doc_ref(store: &Store, doc_id: &str) -> Result<DocRef, FetchError> {
    store
        .doc_ref(doc_id)?
        .ok_or_else(|| FetchError::DocNotFound(doc_id.to_string()))
}

/// A chunk and up to `context` chunks either side of it in its document.
pub fn chunk(store: &Store, chunk_id: &str, context: u32) -> Result<FetchResult, FetchError> {
    let target = store
        .chunk(chunk_id)?
        .ok_or_else(|| FetchError::ChunkNotFound(chunk_id.to_string()))?;
    let doc = doc_ref(store, &target.doc_id)?;
    let mut result = FetchResult::new("chunk", &doc);
    if context > 0 {
        let lo = target.ordinal.saturating_sub(context);
        let hi = target.ordinal.saturating_add(context);
        for c in store.doc_chunks(&doc.doc_id)? {
            if c.ordinal >= lo && c.ordinal < target.ordinal {
                result
                    .context_before
                    .push(inspection(store, c, &doc.workspace_path)?);
            } else if c.ordinal > target.ordinal && c.ordinal <= hi {
                result
                    .context_after
                    .push(inspection(store, c, &doc.workspace_path)?);
            }
        }
    }
    result.chunk = Some(inspection(store, target, &doc.workspace_path)?);
    Ok(result)
}

/// The indexed text of a document as lines (line documents) or as its
/// blocks in order (documents cited otherwise: pages, slides, cells,
/// paragraphs, chapters, messages, regions of an image, attachments).
enum Layout {
    Lines(Vec<String>),
    Blocks(Vec<String>),
}

fn layout(store: &Store, doc_id: &str) -> Result<Layout, FetchError> {
    let blocks = store.doc_blocks(doc_id)?;
    if blocks
        .iter()
        .any(|(span, _)| span.as_ref().is_some_and(|s| s.lines().is_none()))
    {
        return Ok(Layout::Blocks(blocks.into_iter().map(|(_, t)| t).collect()));
    }
    let mut lines: Vec<String> = Vec::new();
    for (span, text) in blocks {
        let Some((start, _)) = span.as_ref().and_then(SourceSpan::lines) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let at = start as usize - 1 + i;
            if lines.len() <= at {
                lines.resize(at + 1, String::new());
            }
            lines[at] = line.to_string();
        }
    }
    Ok(Layout::Lines(lines))
}

/// Cut `text` to about `max_tokens` (4 characters a token). Returns whether
/// it was cut.
fn budget(text: &mut String, max_tokens: Option<usize>) -> bool {
    let Some(max) = max_tokens else { return false };
    let limit = max.saturating_mul(4);
    if text.chars().count() <= limit {
        return false;
    }
    *text = text.chars().take(limit).collect();
    true
}

/// A whole document's indexed text.
pub fn doc(
    store: &Store,
    doc_id: &str,
    max_tokens: Option<usize>,
) -> Result<FetchResult, FetchError> {
    let doc = doc_ref(store, doc_id)?;
    let mut result = FetchResult::new("doc", &doc);
    let mut text = match layout(store, doc_id)? {
        Layout::Lines(lines) => lines.join("\n"),
        Layout::Blocks(blocks) => blocks.join("\n\n"),
    };
    result.truncated = budget(&mut text, max_tokens);
    result.text = Some(text);
    Ok(result)
}

/// Lines `line_start..=line_end` (1-based) of a document; the end is clamped
/// to the document and reported as `effective_end`.
pub fn span(
    store: &Store,
    doc_id: &str,
    line_start: u32,
    line_end: u32,
    max_tokens: Option<usize>,
) -> Result<FetchResult, FetchError> {
    let doc = doc_ref(store, doc_id)?;
    let Layout::Lines(lines) = layout(store, doc_id)? else {
        return Err(FetchError::SpanNotSupported(doc.workspace_path));
    };
    let mut result = FetchResult::new("span", &doc);
    let start = line_start.max(1);
    let total = lines.len() as u32;
    let mut effective_end = line_end.min(total);
    let mut text = if start > effective_end {
        effective_end = start - 1;
        String::new()
    } else {
        lines[start as usize - 1..effective_end as usize].join("\n")
    };
    if budget(&mut text, max_tokens) {
        result.truncated = true;
        effective_end = start + text.lines().count().saturating_sub(1) as u32;
    }
    result.text = Some(text);
    result.line_start = Some(line_start);
    result.line_end = Some(line_end);
    result.effective_end = Some(effective_end);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_cuts_by_characters() {
        let mut t = "abcdefghij".to_string();
        assert!(!budget(&mut t, None));
        assert!(!budget(&mut t, Some(3)));
        assert!(budget(&mut t, Some(2)));
        assert_eq!(t, "abcdefgh");
    }
}
