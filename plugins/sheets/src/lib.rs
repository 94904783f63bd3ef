//! The `sheets` plugin: Excel workbooks (`.xlsx` `.xlsm` `.xlsb` `.xls`
//! `.xla`), OpenDocument spreadsheets (`.ods` `.fods`) and delimited text
//! (`.csv` `.tsv`) as windows of rows, each carrying its sheet's header
//! row, cited by sheet and cell range (`book.xlsx#sheet=Budget&range=A1:F40`).
//!
//! - [`detect`] routes a file to a reader by its bytes, then its name.
//! - [`ooxml`], [`legacy`], [`odf`] and [`delimited`] read the formats into
//!   [`workbook::Sheet`]s of cells, shown as a person sees them ([`value`]),
//!   gathered in a [`grid::Grid`] within the file's [`limits::Budget`];
//!   [`book`] holds what the calamine-based ones share.
//! - [`zip_guard`] and [`legacy::check_biff`] refuse hostile packages before
//!   calamine reads them; [`meter`] bounds the XML inflated from a package.
//! - [`document`] makes the header and row blocks; [`chunker`] packs rows
//!   into chunks behind the header.
//!
//! Encrypted workbooks are refused as `unsupported` with a hint, corrupt
//! ones as `malformed`; a file past the size bounds is indexed in part and
//! what was left out is logged.

pub mod book;
pub mod chunker;
pub mod delimited;
pub mod detect;
pub mod document;
pub mod grid;
pub mod legacy;
pub mod limits;
pub mod meter;
pub mod odf;
pub mod ooxml;
pub mod value;
pub mod workbook;
pub mod zip_guard;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

/// The file patterns the plugin claims.
pub const HANDLES: [&str; 9] = [
    "*.xlsx", "*.xlsm", "*.xlsb", "*.xls", "*.xla", "*.ods", "*.fods", "*.csv", "*.tsv",
];

/// The plugin type exported to the host.
pub struct Plugin;

impl Guest for Plugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "sheets".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: document::PARSER_VERSION.into(),
            chunker_version: chunker::CHUNKER_VERSION.into(),
            handles: HANDLES.iter().map(|h| h.to_string()).collect(),
            accepts_binary: true,
        }
    }

    fn parse(path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        let file_name = path.rsplit(['/', '\\']).next().unwrap_or(&path);
        let book = detect::read(file_name, &bytes)?;
        drop(bytes);
        Ok(document::build(book))
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(chunker::chunk(&doc, &policy))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(Plugin);
