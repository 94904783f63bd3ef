//! The `code` plugin: source files chunked along their syntax tree.
//!
//! One chunk per top-level item (function, struct/class/enum/trait, each
//! method of an impl or class), items longer than 200 lines split into
//! 200-line pieces, and the code between items (imports, constants, glue)
//! gathered into glue chunks, so every line belongs to some chunk. Doc
//! comments and attributes stay with the item below them. Chunks are cited
//! as code spans with a symbol (`Type::method`, `pkg.mod.Class.method`) and
//! a language label.

pub mod items;
pub mod lang;
pub mod macros;
pub mod tier2;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

/// The plugin type exported to the host.
pub struct CodePlugin;

impl Guest for CodePlugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "code".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: "tree-sitter-0.25".into(),
            chunker_version: "code-ast-v1".into(),
            handles: lang::Lang::ALL
                .iter()
                .flat_map(|l| l.patterns().iter().copied())
                .chain(tier2::Tier2::patterns())
                .map(String::from)
                .collect(),
            accepts_binary: false,
        }
    }

    fn parse(path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        items::parse(&path, &bytes)
    }

    fn chunk_document(doc: Document, _policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(items::chunk(&doc))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(CodePlugin);
