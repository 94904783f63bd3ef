//! What every reader hands the document builder: the sheets of one file in
//! workbook order, each with its cells, plus the file's title and author.

use kebab_plugin_sdk::{LogLevel, log};

use crate::grid::{Grid, truncate};
use crate::limits::{Budget, warn_cut};
use crate::value::Shown;

/// The one-line message for an encrypted workbook.
pub const ENCRYPTED: &str =
    "encrypted (password-protected) workbook: remove the password and ingest again";

/// One sheet as read.
#[derive(Debug)]
pub struct Sheet {
    /// The name on the sheet's tab.
    pub name: String,
    /// Whether the workbook hides the sheet (hidden sheets are read too).
    pub hidden: bool,
    /// Its non-empty cells.
    pub grid: Grid,
    /// The 0-based row from which the file's budget cut the sheet off.
    pub cut_at: Option<u32>,
    /// The 0-based row of the last cell record read.
    pub last_row: Option<u32>,
}

impl Sheet {
    /// An empty sheet named `name` (as on its tab, spaces kept; cut at
    /// [`MAX_LABEL_BYTES`]).
    pub fn new(name: &str, hidden: bool) -> Sheet {
        Sheet {
            name: capped(name),
            hidden,
            grid: Grid::default(),
            cut_at: None,
            last_row: None,
        }
    }

    /// Count a cell record at `row`, `col` and keep what it shows, if
    /// anything. `false` once the file's budget is spent: the sheet is then
    /// cut before `row` and the caller stops reading.
    pub fn add(&mut self, row: u32, col: u32, shown: Option<&Shown>, budget: &mut Budget) -> bool {
        self.last_row = Some(row);
        let kept = budget.visit()
            && match shown {
                Some(shown) => self.grid.push(row, col, shown, budget),
                None => true,
            };
        if !kept {
            self.cut(row);
        }
        kept
    }

    /// Cut the sheet before `row` (0-based) and say so in the log.
    pub fn cut(&mut self, row: u32) {
        self.grid.drop_rows_from(row);
        self.cut_at = Some(row);
        warn_cut(&self.name, row.saturating_add(1));
    }

    /// Reading the sheet stopped at `error`: when the package's read bound
    /// caused it (`bound_reached`), the sheet is cut before the row being
    /// read (it may be incomplete); otherwise what was read is kept and the
    /// error logged.
    pub fn stopped(&mut self, error: &dyn std::fmt::Display, bound_reached: bool) {
        if bound_reached {
            self.cut(self.last_row.unwrap_or(0));
        } else {
            log(
                LogLevel::Warn,
                &format!("sheet '{}': reading stopped early: {error}", self.name),
            );
        }
    }
}

/// The sheets and properties of one file.
#[derive(Debug, Default)]
pub struct Workbook {
    /// Short name of the format read (`xlsx`, `ods`, `csv`, …).
    pub format: &'static str,
    /// Worksheets in workbook order (chart sheets are not among them).
    pub sheets: Vec<Sheet>,
    /// The file's own title, when it has one.
    pub title: Option<String>,
    /// Who wrote the file, when it says.
    pub author: Option<String>,
    /// Further metadata entries (a delimited file's encoding and delimiter).
    pub notes: Vec<(String, String)>,
}

/// Most bytes a sheet name, title or author keeps (the host bounds such
/// labels; real ones are far shorter).
pub const MAX_LABEL_BYTES: usize = 1024;

/// `text` trimmed and cut at [`MAX_LABEL_BYTES`], or `None` when that
/// leaves nothing.
pub fn non_empty(text: Option<String>) -> Option<String> {
    text.map(|t| capped(t.trim())).filter(|t| !t.is_empty())
}

/// `text` cut at [`MAX_LABEL_BYTES`].
fn capped(text: &str) -> String {
    let mut out = text.to_string();
    if out.len() > MAX_LABEL_BYTES {
        truncate(&mut out, MAX_LABEL_BYTES);
    }
    out
}
