//! Parser plugins: WebAssembly components speaking the `kebab:plugin` WIT
//! contract, run sandboxed by wasmtime.

mod cache;
pub mod identity;
pub mod install;
pub mod registry;
pub mod runtime;
pub mod scaffold;
pub mod validate;

/// Host bindings generated from `wit/`, the single source of the contract.
pub mod bindings {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../wit",
        additional_derives: [PartialEq],
        // Guest calls are futures so a deadline can stop a guest blocked in
        // a host call (see `runtime`); the `log` import stays synchronous.
        exports: { default: async },
    });
}

pub use bindings::kebab::plugin::types::{
    Block, BlockKind, Chunk, ChunkPolicy, CodeSpan, Document, Error as PluginError, LineRange,
    PluginInfo, Span,
};

/// The plugin API version this host implements (the WIT package version).
pub const HOST_API_VERSION: semver::Version = semver::Version::new(1, 0, 0);

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

/// A span as stored JSON (`{"kind":"line","start":1,"end":4}` and so on).
pub fn span_json(span: &Span) -> serde_json::Value {
    use serde_json::json;
    match span {
        Span::Lines(r) => json!({ "kind": "line", "start": r.start, "end": r.end }),
        Span::Page(p) => json!({ "kind": "page", "page": p }),
        Span::Code(c) => json!({
            "kind": "code", "start": c.start, "end": c.end, "symbol": c.symbol, "lang": c.lang,
        }),
    }
}
