//! `schema`: what this kebab binary and its index can do (`schema.v1`) —
//! wire schema versions, available search modes, plugins with their
//! versions, models, and what the index holds.

use serde::Serialize;

use kebab_core::wire::{
    Answer, Citation, DocSummary, EmbeddingRef, ErrorReport, RootFreshness, SearchHit,
    SearchResponse,
};

use super::doctor::DoctorReport;
use super::eval::{BeirReport, EvalReport};
use super::eval_ann::AnnReport;
use super::init::InitReport;
use super::models::{DicImportReport, ModelPullReport, ModelsReport};
use super::plugins::{
    PluginInstallReport, PluginList, PluginNewReport, PluginRemoveReport, PluginTestReport,
    PluginWhich,
};
use super::roots::RootList;
use super::search::{BulkSearchItem, BulkSearchResponse};
use super::sessions::{SessionDeleteReport, SessionList, SessionView};
use super::{ApiError, Session};
use crate::fetch::{ChunkInspection, FetchResult};
use crate::ingest::{IngestReport, ProgressLine};
use crate::service::Health;
use crate::watch::WatchLine;
use kebab_search::cjk::{AnalyzerState, AnalyzerStatus};
use kebab_store::IndexStats;

/// The JSON Schema (draft 2020-12, describing what the type serialises
/// to) of one wire type.
fn schema_of<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// Builds the JSON Schema of one wire type.
pub type SchemaOf = fn() -> schemars::Schema;

/// Every wire schema this binary emits, by id, with the type it describes:
/// the one list of schema ids. The registry lives here, above every type it
/// names; `schema.v1` lists its ids, and the committed copies in
/// `docs/wire-schema/v1/<name>.schema.json` are checked against it by a
/// test (regenerate them with `KEBAB_BLESS_WIRE_SCHEMAS=1 cargo test -p
/// kebab --lib schema`).
pub const WIRE_SCHEMAS: &[(&str, SchemaOf)] = &[
    ("ann_report.v1", schema_of::<AnnReport>),
    ("answer.v1", schema_of::<Answer>),
    ("beir_report.v1", schema_of::<BeirReport>),
    ("bulk_search_item.v1", schema_of::<BulkSearchItem>),
    ("bulk_search_response.v1", schema_of::<BulkSearchResponse>),
    ("chunk_inspection.v1", schema_of::<ChunkInspection>),
    ("citation.v1", schema_of::<Citation>),
    ("doc_summary.v1", schema_of::<DocSummary>),
    ("doctor.v1", schema_of::<DoctorReport>),
    ("error.v1", schema_of::<ErrorReport>),
    ("eval_report.v1", schema_of::<EvalReport>),
    ("fetch_result.v1", schema_of::<FetchResult>),
    ("health.v1", schema_of::<Health>),
    ("ingest_progress.v1", schema_of::<ProgressLine<'static>>),
    ("ingest_report.v1", schema_of::<IngestReport>),
    ("init.v1", schema_of::<InitReport>),
    ("ko_dic_import.v1", schema_of::<DicImportReport>),
    ("ja_dic_import.v1", schema_of::<DicImportReport>),
    ("model_pull.v1", schema_of::<ModelPullReport>),
    ("models.v1", schema_of::<ModelsReport>),
    ("plugin_install.v1", schema_of::<PluginInstallReport>),
    ("plugin_list.v1", schema_of::<PluginList>),
    ("plugin_new.v1", schema_of::<PluginNewReport>),
    ("plugin_remove.v1", schema_of::<PluginRemoveReport>),
    ("plugin_test.v1", schema_of::<PluginTestReport>),
    ("plugin_which.v1", schema_of::<PluginWhich>),
    ("root_list.v1", schema_of::<RootList>),
    ("schema.v1", schema_of::<SchemaReport>),
    ("search_hit.v1", schema_of::<SearchHit>),
    ("search_response.v1", schema_of::<SearchResponse>),
    ("session.v1", schema_of::<SessionView>),
    ("session_delete.v1", schema_of::<SessionDeleteReport>),
    ("session_list.v1", schema_of::<SessionList>),
    ("watch_event.v1", schema_of::<WatchLine>),
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
    /// The roots the index holds and how fresh each is.
    pub roots: Vec<RootFreshness>,
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
    /// Korean morpheme analysis (a dictionary is installed).
    pub korean_analysis: bool,
    /// The Korean, Japanese and Chinese analysers of the lexical index:
    /// which are loaded, installed (loaded when their script is first
    /// met) or missing, with what to do.
    pub cjk_analysis: Vec<AnalyzerStatus>,
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
    /// `kebab schema`; its roots are those `scope` may read.
    pub fn schema(&self, scope: &super::Scope) -> Result<SchemaReport, ApiError> {
        let app = self.app()?;
        let mut notes = Vec::new();
        let vectors = self.vector_channel().unwrap_or_else(|off| {
            notes.push(off.reason);
            None
        });
        let (cjk, warnings) = self.cjk()?;
        notes.extend(warnings.iter().cloned());
        let cjk_analysis = cjk.status();
        let korean = cjk_analysis
            .iter()
            .find(|a| {
                a.language == "ko"
                    && matches!(a.state, AnalyzerState::Loaded | AnalyzerState::Available)
            })
            .map(|a| a.source.clone());
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
                            kebab_plugin_host::registry::Origin::BuiltIn => "built-in",
                            kebab_plugin_host::registry::Origin::Installed(_) => "installed",
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
                schemas: WIRE_SCHEMAS.iter().map(|(id, _)| *id).collect(),
            },
            capabilities: Capabilities {
                search_modes: if vectors.is_some() {
                    vec!["lexical", "vector", "hybrid"]
                } else {
                    vec!["lexical"]
                },
                korean_analysis: korean.is_some(),
                cjk_analysis,
                bulk_search: true,
                fetch: true,
                ask: true,
                mcp: true,
                plugin_api: kebab_plugin_host::HOST_API_VERSION.to_string(),
                plugins,
                notes,
            },
            models: Models {
                embedding: vectors.map(|v| EmbeddingRef::from(v.embedder.spec())),
                llm: LlmRef {
                    id: llm.model.clone(),
                    provider: llm.provider.as_str(),
                    endpoint: llm.endpoint.clone(),
                },
                korean_dictionary: korean,
            },
            stats: app.store.index_stats()?,
            roots: self
                .freshness_of(app, &[])?
                .into_iter()
                .filter(|r| scope.may_read(&r.name))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_json_schemas_are_current() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/wire-schema/v1");
        let bless = std::env::var_os("KEBAB_BLESS_WIRE_SCHEMAS").is_some();
        for (id, schema_of) in WIRE_SCHEMAS {
            let schema = schema_of();
            let path = dir.join(format!("{}.schema.json", id.trim_end_matches(".v1")));
            let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == text,
                "{} is stale: regenerate with KEBAB_BLESS_WIRE_SCHEMAS=1 cargo test -p kebab --lib schema",
                path.display()
            );
        }
        // Every committed schema file is one the registry still lists.
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let id = format!("{}.v1", name.trim_end_matches(".schema.json"));
            assert!(
                WIRE_SCHEMAS.iter().any(|(listed, _)| *listed == id),
                "docs/wire-schema/v1/{name} describes no schema of the registry"
            );
        }
    }
}
