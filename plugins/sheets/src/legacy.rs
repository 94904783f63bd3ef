//! Files in an OLE compound container: Excel 97–2003 and 5.0/95 workbooks
//! (`.xls`, `.xla`, read with calamine), and password-protected Office
//! Open XML workbooks, which Office stores as an `EncryptionInfo` and an
//! `EncryptedPackage` stream in such a container.
//!
//! calamine reads a whole `.xls` at once, every sheet into a dense grid as
//! large as its bounding box, after reserving room for what the sheet's
//! `Dimensions` record claims. A small hostile file can claim billions of
//! cells, so the workbook stream is walked first ([`check_biff`]) and a
//! file whose sheets would span more than [`MAX_XLS_CELLS`] cells is
//! refused before calamine sees it.

use std::io::{Cursor, Read};

use calamine::{Data, Range, Reader, Xls, XlsError};
use kebab_plugin_sdk::PluginError;

use crate::book::{read_sheets, workbook, worksheets};
use crate::limits::Budget;
use crate::value::of_data;
use crate::workbook::{ENCRYPTED, Sheet, Workbook};

/// Most cells (empty ones included) the sheets of one `.xls` may span
/// together: calamine holds each as a dense grid of 32-byte values, and
/// copies one sheet at a time out of it.
pub const MAX_XLS_CELLS: u64 = 3_000_000;

type Source<'a> = Cursor<&'a [u8]>;

/// Read a file in an OLE compound container.
pub fn read(bytes: &[u8]) -> Result<Workbook, PluginError> {
    let mut container = cfb::CompoundFile::open(Cursor::new(bytes))
        .map_err(|e| PluginError::Malformed(format!("corrupt OLE compound file: {e}")))?;
    if container.exists("/EncryptionInfo") || container.exists("/EncryptedPackage") {
        return Err(PluginError::Unsupported(ENCRYPTED.into()));
    }
    let Some(stream_name) = ["/Workbook", "/Book"]
        .into_iter()
        .find(|name| container.is_stream(name))
    else {
        return Err(PluginError::Unsupported(
            "an OLE compound file without a workbook stream (a Word or PowerPoint file?): \
             not a spreadsheet"
                .into(),
        ));
    };
    let mut stream = Vec::new();
    container
        .open_stream(stream_name)
        .and_then(|s| s.take(bytes.len() as u64).read_to_end(&mut stream))
        .map_err(|e| PluginError::Malformed(format!("unreadable workbook stream: {e}")))?;
    check_biff(&stream)?;
    drop(stream);
    read_xls(bytes)
}

/// Read a checked `.xls` workbook with calamine.
fn read_xls(bytes: &[u8]) -> Result<Workbook, PluginError> {
    let mut book: Xls<Source<'_>> = Xls::new(Cursor::new(bytes)).map_err(xls_error)?;
    let props = book.workbook_properties().unwrap_or_default();
    let names = worksheets(book.sheets_metadata());
    let sheets = read_sheets(
        names,
        || false,
        |sheet, budget| {
            let range = book.worksheet_range(&sheet.name)?;
            add_range(&range, sheet, budget);
            if sheet.cut_at.is_none()
                && !sheet.grid.is_empty()
                && let Ok(merges) = book.merge_cells_by_sheet_name(&sheet.name)
            {
                sheet.grid.blank_merged(&merges);
            }
            Ok::<_, XlsError>(true)
        },
    );
    Ok(workbook("xls", sheets, props))
}

/// Add the non-empty cells of a range calamine read.
fn add_range(range: &Range<Data>, sheet: &mut Sheet, budget: &mut Budget) {
    let Some((top, left)) = range.start() else {
        return;
    };
    for (row, col, data) in range.used_cells() {
        let shown = of_data(data).map(|v| v.shown());
        let (row, col) = (top + row as u32, left + col as u32);
        if !sheet.add(row, col, shown.as_ref(), budget) {
            break;
        }
    }
}

fn xls_error(e: XlsError) -> PluginError {
    match e {
        XlsError::Password => PluginError::Unsupported(ENCRYPTED.into()),
        e => PluginError::Malformed(format!("unreadable Excel 97-2003 workbook: {e}")),
    }
}

/// BIFF record types this walk looks at.
mod record {
    pub const BOF: u16 = 0x0809;
    pub const FILE_PASS: u16 = 0x002F;
    pub const DIMENSIONS: u16 = 0x0200;
    pub const MUL_RK: u16 = 0x00BD;
    /// Records that hold one cell, its row and column first.
    pub const CELLS: [u16; 7] = [0x0203, 0x0204, 0x00D6, 0x0205, 0x027E, 0x00FD, 0x0006];
}

/// The rows and columns one substream's cells span.
#[derive(Debug, Default, Clone, Copy)]
struct Span {
    rows: Option<(u32, u32)>,
    cols: Option<(u32, u32)>,
    claimed: u64,
}

impl Span {
    fn add(&mut self, row: u32, first_col: u32, last_col: u32) {
        let widen = |range: Option<(u32, u32)>, lo: u32, hi: u32| {
            Some(range.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))))
        };
        self.rows = widen(self.rows, row, row);
        self.cols = widen(self.cols, first_col, last_col);
    }

    /// Cells calamine allocates for this substream: its dense grid or what
    /// `Dimensions` claimed, whichever is more.
    fn cost(&self) -> u64 {
        let len = |r: Option<(u32, u32)>| r.map_or(0, |(a, b)| u64::from(b - a) + 1);
        (len(self.rows) * len(self.cols)).max(self.claimed)
    }
}

