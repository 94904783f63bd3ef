//! The use cases every front end calls: one function per operation on a
//! [`Session`], each returning a typed `*.v1` result or an [`ApiError`]
//! that knows its `error.v1` code and hint. The CLI (`src/cli/`) and the
//! MCP server (`src/mcp.rs`) parse their input, call one of these and
//! render what comes back; no domain rule lives in a front end.
//!
//! A session opens only what a call needs, on first use, and keeps it for
//! the next call: the SQLite index for everything, the Korean analyser only
//! for a query with Hangul in it, the embedding model and vector table only
//! for a vector or hybrid search. A long-lived session (the MCP server)
//! sets [`Session::keep_fresh`] so every search first looks for vectors a
//! concurrent `kebab ingest` added.
//!
//! A session is used by one thread at a time (its SQLite connection is
//! its own), but what is costly to load — the Korean analyser, the
//! embedding model with its vector table, the reranker — is held in a
//! part every [`Session::sibling`] shares: a server runs several reader
//! threads, each with a sibling session, over one loaded model.

pub mod ask;
pub mod doctor;
pub mod error;
pub mod eval;
pub mod eval_ann;
pub mod ingest;
pub mod init;
pub mod models;
pub mod plugins;
pub mod roots;
pub mod schema;
pub mod search;
pub mod sessions;

use std::cell::{Cell, OnceCell, RefCell};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

pub use error::ApiError;
pub use kebab_core::scope::Scope;

use crate::app::VectorsOff;
use crate::app::{App, Paths};
use crate::config::Config;
use crate::fetch::{FetchError, FetchResult};
use kebab_core::wire::DocSummary;
use kebab_search::cjk::CjkAnalyzer;
use kebab_search::embed::{Embedder, ModelSpec, Workload};
use kebab_search::nli::NliModel;
use kebab_search::rerank::Reranker;
use kebab_search::search::VectorChannel;
use kebab_store::vector::VectorStore;

/// Why chunks can lack a vector for the loaded model, as search notes and
/// `kebab doctor` say it.
const MISSING_VECTORS_CAUSE: &str =
    "the model or its `compute` changed since they were indexed, or an ingest stopped early";

/// Why recorded vectors can be missing from the vector table, as search
/// notes and `kebab doctor` say it.
const LOST_VECTORS_CAUSE: &str = "its files were deleted, replaced or rebuilt";

/// Chunks vector search cannot find in `table` (the model `spec`'s):
/// `(unrecorded, lost)` — chunks without an embedding record, and
/// recorded vectors the table does not hold.
fn vectors_missing(
    store: &kebab_store::Store,
    spec: &kebab_search::embed::ModelSpec,
    table: &VectorStore,
) -> Result<MissingCounts, String> {
    let key = (spec.name.as_str(), spec.version.as_str(), spec.dimensions);
    let unrecorded = store
        .count_chunks_missing_vectors(key)
        .map_err(|e| e.to_string())?;
    let records = store
        .count_embedding_records(key)
        .map_err(|e| e.to_string())?;
    let rows = table.count().map_err(|e| e.to_string())?;
    Ok((unrecorded, records.saturating_sub(rows)))
}

/// What [`vectors_missing`] counts: `(unrecorded, lost)`.
type MissingCounts = (usize, usize);

/// One user's view of one index, opened lazily (see the module doc).
pub struct Session {
    config: Config,
    paths: Paths,
    /// This session's own connection to the index.
    app: OnceCell<App>,
    /// What this session shares with its siblings.
    loaded: Arc<Loaded>,
    keep_fresh: bool,
    /// The index's `data_version` (as this session's connection counts
    /// it) when the vector table last moved to its latest version (with
    /// `keep_fresh`).
    vectors_seen: Cell<Option<i64>>,
    /// Chunks without a vector for the loaded model ([`vectors_missing`]),
    /// with the index's `data_version` when they were counted.
    missing_vectors: Cell<Option<(Option<i64>, MissingCounts)>>,
    /// The vector table this session searches (shared with its siblings
    /// through [`Loaded::table`]).
    table: OnceCell<Arc<VectorStore>>,
    /// What is wrong with the full-text index (`None`: nothing), with the
    /// index's `data_version` when it was checked.
    full_text: RefCell<Option<(Option<i64>, Option<String>)>>,
    /// How the embedding model is prepared (see [`Session::for_one_query`]).
    workload: Workload,
}

