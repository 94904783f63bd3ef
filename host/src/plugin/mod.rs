//! Parser plugins: WebAssembly components speaking the `kebab:plugin` WIT
//! contract, run sandboxed by wasmtime.

mod cache;
pub mod contract;
pub mod identity;
pub mod install;
pub mod overlap;
pub mod registry;
pub mod runtime;
pub mod scaffold;
pub mod validate;

pub use contract::current::kebab::plugin::types::{
    Block, BlockKind, Chunk, ChunkPolicy, CodeSpan, Document, Error as PluginError, LineRange,
    PluginInfo, Span,
};
pub use contract::{HOST_API_VERSION, SUPPORTED_API_VERSIONS};

/// A plugin's settings from `[plugins.config.<name>]`, values as text.
pub type Settings = std::collections::BTreeMap<String, String>;

/// Lowercase name of a block kind, as stored.
pub fn block_kind_name(kind: BlockKind) -> &'static str {
    match kind {
        BlockKind::Heading => "heading",
        BlockKind::Paragraph => "paragraph",
        BlockKind::List => "list",
        BlockKind::Code => "code",
        BlockKind::Table => "table",
        BlockKind::Quote => "quote",
        BlockKind::ImageRef => "image_ref",
        BlockKind::Page => "page",
    }
}
