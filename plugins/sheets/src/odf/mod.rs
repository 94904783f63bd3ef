//! OpenDocument spreadsheets: `.ods` (a ZIP whose `content.xml` holds the
//! sheets) and `.fods` (the same XML as one flat file), read by streaming
//! that XML — calamine reads `.ods` whole into dense grids and cannot read
//! `.fods`, so this reader is the plugin's own.
//!
//! Each `table:table` is a sheet, hidden when its style says
//! `table:display="false"`. Covered cells of a merged region are skipped,
//! so a merged value is read once. Repeated rows and columns
//! (`number-rows-repeated`) cost nothing when empty and stop at the file's
//! cell budget otherwise. Comments (`office:annotation`) are not cell text.
//! How a cell's value reads: [`cell`]. The title and author come from
//! `meta.xml` (or the flat file's `office:meta`).

mod cell;
mod events;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};

use kebab_plugin_sdk::archive::Archive;
use kebab_plugin_sdk::{LogLevel, PluginError, log};

use crate::grid::truncate;
use crate::limits::{Budget, MAX_CELL_BYTES, MAX_COLUMNS, MAX_SHEETS};
use crate::meter::{Meter, Metered};
use crate::value::Shown;
use crate::workbook::{ENCRYPTED, Sheet, Workbook, non_empty};
use events::{Events, Name, Step};

/// Most spaces one `text:s` element may stand for.
const MAX_SPACES: u32 = 1_024;

/// Read an `.ods` package: its small parts from `bytes`, its content from
/// `source`, metered by `meter`.
pub fn read_ods(bytes: &[u8], source: Metered<'_>, meter: &Meter) -> Result<Workbook, PluginError> {
    let mut archive = Archive::open(bytes)?;
    if let Some(mime) = archive.read_text("mimetype")?
        && !mime
            .trim()
            .starts_with("application/vnd.oasis.opendocument.spreadsheet")
    {
        return Err(PluginError::Unsupported(format!(
            "an OpenDocument file of type {}, not a spreadsheet",
            mime.trim()
        )));
    }
    if let Some(manifest) = archive.read_text("META-INF/manifest.xml")?
        && manifest.contains("encryption-data")
    {
        return Err(PluginError::Unsupported(ENCRYPTED.into()));
    }
    let mut zip = zip::ZipArchive::new(source)
        .map_err(|e| PluginError::Malformed(format!("not a readable ZIP archive: {e}")))?;
    // The archive's declared sizes were checked (`zip_guard`), the `zip`
    // crate stops a member at its declared size, the meter at the file's
    // XML bound and the parser at its cell budget.
    let content = zip
        .by_name("content.xml")
        .map_err(|e| PluginError::Malformed(format!("no readable content.xml: {e}")))?;
    let mut book = Parser::new(BufReader::new(content), Some(meter.clone())).run("ods")?;
    if let Some(meta) = archive.read("meta.xml")? {
        let about = Parser::new(meta.as_slice(), None).run("ods")?;
        book.title = about.title;
        book.author = about.author;
    }
    Ok(book)
}

/// Read a flat `.fods` document.
pub fn read_fods(bytes: &[u8]) -> Result<Workbook, PluginError> {
    Parser::new(bytes, None).run("fods")
}

/// The sheets read so far and what the styles said.
struct Parser<R: BufRead> {
    events: Events<R>,
    /// Table styles that hide their sheet.
    hidden_styles: HashSet<String>,
    budget: Budget,
    book: Workbook,
}

/// A cell that shows something: its column, how many columns it repeats
/// over, what it shows.
type RowCell = (u32, u32, Shown);

impl<R: BufRead> Parser<R> {
    fn new(source: R, meter: Option<Meter>) -> Parser<R> {
        Parser {
            events: Events::new(source, meter),
            hidden_styles: HashSet::new(),
            budget: Budget::default(),
            book: Workbook::default(),
        }
    }

    /// Read the whole document: styles, sheets and properties.
    fn run(mut self, format: &'static str) -> Result<Workbook, PluginError> {
        self.book.format = format;
        let mut style: Option<String> = None;
        let mut meta_depth: Option<usize> = None;
        let mut depth = 0usize;
        loop {
            let name = match self.events.next()? {
                Step::Start(name) => name,
                Step::End => {
                    if meta_depth == Some(depth) {
                        meta_depth = None;
                    }
                    depth = depth.saturating_sub(1);
                    continue;
                }
                Step::Eof | Step::Stop => break,
                Step::Text => continue,
            };
            depth += 1;
            let in_meta = meta_depth.is_some();
            let consumed = match name {
                Name::Meta => {
                    meta_depth = Some(depth);
                    false
                }
                Name::Style => {
                    style = self.events.attrs.name.take();
                    false
                }
                Name::TableProperties if self.events.attrs.hidden => {
                    self.hidden_styles.extend(style.clone());
                    false
                }
                Name::Table => {
                    self.read_table()?;
                    if self.budget.spent() {
                        log(
                            LogLevel::Warn,
                            "the file's cell budget ran out: sheets after it were not read",
                        );
                        break;
                    }
                    true
                }
                Name::Title if in_meta => {
                    self.book.title = self.label()?;
                    true
                }
                Name::InitialCreator if in_meta => {
                    self.book.author = self.label()?;
                    true
                }
                Name::Creator if in_meta && self.book.author.is_none() => {
                    self.book.author = self.label()?;
                    true
                }
                _ => false,
            };
            if consumed {
                depth -= 1;
            }
        }
        Ok(self.book)
    }

