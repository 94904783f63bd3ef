//! `search` and `bulk_search`: the one place a search mode is chosen and a
//! [`kebab_search::search::Request`] is built from what a front end was given.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApiError, Session};
use kebab_core::trust::TrustLevel;
use kebab_core::wire::{ErrorReport, SearchResponse};
use kebab_search::search::{Mode, Request};
use kebab_store::ChunkFilter;

/// Most queries one `bulk_search` call takes.
pub const BULK_CAP: usize = 100;
/// Longest line of `kebab search --bulk` input, in bytes: the longest
/// query with room for its filters.
pub const BULK_LINE_BYTES: usize = kebab_search::search::MAX_QUERY_BYTES + (16 << 10);

/// One search as a front end receives it (a CLI invocation, an MCP tool
/// call, one line of `kebab search --bulk`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// The query text.
    pub query: String,
    /// Number of hits [default: the config's `[search] default_k`].
    #[serde(default)]
    pub k: Option<usize>,
    /// `lexical`, `vector` or `hybrid` [default: hybrid when an embedding
    /// model is installed, else lexical].
    #[serde(default)]
    pub mode: Option<String>,
    /// Only documents whose path matches this glob (`notes/*`).
    #[serde(default)]
    pub path: Option<String>,
    /// Only documents carrying this tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Only Kubernetes resources of this kind (`Deployment`).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only code in this language (`rust`, `python`, `shell`, …).
    #[serde(default)]
    pub code_lang: Option<String>,
    /// Only files from the git work tree with this name.
    #[serde(default)]
    pub repo: Option<String>,
    /// Only documents of these roots (`kebab roots` lists them) [default:
    /// every root].
    #[serde(default)]
    pub roots: Vec<String>,
    /// Only documents in this language (`en`, `ko`).
    #[serde(default)]
    pub lang: Option<String>,
    /// Only documents trusted at least this much: `primary`, `secondary`
    /// or `generated` (a document's frontmatter `trust_level`; primary
    /// when it has none).
    #[serde(default)]
    pub trust_min: Option<String>,
    /// Whose search it is (set by the server; never from the wire).
    #[serde(skip)]
    #[schemars(skip)]
    pub scope: super::Scope,
}

impl SearchInput {
    /// The filter, over the roots `roots` (the caller's readable ones).
    fn filter(&self, roots: &[String]) -> Result<ChunkFilter, ApiError> {
        Ok(ChunkFilter {
            kind: self.kind.clone(),
            code_lang: self.code_lang.as_ref().map(|l| l.to_lowercase()),
            repo: self.repo.clone(),
            path_glob: self.path.clone(),
            tag: self.tag.clone(),
            roots: roots.to_vec(),
            lang: normalise_lang(self.lang.as_deref()),
            trust_min: parse_trust_min(self.trust_min.as_deref())?,
        })
    }

    fn mode(&self) -> Result<Option<Mode>, ApiError> {
        parse_mode(self.mode.as_deref())
    }
}

/// A `mode` field: absent, or one of the three modes.
pub(crate) fn parse_mode(mode: Option<&str>) -> Result<Option<Mode>, ApiError> {
    mode.map(|m| {
        Mode::parse(m).ok_or_else(|| {
            ApiError::invalid(
                "mode",
                format!("unknown mode `{m}`: expected lexical, vector or hybrid"),
            )
        })
    })
    .transpose()
}

/// A `lang` field as the index keeps languages: trimmed, lower-case.
pub(crate) fn normalise_lang(lang: Option<&str>) -> Option<String> {
    lang.map(|l| l.trim().to_lowercase())
}

/// A `trust_min` field: absent, or one of the trust levels.
pub(crate) fn parse_trust_min(trust_min: Option<&str>) -> Result<Option<TrustLevel>, ApiError> {
    trust_min
        .map(|t| {
            TrustLevel::parse(t).ok_or_else(|| {
                ApiError::invalid(
                    "trust_min",
                    format!("unknown trust level `{t}`: expected primary, secondary or generated"),
                )
            })
        })
        .transpose()
}

