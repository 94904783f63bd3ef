//! A read workbook as the host's document: per sheet, in workbook order, an
//! optional header block and blocks of consecutive non-empty rows, each
//! cited as a rectangle of cells and placed under the sheet's name.
//!
//! - A row's text is its cells from the sheet's first used column joined
//!   with ` | `; a block holds one line per row, so line `i` of a block is
//!   row `first_row + i` (empty rows end a block; their numbers stay true).
//! - Every span of a sheet covers its used columns (a used range starting
//!   at `C5` cites column `C` on).
//! - The header is the sheet's first non-empty row when it holds some text
//!   and other rows follow; a lone title cell directly above a wider row
//!   of text makes both rows the header (`Budget 2024` over `Item | Q1`).
//!   It gets a block of its own, and the metadata entry `header_rows` maps
//!   each sheet with one to its 1-based first and last row, so the chunker
//!   can carry it into every chunk.
//! - Hidden sheets are read too; their heading reads `Name (hidden)` (the
//!   span keeps the sheet's real name) and `hidden_sheets` lists them.

use std::collections::BTreeMap;

use kebab_plugin_sdk::{Block, BlockKind, CellRange, Document, LogLevel, Span, log};
use serde_json::json;

use crate::grid::Row;
use crate::limits::{MAX_BLOCK_BYTES, MAX_BLOCK_ROWS, MAX_BLOCKS, MAX_ROWS_TEXT_BYTES, warn_cut};
use crate::workbook::{Sheet, Workbook};

/// The parser label stored with every document.
pub const PARSER_VERSION: &str = "sheets-v1";

/// Metadata key of the header rows per sheet (a JSON object of
/// `[first, last]` 1-based row numbers).
pub const HEADER_ROWS: &str = "header_rows";

/// How many rows below a lone title cell the column header may start.
const MAX_TITLE_GAP: u32 = 2;

/// The document of a read workbook.
pub fn build(book: Workbook) -> Document {
    let names: Vec<&str> = book.sheets.iter().map(|s| s.name.as_str()).collect();
    let hidden: Vec<&str> = book
        .sheets
        .iter()
        .filter(|s| s.hidden)
        .map(|s| s.name.as_str())
        .collect();
    let mut metadata = vec![
        ("format".to_string(), book.format.to_string()),
        ("sheets".to_string(), json!(names).to_string()),
    ];
    if !hidden.is_empty() {
        metadata.push(("hidden_sheets".into(), json!(hidden).to_string()));
    }
    let title = book
        .title
        .clone()
        .or_else(|| names.first().map(|n| n.to_string()));
    if let Some(author) = &book.author {
        metadata.push(("author".into(), author.clone()));
    }
    let mut out = Builder::default();
    for sheet in book.sheets {
        out.add_sheet(sheet);
    }
    if !out.headers.is_empty() {
        metadata.push((HEADER_ROWS.into(), json!(out.headers).to_string()));
    }
    if !out.cuts.is_empty() {
        metadata.push(("truncated".into(), out.cuts.join("; ")));
    }
    metadata.extend(book.notes);
    Document {
        title,
        lang: None,
        blocks: out.blocks,
        metadata,
    }
}

/// The blocks made so far and what the metadata will say about them.
#[derive(Default)]
struct Builder {
    blocks: Vec<Block>,
    /// Header rows per sheet, sorted by name (a `BTreeMap`, so the JSON
    /// is the same whatever features serde_json is built with).
    headers: BTreeMap<String, [u32; 2]>,
    cuts: Vec<String>,
    /// Row text still allowed in this document.
    room: Option<usize>,
    full: bool,
}

/// The blocks of one sheet are made with these.
struct SheetBlocks<'a> {
    name: &'a str,
    heading: Vec<String>,
    columns: (u32, u32),
}

impl Builder {
    fn add_sheet(&mut self, sheet: Sheet) {
        let Sheet {
            name,
            hidden,
            grid,
            cut_at,
            ..
        } = sheet;
        let room = self.room.get_or_insert(MAX_ROWS_TEXT_BYTES);
        let (rows, cut) = grid.into_rows(room);
        if let Some(row) = cut {
            warn_cut(&name, row + 1);
        }
        if let Some(row) = cut.or(cut_at) {
            self.cuts
                .push(format!("sheet '{name}' from row {} on", row + 1));
        }
        if rows.rows.is_empty() || self.full {
            return;
        }
        let heading = if hidden {
            format!("{name} (hidden)")
        } else {
            name.clone()
        };
        let sheet = SheetBlocks {
            name: &name,
            heading: vec![heading],
            columns: rows.columns,
        };
        let header = header_len(&rows.rows);
        if header > 0
            && let (Some(first), Some(last)) = (rows.rows.first(), rows.rows.get(header - 1))
        {
            self.headers
                .insert(name.clone(), [first.index + 1, last.index + 1]);
            self.push(&sheet, &rows.rows[..header]);
        }
        for block in data_blocks(rows.rows.get(header..).unwrap_or_default()) {
            self.push(&sheet, block);
        }
    }

