//! `schema`: what this kebab binary and its index can do (`schema.v1`) —
//! wire schema versions, available search modes, plugins with their
//! versions, models, and what the index holds.

use serde::Serialize;

use super::{ApiError, Session};
use crate::store::IndexStats;
use crate::wire::EmbeddingRef;

/// Every wire schema this binary emits.
pub const WIRE_SCHEMAS: &[&str] = &[
    "ann_report.v1",
    "answer.v1",
    "beir_report.v1",
    "bulk_search_item.v1",
    "bulk_search_response.v1",
    "chunk_inspection.v1",
    "citation.v1",
    "doc_summary.v1",
    "doctor.v1",
    "error.v1",
    "eval_report.v1",
    "fetch_result.v1",
    "ingest_progress.v1",
    "ingest_report.v1",
    "init.v1",
    "ko_dic_import.v1",
    "model_pull.v1",
    "models.v1",
    "plugin_install.v1",
    "plugin_list.v1",
    "plugin_new.v1",
    "plugin_remove.v1",
    "plugin_test.v1",
    "plugin_which.v1",
    "schema.v1",
    "search_hit.v1",
    "search_response.v1",
];

/// `schema.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SchemaReport {
    pub schema_version: &'static str,
    /// The kebab release.
    pub kebab_version: &'static str,
    pub wire: WireInfo,
    pub capabilities: Capabilities,
    pub models: Models,
    pub stats: IndexStats,
}

/// The wire format's version and the schemas it has.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WireInfo {
    pub version: &'static str,
    pub schemas: Vec<&'static str>,
}

/// What works with the current configuration and installation.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Capabilities {
    /// Search modes that run now (`lexical` always; `vector` and `hybrid`
    /// when an embedding model loads).
    pub search_modes: Vec<&'static str>,
    /// Korean morpheme analysis (a dictionary is installed and loads).
    pub korean_analysis: bool,
    pub bulk_search: bool,
    pub fetch: bool,
    /// `ask` needs a model server; this says the command exists, `doctor`
    /// says whether the server answers.
    pub ask: bool,
    pub mcp: bool,
    /// The plugin API version the host speaks.
    pub plugin_api: String,
    /// Loaded parser plugins.
    pub plugins: Vec<PluginRef>,
    /// Why a capability is off, each with a hint.
    pub notes: Vec<String>,
}

/// A loaded plugin.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginRef {
    pub name: String,
    pub version: String,
    /// `built-in` or `installed`.
    pub origin: &'static str,
    pub api_version: String,
}

/// The models in use.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Models {
    /// The embedding model, when one loads.
    pub embedding: Option<EmbeddingRef>,
    /// The configured answer model (`ask`).
    pub llm: LlmRef,
    /// The Korean dictionary directory, when one loads.
    pub korean_dictionary: Option<String>,
}

/// The answer model.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LlmRef {
    pub id: String,
    pub provider: &'static str,
    pub endpoint: String,
}

impl Session {
    /// `kebab schema`.
    pub fn schema(&self) -> Result<SchemaReport, ApiError> {
        let app = self.app()?;
        let mut notes = Vec::new();
        let vectors = self.vector_channel().unwrap_or_else(|off| {
            notes.push(off.reason);
            None
        });
        let korean = self.korean().unwrap_or_else(|why| {
            notes.push(why);
            None
        });
        let plugins = match app.plugins() {
            Ok(p) => {
                notes.extend(p.warnings);
                p.registry
                    .plugins()
                    .iter()
                    .map(|r| PluginRef {
                        name: r.name().to_string(),
                        version: r.plugin.version.to_string(),
                        origin: match r.origin {
                            crate::plugin::registry::Origin::BuiltIn => "built-in",
                            crate::plugin::registry::Origin::Installed(_) => "installed",
                        },
                        api_version: r.plugin.api_version.to_string(),
                    })
                    .collect()
            }
            Err(e) => {
                notes.push(format!("plugins off: {e}"));
                Vec::new()
            }
        };
        let llm = &self.config.models.llm;
        Ok(SchemaReport {
            schema_version: "schema.v1",
            kebab_version: env!("CARGO_PKG_VERSION"),
            wire: WireInfo {
                version: "v1",
                schemas: WIRE_SCHEMAS.to_vec(),
            },
            capabilities: Capabilities {
                search_modes: if vectors.is_some() {
                    vec!["lexical", "vector", "hybrid"]
                } else {
                    vec!["lexical"]
                },
                korean_analysis: korean.is_some(),
                bulk_search: true,
                fetch: true,
                ask: true,
                mcp: true,
                plugin_api: crate::plugin::HOST_API_VERSION.to_string(),
                plugins,
                notes,
            },
            models: Models {
                embedding: vectors.map(|v| EmbeddingRef::of(v.embedder.spec())),
                llm: LlmRef {
                    id: llm.model.clone(),
                    provider: llm.provider.as_str(),
                    endpoint: llm.endpoint.clone(),
                },
                korean_dictionary: korean.map(|k| k.dir().display().to_string()),
            },
            stats: app.store.index_stats()?,
        })
    }
}
