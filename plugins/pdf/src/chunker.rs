//! `pdf-page-v1`: a chunk per page; a page longer than the target is cut at
//! paragraph (then line) boundaries into pieces that overlap by about
//! `overlap_tokens`. Every chunk cites its page. The paragraphs OCR read
//! from a scanned page are packed by the SDK's region chunker, a page at a
//! time, and cite their page (with the engine's confidence) too.

use kebab_plugin_sdk::text::estimate_tokens;
use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Span, ocr};

/// The chunker label stored with every chunk.
pub const CHUNKER_VERSION: &str = "pdf-page-v1";

/// Chunk the page blocks and OCR'd regions of a document, in block order.
pub fn chunk(doc: &Document, policy: &ChunkPolicy) -> Vec<Chunk> {
    let target = policy.target_tokens.max(1);
    let mut out = Vec::new();
    for (i, block) in doc.blocks.iter().enumerate() {
        if matches!(block.span, Span::Region(_)) {
            continue;
        }
        for text in split(&block.text, target, policy.overlap_tokens) {
            out.push(Chunk {
                text,
                heading_path: block.heading_path.clone(),
                blocks: vec![i as u32],
                spans: vec![block.span.clone()],
            });
        }
    }
    out.extend(ocr::chunk_regions(doc, policy));
    out.sort_by_key(|c| c.blocks.first().copied());
    out
}

/// Pieces of `text` of at most about `target` tokens with `overlap` tokens
/// of trailing lines repeated at the start of the next piece.
fn split(text: &str, target: u32, overlap: u32) -> Vec<String> {
    if estimate_tokens(text) <= target {
        return vec![text.to_string()];
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut start = 0;
    while start < lines.len() {
        let mut end = start;
        let mut tokens = 0;
        while end < lines.len() && (end == start || tokens + estimate_tokens(lines[end]) <= target)
        {
            tokens += estimate_tokens(lines[end]);
            end += 1;
        }
        out.push(lines[start..end].join("\n"));
        if end >= lines.len() {
            break;
        }
        let mut back = end;
        let mut kept = 0;
        while back > start + 1 && kept + estimate_tokens(lines[back - 1]) <= overlap {
            kept += estimate_tokens(lines[back - 1]);
            back -= 1;
        }
        start = back;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab_plugin_sdk::{Block, BlockKind, Span};

    fn page(n: u32, text: &str) -> Block {
        Block {
            kind: BlockKind::Page,
            heading_path: vec![],
            span: Span::Page(n),
            text: text.into(),
            level: None,
            lang: None,
        }
    }

    #[test]
    fn one_chunk_per_short_page_cited_by_page() {
        let doc = Document {
            title: None,
            lang: None,
            blocks: vec![page(1, "first page"), page(3, "third page")],
            metadata: vec![],
        };
        let chunks = chunk(
            &doc,
            &ChunkPolicy {
                target_tokens: 100,
                overlap_tokens: 10,
            },
        );
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[1].spans, vec![Span::Page(3)]);
        assert_eq!(chunks[1].blocks, vec![1]);
    }

    #[test]
    fn long_page_splits_with_overlap_and_loses_nothing() {
        let text: String = (0..100)
            .map(|i| format!("line number {i} of the page\n"))
            .collect();
        let pieces = split(text.trim_end(), 50, 10);
        assert!(pieces.len() > 3);
        for p in &pieces {
            assert!(estimate_tokens(p) <= 50);
        }
        for pair in pieces.windows(2) {
            let last = pair[0].lines().last().unwrap();
            assert!(pair[1].contains(last), "overlap carries the last line");
        }
        assert!(
            pieces
                .last()
                .unwrap()
                .ends_with("line number 99 of the page")
        );
        assert!(pieces[0].starts_with("line number 0 "));
    }
}
