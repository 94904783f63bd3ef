//! The optional indexes beside FTS5 — Korean morphology and vectors — as
//! loaded for one command, with why any of them is off.

use crate::app::App;
use crate::embed::{Embedder, Workload};
use crate::korean::KoreanAnalyzer;
use crate::search::VectorChannel;
use crate::vector::{VectorError, VectorStore};
use std::path::{Path, PathBuf};

/// Loaded analyzers and stores; `Default` is "none of them".
#[derive(Default)]
pub struct Indexes {
    pub korean: Option<KoreanAnalyzer>,
    pub vectors: Option<(Embedder, VectorStore)>,
    /// Why an index is off, each with a hint.
    pub warnings: Vec<String>,
    /// A writer's vector directory ([`Indexes::for_ingest`]), and its
    /// embedding model with the damage when the table there did not open.
    writer: Option<(PathBuf, Option<(Embedder, VectorError)>)>,
}

impl Indexes {
    /// Load what is configured and installed. `vectors` says whether to
    /// load the embedding model at all. Problems become warnings, so
    /// lexical work always proceeds.
    pub fn open(app: &App, vectors: bool) -> Indexes {
        let dir = app.paths.vector_dir();
        Indexes::open_with_vectors_in(app, vectors.then_some(dir.as_path()))
    }

    /// As [`Indexes::open`] for an ingest, with the vector table kept in
    /// `vector_dir` (the index's own, or a separate one such as `kebab eval
    /// beir`'s). A damaged table is left for [`Indexes::repair_vectors`].
    pub fn for_ingest(app: &App, vector_dir: &Path) -> Indexes {
        let mut out = Indexes::open_with_vectors_in(app, None);
        let mut damaged = None;
        match load_embedder(app, Workload::Many) {
            Ok(None) => {}
            Ok(Some(embedder)) => match open_table(app, vector_dir, &embedder) {
                Ok(table) => out.vectors = Some((embedder, table)),
                Err(e @ VectorError::Damaged { .. }) => damaged = Some((embedder, e)),
                Err(e) => out.warnings.push(VectorsOff::from(e).reason),
            },
            Err(off) => out.warnings.push(off.reason),
        }
        out.writer = Some((vector_dir.to_path_buf(), damaged));
        out
    }

    /// As [`Indexes::open`], with the vector table kept in `vector_dir`
    /// (a separate index) when given.
    fn open_with_vectors_in(app: &App, vector_dir: Option<&Path>) -> Indexes {
        let mut out = Indexes::default();
        match load_korean(app) {
            Ok(k) => out.korean = k,
            Err(why) => out.warnings.push(why),
        }
        if let Some(vector_dir) = vector_dir {
            match load_vectors(app, vector_dir, Workload::Many) {
                Ok(v) => out.vectors = v,
                Err(off) => out.warnings.push(off.reason),
            }
        }
        out
    }

    /// For an ingest holding the writer lock: a vector table that did not
    /// open, or whose rows cannot all be read back, is deleted and created
    /// again empty — it is derived, and the ingest's vector pass adds
    /// every chunk's row again from the embedding cache (the model embeds
    /// what the cache lacks) — and a warning says so. Nothing for a reader.
    pub fn repair_vectors(&mut self) {
        let Some((dir, damaged)) = self.writer.as_mut() else {
            return;
        };
        let (embedder, damage) = match (self.vectors.take(), damaged.take()) {
            (Some((embedder, table)), _) => match table.check() {
                Ok(()) => {
                    self.vectors = Some((embedder, table));
                    return;
                }
                Err(e) => (embedder, e),
            },
            (None, Some(damaged)) => damaged,
            (None, None) => return,
        };
        let spec = embedder.spec();
        match VectorStore::rebuild(dir, &spec.id(), spec.dimensions) {
            Ok(table) => {
                self.warnings.push(format!(
                    "{damage}: rebuilt it; every chunk's vector is added again from the \
                     embedding cache (the model embeds what the cache lacks)"
                ));
                self.vectors = Some((embedder, table));
            }
            Err(e) => self.warnings.push(VectorsOff::from(e).reason),
        }
    }

    /// The vector channel for search, with the configured (or the model
    /// card's) similarity floor.
    pub fn vector_channel(&self, app: &App) -> Option<VectorChannel<'_>> {
        self.vectors
            .as_ref()
            .map(|(embedder, table)| channel(&app.config.search, embedder, table))
    }
}

/// The Korean analyser when a dictionary is installed (`Ok(None)` when
/// none is); why it is off, with a hint, when it does not load.
pub fn load_korean(app: &App) -> Result<Option<KoreanAnalyzer>, String> {
    app.korean()
        .map_err(|e| format!("Korean analysis off: {e} (hint: `kebab models import-ko-dic <dir>`)"))
}

/// Why vector search is off.
#[derive(Debug, Clone)]
pub struct VectorsOff {
    /// The sentence, with a hint.
    pub reason: String,
    /// The vector table is damaged (the model loaded): a hybrid search
    /// goes on lexically, with a note, until an ingest rebuilds it.
    pub damaged: bool,
}

impl From<VectorError> for VectorsOff {
    fn from(e: VectorError) -> VectorsOff {
        VectorsOff {
            reason: format!("vector index off: {e} (hint: {})", vector_hint(&e)),
            damaged: matches!(e, VectorError::Damaged { .. }),
        }
    }
}

/// The configured embedding model (prepared for `workload`) and its table
/// in `vector_dir` (`Ok(None)` when no model is configured); why vector
/// search is off when either does not load.
pub fn load_vectors(
    app: &App,
    vector_dir: &Path,
    workload: Workload,
) -> Result<Option<(Embedder, VectorStore)>, VectorsOff> {
    let Some(embedder) = load_embedder(app, workload)? else {
        return Ok(None);
    };
    let table = open_table(app, vector_dir, &embedder)?;
    Ok(Some((embedder, table)))
}

/// The configured embedding model, or why vector search is off.
fn load_embedder(app: &App, workload: Workload) -> Result<Option<Embedder>, VectorsOff> {
    let embedder = app.embedder(workload).map_err(|e| VectorsOff {
        reason: format!("vector index off: {e} (hint: {})", e.hint()),
        damaged: false,
    })?;
    if let Some(e) = &embedder {
        tracing::info!(model = %e.spec().id(), "embedding model loaded");
    }
    Ok(embedder)
}

/// `embedder`'s table in `vector_dir`, with the configured ANN parameters.
fn open_table(
    app: &App,
    vector_dir: &Path,
    embedder: &Embedder,
) -> Result<VectorStore, VectorError> {
    let spec = embedder.spec();
    let mut table = VectorStore::open(vector_dir, &spec.id(), spec.dimensions)?;
    table.set_ann(app.config.search.ann());
    Ok(table)
}

/// What to do about a vector table that failed.
pub fn vector_hint(e: &VectorError) -> &'static str {
    match e {
        VectorError::Damaged { .. } => {
            "`kebab ingest` rebuilds it from the index and the embedding cache; lexical search \
             works meanwhile"
        }
        _ => "re-run `kebab ingest`; `--mode lexical` works without vectors",
    }
}

/// The search channel over a loaded model and table, with the configured
/// (or the model card's) similarity floor.
pub fn channel<'a>(
    search: &crate::config::SearchConfig,
    embedder: &'a Embedder,
    table: &'a VectorStore,
) -> VectorChannel<'a> {
    VectorChannel {
        embedder,
        table,
        min_score: search.min_vector_score.unwrap_or_else(|| {
            crate::embed::catalog::card(&embedder.spec().name).map_or(0.0, |c| c.min_score)
        }),
    }
}