    /// Add a block of `rows` (consecutive, except in a header).
    fn push(&mut self, sheet: &SheetBlocks<'_>, rows: &[Row]) {
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            return;
        };
        if self.blocks.len() >= MAX_BLOCKS {
            if !self.full {
                log(
                    LogLevel::Warn,
                    &format!(
                        "sheet '{}': rows from {} on not indexed: the document reached \
                         {MAX_BLOCKS} blocks",
                        sheet.name,
                        first.index + 1
                    ),
                );
                self.cuts.push(format!(
                    "sheet '{}' from row {} on",
                    sheet.name,
                    first.index + 1
                ));
            }
            self.full = true;
            return;
        }
        let text: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
        self.blocks.push(Block {
            kind: BlockKind::Table,
            heading_path: sheet.heading.clone(),
            span: cells(sheet.name, (first.index, last.index), sheet.columns),
            text: text.join("\n"),
            level: None,
            lang: None,
        });
    }
}

/// A span over rows `rows` and columns `columns` (both 0-based,
/// inclusive) of sheet `sheet`.
fn cells(sheet: &str, rows: (u32, u32), columns: (u32, u32)) -> Span {
    Span::Cells(CellRange {
        sheet: sheet.to_string(),
        first_row: rows.0 + 1,
        last_row: rows.1 + 1,
        first_column: columns.0 + 1,
        last_column: columns.1 + 1,
    })
}

/// How many leading rows form the sheet's header: 0, 1, or 2 for a lone
/// title cell over a row of column names.
fn header_len(rows: &[Row]) -> usize {
    let (Some(first), Some(second)) = (rows.first(), rows.get(1)) else {
        return 0;
    };
    if first.texts == 0 {
        return 0;
    }
    let titled = first.filled == 1
        && rows.len() > 2
        && second.index - first.index <= MAX_TITLE_GAP
        && second.filled >= 2
        && second.texts >= 1;
    if titled { 2 } else { 1 }
}

/// Runs of consecutive rows, each at most [`MAX_BLOCK_ROWS`] rows and
/// (past its first row) [`MAX_BLOCK_BYTES`] bytes.
fn data_blocks(rows: &[Row]) -> Vec<&[Row]> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut bytes = 0usize;
    for (i, row) in rows.iter().enumerate() {
        let follows = i > start && rows[i - 1].index + 1 == row.index;
        let fits = i - start < MAX_BLOCK_ROWS && bytes + row.text.len() <= MAX_BLOCK_BYTES;
        if i > start && !(follows && fits) {
            out.push(&rows[start..i]);
            start = i;
            bytes = 0;
        }
        bytes += row.text.len() + 1;
    }
    if start < rows.len() {
        out.push(&rows[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(index: u32, text: &str, filled: u32, texts: u32) -> Row {
        Row {
            index,
            text: text.into(),
            filled,
            texts,
        }
    }

    #[test]
    fn headers_are_text_rows_with_data_below() {
        let header = row(0, "Item | Q1", 2, 2);
        let data = row(1, "Rent | 5", 2, 1);
        assert_eq!(header_len(&[header.clone(), data.clone()]), 1);
        assert_eq!(header_len(&[row(0, "1 | 2", 2, 0), data.clone()]), 0);
        assert_eq!(header_len(std::slice::from_ref(&header)), 0);
        let title = row(0, "Budget", 1, 1);
        let columns = row(2, "Item | Q1", 2, 2);
        let below = row(3, "Rent | 5", 2, 1);
        assert_eq!(header_len(&[title.clone(), columns, below.clone()]), 2);
        assert_eq!(header_len(&[title, row(5, "a | b", 2, 2), below]), 1);
    }

    #[test]
    fn blocks_break_at_empty_rows_and_bounds() {
        let rows: Vec<Row> = [0, 1, 2, 4, 5]
            .into_iter()
            .chain(10..10 + MAX_BLOCK_ROWS as u32 + 1)
            .map(|i| row(i, "x", 1, 1))
            .collect();
        let sizes: Vec<usize> = data_blocks(&rows).iter().map(|b| b.len()).collect();
        assert_eq!(sizes, vec![3, 2, MAX_BLOCK_ROWS, 1]);
    }
}
