//! The `image` plugin: text in pictures — screenshots, scanned pages,
//! photos of whiteboards and receipts — read by the host's OCR.
//!
//! PNG, JPEG, WebP, TIFF (every page), GIF (the first frame) and BMP are
//! decoded in the sandbox under size bounds checked from the header, turned
//! upright by their EXIF orientation and handed to the host as grayscale
//! pixels. The text comes back as paragraph blocks cited by their region
//! of the image (`scan.png#xywh=…`; a TIFF's pages by page too) and is
//! chunked a page at a time by the SDK's region chunker. EXIF adds when the
//! photo was taken, the camera, and — when the `gps` setting is `true` —
//! where.
//!
//! A picture without text is reported as `no text found in the image`, a
//! kebab without OCR as `OCR unavailable: …`; neither is the file's fault.

pub mod decode;
pub mod exif;
pub mod pages;
pub mod read;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo, ocr};

/// The parser label stored with every document.
pub const PARSER_VERSION: &str = "image-0.25-v1";
/// The chunker label stored with every chunk.
pub const CHUNKER_VERSION: &str = "image-ocr-v1";

/// The plugin type exported to the host.
pub struct ImagePlugin;

impl Guest for ImagePlugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "image".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: PARSER_VERSION.into(),
            chunker_version: CHUNKER_VERSION.into(),
            handles: [
                "*.png", "*.jpg", "*.jpeg", "*.jpe", "*.webp", "*.tif", "*.tiff", "*.gif", "*.bmp",
            ]
            .map(String::from)
            .to_vec(),
            accepts_binary: true,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        read::parse(&bytes, read::Ocr::HOST)
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(ocr::chunk_regions(&doc, &policy))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(ImagePlugin);
