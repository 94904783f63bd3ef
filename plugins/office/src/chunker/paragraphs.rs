//! Paragraph chunks of a word-processing document.
//!
//! - A section starts at a heading or where the heading path changes
//!   (the back matter: headers, footers, notes, comments); a chunk never
//!   spans two sections. A heading with nothing under it but a deeper
//!   heading joins that section.
//! - Blocks are packed into a chunk up to the target; consecutive chunks
//!   of a section share trailing prose blocks worth up to the overlap.
//! - A paragraph longer than the target is cut into overlapping pieces,
//!   each citing that paragraph.
//! - A table longer than the target is cut between rows (a row is never
//!   split); every piece repeats the header row and cites the header's and
//!   its rows' paragraphs, known from the row ends the parser recorded
//!   under [`TABLE_ROWS_KEY`].

use std::collections::HashMap;

use kebab_plugin_sdk::text::estimate_tokens;
use kebab_plugin_sdk::{Block, BlockKind, Chunk, Document, PartRange, Span};

use super::split::split;
use crate::textdoc::TABLE_ROWS_KEY;

/// A piece of one block packed as a whole.
#[derive(Debug, Clone)]
struct Unit {
    block: u32,
    text: String,
    spans: Vec<Span>,
    tokens: u32,
    kind: BlockKind,
}

impl kebab_plugin_sdk::pack::Piece for Unit {
    fn tokens(&self) -> u32 {
        self.tokens
    }

    fn repeatable(&self) -> bool {
        matches!(
            self.kind,
            BlockKind::Paragraph | BlockKind::List | BlockKind::Quote
        )
    }
}

/// Chunk the blocks of a text document.
pub fn chunk(doc: &Document, target: u32, overlap: u32) -> Vec<Chunk> {
    let rows = table_rows(doc);
    let sections = sections(&doc.blocks);
    let mut out = Vec::new();
    let mut carried: Vec<Unit> = Vec::new();
    for (i, section) in sections.iter().enumerate() {
        let mut units = std::mem::take(&mut carried);
        for &b in section {
            units.extend(units_of(b, &doc.blocks[b], rows.get(&b), target, overlap));
        }
        let first = &doc.blocks[section[0]];
        let heading_only = section.len() == 1 && first.kind == BlockKind::Heading;
        let child_follows = sections
            .get(i + 1)
            .is_some_and(|next| doc.blocks[next[0]].heading_path.len() > first.heading_path.len());
        if heading_only && child_follows {
            carried = units;
            continue;
        }
        kebab_plugin_sdk::pack::pack(units, target, overlap, |run| {
            out.push(make_chunk(run, &first.heading_path))
        });
    }
    out
}

/// Block indices grouped into sections.
fn sections(blocks: &[Block]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let starts = block.kind == BlockKind::Heading
            || i == 0
            || blocks[i - 1].heading_path != block.heading_path;
        if starts {
            out.push(Vec::new());
        }
        if let Some(last) = out.last_mut() {
            last.push(i);
        }
    }
    out
}

/// The recorded row ends of each table block (`block:end,end;…`).
fn table_rows(doc: &Document) -> HashMap<usize, Vec<u32>> {
    let Some((_, value)) = doc.metadata.iter().find(|(k, _)| k == TABLE_ROWS_KEY) else {
        return HashMap::new();
    };
    value
        .split(';')
        .filter_map(|entry| {
            let (block, ends) = entry.split_once(':')?;
            let ends: Option<Vec<u32>> = ends.split(',').map(|e| e.parse().ok()).collect();
            Some((block.parse().ok()?, ends?))
        })
        .collect()
}

/// The units of one block: the whole block when it fits; else row groups
/// of a table, pieces of anything else.
fn units_of(
    index: usize,
    block: &Block,
    rows: Option<&Vec<u32>>,
    target: u32,
    overlap: u32,
) -> Vec<Unit> {
    let tokens = estimate_tokens(&block.text);
    let unit = |text: String, spans: Vec<Span>| Unit {
        block: index as u32,
        tokens: estimate_tokens(&text),
        text,
        spans,
        kind: block.kind,
    };
    if tokens <= target {
        return vec![Unit {
            tokens,
            ..unit(block.text.clone(), vec![block.span.clone()])
        }];
    }
    if block.kind == BlockKind::Table
        && let Some(groups) = row_groups(block, rows, target)
    {
        return groups
            .into_iter()
            .map(|(text, spans)| unit(text, spans))
            .collect();
    }
    split(&block.text, target, overlap)
        .into_iter()
        .map(|piece| unit(piece, vec![block.span.clone()]))
        .collect()
}

/// A long table's rows in groups within `target`, each behind the header
/// row, with the spans of the header's and the group's paragraphs (the
/// whole table's span when the row ends are unknown). `None` when the
/// table has no rows to group.
fn row_groups(
    block: &Block,
    ends: Option<&Vec<u32>>,
    target: u32,
) -> Option<Vec<(String, Vec<Span>)>> {
    let lines: Vec<&str> = block.text.lines().collect();
    if lines.len() < 3 {
        return None;
    }
    let Span::Part(range) = &block.span else {
        return None;
    };
    let ranges = ends
        .filter(|e| e.len() == lines.len())
        .map(|ends| row_ranges(range, ends));
    let span_of = |from: usize, to: usize| match &ranges {
        Some(r) => part(range, r[from].0, r[to - 1].1),
        None => block.span.clone(),
    };
    let header = lines[0];
    let header_tokens = estimate_tokens(header);
    let mut out = Vec::new();
    let mut start = 1usize;
    while start < lines.len() {
        let mut end = start;
        let mut tokens = header_tokens;
        while end < lines.len() && (end == start || tokens + estimate_tokens(lines[end]) <= target)
        {
            tokens += estimate_tokens(lines[end]);
            end += 1;
        }
        let text = format!("{header}\n{}", lines[start..end].join("\n"));
        out.push((text, merge(vec![span_of(0, 1), span_of(start, end)])));
        start = end;
    }
    Some(out)
}

