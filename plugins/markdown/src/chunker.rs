//! `md-heading-v1`: heading-bounded chunks.
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

use kebab_plugin_sdk::text::estimate_tokens;
use kebab_plugin_sdk::{Block, BlockKind, Chunk, ChunkPolicy, Document, Span};

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

/// Chunk a document produced by [`crate::parser::parse`].
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse;

    fn policy(target: u32, overlap: u32) -> ChunkPolicy {
        ChunkPolicy {
            target_tokens: target,
            overlap_tokens: overlap,
        }
    }

    fn chunks_of(src: &str, target: u32, overlap: u32) -> Vec<Chunk> {
        chunk(&parse(src.as_bytes()).unwrap(), &policy(target, overlap))
    }

    #[test]
    fn headings_bound_chunks_and_keep_paths() {
        let src = "# A\n\nalpha text\n\n## B\n\nbeta text\n\n# C\n\ngamma\n";
        let chunks = chunks_of(src, 500, 80);
        let paths: Vec<Vec<String>> = chunks.iter().map(|c| c.heading_path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                vec!["A".to_string()],
                vec!["A".into(), "B".into()],
                vec!["C".into()]
            ]
        );
        assert_eq!(chunks[0].text, "# A\n\nalpha text");
        assert_eq!(chunks[0].spans, vec![Span::lines(1, 1), Span::lines(3, 3)]);
    }

    #[test]
    fn lone_parent_heading_joins_its_child_section() {
        let chunks = chunks_of("# Parent\n## Child\nbody\n", 500, 0);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, "# Parent\n\n## Child\n\nbody");
        assert_eq!(chunks[0].heading_path, vec!["Parent", "Child"]);
        assert_eq!(chunks[0].spans, vec![Span::lines(1, 3)]);
    }

    #[test]
    fn code_blocks_are_never_split() {
        let code: String = (0..300)
            .map(|i| format!("let v{i} = {i} * {i};\n"))
            .collect();
        let src = format!("# S\n\n```rust\n{code}```\n\nafter\n");
        let chunks = chunks_of(&src, 50, 0);
        let code_chunks: Vec<&Chunk> = chunks
            .iter()
            .filter(|c| c.text.contains("```rust"))
            .collect();
        assert_eq!(code_chunks.len(), 1);
        assert!(
            code_chunks[0].text.contains("let v0 ") && code_chunks[0].text.contains("let v299 ")
        );
    }

    #[test]
    fn long_section_splits_by_paragraph_with_overlap() {
        let para = |n: usize| format!("paragraph {n} {}\n\n", "word ".repeat(30));
        let src: String = std::iter::once("# Long\n\n".to_string())
            .chain((0..10).map(para))
            .collect();
        let chunks = chunks_of(&src, 100, 40);
        assert!(chunks.len() > 2, "got {} chunks", chunks.len());
        for c in &chunks {
            assert!(
                estimate_tokens(&c.text) <= 100 + 40,
                "chunk too big: {}",
                c.text
            );
            assert_eq!(c.heading_path, vec!["Long"]);
        }
        for pair in chunks.windows(2) {
            let last_para = pair[0].text.rsplit("\n\n").next().unwrap();
            assert!(
                pair[1].text.starts_with(last_para),
                "no overlap between chunks"
            );
        }
        let all: String = chunks.iter().map(|c| c.text.clone()).collect();
        for n in 0..10 {
            assert!(all.contains(&format!("paragraph {n} ")));
        }
    }

    #[test]
    fn small_table_whole_large_table_in_row_groups_with_header() {
        let small = "# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let chunks = chunks_of(small, 500, 0);
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].text.contains("| 1 | 2 |"));
        let rows: String = (0..60)
            .map(|i| format!("| row{i} | value number {i} |\n"))
            .collect();
        let big = format!("# T\n\n| key | value |\n|---|---|\n{rows}");
        let chunks = chunks_of(&big, 60, 0);
        let table_chunks: Vec<&Chunk> = chunks
            .iter()
            .filter(|c| c.text.contains("| key | value |"))
            .collect();
        assert!(table_chunks.len() > 2);
        for c in &table_chunks[1..] {
            assert_eq!(c.spans[0], Span::lines(3, 4), "header span first");
        }
        let all: String = chunks.iter().map(|c| c.text.clone()).collect();
        assert!(all.contains("| row0 |") && all.contains("| row59 |"));
    }

    #[test]
    fn chunk_text_lines_are_inside_cited_spans() {
        let src = "# A\n\nOne paragraph here.\n\n- item\n- item two\n\n## B\n\n> quote\n";
        let lines: Vec<&str> = src.lines().collect();
        for c in chunks_of(src, 8, 4) {
            for line in c.text.lines().filter(|l| !l.is_empty()) {
                let found = c.spans.iter().any(|s| {
                    let (a, b) = s.line_bounds().unwrap();
                    lines[a as usize - 1..b as usize].contains(&line)
                });
                assert!(found, "{line:?} not in spans {:?}", c.spans);
            }
        }
    }
}
