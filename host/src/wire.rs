//! Stable JSON wire schemas (`*.v1`, seed 001 §2). Internal types may change
//! freely; these only grow by optional fields.

use serde::Serialize;
use serde_json::Value;

/// `citation.v1`: where a hit or claim comes from.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Citation {
    pub schema_version: &'static str,
    #[serde(flatten)]
    pub body: CitationBody,
}

/// The variant part of a citation, tagged by `kind`.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CitationBody {
    /// Lines of a text document.
    Line {
        path: String,
        uri: String,
        start: u32,
        end: u32,
        section: Option<String>,
    },
    /// A page of a paged document.
    Page {
        path: String,
        uri: String,
        page: u32,
        section: Option<String>,
    },
    /// Lines of a source file.
    Code {
        path: String,
        uri: String,
        line_start: u32,
        line_end: u32,
        symbol: Option<String>,
        lang: Option<String>,
    },
}

impl Citation {
    /// Build a citation for `path` from stored span JSON (a list of spans);
    /// line spans collapse into the range from the first start to the last end.
    pub fn from_spans(path: &str, spans: &Value, section: Option<String>) -> Option<Citation> {
        let spans = spans.as_array()?;
        let first = spans.first()?;
        let kind = first.get("kind")?.as_str()?;
        let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).map(|n| n as u32);
        let body = match kind {
            "page" => {
                let page = num(first, "page")?;
                CitationBody::Page {
                    path: path.into(),
                    uri: format!("{path}#page={page}"),
                    page,
                    section,
                }
            }
            "line" | "code" => {
                let start = spans.iter().filter_map(|s| num(s, "start")).min()?;
                let end = spans.iter().filter_map(|s| num(s, "end")).max()?;
                let uri = line_uri(path, start, end);
                if kind == "code" {
                    let text = |k: &str| first.get(k).and_then(Value::as_str).map(String::from);
                    CitationBody::Code {
                        path: path.into(),
                        uri,
                        line_start: start,
                        line_end: end,
                        symbol: text("symbol"),
                        lang: text("lang"),
                    }
                } else {
                    CitationBody::Line {
                        path: path.into(),
                        uri,
                        start,
                        end,
                        section,
                    }
                }
            }
            _ => return None,
        };
        Some(Citation {
            schema_version: "citation.v1",
            body,
        })
    }

    /// The citation URI (`path#L3-L9`, `path#page=2`).
    pub fn uri(&self) -> &str {
        match &self.body {
            CitationBody::Line { uri, .. }
            | CitationBody::Page { uri, .. }
            | CitationBody::Code { uri, .. } => uri,
        }
    }

    /// Cited line range, for line and code citations.
    pub fn lines(&self) -> Option<(u32, u32)> {
        match &self.body {
            CitationBody::Line { start, end, .. } => Some((*start, *end)),
            CitationBody::Code {
                line_start,
                line_end,
                ..
            } => Some((*line_start, *line_end)),
            CitationBody::Page { .. } => None,
        }
    }
}

/// `path#L5` for one line, `path#L3-L9` for a range.
pub fn line_uri(path: &str, start: u32, end: u32) -> String {
    if start == end {
        format!("{path}#L{start}")
    } else {
        format!("{path}#L{start}-L{end}")
    }
}

/// Per-channel retrieval detail of a hit.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Retrieval {
    pub method: &'static str,
    pub lexical_score: Option<f64>,
    pub vector_score: Option<f64>,
    pub fusion_score: Option<f64>,
    pub lexical_rank: Option<u32>,
    pub vector_rank: Option<u32>,
}

/// `search_hit.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchHit {
    pub schema_version: &'static str,
    pub rank: u32,
    pub score: f64,
    pub score_kind: &'static str,
    pub chunk_id: String,
    pub doc_id: String,
    pub doc_path: String,
    pub heading_path: Vec<String>,
    pub section_label: Option<String>,
    pub snippet: String,
    pub snippet_full_text: bool,
    pub citation: Citation,
    pub retrieval: Retrieval,
    pub index_version: &'static str,
    pub embedding_model: Option<String>,
    pub chunker_version: String,
    /// Git work tree (code hits in a repository).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Language label (code hits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_lang: Option<String>,
}

/// `search_response.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchResponse {
    pub schema_version: &'static str,
    pub query: String,
    pub mode: &'static str,
    pub hits: Vec<SearchHit>,
}

/// `doc_summary.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DocSummary {
    pub schema_version: &'static str,
    pub doc_id: String,
    pub doc_path: String,
    pub title: Option<String>,
    pub lang: Option<String>,
    pub tags: Vec<String>,
    pub trust_level: String,
    pub source_type: String,
    pub byte_len: u64,
    pub chunk_count: u64,
    pub created_at: String,
    pub updated_at: String,
    pub parser_version: String,
    pub chunker_version: String,
    pub plugin: String,
    pub plugin_version: String,
    pub fallback_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
}

impl From<crate::store::DocRow> for DocSummary {
    fn from(d: crate::store::DocRow) -> Self {
        DocSummary {
            schema_version: "doc_summary.v1",
            doc_id: d.doc_id,
            doc_path: d.workspace_path,
            title: d.title,
            lang: d.lang,
            tags: d.tags,
            trust_level: d.trust_level,
            source_type: d.source_type,
            byte_len: d.byte_len,
            chunk_count: d.chunk_count,
            created_at: d.created_at,
            updated_at: d.updated_at,
            parser_version: d.parser_version,
            chunker_version: d.chunker_version,
            plugin: d.plugin_name,
            plugin_version: d.plugin_version,
            fallback_reason: d.fallback_reason,
            repo: d.repo,
            git_branch: d.git_branch,
            git_commit: d.git_commit,
        }
    }
}

