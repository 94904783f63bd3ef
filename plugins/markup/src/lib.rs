//! The `markup` plugin: document formats people keep beside markdown —
//! reStructuredText, AsciiDoc and HTML — read into the same
//! heading-aware blocks the markdown plugin makes, and chunked by the same
//! `md-heading-v1` chunker (from the SDK): a chunk
//! never spans two sections, code and directive blocks are never split,
//! and every chunk carries its section's heading path and cites its lines.
//! (Org-mode has a built-in plugin of its own, written in Python:
//! `plugins/org-python`.)

pub mod asciidoc;
pub mod html;
pub mod outline;
pub mod rst;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

/// The parser label stored with every document this plugin makes.
pub const PARSER_VERSION: &str = "markup-v1";

/// The plugin type exported to the host.
pub struct MarkupPlugin;

impl Guest for MarkupPlugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "markup".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: PARSER_VERSION.into(),
            chunker_version: kebab_plugin_sdk::heading_chunker::CHUNKER_VERSION.into(),
            handles: [
                "*.rst",
                "*.rest",
                "*.adoc",
                "*.asciidoc",
                "*.html",
                "*.htm",
                "*.xhtml",
            ]
            .map(String::from)
            .to_vec(),
            accepts_binary: false,
        }
    }

    fn parse(path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        parse(&path, &bytes)
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(kebab_plugin_sdk::heading_chunker::chunk(&doc, &policy))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(MarkupPlugin);

/// Parse a file by its extension.
pub fn parse(path: &str, bytes: &[u8]) -> Result<Document, PluginError> {
    let text = kebab_plugin_sdk::utf8(bytes)?;
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    Ok(match ext.as_str() {
        "rst" | "rest" => rst::parse(text),
        "adoc" | "asciidoc" => asciidoc::parse(text),
        "html" | "htm" | "xhtml" => html::parse(text),
        _ => {
            return Err(PluginError::Unsupported(format!(
                "{path}: not reStructuredText, AsciiDoc or HTML"
            )));
        }
    })
}
