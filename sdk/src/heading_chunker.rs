//! `md-heading-v1`: heading-bounded chunks, for any document whose blocks
//! carry heading paths (markdown, reStructuredText, AsciiDoc, Org, HTML).
//!
//! - A heading starts a new section; a chunk never spans two sections. A
//!   heading with nothing under it but a deeper heading joins that section.
//! - Blocks are packed into a chunk up to `target_tokens`.
//! - A code block is never split, whatever its size.
//! - A table stays whole when it fits; a larger one is cut into row groups,
//!   each repeating the header rows.
//! - Other oversized blocks (long paragraphs, lists, quotes) are cut by lines.
//! - Consecutive chunks of one section share trailing prose blocks worth up to
//!   `overlap_tokens`.
//! - Every chunk keeps its section's heading path.
//! - Blocks cite lines, or numbered parts (`Span::Part`: the paragraphs of
//!   a word-processing file, a book's chapters); a chunk cites the same kind,
//!   adjacent ranges merged. An oversized block is cut only when its text
//!   has one line per line or part it cites.

use crate::text::estimate_tokens;
use crate::{Block, BlockKind, Chunk, ChunkPolicy, Document, PartUnit, Span};

/// The chunker label stored with every chunk.
pub const CHUNKER_VERSION: &str = "md-heading-v1";

/// A piece of one block that is packed as a whole.
#[derive(Debug, Clone)]
struct Unit {
    block: u32,
    text: String,
    /// What the ranges count: lines (`None`) or numbered parts.
    unit: Option<PartUnit>,
    /// Inclusive ranges of the text (lines or parts), in order.
    lines: Vec<(u32, u32)>,
    tokens: u32,
    /// Prose that may be repeated as overlap.
    prose: bool,
}

/// Chunk a document whose blocks carry heading paths (the markdown and
/// markup plugins' parsers make them).
pub fn chunk(doc: &Document, policy: &ChunkPolicy) -> Vec<Chunk> {
    let target = policy.target_tokens.max(1);
    let mut out = Vec::new();
    let mut carried: Vec<Unit> = Vec::new();
    let sections = sections(&doc.blocks);
    for (i, section) in sections.iter().enumerate() {
        let mut units = std::mem::take(&mut carried);
        for &b in section {
            units.extend(units_of(b as u32, &doc.blocks[b], target));
        }
        let heading_only = section.len() == 1 && doc.blocks[section[0]].kind == BlockKind::Heading;
        let next_is_child = sections.get(i + 1).is_some_and(|next| {
            doc.blocks[next[0]].heading_path.len() > doc.blocks[section[0]].heading_path.len()
        });
        if heading_only && next_is_child {
            carried = units;
            continue;
        }
        let path = doc.blocks[*section.last().unwrap_or(&0)]
            .heading_path
            .clone();
        crate::pack::pack(units, target, policy.overlap_tokens, |run| {
            out.push(make_chunk(run, &path))
        });
    }
    out
}

/// Block indices grouped by heading: each group starts at a heading (or the
/// document's start).
fn sections(blocks: &[Block]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        if b.kind == BlockKind::Heading || out.is_empty() {
            out.push(Vec::new());
        }
        if let Some(last) = out.last_mut() {
            last.push(i);
        }
    }
    out
}

/// What a block's span counts and its inclusive range: lines for line and
/// code spans, parts (paragraphs, chapters, messages) for part spans; `None`
/// for spans the chunker cannot pack (pages, slides, cells, regions).
fn numbered(span: &Span) -> Option<(Option<PartUnit>, u32, u32)> {
    match span {
        Span::Part(p) => Some((Some(p.unit), p.first, p.last)),
        other => other.line_bounds().map(|(s, e)| (None, s, e)),
    }
}

fn units_of(index: u32, block: &Block, target: u32) -> Vec<Unit> {
    let Some((unit, first, last)) = numbered(&block.span) else {
        return Vec::new();
    };
    let tokens = estimate_tokens(&block.text);
    let prose = matches!(
        block.kind,
        BlockKind::Paragraph | BlockKind::List | BlockKind::Quote
    );
    let whole = Unit {
        block: index,
        unit,
        text: block.text.clone(),
        lines: vec![(first, last)],
        tokens,
        prose,
    };
    if tokens <= target || block.kind == BlockKind::Code || first == last {
        return vec![whole];
    }
    let lines: Vec<&str> = block.text.lines().collect();
    if lines.len() as u32 != last - first + 1 {
        return vec![whole];
    }
    let header = if block.kind == BlockKind::Table && lines.len() > 2 {
        2
    } else {
        0
    };
    let header_text = lines[..header].join("\n");
    let header_tokens = estimate_tokens(&header_text);
    let mut out = Vec::new();
    let mut group_start = header;
    let mut group_tokens = header_tokens;
    for i in header..lines.len() {
        let t = estimate_tokens(lines[i]);
        if i > group_start && group_tokens + t > target {
            out.push(line_group(
                (index, unit),
                &lines,
                &header_text,
                header,
                group_start,
                i,
                first,
                prose,
            ));
            group_start = i;
            group_tokens = header_tokens;
        }
        group_tokens += t;
    }
    out.push(line_group(
        (index, unit),
        &lines,
        &header_text,
        header,
        group_start,
        lines.len(),
        first,
        prose,
    ));
    out
}

