//! The non-empty cells of one sheet, gathered in whatever order a reader
//! meets them and kept compactly (one text buffer, a small record per
//! cell), then settled into rows of text: cells joined with ` | `, empty
//! cells kept as empty columns so a row lines up with its header.
//!
//! Positions are 0-based here (row 0 is the sheet's row 1, column 0 is
//! `A`); the document turns them into 1-based spans.

use std::borrow::Cow;

use calamine::Dimensions;
use kebab_plugin_sdk::{LogLevel, log};

use crate::limits::{Budget, ELLIPSIS, MAX_CELL_BYTES, MAX_COLUMNS, MAX_MERGE_WORK, MAX_ROW_BYTES};
use crate::value::Shown;

/// One non-empty cell: where it is and where its text lies in the buffer.
#[derive(Debug, Clone, Copy)]
struct Entry {
    row: u32,
    col: u32,
    start: u32,
    end: u32,
    is_text: bool,
}

/// The cells of one sheet read so far.
#[derive(Debug, Default)]
pub struct Grid {
    cells: Vec<Entry>,
    text: String,
}

/// One row of a sheet with something in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The row's 0-based index in the sheet.
    pub index: u32,
    /// Its cells from the sheet's first used column on, joined with ` | `.
    pub text: String,
    /// How many of its cells hold something.
    pub filled: u32,
    /// How many of those hold text (not a number, date or boolean).
    pub texts: u32,
}

/// A sheet's rows with something in them, and the columns they span.
#[derive(Debug, Default, PartialEq)]
pub struct Rows {
    /// The rows, top to bottom.
    pub rows: Vec<Row>,
    /// First and last used column, 0-based.
    pub columns: (u32, u32),
}

impl Grid {
    /// Add the cell at `row`, `col` showing `shown`. A cell that shows
    /// nothing is passed over; one past the last column, or in a row no
    /// 1-based number can cite, is dropped. `false` when the file's budget
    /// refused it: the caller stops reading.
    pub fn push(&mut self, row: u32, col: u32, shown: &Shown, budget: &mut Budget) -> bool {
        if col >= MAX_COLUMNS || row == u32::MAX {
            return true;
        }
        let text = clean(&shown.text);
        if text.is_empty() {
            return true;
        }
        if !budget.admit(text.len()) {
            return false;
        }
        let start = self.text.len() as u32;
        self.text.push_str(&text);
        self.cells.push(Entry {
            row,
            col,
            start,
            end: self.text.len() as u32,
            is_text: shown.is_text,
        });
        true
    }

    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Forget the cells of row `row` and after (a row the budget cut in
    /// the middle is left out whole).
    pub fn drop_rows_from(&mut self, row: u32) {
        self.cells.retain(|c| c.row < row);
    }

    /// Keep each merged region's value once, in its top-left cell: the
    /// cells it covers are emptied (some writers repeat the value there).
    /// `merges` are inclusive 0-based `(row, column)` corners.
    pub fn blank_merged(&mut self, merges: &[Dimensions]) {
        self.settle();
        let mut work = 0usize;
        for m in merges {
            let from = self.cells.partition_point(|c| c.row < m.start.0);
            let to = self.cells.partition_point(|c| c.row <= m.end.0);
            work += to.saturating_sub(from);
            if work > MAX_MERGE_WORK {
                log(
                    LogLevel::Warn,
                    "merged regions past the work bound were not applied: \
                     their covered cells may repeat the merged value",
                );
                return;
            }
            for cell in self.cells.get_mut(from..to).unwrap_or_default() {
                let inside = m.contains(cell.row, cell.col);
                if inside && (cell.row, cell.col) != m.start {
                    cell.end = cell.start;
                }
            }
        }
    }

    /// The rows with something in them, each cut at [`MAX_ROW_BYTES`];
    /// rendering stops once `room` bytes of row text are used (the rows
    /// after are left out, and `cut` says from which row).
    pub fn into_rows(mut self, room: &mut usize) -> (Rows, Option<u32>) {
        self.settle();
        self.cells.retain(|c| c.end > c.start);
        let first_col = self.cells.iter().map(|c| c.col).min().unwrap_or(0);
        let last_col = self.cells.iter().map(|c| c.col).max().unwrap_or(0);
        let mut rows = Vec::new();
        let mut cut = None;
        for group in self.cells.chunk_by(|a, b| a.row == b.row) {
            let row = self.render(group, first_col);
            if row.text.len() > *room {
                cut = Some(row.index);
                break;
            }
            *room -= row.text.len();
            rows.push(row);
        }
        let rows = Rows {
            rows,
            columns: (first_col, last_col),
        };
        (rows, cut)
    }

    /// Sort the cells by row then column; of two at one place, the later
    /// read wins.
    fn settle(&mut self) {
        let key = |c: &Entry| (c.row, c.col);
        if !self.cells.is_sorted_by_key(key) {
            self.cells.sort_by_key(key);
        }
        self.cells.dedup_by(|later, earlier| {
            let same = key(later) == key(earlier);
            if same {
                *earlier = *later;
            }
            same
        });
    }

    /// One row's cells (sorted by column) as text from column `first_col`.
    fn render(&self, cells: &[Entry], first_col: u32) -> Row {
        let mut text = String::new();
        let mut next_col = first_col;
        let mut full = false;
        for cell in cells {
            while next_col < cell.col && !full {
                if next_col > first_col {
                    text.push_str(" | ");
                }
                next_col += 1;
                full = text.len() > MAX_ROW_BYTES;
            }
            if next_col > first_col {
                text.push_str(" | ");
            }
            next_col = cell.col + 1;
            let value = self
                .text
                .get(cell.start as usize..cell.end as usize)
                .unwrap_or_default();
            text.push_str(value);
            full = full || text.len() > MAX_ROW_BYTES;
            if full {
                break;
            }
        }
        if full {
            truncate(&mut text, MAX_ROW_BYTES);
        }
        Row {
            index: cells.first().map_or(0, |c| c.row),
            text,
            filled: cells.len() as u32,
            texts: cells.iter().filter(|c| c.is_text).count() as u32,
        }
    }
}

/// A cell's text on one line: ends trimmed, line breaks (`\r\n` counts as
/// one) and other control characters made spaces, cut at [`MAX_CELL_BYTES`].
fn clean(text: &str) -> Cow<'_, str> {
    let trimmed = text.trim();
    let needs_work = trimmed.len() > MAX_CELL_BYTES || trimmed.chars().any(|c| c.is_control());
    if !needs_work {
        return Cow::Borrowed(trimmed);
    }
    let mut out = String::with_capacity(trimmed.len());
    let mut chars = trimmed.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    if out.len() > MAX_CELL_BYTES {
        truncate(&mut out, MAX_CELL_BYTES);
    }
    Cow::Owned(out)
}

