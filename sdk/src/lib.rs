//! The kebab plugin SDK.
//!
//! A parser plugin is a WebAssembly component exporting the `kebab:plugin`
//! world defined in the repository's `wit/` directory (one frozen folder per
//! API version; this crate targets the newest). This crate generates the
//! guest bindings from that WIT (so it stays the single source of truth),
//! re-exports the contract types under short names, and offers helpers that
//! most chunkers need.
//!
//! ```ignore
//! use kebab_plugin_sdk::{Guest, PluginInfo, Document, Chunk, ChunkPolicy, PluginError};
//!
//! struct MyPlugin;
//! impl Guest for MyPlugin {
//!     fn info() -> PluginInfo { /* … */ }
//!     fn parse(path: String, bytes: Vec<u8>) -> Result<Document, PluginError> { /* … */ }
//!     fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> { /* … */ }
//! }
//! kebab_plugin_sdk::export_plugin!(MyPlugin);
//! ```

pub mod heading_chunker;
pub mod html_tag;
pub mod lang;
pub mod pack;
pub mod text;

wit_bindgen::generate!({
    world: "plugin",
    path: "../wit/v1.2.0",
    pub_export_macro: true,
    export_macro_name: "export_plugin",
    default_bindings_module: "kebab_plugin_sdk",
    additional_derives: [PartialEq],
});

pub use exports::kebab::plugin::parser::Guest;
pub use kebab::plugin::log::Level as LogLevel;
pub use kebab::plugin::ocr::{GrayImage, OcrError, TextLine};
pub use kebab::plugin::types::{
    Block, BlockKind, CellRange, Chunk, ChunkPolicy, CodeSpan, Document, Error as PluginError,
    LineRange, PartRange, PartUnit, PluginInfo, Region, Span,
};

#[cfg(feature = "archive")]
pub mod archive;
pub mod attachments;
pub mod ocr;

/// The user's setting `key` for this plugin (`[plugins.config.<name>]` in
/// kebab's config), or `None` when unset. Non-string values arrive as their
/// TOML text.
///
/// Only meaningful inside a component; in a native build (unit tests,
/// benchmarks) every setting is unset.
pub fn setting(key: &str) -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    return kebab::plugin::settings::get(key);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = key;
        None
    }
}

/// The bytes as UTF-8 text, or `error.malformed` naming the first bad byte.
pub fn utf8(bytes: &[u8]) -> Result<&str, PluginError> {
    std::str::from_utf8(bytes)
        .map_err(|e| PluginError::Malformed(format!("invalid UTF-8 at byte {}", e.valid_up_to())))
}

/// Send a diagnostic line to the host.
///
/// Only meaningful inside a component; in a native build (unit tests,
/// benchmarks) the message is dropped.
pub fn log(level: LogLevel, message: &str) {
    #[cfg(target_arch = "wasm32")]
    kebab::plugin::log::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (level, message);
}

impl Span {
    /// First and last 1-based line of a line-based span; `None` for every
    /// other kind (pages, slides, cells, parts, regions).
    pub fn line_bounds(&self) -> Option<(u32, u32)> {
        match self {
            Span::Lines(r) => Some((r.start, r.end)),
            Span::Code(c) => Some((c.start, c.end)),
            _ => None,
        }
    }

    /// Numbered parts `first..=last` of `unit`.
    pub fn parts(unit: PartUnit, first: u32, last: u32) -> Span {
        Span::Part(PartRange { unit, first, last })
    }

    /// A line span over `start..=end`.
    pub fn lines(start: u32, end: u32) -> Span {
        Span::Lines(LineRange { start, end })
    }
}