/// `error.v1`: a fatal error in `--json` mode.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ErrorReport {
    pub schema_version: &'static str,
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
    /// Code-specific facts (`{"data_dir": …}` for `not_indexed`,
    /// `{"field": …}` for `invalid_input`, the missing id for
    /// `chunk_not_found` / `doc_not_found`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// A citation attached to an answer; `marker` is the `[#n]` the answer
/// uses, or `None` for a candidate listed with a refusal.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AnswerCitation {
    pub marker: Option<String>,
    pub citation: Citation,
}

/// The model that produced an answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelRef {
    pub id: String,
    pub provider: &'static str,
}

/// The embedding model behind an answer's vector channel.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EmbeddingRef {
    pub id: String,
    pub provider: &'static str,
    pub dimensions: usize,
}

impl EmbeddingRef {
    /// The reference to a local ONNX model.
    pub fn of(spec: &crate::embed::ModelSpec) -> EmbeddingRef {
        EmbeddingRef {
            id: spec.id(),
            provider: "onnx",
            dimensions: spec.dimensions,
        }
    }
}

/// How retrieval went for an answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AnswerRetrieval {
    pub trace_id: String,
    pub mode: &'static str,
    pub k: u32,
    pub score_gate: f64,
    pub top_score: f64,
    pub chunks_returned: u32,
    pub chunks_used: u32,
}

/// Token counts and wall time.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Usage {
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: u64,
}

/// `answer.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Answer {
    pub schema_version: &'static str,
    pub answer: String,
    pub citations: Vec<AnswerCitation>,
    pub grounded: bool,
    /// `score_gate`, `no_chunks`, `llm_self_judge`, `llm_stream_aborted`,
    /// or for failures `model_unreachable`, `model_not_pulled`, `timeout`.
    pub refusal_reason: Option<&'static str>,
    pub model: ModelRef,
    /// The embedding model, when vectors took part in retrieval.
    pub embedding: Option<EmbeddingRef>,
    pub prompt_template_version: &'static str,
    pub retrieval: AnswerRetrieval,
    pub usage: Usage,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_index: Option<u32>,
}

/// Every typed wire schema as JSON Schema (draft 2020-12, describing what
/// the type serialises to), keyed by schema id. The committed copies in
/// `docs/wire-schema/v1/<name>.schema.json` are checked against these by a
/// test; regenerate them with `KEBAB_BLESS_WIRE_SCHEMAS=1 cargo test -p
/// kebab --lib wire`.
pub fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    fn schema<T: schemars::JsonSchema>() -> schemars::Schema {
        schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<T>()
    }
    use crate::api::doctor::DoctorReport;
    use crate::api::schema::SchemaReport;
    use crate::api::search::{BulkSearchItem, BulkSearchResponse};
    use crate::fetch::{ChunkInspection, FetchResult};
    use crate::ingest::{IngestReport, ProgressLine};
    vec![
        ("answer.v1", schema::<Answer>()),
        ("bulk_search_item.v1", schema::<BulkSearchItem>()),
        ("bulk_search_response.v1", schema::<BulkSearchResponse>()),
        ("chunk_inspection.v1", schema::<ChunkInspection>()),
        ("citation.v1", schema::<Citation>()),
        ("doc_summary.v1", schema::<DocSummary>()),
        ("doctor.v1", schema::<DoctorReport>()),
        ("error.v1", schema::<ErrorReport>()),
        ("fetch_result.v1", schema::<FetchResult>()),
        ("ingest_progress.v1", schema::<ProgressLine<'static>>()),
        ("ingest_report.v1", schema::<IngestReport>()),
        ("schema.v1", schema::<SchemaReport>()),
        ("search_hit.v1", schema::<SearchHit>()),
        ("search_response.v1", schema::<SearchResponse>()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn committed_json_schemas_are_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/wire-schema/v1");
        let bless = std::env::var_os("KEBAB_BLESS_WIRE_SCHEMAS").is_some();
        for (id, schema) in json_schemas() {
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
                "{} is stale: regenerate with KEBAB_BLESS_WIRE_SCHEMAS=1 cargo test -p kebab --lib wire",
                path.display()
            );
        }
    }

    #[test]
    fn line_citation_spans_first_start_to_last_end() {
        let spans = json!([{"kind":"line","start":3,"end":4},{"kind":"line","start":7,"end":9}]);
        let c = Citation::from_spans("notes/a.md", &spans, Some("Intro".into())).unwrap();
        assert_eq!(c.uri(), "notes/a.md#L3-L9");
        assert_eq!(c.lines(), Some((3, 9)));
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(
            wire,
            json!({"schema_version":"citation.v1","kind":"line","path":"notes/a.md",
                   "uri":"notes/a.md#L3-L9","start":3,"end":9,"section":"Intro"})
        );
    }

    #[test]
    fn code_and_page_citations() {
        let code = json!([{"kind":"code","start":10,"end":42,"symbol":"fn ingest","lang":"rust"}]);
        let c = Citation::from_spans("src/a.rs", &code, None).unwrap();
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(wire["kind"], "code");
        assert_eq!(wire["line_start"], 10);
        assert_eq!(wire["symbol"], "fn ingest");
        assert_eq!(c.uri(), "src/a.rs#L10-L42");
        let page = Citation::from_spans("p.pdf", &json!([{"kind":"page","page":3}]), None).unwrap();
        assert_eq!(page.uri(), "p.pdf#page=3");
        assert_eq!(line_uri("a.md", 5, 5), "a.md#L5");
        assert!(Citation::from_spans("x", &json!([]), None).is_none());
    }
}