/// Walk a BIFF workbook stream: refuse an encrypted one, a corrupt
/// `Dimensions` record, and sheets spanning more than [`MAX_XLS_CELLS`].
pub fn check_biff(stream: &[u8]) -> Result<(), PluginError> {
    let mut rest = stream;
    let mut total = 0u64;
    let mut span = Span::default();
    while rest.len() >= 4 {
        let typ = u16_at(rest, 0);
        let len = usize::from(u16_at(rest, 2));
        let data = rest.get(4..4 + len).unwrap_or(&rest[4..]);
        rest = rest.get(4 + len..).unwrap_or_default();
        match typ {
            record::FILE_PASS => return Err(PluginError::Unsupported(ENCRYPTED.into())),
            record::BOF => total += std::mem::take(&mut span).cost(),
            record::DIMENSIONS => span.claimed = span.claimed.max(dimensions(data)?),
            record::MUL_RK if data.len() >= 6 => {
                let last = u16_at(data, data.len() - 2);
                span.add(u16_at(data, 0).into(), u16_at(data, 2).into(), last.into());
            }
            t if record::CELLS.contains(&t) && data.len() >= 4 => {
                let col = u16_at(data, 2).into();
                span.add(u16_at(data, 0).into(), col, col);
            }
            _ => {}
        }
        if total.saturating_add(span.cost()) > MAX_XLS_CELLS {
            return Err(PluginError::Unsupported(format!(
                "the .xls sheets span more than {MAX_XLS_CELLS} cells, more than can be read \
                 safely: save the workbook as .xlsx and ingest again"
            )));
        }
    }
    Ok(())
}

/// The cells a `Dimensions` record makes calamine reserve, or an error for
/// one calamine would mis-compute.
fn dimensions(data: &[u8]) -> Result<u64, PluginError> {
    let (first_row, end_row, first_col, end_col) = match data.len() {
        10 => (
            u32::from(u16_at(data, 0)),
            u32::from(u16_at(data, 2)),
            u32::from(u16_at(data, 4)),
            u32::from(u16_at(data, 6)),
        ),
        14 | 16 => (
            u32_at(data, 0),
            u32_at(data, 4),
            u32::from(u16_at(data, 8)),
            u32::from(u16_at(data, 10)),
        ),
        _ => return Ok(0),
    };
    let first_col = if first_col > 0xFF || end_col < first_col {
        0
    } else {
        first_col
    };
    if end_row == 0 || end_col == 0 {
        return Ok(1);
    }
    if first_row >= end_row || first_col >= end_col {
        return Err(PluginError::Malformed(
            "corrupt .xls: a sheet's Dimensions record ends before it starts".into(),
        ));
    }
    Ok(u64::from(end_row - first_row) * u64::from(end_col - first_col))
}

fn u16_at(data: &[u8], at: usize) -> u16 {
    match data.get(at..at + 2) {
        Some(&[a, b]) => u16::from_le_bytes([a, b]),
        _ => 0,
    }
}

fn u32_at(data: &[u8], at: usize) -> u32 {
    match data.get(at..at + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(typ: u16, data: &[u8]) -> Vec<u8> {
        let mut out = typ.to_le_bytes().to_vec();
        out.extend((data.len() as u16).to_le_bytes());
        out.extend(data);
        out
    }

    fn number_at(row: u16, col: u16) -> Vec<u8> {
        let mut data = row.to_le_bytes().to_vec();
        data.extend(col.to_le_bytes());
        data.extend([0; 10]);
        rec(0x0203, &data)
    }

    #[test]
    fn a_small_sheet_passes() {
        let mut s = rec(record::BOF, &[0; 16]);
        s.extend(number_at(0, 0));
        s.extend(number_at(99, 9));
        assert!(check_biff(&s).is_ok());
    }

    #[test]
    fn far_apart_cells_are_refused() {
        let mut s = rec(record::BOF, &[0; 16]);
        s.extend(number_at(0, 0));
        s.extend(number_at(65_535, 255));
        let err = check_biff(&s).unwrap_err();
        assert!(
            matches!(err, PluginError::Unsupported(m) if m.contains("save the workbook as .xlsx"))
        );
    }

    #[test]
    fn lying_dimensions_and_encryption_are_refused() {
        let mut huge = 0u32.to_le_bytes().to_vec();
        huge.extend(4_000_000_000u32.to_le_bytes());
        huge.extend([0, 0, 0, 1, 0, 0]);
        assert!(check_biff(&rec(record::DIMENSIONS, &huge)).is_err());
        let mut backwards = 9u32.to_le_bytes().to_vec();
        backwards.extend(3u32.to_le_bytes());
        backwards.extend([0, 0, 4, 0, 0, 0]);
        assert!(matches!(
            check_biff(&rec(record::DIMENSIONS, &backwards)),
            Err(PluginError::Malformed(_))
        ));
        assert!(matches!(
            check_biff(&rec(record::FILE_PASS, &[1, 0])),
            Err(PluginError::Unsupported(m)) if m.starts_with("encrypted")
        ));
    }
}
