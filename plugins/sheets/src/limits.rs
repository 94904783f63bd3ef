//! The named bounds on what one file may cost, and the [`Budget`] that
//! enforces the per-file ones while sheets are read.
//!
//! A workbook can hold a million rows or 16 384 columns, and a hostile one
//! can claim far more than it holds. Every reader stops at these bounds and
//! logs what it left out, so a huge file is indexed in part within the
//! host's 10 s and 512 MiB instead of failing or running past them.

use kebab_plugin_sdk::{LogLevel, log};

/// Most non-empty cells read from one file (all sheets together). A million
/// rows of ten columns stop at row 200 000.
pub const MAX_CELLS: usize = 2_000_000;

/// Most cell records looked at in one file, empty ones (formatted blanks)
/// included: what bounds the time spent walking a sheet of styled nothing.
pub const MAX_VISITED_CELLS: u64 = 10_000_000;

/// Most bytes of cell text kept from one file.
pub const MAX_TEXT_BYTES: usize = 48 << 20;

/// Most bytes of row text made from one file: cells and the ` | ` between
/// them (a sparse sheet 16 384 columns wide is mostly separators).
pub const MAX_ROWS_TEXT_BYTES: usize = 64 << 20;

/// Most cells looked at while blanking the covered cells of merged regions
/// in one sheet.
pub const MAX_MERGE_WORK: usize = 10_000_000;

/// Most bytes one cell's text keeps; a longer value is cut and marked with
/// [`ELLIPSIS`].
pub const MAX_CELL_BYTES: usize = 32 << 10;

/// Most bytes one row's text keeps (a 16 384-column row of long values is
/// cut and marked with [`ELLIPSIS`]).
pub const MAX_ROW_BYTES: usize = 256 << 10;

/// Most columns of a sheet (Excel's own count): a cell further right, or a
/// CSV field past it, is not read.
pub const MAX_COLUMNS: u32 = 16_384;

/// Most sheets read from one workbook.
pub const MAX_SHEETS: usize = 4_096;

/// Most rows in one block (a run of consecutive non-empty rows).
pub const MAX_BLOCK_ROWS: usize = 512;

/// Most bytes of text in one block (a block still holds at least one row).
pub const MAX_BLOCK_BYTES: usize = 512 << 10;

/// Most blocks in one document (the host accepts 200 000).
pub const MAX_BLOCKS: usize = 150_000;

/// Most chunks made from one document (the host accepts 100 000).
pub const MAX_CHUNKS: usize = 100_000;

/// Most bytes of chunk text made from one document (the host accepts
/// 256 MiB of output, blocks and chunks together).
pub const MAX_CHUNK_TEXT_BYTES: usize = 128 << 20;

/// The marker that ends a cut cell or row.
pub const ELLIPSIS: &str = "…";

/// What is left of one file's allowance of cells, visits and text.
#[derive(Debug)]
pub struct Budget {
    cells_left: usize,
    visits_left: u64,
    bytes_left: usize,
    spent: bool,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            cells_left: MAX_CELLS,
            visits_left: MAX_VISITED_CELLS,
            bytes_left: MAX_TEXT_BYTES,
            spent: false,
        }
    }
}

impl Budget {
    /// Count one cell record looked at; `false` once the walk must stop.
    pub fn visit(&mut self) -> bool {
        if self.spent || self.visits_left == 0 {
            self.spent = true;
            return false;
        }
        self.visits_left -= 1;
        true
    }

    /// Take room for one non-empty cell of `bytes` bytes of text; `false`
    /// (and nothing taken) once the file's cells or text are used up.
    pub fn admit(&mut self, bytes: usize) -> bool {
        if self.spent || self.cells_left == 0 || self.bytes_left < bytes {
            self.spent = true;
            return false;
        }
        self.cells_left -= 1;
        self.bytes_left -= bytes;
        true
    }

    /// Whether a bound was reached: what follows is not read.
    pub fn spent(&self) -> bool {
        self.spent
    }
}

/// Log that sheet `sheet` was cut before row `row` (1-based) because the
/// file reached one of its bounds.
pub fn warn_cut(sheet: &str, row: u32) {
    log(
        LogLevel::Warn,
        &format!(
            "sheet '{sheet}': rows from {row} on not indexed: the file reached a bound \
             ({MAX_CELLS} cells, {MAX_VISITED_CELLS} cell records, {} MiB of cell text or \
             {} MiB of XML read per file)",
            MAX_TEXT_BYTES >> 20,
            crate::meter::MAX_INFLATED_BYTES >> 20
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_stops_at_its_text_bound_and_stays_spent() {
        let mut b = Budget::default();
        assert!(b.visit());
        assert!(b.admit(10));
        assert!(!b.admit(MAX_TEXT_BYTES));
        assert!(b.spent());
        assert!(!b.admit(1));
        assert!(!b.visit());
    }
}
