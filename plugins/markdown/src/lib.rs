//! The `markdown` plugin: CommonMark (with tables, footnotes, task lists and
//! YAML frontmatter) into heading-aware blocks, and the `md-heading-v1`
//! chunker.

pub mod chunker;
pub mod frontmatter;
pub mod parser;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

/// The parser label stored with every document this plugin makes.
pub const PARSER_VERSION: &str = "pulldown-cmark-0.13";

/// The plugin type exported to the host.
pub struct MarkdownPlugin;

impl Guest for MarkdownPlugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "markdown".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: PARSER_VERSION.into(),
            chunker_version: chunker::CHUNKER_VERSION.into(),
            handles: ["*.md", "*.markdown", "*.mdown", "*.mkd"]
                .map(String::from)
                .to_vec(),
            accepts_binary: false,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        parser::parse(&bytes)
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(chunker::chunk(&doc, &policy))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(all(target_arch = "wasm32", feature = "component"))]
kebab_plugin_sdk::export_plugin!(MarkdownPlugin);