/// The paragraph range of each row from the rows' last paragraphs.
fn row_ranges(table: &PartRange, ends: &[u32]) -> Vec<(u32, u32)> {
    let mut first = table.first;
    ends.iter()
        .map(|&end| {
            let range = (first, end.max(first));
            first = end.saturating_add(1);
            range
        })
        .collect()
}

/// A part span of the table's unit over `first..=last`.
fn part(table: &PartRange, first: u32, last: u32) -> Span {
    Span::parts(table.unit, first, last.max(first))
}

/// One chunk of `units`: list items joined by line breaks, everything
/// else by blank lines; adjacent paragraph ranges merged.
fn make_chunk(units: &[Unit], path: &[String]) -> Chunk {
    let mut text = String::new();
    let mut blocks: Vec<u32> = Vec::new();
    let mut spans = Vec::new();
    let mut previous: Option<BlockKind> = None;
    for unit in units {
        if let Some(kind) = previous {
            let both_lists = kind == BlockKind::List && unit.kind == BlockKind::List;
            text.push_str(if both_lists { "\n" } else { "\n\n" });
        }
        text.push_str(&unit.text);
        previous = Some(unit.kind);
        if blocks.last() != Some(&unit.block) {
            blocks.push(unit.block);
        }
        spans.extend(unit.spans.iter().cloned());
    }
    Chunk {
        text,
        heading_path: path.to_vec(),
        blocks,
        spans: merge(spans),
    }
}

/// Spans with adjacent or overlapping part ranges of one unit merged.
fn merge(spans: Vec<Span>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    for span in spans {
        if let (Some(Span::Part(last)), Span::Part(next)) = (out.last_mut(), &span)
            && last.unit == next.unit
            && next.first >= last.first
            && next.first <= last.last.saturating_add(1)
        {
            last.last = last.last.max(next.last);
            continue;
        }
        if out.last() != Some(&span) {
            out.push(span);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab_plugin_sdk::PartUnit;

    fn para(first: u32, last: u32) -> Span {
        Span::parts(PartUnit::Paragraph, first, last)
    }

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

    fn doc(blocks: Vec<Block>, metadata: Vec<(String, String)>) -> Document {
        Document {
            title: None,
            lang: None,
            blocks,
            metadata,
        }
    }

    #[test]
    fn sections_pack_and_merge_paragraph_ranges() {
        let d = doc(
            vec![
                block(BlockKind::Heading, &["A"], para(1, 1), "A"),
                block(BlockKind::Heading, &["A", "B"], para(2, 2), "B"),
                block(BlockKind::List, &["A", "B"], para(3, 3), "- one"),
                block(BlockKind::List, &["A", "B"], para(4, 4), "- two"),
                block(BlockKind::Quote, &["Footnotes"], para(5, 5), "a note"),
            ],
            vec![],
        );
        let chunks = chunk(&d, 400, 0);
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].text, "A\n\nB\n\n- one\n- two");
        assert_eq!(chunks[0].spans, vec![para(1, 4)]);
        assert_eq!(chunks[0].heading_path, vec!["A", "B"]);
        assert_eq!(chunks[1].heading_path, vec!["Footnotes"]);
    }

    #[test]
    fn long_tables_repeat_their_header_and_cite_their_rows() {
        let mut lines = vec!["| Name | Value |".to_string()];
        let mut ends = vec![2u32];
        for i in 0..60 {
            lines.push(format!("| item number {i} | value {i} |"));
            ends.push(4 + i * 2);
        }
        let ends_text: Vec<String> = ends.iter().map(u32::to_string).collect();
        let d = doc(
            vec![
                block(BlockKind::Paragraph, &[], para(1, 1), "Before"),
                block(BlockKind::Table, &[], para(1, 122), &lines.join("\n")),
            ],
            vec![(
                TABLE_ROWS_KEY.to_string(),
                format!("1:{}", ends_text.join(",")),
            )],
        );
        let chunks = chunk(&d, 60, 0);
        let table_chunks: Vec<&Chunk> = chunks.iter().filter(|c| c.blocks == vec![1]).collect();
        assert!(table_chunks.len() > 3);
        for c in &table_chunks {
            assert!(c.text.starts_with("| Name | Value |\n| item number"));
            assert!(estimate_tokens(&c.text) <= 60);
        }
        assert_eq!(
            table_chunks[0].spans[0],
            para(1, table_chunks[0].spans[0].clone().part_last())
        );
        let last = table_chunks.last().unwrap();
        assert!(last.text.ends_with("| item number 59 | value 59 |"));
        assert_eq!(last.spans.len(), 2);
        assert_eq!(last.spans[1].clone().part_last(), 122);
    }

    trait PartLast {
        fn part_last(self) -> u32;
    }

    impl PartLast for Span {
        fn part_last(self) -> u32 {
            match self {
                Span::Part(p) => p.last,
                _ => 0,
            }
        }
    }

    #[test]
    fn long_paragraphs_split_citing_themselves() {
        let text = (0..300)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let d = doc(
            vec![block(BlockKind::Paragraph, &[], para(7, 7), &text)],
            vec![],
        );
        let chunks = chunk(&d, 50, 10);
        assert!(chunks.len() > 3);
        assert!(chunks.iter().all(|c| c.spans == vec![para(7, 7)]));
    }
}
