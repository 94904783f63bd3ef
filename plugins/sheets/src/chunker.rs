//! `sheets-rows-v1`: windows of rows, each carrying its sheet's header.
//!
//! - A sheet's rows are packed into windows of up to `target_tokens`,
//!   the header's tokens counted in; a row is never split, and a row larger
//!   than the target is a chunk of its own (cells were cut at 32 KiB when
//!   read, so it stays bounded).
//! - Every chunk of a sheet with a header starts with the header rows, so it
//!   reads on its own. The first window cites header and rows as one range;
//!   a later one cites the header's range, then its own.
//! - A chunk never spans two sheets; it keeps the sheet's heading path.
//! - No overlap: rows are self-contained records and the carried header
//!   gives every chunk its context, so `overlap_tokens` is not used.
//! - At most [`MAX_CHUNKS`] chunks and [`MAX_CHUNK_TEXT_BYTES`] of text are
//!   made; what is past them is logged and left out.

use std::collections::HashMap;

use kebab_plugin_sdk::text::estimate_tokens;
use kebab_plugin_sdk::{Block, CellRange, Chunk, ChunkPolicy, Document, LogLevel, Span, log};

use crate::document::HEADER_ROWS;
use crate::limits::{MAX_CHUNK_TEXT_BYTES, MAX_CHUNKS};

/// The chunker label stored with every chunk.
pub const CHUNKER_VERSION: &str = "sheets-rows-v1";

/// Chunk a document made by this plugin's parser.
pub fn chunk(doc: &Document, policy: &ChunkPolicy) -> Vec<Chunk> {
    let headers = header_rows(doc);
    let mut out = Output::default();
    let mut i = 0usize;
    while i < doc.blocks.len() && !out.full {
        let Span::Cells(range) = &doc.blocks[i].span else {
            let block = &doc.blocks[i];
            if !block.text.trim().is_empty() {
                let span = block.span.clone();
                out.push(chunk_of(
                    block.text.clone(),
                    block,
                    vec![i as u32],
                    vec![span],
                ));
            }
            i += 1;
            continue;
        };
        let end = doc.blocks[i..]
            .iter()
            .position(|b| !matches!(&b.span, Span::Cells(r) if r.sheet == range.sheet))
            .map_or(doc.blocks.len(), |n| i + n);
        let header = headers.get(range.sheet.as_str()).copied();
        Sheet::new(doc, i..end, header, policy.target_tokens.max(1)).chunk(&mut out);
        i = end;
    }
    out.chunks
}

/// The header rows per sheet the parser recorded in the metadata.
fn header_rows(doc: &Document) -> HashMap<String, (u32, u32)> {
    let Some((_, json)) = doc.metadata.iter().find(|(k, _)| k == HEADER_ROWS) else {
        return HashMap::new();
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(json) else {
        return HashMap::new();
    };
    map.into_iter()
        .filter_map(|(sheet, rows)| {
            let first = rows.get(0)?.as_u64()?;
            let last = rows.get(1)?.as_u64()?;
            Some((
                sheet,
                (u32::try_from(first).ok()?, u32::try_from(last).ok()?),
            ))
        })
        .collect()
}

/// The chunks made so far, within the document's bounds.
#[derive(Default)]
struct Output {
    chunks: Vec<Chunk>,
    bytes: usize,
    full: bool,
}

impl Output {
    fn push(&mut self, chunk: Chunk) {
        if self.full {
            return;
        }
        if self.chunks.len() >= MAX_CHUNKS || self.bytes + chunk.text.len() > MAX_CHUNK_TEXT_BYTES {
            log(
                LogLevel::Warn,
                &format!(
                    "chunks from {:?} on not made: the bound of {MAX_CHUNKS} chunks or {} MiB of \
                     chunk text was reached",
                    chunk.spans.last(),
                    MAX_CHUNK_TEXT_BYTES >> 20
                ),
            );
            self.full = true;
            return;
        }
        self.bytes += chunk.text.len();
        self.chunks.push(chunk);
    }
}

/// The header of one sheet: its block and rows.
struct Header<'a> {
    index: u32,
    block: &'a Block,
    range: &'a CellRange,
    tokens: u32,
}

/// The blocks of one sheet being cut into windows.
struct Sheet<'a> {
    doc: &'a Document,
    header: Option<Header<'a>>,
    data: std::ops::Range<usize>,
    target: u32,
}

/// Rows gathered for one chunk.
#[derive(Default)]
struct Window<'a> {
    lines: Vec<&'a str>,
    rows: Option<(u32, u32)>,
    columns: Option<(u32, u32)>,
    blocks: Vec<u32>,
    tokens: u32,
}

