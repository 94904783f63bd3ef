//! The `pdf` plugin: the text layer of each page becomes a block; a page
//! without one (a scan) is read by the host's OCR into paragraph blocks
//! cited by page and region; the `pdf-page-v1` chunker makes page-sized
//! chunks (long pages split with overlap), every one cited by page number.
//!
//! Encrypted files, files without a text layer that OCR could not read and
//! corrupt files are refused with a message that says which.

pub mod chunker;
pub mod extract;
pub mod filters;
pub mod ocr;
pub mod raster;
pub mod scan;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

/// The plugin type exported to the host.
pub struct PdfPlugin;

impl Guest for PdfPlugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "pdf".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: "pdf-extract-0.12+ocr-v1".into(),
            chunker_version: chunker::CHUNKER_VERSION.into(),
            handles: vec!["*.pdf".into()],
            accepts_binary: true,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        extract::parse(&bytes)
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(chunker::chunk(&doc, &policy))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(PdfPlugin);