    /// The text of a metadata element (its start just read), if any.
    fn label(&mut self) -> Result<Option<String>, PluginError> {
        let (text, _) = self.element_text()?;
        Ok(non_empty(Some(text)))
    }

    /// Read one `table:table` (its start just read) into a sheet.
    fn read_table(&mut self) -> Result<(), PluginError> {
        let number = self.book.sheets.len() + 1;
        let attrs = std::mem::take(&mut self.events.attrs);
        let name = attrs.name.unwrap_or_else(|| format!("Sheet{number}"));
        let hidden = attrs
            .style_name
            .is_some_and(|s| self.hidden_styles.contains(&s));
        let mut sheet = Sheet::new(&name, hidden);
        let mut row = 0u32;
        let mut depth = 0usize;
        while sheet.cut_at.is_none() {
            match self.events.next()? {
                Step::Start(Name::Row) => {
                    let repeat = self.events.attrs.repeat;
                    if !self.budget.visit() {
                        sheet.cut(row);
                        break;
                    }
                    let cells = self.read_row(&mut sheet, row)?;
                    self.repeat_row(&mut sheet, row, repeat, &cells);
                    row = row.saturating_add(repeat);
                }
                Step::Start(_) => depth += 1,
                Step::End if depth == 0 => break,
                Step::End => depth -= 1,
                Step::Eof => return Err(truncated()),
                Step::Stop => sheet.cut(row),
                Step::Text => {}
            }
        }
        if self.book.sheets.len() < MAX_SHEETS {
            self.book.sheets.push(sheet);
        }
        Ok(())
    }

    /// The cells of the row whose start was just read that show something.
    /// Empty when the budget cut the sheet at this row.
    fn read_row(&mut self, sheet: &mut Sheet, row: u32) -> Result<Vec<RowCell>, PluginError> {
        let mut cells = Vec::new();
        let mut col = 0u32;
        let mut depth = 0usize;
        loop {
            match self.events.next()? {
                Step::Start(name @ (Name::Cell | Name::CoveredCell)) if depth == 0 => {
                    let attrs = std::mem::take(&mut self.events.attrs);
                    let (text, stopped) = self.element_text()?;
                    if stopped || !self.budget.visit() {
                        sheet.cut(row);
                        return Ok(Vec::new());
                    }
                    let shown = match name {
                        Name::CoveredCell => None,
                        _ => attrs.cell.shown(text),
                    };
                    if let Some(shown) = shown
                        && col < MAX_COLUMNS
                    {
                        cells.push((col, attrs.repeat, shown));
                    }
                    col = col.saturating_add(attrs.repeat);
                }
                Step::Start(_) => depth += 1,
                Step::End if depth == 0 => return Ok(cells),
                Step::End => depth -= 1,
                Step::Eof => return Err(truncated()),
                Step::Stop => {
                    sheet.cut(row);
                    return Ok(Vec::new());
                }
                Step::Text => {}
            }
        }
    }

    /// Put a row's cells into the sheet `repeat` times from `row` on,
    /// until the budget stops it (an empty row costs nothing however often
    /// it repeats).
    fn repeat_row(&mut self, sheet: &mut Sheet, row: u32, repeat: u32, cells: &[RowCell]) {
        if sheet.cut_at.is_some() || cells.is_empty() {
            return;
        }
        for r in 0..repeat {
            for (col, times, shown) in cells {
                let last = col.saturating_add(*times).min(MAX_COLUMNS);
                for c in *col..last {
                    if !sheet.add(row.saturating_add(r), c, Some(shown), &mut self.budget) {
                        return;
                    }
                }
            }
        }
    }

