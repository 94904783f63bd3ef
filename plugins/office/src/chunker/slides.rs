//! Slide chunks: the blocks of one slide joined in order; a slide longer
//! than the target cut into overlapping pieces, every one citing the
//! slide.

use kebab_plugin_sdk::{Chunk, Document};

use super::split::split;

/// One chunk (or a few) per slide.
pub fn chunk(doc: &Document, target: u32, overlap: u32) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < doc.blocks.len() {
        let span = doc.blocks[start].span.clone();
        let end = doc.blocks[start..]
            .iter()
            .position(|b| b.span != span)
            .map_or(doc.blocks.len(), |n| start + n);
        let texts: Vec<&str> = doc.blocks[start..end]
            .iter()
            .map(|b| b.text.as_str())
            .collect();
        let blocks: Vec<u32> = (start as u32..end as u32).collect();
        for text in split(&texts.join("\n\n"), target, overlap) {
            out.push(Chunk {
                text,
                heading_path: doc.blocks[start].heading_path.clone(),
                blocks: blocks.clone(),
                spans: vec![span.clone()],
            });
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab_plugin_sdk::{Block, BlockKind, Span};

    fn block(slide: u32, text: &str) -> Block {
        Block {
            kind: BlockKind::Paragraph,
            heading_path: vec![format!("Slide {slide}")],
            span: Span::Slide(slide),
            text: text.into(),
            level: None,
            lang: None,
        }
    }

    #[test]
    fn a_chunk_per_slide_and_long_slides_split_citing_the_slide() {
        let long = (0..200)
            .map(|i| format!("point {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let doc = Document {
            title: None,
            lang: None,
            blocks: vec![block(1, "Title"), block(1, "body"), block(2, &long)],
            metadata: vec![],
        };
        let chunks = chunk(&doc, 50, 5);
        assert_eq!(chunks[0].text, "Title\n\nbody");
        assert_eq!(chunks[0].blocks, vec![0, 1]);
        assert!(chunks.len() > 3);
        assert!(chunks[1..].iter().all(|c| c.spans == vec![Span::Slide(2)]));
        assert!(chunks.last().unwrap().text.ends_with("point 199"));
    }
}