/// What sibling sessions share across threads, each loaded once by
/// whichever session needs it first (the others wait for it).
#[derive(Default)]
struct Loaded {
    /// Korean, Japanese and Chinese analysis (each dictionary loads when
    /// its script is first met), with why a configured one is not used.
    cjk: OnceLock<(CjkAnalyzer, Vec<String>)>,
    /// The embedding model (`None`: no model configured), or why it does
    /// not load.
    embedder: OnceLock<Result<Option<Embedder>, VectorsOff>>,
    /// The model's vector table ([`Loaded::table`]).
    table: Mutex<TableState>,
    /// The cross-encoder, once loaded (`None`: reranking is off).
    reranker: OnceLock<Option<Reranker>>,
    /// The verification model (`None`: verification is off), or why it
    /// does not load.
    verifier: OnceLock<Option<Result<NliModel, String>>>,
}

/// Where the vector table stands for the sessions sharing it.
#[derive(Default)]
enum TableState {
    #[default]
    Unopened,
    Open(Arc<VectorStore>),
    /// Why it did not open, and when it was last tried.
    Failed(VectorsOff, Instant),
}

/// How long a table that did not open (a store that was down, a table an
/// ingest was rebuilding) is taken as off before it is tried again: a
/// long-running server picks it up without a restart.
const TABLE_RETRY: Duration = Duration::from_secs(10);

impl Loaded {
    /// The model `spec`'s vector table: opened once and shared; a failure
    /// is answered as such for [`TABLE_RETRY`], then tried again.
    fn table(&self, app: &App, spec: &ModelSpec) -> Result<Arc<VectorStore>, VectorsOff> {
        let mut state = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        match &*state {
            TableState::Open(table) => return Ok(table.clone()),
            TableState::Failed(off, at) if at.elapsed() < TABLE_RETRY => return Err(off.clone()),
            _ => {}
        }
        let opened = app
            .own_vector_table(spec)
            .map(Arc::new)
            .map_err(VectorsOff::from);
        *state = match &opened {
            Ok(table) => TableState::Open(table.clone()),
            Err(off) => TableState::Failed(off.clone(), Instant::now()),
        };
        opened
    }
}

// A sibling moves to another thread, and what siblings share is used by
// several at once.
const _: fn() = || {
    fn moves<T: Send>() {}
    fn shared<T: Send + Sync>() {}
    moves::<Session>();
    shared::<Loaded>();
};

/// Which part of a document `fetch` returns, with its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchTarget {
    /// A chunk with `context` neighbours either side.
    Chunk { chunk_id: String, context: u32 },
    /// A whole document, cut to `max_tokens`.
    Doc {
        doc_id: String,
        max_tokens: Option<usize>,
    },
    /// Lines `line_start..=line_end` of a document.
    Span {
        doc_id: String,
        line_start: u32,
        line_end: u32,
        max_tokens: Option<usize>,
    },
}

/// Which part `fetch` returns, as a front end receives it (the MCP
/// `fetch` tool's input): a `kind` and the fields that kind needs.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchInput {
    /// `chunk`, `doc` or `span`.
    pub kind: FetchKind,
    /// The chunk (kind `chunk`), from a search hit's `chunk_id`.
    #[serde(default)]
    pub chunk_id: Option<String>,
    /// The document (kinds `doc` and `span`), from a hit's `doc_id`.
    #[serde(default)]
    pub doc_id: Option<String>,
    /// First line, from 1 (kind `span`).
    #[serde(default)]
    pub line_start: Option<u32>,
    /// Last line, inclusive (kind `span`).
    #[serde(default)]
    pub line_end: Option<u32>,
    /// Neighbouring chunks on each side (kind `chunk`) [default: 0].
    #[serde(default)]
    pub context: Option<u32>,
    /// Cut the text to about this many tokens (kinds `doc` and `span`).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Only from documents of these roots [default: every root].
    #[serde(default)]
    pub roots: Vec<String>,
}

/// What [`FetchInput::kind`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FetchKind {
    Chunk,
    Doc,
    Span,
}

impl FetchInput {
    /// The target, or `invalid_input` naming the field its kind lacks.
    pub fn target(&self) -> Result<FetchTarget, ApiError> {
        fn required<T: Clone>(
            v: &Option<T>,
            field: &'static str,
            kind: &str,
        ) -> Result<T, ApiError> {
            v.clone()
                .ok_or_else(|| ApiError::invalid(field, format!("required when kind is {kind}")))
        }
        Ok(match self.kind {
            FetchKind::Chunk => FetchTarget::Chunk {
                chunk_id: required(&self.chunk_id, "chunk_id", "chunk")?,
                context: self.context.unwrap_or(0),
            },
            FetchKind::Doc => FetchTarget::Doc {
                doc_id: required(&self.doc_id, "doc_id", "doc")?,
                max_tokens: self.max_tokens,
            },
            FetchKind::Span => FetchTarget::Span {
                doc_id: required(&self.doc_id, "doc_id", "span")?,
                line_start: required(&self.line_start, "line_start", "span")?,
                line_end: required(&self.line_end, "line_end", "span")?,
                max_tokens: self.max_tokens,
            },
        })
    }
}

