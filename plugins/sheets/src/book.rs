//! What the readers built on calamine (`.xlsx`, `.xlsb`, `.xls`) share:
//! which sheets to read (worksheets, in workbook order, hidden ones too),
//! one budget across them, and the workbook's title and author.

use calamine::{SheetType, SheetVisible, WorkbookProperties};

use crate::limits::{Budget, MAX_SHEETS};
use crate::workbook::{Sheet, Workbook, non_empty};

/// The names of the workbook's worksheets (not chart, dialog or macro
/// sheets) in order, with whether each is hidden; at most [`MAX_SHEETS`].
pub fn worksheets(meta: &[calamine::Sheet]) -> Vec<(String, bool)> {
    meta.iter()
        .filter(|s| s.typ == SheetType::WorkSheet)
        .take(MAX_SHEETS)
        .map(|s| (s.name.clone(), s.visible != SheetVisible::Visible))
        .collect()
}

/// Read the sheets `names` in order with `read_one`, all within one
/// budget: once it, or the package's read bound (`bound_reached`), is
/// spent, later sheets are listed but not read. `read_one` answers whether
/// the sheet was a worksheet at all (one that was not is left out); a sheet
/// whose reading fails keeps what was read before the error.
pub fn read_sheets<E: std::fmt::Display>(
    names: Vec<(String, bool)>,
    bound_reached: impl Fn() -> bool,
    mut read_one: impl FnMut(&mut Sheet, &mut Budget) -> Result<bool, E>,
) -> Vec<Sheet> {
    let mut budget = Budget::default();
    let mut sheets = Vec::new();
    for (name, hidden) in names {
        let mut sheet = Sheet::new(&name, hidden);
        if budget.spent() || bound_reached() {
            sheet.cut(0);
        } else {
            match read_one(&mut sheet, &mut budget) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => sheet.stopped(&e, bound_reached()),
            }
        }
        sheets.push(sheet);
    }
    sheets
}

/// The workbook of `format` made of `sheets`, titled and authored as its
/// document properties say.
pub fn workbook(format: &'static str, sheets: Vec<Sheet>, props: WorkbookProperties) -> Workbook {
    Workbook {
        format,
        sheets,
        title: non_empty(props.title),
        author: non_empty(props.creator),
        notes: Vec::new(),
    }
}
