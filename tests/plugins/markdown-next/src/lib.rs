//! The built-in markdown plugin's parser with a changed chunker: version
//! 1.1.0, chunker `md-heading-v2`, which aims at half the configured chunk
//! size. Installed over the built-in by the upgrade test.

use kebab_plugin_markdown::{PARSER_VERSION, chunker, parser};
use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

/// The plugin type exported to the host.
pub struct MarkdownNext;

impl Guest for MarkdownNext {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "markdown".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: PARSER_VERSION.into(),
            chunker_version: "md-heading-v2".into(),
            handles: vec!["*.md".into(), "*.markdown".into()],
            accepts_binary: false,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        parser::parse(&bytes)
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        let smaller = ChunkPolicy {
            target_tokens: (policy.target_tokens / 2).max(1),
            overlap_tokens: policy.overlap_tokens / 2,
        };
        Ok(chunker::chunk(&doc, &smaller))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(MarkdownNext);