impl Session {
    /// A session over the index `paths` points at; nothing is opened yet.
    pub fn new(config: Config, paths: Paths) -> Session {
        Session {
            config,
            paths,
            app: OnceCell::new(),
            loaded: Arc::default(),
            keep_fresh: false,
            vectors_seen: Cell::new(None),
            missing_vectors: Cell::new(None),
            table: OnceCell::new(),
            full_text: RefCell::new(None),
            workload: Workload::Queries,
        }
    }

    /// Another session over the same index, for another thread: it shares
    /// the analyser, model, vector table and reranker this one loaded (or
    /// will load), and opens a SQLite connection of its own.
    pub fn sibling(&self) -> Session {
        Session {
            loaded: self.loaded.clone(),
            keep_fresh: self.keep_fresh,
            workload: self.workload,
            ..Session::new(self.config.clone(), self.paths.clone())
        }
    }

    /// This session answers one query and ends (`kebab search`, `kebab
    /// ask`): the embedding model is loaded without graph optimisation,
    /// which would cost more at load than it saves on one query.
    pub fn for_one_query(mut self) -> Session {
        self.workload = Workload::One;
        self
    }

    /// Make every search first pick up vectors written by other processes
    /// since the table was opened (for sessions that outlive an ingest).
    pub fn keep_fresh(mut self, on: bool) -> Session {
        self.keep_fresh = on;
        self
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Where this session reads.
    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    /// The opened index (created on first use, as every writer does).
    pub fn app(&self) -> Result<&App, ApiError> {
        if let Some(app) = self.app.get() {
            return Ok(app);
        }
        let app = App::open(self.config.clone(), self.paths.clone())?;
        Ok(self.app.get_or_init(|| app))
    }

    /// The index for a reading call: [`ApiError::NotIndexed`] when there is
    /// no index file or it holds no chunk, so "no hits" always means the
    /// query found nothing in a real index.
    fn indexed_app(&self) -> Result<&App, ApiError> {
        let not_indexed = || ApiError::NotIndexed {
            data_dir: self.paths.data_dir.clone(),
            refusal: None,
        };
        if self.app.get().is_none()
            && self.config.storage.database.is_none()
            && !self.paths.sqlite().is_file()
        {
            return Err(not_indexed());
        }
        let app = self.app()?;
        if !app.store.has_chunks()? {
            return Err(not_indexed());
        }
        Ok(app)
    }

    /// Korean, Japanese and Chinese analysis, with why a configured
    /// dictionary is not used.
    fn cjk(&self) -> Result<&(CjkAnalyzer, Vec<String>), ApiError> {
        let app = self.app()?;
        Ok(self.loaded.cjk.get_or_init(|| app.cjk()))
    }

    /// The vector channel when a model is configured and loads; `Ok(None)`
    /// when none is configured; the reason (with a hint) when it fails.
    fn vector_channel(&self) -> Result<Option<VectorChannel<'_>>, VectorsOff> {
        let app = self.app().map_err(|e| VectorsOff {
            reason: e.to_string(),
            damaged: false,
        })?;
        let embedder = self
            .loaded
            .embedder
            .get_or_init(|| app.embedder_or_off(self.workload))
            .as_ref()
            .map_err(Clone::clone)?;
        let Some(embedder) = embedder else {
            return Ok(None);
        };
        let table = match self.table.get() {
            Some(table) => table,
            None => {
                let table = self.loaded.table(app, embedder.spec())?;
                self.table.get_or_init(|| table)
            }
        };
        if self.keep_fresh {
            // Every ingest records its vectors in SQLite after writing
            // them, so a commit seen there is when LanceDB may have moved
            // on too.
            let version = app.store.data_version().ok();
            if version.is_none() || version != self.vectors_seen.get() {
                table.refresh()?;
                self.vectors_seen.set(version);
            }
        }
        Ok(Some(app.channel(embedder, table)))
    }

