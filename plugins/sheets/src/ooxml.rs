//! Excel workbooks of the Office Open XML family (`.xlsx`, `.xlsm`,
//! `.xlam`) and the binary `.xlsb`, read with calamine's streaming cell
//! readers: a sheet is never held whole, so a million rows stop at the
//! file's cell budget instead of filling memory.
//!
//! Formulas read as their cached values; a formula with no cached value
//! (files written by libraries that do not calculate) reads as its text,
//! `=B2+C2`. Merged regions keep their value once, in the top-left cell.

use std::collections::HashMap;

use calamine::{
    DataRef, Reader, Xlsb, XlsbError, Xlsx, XlsxError, XlsxFormulaMetadata, expand_shared_formula,
};
use kebab_plugin_sdk::PluginError;

use crate::book::{read_sheets, workbook, worksheets};
use crate::limits::Budget;
use crate::meter::{Meter, Metered};
use crate::value::{Shown, of_data_ref};
use crate::workbook::{ENCRYPTED, Sheet, Workbook};

/// Most shared-formula anchors remembered per sheet (to spell out the
/// formula of a cell that shares one and has no cached value).
const MAX_SHARED_FORMULAS: usize = 65_536;

type Source<'a> = Metered<'a>;

/// Read an `.xlsx`-family workbook from `source`, metered by `meter`.
pub fn read_xlsx(source: Source<'_>, meter: &Meter) -> Result<Workbook, PluginError> {
    let mut book: Xlsx<Source<'_>> = Xlsx::new(source).map_err(xlsx_error)?;
    let props = book.workbook_properties().unwrap_or_default();
    let names = worksheets(book.sheets_metadata());
    let sheets = read_sheets(
        names,
        || meter.spent(),
        |sheet, budget| {
            match read_xlsx_sheet(&mut book, sheet, budget) {
                Err(XlsxError::NotAWorksheet(_)) => return Ok(false),
                Err(e) => return Err(e),
                Ok(()) => {}
            }
            if sheet.cut_at.is_none()
                && !sheet.grid.is_empty()
                && !meter.spent()
                && let Ok(merges) = book.merge_cells_by_sheet_name(&sheet.name)
            {
                sheet.grid.blank_merged(&merges);
            }
            Ok(true)
        },
    );
    Ok(workbook("xlsx", sheets, props))
}

/// Read an `.xlsb` workbook from `source`, metered by `meter`.
pub fn read_xlsb(source: Source<'_>, meter: &Meter) -> Result<Workbook, PluginError> {
    let mut book: Xlsb<Source<'_>> = Xlsb::new(source).map_err(xlsb_error)?;
    let props = book.workbook_properties().unwrap_or_default();
    let names = worksheets(book.sheets_metadata());
    let sheets = read_sheets(
        names,
        || meter.spent(),
        |sheet, budget| read_xlsb_sheet(&mut book, sheet, budget).map(|()| true),
    );
    Ok(workbook("xlsb", sheets, props))
}

fn read_xlsx_sheet(
    book: &mut Xlsx<Source<'_>>,
    sheet: &mut Sheet,
    budget: &mut Budget,
) -> Result<(), XlsxError> {
    let mut cells = book.worksheet_cells_reader(&sheet.name)?;
    let mut anchors = SharedFormulas::default();
    while let Some(cell) = cells.next_cell_with_formula_metadata()? {
        anchors.remember(cell.pos, cell.formula.as_ref());
        let shown = match of_data_ref(&cell.value) {
            Some(value) => Some(value.shown()),
            None => anchors.formula_text(cell.pos, cell.formula.as_ref()),
        };
        if !sheet.add(cell.pos.0, cell.pos.1, shown.as_ref(), budget) {
            break;
        }
    }
    Ok(())
}

fn read_xlsb_sheet(
    book: &mut Xlsb<Source<'_>>,
    sheet: &mut Sheet,
    budget: &mut Budget,
) -> Result<(), XlsbError> {
    let mut cells = book.worksheet_cells_reader(&sheet.name)?;
    while let Some(cell) = cells.next_cell()? {
        let value: &DataRef<'_> = cell.get_value();
        let shown = of_data_ref(value).map(|v| v.shown());
        let (row, col) = cell.get_position();
        if !sheet.add(row, col, shown.as_ref(), budget) {
            break;
        }
    }
    Ok(())
}

/// The shared formulas of one sheet seen so far: template text and the
/// cell it is written for, by shared index.
#[derive(Default)]
struct SharedFormulas {
    anchors: HashMap<usize, (String, (u32, u32))>,
}

impl SharedFormulas {
    /// Remember the template of a shared formula's anchor cell.
    fn remember(&mut self, pos: (u32, u32), formula: Option<&XlsxFormulaMetadata>) {
        if let Some(XlsxFormulaMetadata::Shared {
            shared_index,
            formula,
            ..
        }) = formula
            && self.anchors.len() < MAX_SHARED_FORMULAS
        {
            self.anchors.insert(*shared_index, (formula.clone(), pos));
        }
    }

    /// What a cell with no cached value shows: its formula as typed
    /// (`=SUM(B2:B4)`), a shared one spelled out for this cell; `None` when
    /// the cell holds no formula either.
    fn formula_text(
        &self,
        pos: (u32, u32),
        formula: Option<&XlsxFormulaMetadata>,
    ) -> Option<Shown> {
        let text = match formula? {
            XlsxFormulaMetadata::Normal { formula } => formula.clone(),
            XlsxFormulaMetadata::Shared { formula, .. } => formula.clone(),
            XlsxFormulaMetadata::SharedDerived { shared_index } => {
                let (template, anchor) = self.anchors.get(shared_index)?;
                expand_shared_formula(template, *anchor, pos).ok()?
            }
            _ => return None,
        };
        let text = text.trim();
        (!text.is_empty()).then(|| Shown {
            text: format!("={text}"),
            is_text: false,
        })
    }
}

fn xlsx_error(e: XlsxError) -> PluginError {
    match e {
        XlsxError::Password => PluginError::Unsupported(ENCRYPTED.into()),
        e => PluginError::Malformed(format!("unreadable Excel workbook: {e}")),
    }
}

fn xlsb_error(e: XlsbError) -> PluginError {
    match e {
        XlsbError::Password => PluginError::Unsupported(ENCRYPTED.into()),
        e => PluginError::Malformed(format!("unreadable Excel binary workbook: {e}")),
    }
}
