//! Stable JSON wire schemas (`*.v1`) shared by search and ask: citations,
//! hits, documents, answers, errors. (The registry of every schema and its
//! JSON Schema file in `docs/wire-schema/v1/` is the app's `api::schema`,
//! above all the types it lists.) Internal types may change
//! freely; these only grow by optional fields.

pub use crate::citation::{Citation, CitationBody, line_uri};
use serde::Serialize;
use serde_json::Value;

/// Per-channel retrieval detail of a hit.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Retrieval {
    pub method: &'static str,
    pub lexical_score: Option<f64>,
    pub vector_score: Option<f64>,
    pub fusion_score: Option<f64>,
    /// Which fusion produced `fusion_score` (`rrf`, `blend_minmax`,
    /// `blend_z`), in hybrid mode.
    pub fusion_kind: Option<&'static str>,
    pub lexical_rank: Option<u32>,
    pub vector_rank: Option<u32>,
    /// The cross-encoder's logit when `[search.rerank]` reordered this hit
    /// (then also its `score`, with `score_kind` `rerank`).
    pub rerank_score: Option<f64>,
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
    /// The root (tree) of the document; `doc_path` is relative to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
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
    /// Why the search ran with less than the index can give (lexical only
    /// because no model loads, chunks without vectors, no Korean
    /// dictionary), each with what fixes it; absent when nothing is amiss.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How fresh each root searched is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<RootFreshness>,
}

/// How fresh a root's part of the index is: when a walk of the whole root
/// last completed, and whether a watcher keeps it fresh now.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RootFreshness {
    /// The root's name.
    pub name: String,
    /// Its directory.
    pub path: String,
    /// When a walk of the whole root last completed (RFC 3339); null when
    /// none has.
    pub synced_at: Option<String>,
    /// Whether a running `kebab watch` (or `kebab serve --watch`) keeps
    /// the root fresh: its changes reach the index seconds after they
    /// happen.
    pub watched: bool,
    /// Changes the watcher has seen and not yet applied.
    pub queued: u64,
}

/// `doc_summary.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DocSummary {
    pub schema_version: &'static str,
    pub doc_id: String,
    /// The root (tree) of the document; `doc_path` is relative to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
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
    /// The cited chunk (`fetch` with `kind=chunk` reads it verbatim).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_id: Option<String>,
    /// The chunk's bounded relevance to the question (0–1, what the score
    /// gate compares), as retrieval scored it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f64>,
}

impl AnswerCitation {
    /// A citation of a retrieved chunk: `marker` is its `[#n]`, or `None`
    /// for a candidate listed with a refusal.
    pub fn of_chunk(
        marker: Option<String>,
        citation: Citation,
        chunk_id: &str,
        relevance: f64,
    ) -> AnswerCitation {
        AnswerCitation {
            marker,
            citation,
            chunk_id: Some(chunk_id.to_string()),
            relevance: Some(relevance),
        }
    }
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
    /// Why the answer is not grounded (null when it is): `no_index`,
    /// `no_chunks` or `score_gate` (the model was not asked);
    /// `llm_self_judge` (the answer cites nothing, cites a marker that names
    /// no packed entry such as `[#99]`, `[#01]` or `[#0]`, or declines); or
    /// a failed generation, any partial answer kept: `llm_stream_aborted`
    /// (the stream broke or was cancelled), `timeout` (not finished within
    /// `timeout_secs`), `answer_too_long` (past `max_answer_tokens`),
    /// `model_unreachable`, `model_not_pulled`; a multi-hop ask whose
    /// question could not be split into search queries:
    /// `multi_hop_decompose_failed`; an answer the verification model
    /// (`[rag.verify]`) did not find entailed by its evidence:
    /// `nli_verification_failed`, or that could not be checked because the
    /// model would not load or run: `nli_model_unavailable`.
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
    /// Why retrieval ran with less than the index can give, as in
    /// `search_response.v1`; absent when nothing is amiss.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Each sentence of a grounded answer that cites evidence, with what
    /// it cites; absent for a refusal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<AnswerClaim>,
    /// How fresh each root searched is, as in `search_response.v1`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<RootFreshness>,
    /// The steps of a multi-hop ask, in order (absent for a single pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<Vec<Hop>>,
    /// The verification model's verdict on the answer (`[rag.verify]`);
    /// absent when no verification ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

/// One step of a multi-hop ask.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Hop {
    /// `decompose` (the question split into search queries), `continue`
    /// (the model asked for more evidence), `stop` (the evidence is enough,
    /// or `forced_stop`), `synthesize` (the answer written from all the
    /// evidence gathered).
    pub kind: &'static str,
    /// The step's place in the loop: 0 for `decompose`, then 1, 2, …
    pub iter: u32,
    /// The search queries this step asked for.
    pub sub_queries: Vec<String>,
    /// Chunks those queries added to the evidence (new chunks past the
    /// score gate).
    pub context_chunks_added: u32,
    /// How long the step's model call took.
    pub llm_call_ms: u64,
    /// The loop stopped at a bound, not by the model's decision: `[rag]
    /// max_depth` rounds run or the multi-hop time budget spent.
    pub forced_stop: bool,
}

/// The entailment check of an answer against its evidence.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Verification {
    /// The entailment probability of the least supported sentence.
    pub nli_score: f32,
    /// The threshold it had to reach (`[rag.verify] threshold`).
    pub nli_threshold: f32,
    /// `nli_score >= nli_threshold`.
    pub nli_passed: bool,
}

/// A sentence of a grounded answer and the evidence it cites.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AnswerClaim {
    /// The sentence without its `[#n]` markers.
    pub text: String,
    /// The packed entries it cites, in the order it cites them.
    pub evidence: Vec<ClaimEvidence>,
}

/// One cited entry of a claim.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ClaimEvidence {
    /// The marker as the answer writes it (`[#2]`).
    pub marker: String,
    /// Where the entry comes from (`notes/raft.md#L3-L9`).
    pub uri: String,
    /// The entry's line sharing the most words with the claim (at most
    /// 160 characters), when one shares any.
    pub line: Option<String>,
}