    /// The text of the element (a cell, a title) whose start was just
    /// read, up to its end: paragraphs on their own lines, `text:s` and
    /// `text:tab` as spaces, comments left out; cut at [`MAX_CELL_BYTES`].
    /// Also whether the meter stopped the reading inside it.
    fn element_text(&mut self) -> Result<(String, bool), PluginError> {
        let mut text = String::new();
        let mut depth = 0usize;
        let mut paragraphs = 0usize;
        let mut comment_at: Option<usize> = None;
        loop {
            let skip = comment_at.is_some() || text.len() > MAX_CELL_BYTES;
            match self.events.next()? {
                Step::Start(name) => {
                    depth += 1;
                    match name {
                        _ if skip => {}
                        Name::Annotation => comment_at = Some(depth),
                        Name::Paragraph => {
                            if paragraphs > 0 {
                                text.push('\n');
                            }
                            paragraphs += 1;
                        }
                        Name::Spaces => {
                            let count = self.events.attrs.spaces.min(MAX_SPACES) as usize;
                            text.extend(std::iter::repeat_n(' ', count));
                        }
                        Name::Tab => text.push('\t'),
                        Name::LineBreak => text.push('\n'),
                        _ => {}
                    }
                }
                Step::End if depth == 0 => break,
                Step::End => {
                    if comment_at == Some(depth) {
                        comment_at = None;
                    }
                    depth -= 1;
                }
                Step::Text if !skip => text.push_str(&self.events.text),
                Step::Text => {}
                Step::Stop => return Ok((text, true)),
                Step::Eof => return Err(truncated()),
            }
        }
        if text.len() > MAX_CELL_BYTES {
            truncate(&mut text, MAX_CELL_BYTES);
        }
        Ok((text, false))
    }
}

/// The error for XML that ends inside a sheet.
fn truncated() -> PluginError {
    PluginError::Malformed(
        "the spreadsheet's XML ends in the middle of a sheet (truncated?)".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fods(body: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:dc="http://purl.org/dc/elements/1.1/"
 xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0">
<office:meta><dc:title>Plan</dc:title><dc:creator>Ana</dc:creator></office:meta>
<office:automatic-styles><style:style style:name="ta2" style:family="table">
<style:table-properties table:display="false"/></style:style></office:automatic-styles>
<office:body><office:spreadsheet>{body}</office:spreadsheet></office:body></office:document>"#
        )
    }

    fn lines(book: Workbook) -> Vec<Vec<(u32, String)>> {
        book.sheets
            .into_iter()
            .map(|s| {
                let mut room = usize::MAX;
                let rows = s.grid.into_rows(&mut room).0.rows;
                rows.into_iter().map(|r| (r.index, r.text)).collect()
            })
            .collect()
    }

    #[test]
    fn repeated_rows_covered_cells_and_comments() {
        let xml = fods(
            r#"<table:table table:name="A&amp;B" table:style-name="ta2">
<table:table-header-rows><table:table-row table:number-rows-repeated="2"><table:table-cell office:value-type="float" office:value="7" table:number-columns-repeated="2"><text:p>7</text:p></table:table-cell></table:table-row></table:table-header-rows>
<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="16384"/></table:table-row>
<table:table-row><table:table-cell table:number-columns-spanned="2" office:value-type="string"><text:p>Merged <text:span>text</text:span><text:s text:c="2"/>x</text:p><text:p>line</text:p></table:table-cell><table:covered-table-cell office:value-type="string"><text:p>hidden</text:p></table:covered-table-cell><table:table-cell office:value-type="percentage" office:value="0.15"><text:p>15.00%</text:p><office:annotation><text:p>a comment</text:p></office:annotation></table:table-cell></table:table-row>
</table:table><table:table table:name="Second"><table:table-row><table:table-cell office:value-type="string"><text:p>b</text:p></table:table-cell></table:table-row></table:table>"#,
        );
        let book = read_fods(xml.as_bytes()).unwrap();
        assert_eq!(
            (book.title.as_deref(), book.author.as_deref()),
            (Some("Plan"), Some("Ana"))
        );
        let names: Vec<(&str, bool)> = book
            .sheets
            .iter()
            .map(|s| (s.name.as_str(), s.hidden))
            .collect();
        assert_eq!(names, vec![("A&B", true), ("Second", false)]);
        let expected = vec![
            vec![
                (0, "7 | 7".to_string()),
                (1, "7 | 7".to_string()),
                (1_048_572, "Merged text  x line |  | 15.00%".to_string()),
            ],
            vec![(0, "b".to_string())],
        ];
        assert_eq!(lines(book), expected);
    }

    #[test]
    fn truncated_xml_is_malformed() {
        let xml = fods(r#"<table:table table:name="S"><table:table-row><table:table-cell>"#);
        let cut = &xml[..xml.find("</table:table-cell>").unwrap_or(xml.len())];
        let cut = cut.split("</office:spreadsheet>").next().unwrap();
        assert!(matches!(
            read_fods(cut.as_bytes()),
            Err(PluginError::Malformed(_))
        ));
    }
}
