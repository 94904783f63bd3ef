//! Which reader a file goes to: by what its bytes are (a ZIP package, an
//! OLE compound file, flat OpenDocument XML, text), then by its name. A
//! workbook misnamed as another workbook is read all the same; text saved
//! as `.xls` (web exports that write CSV or TSV so) is read as delimited
//! text; an HTML page so named is refused with a hint; a `.xlsx` or `.ods`
//! that is not a ZIP package is malformed.

use std::rc::Rc;

use kebab_plugin_sdk::PluginError;
use kebab_plugin_sdk::archive::is_compound_file;

use crate::meter::{Meter, Metered};
use crate::workbook::Workbook;
use crate::{delimited, legacy, odf, ooxml, zip_guard};

/// Read the file named `file_name` (no directories) holding `bytes`: a
/// package or compound file whatever its name, else by extension.
pub fn read(file_name: &str, bytes: &[u8]) -> Result<Workbook, PluginError> {
    let (stem, extension) = split_name(file_name);
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return read_package(bytes);
    }
    if is_compound_file(bytes) {
        return legacy::read(bytes);
    }
    match extension.as_str() {
        "csv" => return Ok(delimited::read(stem, bytes, false)),
        "tsv" | "tab" => return Ok(delimited::read(stem, bytes, true)),
        _ => {}
    }
    if bytes.is_empty() {
        return Err(PluginError::Malformed(
            "the file is empty: not a workbook".into(),
        ));
    }
    if matches!(
        extension.as_str(),
        "xlsx" | "xlsm" | "xlam" | "xlsb" | "ods"
    ) {
        return Err(PluginError::Malformed(format!(
            "not a ZIP package, as a .{extension} file is: the file is damaged or not a workbook"
        )));
    }
    if is_old_biff(bytes) {
        return Err(PluginError::Unsupported(
            "an Excel 2.x-4.x worksheet (before 1993): not supported; open it in Excel or \
             LibreOffice, save it as .xlsx and ingest again"
                .into(),
        ));
    }
    read_text(stem, &extension, bytes)
}

/// The file name without its extension, and the extension in lower case.
fn split_name(file_name: &str) -> (&str, String) {
    match file_name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, ext.to_ascii_lowercase()),
        _ => (file_name, String::new()),
    }
}

/// A ZIP package: an OpenDocument spreadsheet, an Excel binary workbook or
/// an Office Open XML workbook, read under one [`Meter`].
fn read_package(bytes: &[u8]) -> Result<Workbook, PluginError> {
    let members = zip_guard::check(bytes)?;
    let meter = Meter::default();
    let source = Metered::new(bytes, Rc::from(members.packed.as_slice()), &meter);
    if members.has("mimetype") || members.has("content.xml") {
        odf::read_ods(bytes, source, &meter)
    } else if members
        .names
        .iter()
        .any(|n| n.to_ascii_lowercase().ends_with("workbook.bin"))
    {
        ooxml::read_xlsb(source, &meter)
    } else if members.has("[Content_Types].xml") {
        ooxml::read_xlsx(source, &meter)
    } else {
        Err(PluginError::Unsupported(
            "a ZIP archive that is neither an Excel nor an OpenDocument workbook".into(),
        ))
    }
}

/// An Excel 2.x-4.x file: a bare BIFF stream, no compound container.
fn is_old_biff(bytes: &[u8]) -> bool {
    matches!(bytes, [0x09, 0x00 | 0x02 | 0x04, _, 0x00, ..])
}

/// A file that is neither a ZIP nor a compound file: flat OpenDocument
/// XML, markup named like a workbook, or delimited text.
fn read_text(stem: &str, extension: &str, bytes: &[u8]) -> Result<Workbook, PluginError> {
    let (text, _) = delimited::decode(bytes.get(..bytes.len().min(4096)).unwrap_or_default());
    let head = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    if head.starts_with('<') {
        if head.contains("opendocument") && head.contains("office:document") {
            return odf::read_fods(bytes);
        }
        return Err(PluginError::Unsupported(format!(
            "an HTML or XML file named .{extension}, not a workbook this plugin reads: open it \
             in Excel or LibreOffice, save it as .xlsx and ingest again"
        )));
    }
    if text.contains('\0') {
        return Err(PluginError::Malformed(format!(
            "not a workbook: the .{extension} file is neither a ZIP package, an OLE compound \
             file nor text"
        )));
    }
    Ok(delimited::read(stem, bytes, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_stem_and_extension() {
        assert_eq!(
            split_name("Budget.2024.XLSX"),
            ("Budget.2024", "xlsx".to_string())
        );
        assert_eq!(split_name(".hidden"), (".hidden", String::new()));
        assert_eq!(split_name("noext"), ("noext", String::new()));
    }

    #[test]
    fn misnamed_text_and_markup() {
        let book = read("export.xls", b"Name\tScore\nAda\t3\n").unwrap();
        assert_eq!(book.format, "csv");
        assert!(matches!(
            read("page.xls", b"<html><table></table></html>"),
            Err(PluginError::Unsupported(m)) if m.contains("HTML or XML")
        ));
        assert!(matches!(
            read("old.xls", &[0x09, 0x04, 6, 0, 0, 0]),
            Err(PluginError::Unsupported(_))
        ));
        assert!(matches!(
            read("e.xlsx", b""),
            Err(PluginError::Malformed(_))
        ));
        assert!(matches!(
            read("t.xlsx", b"a,b\n1,2\n"),
            Err(PluginError::Malformed(_))
        ));
        assert!(matches!(
            read("z.xlsx", b"PK\x03\x04 trunc"),
            Err(PluginError::Malformed(_))
        ));
    }
}