/// Cut `text` to at most `max` bytes at a character boundary and mark the
/// cut with [`ELLIPSIS`].
pub fn truncate(text: &mut String, max: usize) {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(ELLIPSIS);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Shown {
        Shown {
            text: t.into(),
            is_text: true,
        }
    }

    fn rows_of(grid: Grid) -> Rows {
        let mut room = usize::MAX;
        grid.into_rows(&mut room).0
    }

    #[test]
    fn rows_line_up_from_the_first_used_column() {
        let mut b = Budget::default();
        let mut g = Grid::default();
        for (r, c, t) in [
            (4, 2, "Item"),
            (4, 3, "Q1"),
            (4, 5, "Q3"),
            (6, 3, "7"),
            (2, 4, "x"),
        ] {
            assert!(g.push(r, c, &text(t), &mut b));
        }
        let rows = rows_of(g);
        assert_eq!(rows.columns, (2, 5));
        let lines: Vec<(u32, &str)> = rows
            .rows
            .iter()
            .map(|r| (r.index, r.text.as_str()))
            .collect();
        assert_eq!(
            lines,
            vec![(2, " |  | x"), (4, "Item | Q1 |  | Q3"), (6, " | 7")]
        );
    }

    #[test]
    fn cells_are_cleaned_and_cut() {
        let mut b = Budget::default();
        let mut g = Grid::default();
        g.push(0, 0, &text("  two\r\nlines\tthree\n\nfour "), &mut b);
        g.push(0, 1, &text("   "), &mut b);
        g.push(0, 2, &text(&"가".repeat(20_000)), &mut b);
        g.push(0, MAX_COLUMNS, &text("beyond"), &mut b);
        let rows = rows_of(g);
        let line = &rows.rows[0].text;
        assert!(
            line.starts_with("two lines three  four |  | 가가"),
            "{}",
            &line[..40]
        );
        assert!(line.ends_with(ELLIPSIS));
        assert!(line.len() <= MAX_CELL_BYTES + 40);
        assert_eq!(rows.rows[0].filled, 2);
    }

    #[test]
    fn merged_regions_keep_their_value_once() {
        let mut b = Budget::default();
        let mut g = Grid::default();
        for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)] {
            g.push(r, c, &text("Total"), &mut b);
        }
        g.blank_merged(&[Dimensions::new((0, 0), (1, 1))]);
        let lines: Vec<String> = rows_of(g).rows.into_iter().map(|r| r.text).collect();
        assert_eq!(lines, vec!["Total", " |  | Total"]);
    }

    #[test]
    fn out_of_order_cells_are_sorted_and_the_last_write_wins() {
        let mut b = Budget::default();
        let mut g = Grid::default();
        g.push(3, 0, &text("late"), &mut b);
        g.push(1, 1, &text("b"), &mut b);
        g.push(1, 0, &text("old"), &mut b);
        g.push(1, 0, &text("a"), &mut b);
        let lines: Vec<String> = rows_of(g).rows.into_iter().map(|r| r.text).collect();
        assert_eq!(lines, vec!["a | b", "late"]);
    }

    #[test]
    fn a_sparse_wide_row_is_bounded() {
        let mut b = Budget::default();
        let mut g = Grid::default();
        g.push(0, 0, &text("a"), &mut b);
        g.push(0, MAX_COLUMNS - 1, &text("z"), &mut b);
        g.push(1, 0, &text("b"), &mut b);
        let mut room = 60_000;
        let (rows, cut) = g.into_rows(&mut room);
        assert_eq!(rows.rows[0].text.len(), 3 * (MAX_COLUMNS as usize - 1) + 2);
        assert_eq!(rows.columns, (0, MAX_COLUMNS - 1));
        assert_eq!(cut, None);
        let mut g = Grid::default();
        g.push(0, 0, &text("a"), &mut b);
        g.push(5, 0, &text("b"), &mut b);
        let mut room = 1;
        let (rows, cut) = g.into_rows(&mut room);
        assert_eq!((rows.rows.len(), cut), (1, Some(5)));
    }
}
