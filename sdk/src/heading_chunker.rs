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

use crate::text::estimate_tokens;
use crate::{Block, BlockKind, Chunk, ChunkPolicy, Document, Span};

/// The chunker label stored with every chunk.
pub const CHUNKER_VERSION: &str = "md-heading-v1";

/// A piece of one block that is packed as a whole.
#[derive(Debug, Clone)]
struct Unit {
    block: u32,
    text: String,
    /// Inclusive line ranges of the text, in order.
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
        pack(units, &path, target, policy.overlap_tokens, &mut out);
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

fn units_of(index: u32, block: &Block, target: u32) -> Vec<Unit> {
    let Some((first, last)) = block.span.line_bounds() else {
        return Vec::new();
    };
    let tokens = estimate_tokens(&block.text);
    let prose = matches!(
        block.kind,
        BlockKind::Paragraph | BlockKind::List | BlockKind::Quote
    );
    let whole = Unit {
        block: index,
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
                index,
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
        index,
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
    block: u32,
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
        tokens: estimate_tokens(&text),
        text,
        lines: spans,
        prose,
    }
}

fn pack(units: Vec<Unit>, path: &[String], target: u32, overlap: u32, out: &mut Vec<Chunk>) {
    let mut current: Vec<Unit> = Vec::new();
    let mut fresh = 0usize;
    let mut tokens = 0u32;
    for unit in units {
        if fresh > 0 && tokens + unit.tokens > target {
            out.push(make_chunk(&current, path));
            current = overlap_tail(&current, overlap);
            tokens = current.iter().map(|u| u.tokens).sum();
            fresh = 0;
        }
        tokens += unit.tokens;
        current.push(unit);
        fresh += 1;
    }
    if fresh > 0 {
        out.push(make_chunk(&current, path));
    }
}

/// The trailing prose units of an emitted chunk worth at most `overlap`
/// tokens, never the whole chunk.
fn overlap_tail(units: &[Unit], overlap: u32) -> Vec<Unit> {
    let mut taken = 0usize;
    let mut tokens = 0u32;
    for u in units.iter().rev() {
        if !u.prose || tokens + u.tokens > overlap || taken + 1 >= units.len() {
            break;
        }
        tokens += u.tokens;
        taken += 1;
    }
    units[units.len() - taken..].to_vec()
}

fn make_chunk(units: &[Unit], path: &[String]) -> Chunk {
    let mut blocks: Vec<u32> = Vec::new();
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for u in units {
        if blocks.last() != Some(&u.block) {
            blocks.push(u.block);
        }
        for &(s, e) in &u.lines {
            match spans.last_mut() {
                Some(last) if s <= last.1 + 1 && s >= last.0 => last.1 = last.1.max(e),
                _ => spans.push((s, e)),
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
        spans: spans.into_iter().map(|(s, e)| Span::lines(s, e)).collect(),
    }
}