impl<'a> Sheet<'a> {
    /// The sheet made of `blocks`; its first block is the header when it
    /// covers exactly the recorded header rows.
    fn new(
        doc: &'a Document,
        blocks: std::ops::Range<usize>,
        header_rows: Option<(u32, u32)>,
        target: u32,
    ) -> Sheet<'a> {
        let first = blocks.start;
        let header = doc.blocks.get(first).and_then(|block| match &block.span {
            Span::Cells(range) if Some((range.first_row, range.last_row)) == header_rows => {
                Some(Header {
                    index: first as u32,
                    block,
                    range,
                    tokens: estimate_tokens(&block.text),
                })
            }
            _ => None,
        });
        let data = if header.is_some() {
            first + 1..blocks.end
        } else {
            blocks
        };
        Sheet {
            doc,
            header,
            data,
            target,
        }
    }

    fn chunk(&self, out: &mut Output) {
        let header_tokens = self.header.as_ref().map_or(0, |h| h.tokens);
        let mut window = Window::default();
        let mut first_window = true;
        for index in self.data.clone() {
            let block = &self.doc.blocks[index];
            let Span::Cells(range) = &block.span else {
                continue;
            };
            for (row, line) in rows_of(block, range) {
                let tokens = estimate_tokens(line);
                if !window.lines.is_empty() && header_tokens + window.tokens + tokens > self.target
                {
                    out.push(self.emit(std::mem::take(&mut window), first_window));
                    first_window = false;
                }
                window.add(row, line, index as u32, range, tokens);
            }
        }
        if !window.lines.is_empty() || (first_window && self.header.is_some()) {
            out.push(self.emit(window, first_window));
        }
    }

    /// The chunk of one window, behind the header.
    fn emit(&self, window: Window<'_>, first_window: bool) -> Chunk {
        let body = window.lines.join("\n");
        let Some(header) = &self.header else {
            let block = &self.doc.blocks[self.data.start];
            let span = span_of(&block.span, window.rows, window.columns);
            return chunk_of(body, block, window.blocks, vec![span]);
        };
        let text = if body.is_empty() {
            header.block.text.clone()
        } else {
            format!("{}\n{body}", header.block.text)
        };
        let mut blocks = vec![header.index];
        blocks.extend(window.blocks);
        let header_rows = (header.range.first_row, header.range.last_row);
        let header_columns = (header.range.first_column, header.range.last_column);
        let spans = match window.rows {
            None => vec![header.block.span.clone()],
            Some((_, last)) if first_window => {
                let columns = widen(
                    Some(header_columns),
                    window.columns.unwrap_or(header_columns),
                );
                vec![span_of(
                    &header.block.span,
                    Some((header_rows.0, last)),
                    columns,
                )]
            }
            rows => vec![
                header.block.span.clone(),
                span_of(&header.block.span, rows, window.columns),
            ],
        };
        chunk_of(text, header.block, blocks, spans)
    }
}

impl<'a> Window<'a> {
    fn add(&mut self, row: u32, line: &'a str, block: u32, range: &CellRange, tokens: u32) {
        self.lines.push(line);
        self.rows = Some(self.rows.map_or((row, row), |(first, _)| (first, row)));
        self.columns = widen(self.columns, (range.first_column, range.last_column));
        if self.blocks.last() != Some(&block) {
            self.blocks.push(block);
        }
        self.tokens += tokens;
    }
}

/// The rows of a block with their 1-based numbers: line `i` is row
/// `first_row + i`. A block whose lines do not match its rows is one row
/// spanning them all.
fn rows_of<'b>(block: &'b Block, range: &CellRange) -> Vec<(u32, &'b str)> {
    let lines: Vec<&str> = block.text.split('\n').collect();
    if lines.len() as u64 != u64::from(range.last_row.saturating_sub(range.first_row)) + 1 {
        return vec![(range.first_row, block.text.as_str())];
    }
    (range.first_row..).zip(lines).collect()
}

/// `columns` widened to take in `more`.
fn widen(columns: Option<(u32, u32)>, more: (u32, u32)) -> Option<(u32, u32)> {
    Some(columns.map_or(more, |(a, b)| (a.min(more.0), b.max(more.1))))
}

/// `template` (a cells span) narrowed to `rows` and `columns`.
fn span_of(template: &Span, rows: Option<(u32, u32)>, columns: Option<(u32, u32)>) -> Span {
    let Span::Cells(range) = template else {
        return template.clone();
    };
    let (first_row, last_row) = rows.unwrap_or((range.first_row, range.last_row));
    let (first_column, last_column) = columns.unwrap_or((range.first_column, range.last_column));
    Span::Cells(CellRange {
        sheet: range.sheet.clone(),
        first_row,
        last_row,
        first_column,
        last_column,
    })
}

fn chunk_of(text: String, block: &Block, blocks: Vec<u32>, spans: Vec<Span>) -> Chunk {
    Chunk {
        text,
        heading_path: block.heading_path.clone(),
        blocks,
        spans,
    }
}