/// Lines `from..to` (0-based, exclusive end) of a block, behind its header
/// lines when it has any.
#[allow(clippy::too_many_arguments)]
fn line_group(
    (block, unit): (u32, Option<PartUnit>),
    lines: &[&str],
    header_text: &str,
    header: usize,
    from: usize,
    to: usize,
    first_line: u32,
    prose: bool,
) -> Unit {
    let body = lines[from..to].join("\n");
    let mut spans = Vec::new();
    let text = if header > 0 {
        spans.push((first_line, first_line + header as u32 - 1));
        format!("{header_text}\n{body}")
    } else {
        body
    };
    spans.push((first_line + from as u32, first_line + to as u32 - 1));
    Unit {
        block,
        unit,
        tokens: estimate_tokens(&text),
        text,
        lines: spans,
        prose,
    }
}

fn make_chunk(units: &[Unit], path: &[String]) -> Chunk {
    let mut blocks: Vec<u32> = Vec::new();
    let mut spans: Vec<(Option<PartUnit>, u32, u32)> = Vec::new();
    for u in units {
        if blocks.last() != Some(&u.block) {
            blocks.push(u.block);
        }
        for &(s, e) in &u.lines {
            match spans.last_mut() {
                Some(last) if last.0 == u.unit && s <= last.2 + 1 && s >= last.1 => {
                    last.2 = last.2.max(e)
                }
                _ => spans.push((u.unit, s, e)),
            }
        }
    }
    Chunk {
        text: units
            .iter()
            .map(|u| u.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n"),
        heading_path: path.to_vec(),
        blocks,
        spans: spans
            .into_iter()
            .map(|(unit, s, e)| match unit {
                Some(unit) => Span::parts(unit, s, e),
                None => Span::lines(s, e),
            })
            .collect(),
    }
}

impl crate::pack::Piece for Unit {
    fn tokens(&self) -> u32 {
        self.tokens
    }

    fn repeatable(&self) -> bool {
        self.prose
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(kind: BlockKind, path: &[&str], span: Span, text: &str) -> Block {
        Block {
            kind,
            heading_path: path.iter().map(|s| s.to_string()).collect(),
            span,
            text: text.into(),
            level: (kind == BlockKind::Heading).then_some(1),
            lang: None,
        }
    }

    #[test]
    fn part_spans_are_packed_and_merged_as_lines_are() {
        let para = |first, last| Span::parts(PartUnit::Paragraph, first, last);
        let doc = Document {
            title: None,
            lang: None,
            blocks: vec![
                block(BlockKind::Heading, &["Intro"], para(1, 1), "Intro"),
                block(BlockKind::Paragraph, &["Intro"], para(2, 2), "First."),
                block(BlockKind::Paragraph, &["Intro"], para(3, 3), "Second."),
                block(BlockKind::Heading, &["Next"], para(4, 4), "Next"),
                block(BlockKind::Paragraph, &["Next"], para(5, 5), "Third."),
            ],
            metadata: vec![],
        };
        let policy = ChunkPolicy {
            target_tokens: 400,
            overlap_tokens: 0,
        };
        let chunks = chunk(&doc, &policy);
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].spans, vec![para(1, 3)]);
        assert_eq!(chunks[0].heading_path, vec!["Intro".to_string()]);
        assert_eq!(chunks[1].spans, vec![para(4, 5)]);
        assert!(chunks[1].text.contains("Third."));
    }

    #[test]
    fn an_oversized_block_citing_one_part_per_line_is_cut_by_parts() {
        let text: Vec<String> = (1..=40)
            .map(|i| format!("row {i} of a long list of items"))
            .collect();
        let doc = Document {
            title: None,
            lang: None,
            blocks: vec![block(
                BlockKind::List,
                &[],
                Span::parts(PartUnit::Paragraph, 11, 50),
                &text.join("\n"),
            )],
            metadata: vec![],
        };
        let chunks = chunk(
            &doc,
            &ChunkPolicy {
                target_tokens: 60,
                overlap_tokens: 0,
            },
        );
        assert!(chunks.len() > 1);
        let Span::Part(first) = &chunks[0].spans[0] else {
            panic!("a part span: {:?}", chunks[0].spans);
        };
        assert_eq!((first.unit, first.first), (PartUnit::Paragraph, 11));
        let Span::Part(last) = chunks.last().unwrap().spans.last().unwrap() else {
            panic!("a part span");
        };
        assert_eq!(last.last, 50);
    }
}