    /// The vector channel for a call that asked for `mode` (`None`: the
    /// default): none for lexical; for an explicit vector or hybrid mode a
    /// model that does not load is an error; for the default it is a note
    /// and the call goes on lexically, as a hybrid call does when the
    /// vector table is damaged (`mode` then becomes lexical).
    fn channel_for(
        &self,
        mode: &mut Option<kebab_search::search::Mode>,
        notes: &mut Vec<String>,
    ) -> Result<Option<VectorChannel<'_>>, ApiError> {
        use kebab_search::search::{Mode, SearchError};
        if *mode == Some(Mode::Lexical) {
            // A lexical call never loads the model (~0.5 s, ~300 MB).
            return Ok(None);
        }
        match (*mode, self.vector_channel()) {
            (Some(m), Ok(None)) => Err(SearchError::NoVectors {
                mode: m.as_str(),
                reason: "[models.embedding] model is empty".into(),
            }
            .into()),
            (_, Ok(channel)) => {
                if let Some(note) = channel.and_then(|c| self.missing_vectors_note(c)) {
                    notes.push(note);
                }
                Ok(channel)
            }
            (None, Err(off)) => {
                notes.push(format!("{}; searching lexically", off.reason));
                Ok(None)
            }
            (Some(Mode::Hybrid), Err(off)) if off.damaged => {
                notes.push(format!("{}; searching lexically", off.reason));
                *mode = Some(Mode::Lexical);
                Ok(None)
            }
            (Some(m), Err(off)) => Err(SearchError::NoVectors {
                mode: m.as_str(),
                reason: off.reason,
            }
            .into()),
        }
    }

    /// The full-text index for a call in `mode` (`None`: the default, which
    /// is hybrid when `vectors` is set): when it is damaged, a call that
    /// needs it alone fails with [`SearchError::FullTextDamaged`], and a
    /// hybrid call goes on by vectors only with a note (`mode` then
    /// becomes vector), as it goes on lexically when the vector table is
    /// damaged. Checked once per index version.
    ///
    /// [`SearchError::FullTextDamaged`]: kebab_search::search::SearchError::FullTextDamaged
    fn full_text_for(
        &self,
        mode: &mut Option<kebab_search::search::Mode>,
        vectors: bool,
        notes: &mut Vec<String>,
    ) -> Result<(), ApiError> {
        use kebab_search::search::{Mode, SearchError};
        let effective = mode.unwrap_or(match vectors {
            true => Mode::Hybrid,
            false => Mode::Lexical,
        });
        if effective == Mode::Vector {
            return Ok(());
        }
        let Some(damage) = self.full_text_damage()? else {
            return Ok(());
        };
        let off = SearchError::FullTextDamaged(damage);
        if effective == Mode::Hybrid && vectors {
            notes.push(format!("{off}; searching by vectors only"));
            *mode = Some(Mode::Vector);
            return Ok(());
        }
        Err(off.into())
    }

    /// [`crate::store::Store::full_text_damage`], asked again only when
    /// the index changed since the last call.
    fn full_text_damage(&self) -> Result<Option<String>, ApiError> {
        let store = &self.app()?.store;
        let version = store.data_version().ok();
        if let Some((seen, damage)) = &*self.full_text.borrow()
            && seen.is_some()
            && *seen == version
        {
            return Ok(damage.clone());
        }
        let damage = store.full_text_damage()?;
        if let Some(what) = &damage {
            tracing::warn!(damage = %what, "the full-text index is damaged");
        }
        *self.full_text.borrow_mut() = Some((version, damage.clone()));
        Ok(damage)
    }

    /// A note when chunks have no vector for `channel`'s model (counted
    /// once per index version): the model, its version or its `compute`
    /// changed since they were indexed, an ingest stopped before
    /// embedding them, or the vector table lost their rows; vector search
    /// cannot find them until an ingest embeds or restores them.
    fn missing_vectors_note(&self, channel: VectorChannel<'_>) -> Option<String> {
        let store = &self.app().ok()?.store;
        let version = store.data_version().ok();
        let spec = channel.embedder.spec();
        let (unrecorded, lost) = match self.missing_vectors.get() {
            Some((seen, n)) if seen.is_some() && seen == version => n,
            _ => {
                let n = vectors_missing(store, spec, channel.table).ok()?;
                self.missing_vectors.set(Some((version, n)));
                if n != (0, 0) {
                    tracing::info!(model = %spec.id(), unrecorded = n.0, lost = n.1, "chunks without vectors");
                }
                n
            }
        };
        let mut notes = Vec::new();
        if unrecorded > 0 {
            notes.push(format!(
                "{unrecorded} chunks have no vector for {} ({MISSING_VECTORS_CAUSE}): vector \
                 search cannot find them until `kebab ingest` embeds them",
                spec.id()
            ));
        }
        if lost > 0 {
            notes.push(format!(
                "{lost} chunks' vectors are missing from the vector table {} \
                 ({LOST_VECTORS_CAUSE}): vector search cannot find them until `kebab ingest` \
                 adds them again",
                channel.table.name()
            ));
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// The reranker when `[search.rerank]` is enabled (loaded on first
    /// use); a model that does not load is an error, since the user asked
    /// for it.
    fn reranker(&self) -> Result<Option<&Reranker>, ApiError> {
        if let Some(loaded) = self.loaded.reranker.get() {
            return Ok(loaded.as_ref());
        }
        let config = &self.config.search.rerank;
        let loaded = if config.enabled {
            let app = self.app()?;
            Some(
                Reranker::load(config, &app.runtime_candidates())
                    .map_err(kebab_search::search::SearchError::from)?,
            )
        } else {
            None
        };
        Ok(self.loaded.reranker.get_or_init(|| loaded).as_ref())
    }

    /// The verification model when `[rag.verify]` is on: loaded once, or
    /// why it does not load (asks are then refused: fail-closed).
    fn verifier(&self) -> Option<Result<&NliModel, &str>> {
        let loaded = self.loaded.verifier.get_or_init(|| {
            let config = &self.config.rag.verify;
            config.enabled().then(|| {
                let app = self.app().map_err(|e| e.to_string())?;
                NliModel::load(config, &app.runtime_candidates())
                    .map_err(|e| format!("{e}; {}", e.hint()))
            })
        });
        loaded.as_ref().map(|r| r.as_ref().map_err(String::as_str))
    }

    /// The analyser for `text` when it holds Korean, Japanese or Chinese
    /// (each dictionary costs 50–150 ms and 50–110 MB the first time its
    /// script is met, so nothing else loads it), with why a configured
    /// dictionary is not used in `notes`.
    fn cjk_for(&self, text: &str, notes: &mut Vec<String>) -> Option<&CjkAnalyzer> {
        if !kebab_search::cjk::script::Scripts::of(text).any() {
            return None;
        }
        match self.cjk() {
            Ok((cjk, warnings)) => {
                notes.extend(warnings.iter().cloned());
                Some(cjk)
            }
            Err(e) => {
                notes.push(e.to_string());
                None
            }
        }
    }

    /// `kebab fetch`: verbatim indexed text (`fetch_result.v1`), from a
    /// document of one of the roots `roots` names (any root when empty)
    /// that `scope` may read: a chunk or document of another root is not
    /// found.
    pub fn fetch(
        &self,
        target: &FetchTarget,
        roots: &[String],
        scope: &Scope,
    ) -> Result<FetchResult, ApiError> {
        let app = self.app()?;
        let roots = &self.readable_roots(app, scope, roots)?;
        self.freshness_of(app, roots)?;
        let store = &app.store;
        let result = match target {
            FetchTarget::Chunk { chunk_id, context } => {
                crate::fetch::chunk(store, chunk_id, *context)?
            }
            FetchTarget::Doc { doc_id, max_tokens } => {
                crate::fetch::doc(store, doc_id, *max_tokens)?
            }
            FetchTarget::Span {
                doc_id,
                line_start,
                line_end,
                max_tokens,
            } => crate::fetch::span(store, doc_id, *line_start, *line_end, *max_tokens)?,
        };
        if !scope.may_read(&result.root) {
            return Err(ApiError::Fetch(match target {
                FetchTarget::Chunk { chunk_id, .. } => FetchError::ChunkNotFound(chunk_id.clone()),
                FetchTarget::Doc { doc_id, .. } | FetchTarget::Span { doc_id, .. } => {
                    FetchError::DocNotFound(doc_id.clone())
                }
            }));
        }
        if !roots.is_empty() && !roots.contains(&result.root) {
            return Err(ApiError::invalid(
                "roots",
                format!(
                    "{} is in root `{}`, not in {}",
                    result.doc_id,
                    result.root,
                    roots.join(", ")
                ),
            ));
        }
        Ok(result)
    }

    /// `kebab list docs`: every indexed document of the roots `roots`
    /// names, every root's when empty, of those `scope` may read
    /// (`doc_summary.v1`).
    pub fn list_docs(&self, roots: &[String], scope: &Scope) -> Result<Vec<DocSummary>, ApiError> {
        let app = self.app()?;
        let roots = &self.readable_roots(app, scope, roots)?;
        self.freshness_of(app, roots)?;
        Ok(app
            .store
            .list_docs((!roots.is_empty()).then_some(roots))?
            .into_iter()
            .map(DocSummary::from)
            .collect())
    }
}
