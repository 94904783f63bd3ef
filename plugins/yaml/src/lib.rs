//! The `yaml` plugin: Kubernetes manifests, one chunk per resource.
//!
//! A file's `---`-separated documents that carry `apiVersion` and `kind` are
//! resources; a `kind: List` (or `…List`) expands to its items. Each resource
//! is one block and one chunk with an exact line span and the symbol
//! `Kind/namespace/name`. Comments above a resource stay with it. Helm
//! templates, invalid YAML and files without any resource are refused, so the
//! host indexes them with the text plugin under the `yaml` label.

pub mod manifest;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

/// The chunker label stored with every chunk this plugin makes.
pub const CHUNKER_VERSION: &str = "k8s-manifest-resource-v1";

/// The plugin type exported to the host.
pub struct YamlPlugin;

impl Guest for YamlPlugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "yaml".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: "yaml-rust2-0.13".into(),
            chunker_version: CHUNKER_VERSION.into(),
            handles: vec!["*.yaml".into(), "*.yml".into()],
            accepts_binary: false,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        manifest::parse(&bytes)
    }

    fn chunk_document(doc: Document, _policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(manifest::chunk(&doc))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(YamlPlugin);