/// `bulk_search_item.v1`: one query of a bulk call, answered or failed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BulkSearchItem {
    pub schema_version: &'static str,
    /// The query's position in the call, from 0.
    pub index: usize,
    /// The query text (absent when the line did not parse).
    pub query: Option<String>,
    /// `search_response.v1` when the query ran.
    pub response: Option<SearchResponse>,
    /// `error.v1` when it did not; the other queries still ran.
    pub error: Option<ErrorReport>,
}

/// `bulk_search_response.v1`: every item of a bulk call, in input order.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BulkSearchResponse {
    pub schema_version: &'static str,
    pub items: Vec<BulkSearchItem>,
    /// Queries that ran (with or without hits).
    pub succeeded: usize,
    /// Queries that failed.
    pub failed: usize,
}

impl BulkSearchItem {
    fn new(index: usize, query: Option<String>) -> BulkSearchItem {
        BulkSearchItem {
            schema_version: "bulk_search_item.v1",
            index,
            query,
            response: None,
            error: None,
        }
    }
}

impl Session {
    /// `kebab search`: one query, `search_response.v1`.
    pub fn search(&self, input: &SearchInput) -> Result<SearchResponse, ApiError> {
        if input.query.trim().is_empty() {
            return Err(ApiError::invalid("query", "is empty"));
        }
        let mut requested = input.mode()?;
        let app = self.indexed_app()?;
        let readable = self.readable_roots(app, &input.scope, &input.roots)?;
        let roots = self.freshness_of(app, &readable)?;
        let mut notes = Vec::new();
        let channel = self.channel_for(&mut requested, &mut notes)?;
        self.full_text_for(&mut requested, channel.is_some(), &mut notes)?;
        let mode = match (requested, &channel) {
            (Some(m), _) => m,
            (None, Some(_)) => Mode::Hybrid,
            (None, None) => Mode::Lexical,
        };
        let cjk = self.cjk_for(&input.query, &mut notes);
        let search = &app.config.search;
        let filter = input.filter(&readable)?;
        let request = Request {
            query: &input.query,
            k: input.k.unwrap_or(search.default_k).max(1),
            mode,
            filter: &filter,
            snippet_chars: search.snippet_chars,
            fusion: search.fusion(),
            candidates: search.candidates,
            cjk,
            rerank: self.reranker()?,
        };
        let started = std::time::Instant::now();
        let mut response = match kebab_search::search::search(&app.store, channel, &request) {
            // The vector table failed under the query (a damaged data
            // file): a hybrid search goes on lexically, as when it does
            // not open.
            Err(kebab_search::search::SearchError::Vector(e)) if mode == Mode::Hybrid => {
                notes.push(format!(
                    "{}; searching lexically",
                    crate::app::VectorsOff::from(e).reason
                ));
                let lexical = Request {
                    mode: Mode::Lexical,
                    ..request
                };
                kebab_search::search::search(&app.store, None, &lexical)?
            }
            searched => searched?,
        };
        response.notes = notes;
        response.roots = roots;
        tracing::info!(
            mode = response.mode,
            hits = response.hits.len(),
            ms = started.elapsed().as_secs_f64() * 1000.0,
            "search"
        );
        Ok(response)
    }

    /// `bulk_search`: up to [`BULK_CAP`] queries in one call, in order;
    /// each item is its query's response or its `error.v1`. An input that
    /// did not parse is passed as `Err` and becomes that item's error.
    pub fn bulk_search(
        &self,
        inputs: Vec<Result<SearchInput, ApiError>>,
    ) -> Result<BulkSearchResponse, ApiError> {
        if inputs.len() > BULK_CAP {
            return Err(ApiError::invalid(
                "queries",
                format!("{} queries; at most {BULK_CAP} per call", inputs.len()),
            ));
        }
        let mut items = Vec::with_capacity(inputs.len());
        for (index, input) in inputs.into_iter().enumerate() {
            let query = input.as_ref().ok().map(|i| i.query.clone());
            let mut item = BulkSearchItem::new(index, query);
            match input.and_then(|i| self.search(&i)) {
                Ok(response) => item.response = Some(response),
                Err(e) => item.error = Some(e.report()),
            }
            items.push(item);
        }
        let failed = items.iter().filter(|i| i.error.is_some()).count();
        Ok(BulkSearchResponse {
            schema_version: "bulk_search_response.v1",
            succeeded: items.len() - failed,
            failed,
            items,
        })
    }
}
