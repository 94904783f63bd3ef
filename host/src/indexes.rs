//! The optional indexes beside FTS5 — Korean morphology and vectors — as
//! loaded for one command, with why any of them is off.

use crate::app::App;
use crate::embed::{Embedder, Workload};
use crate::korean::KoreanAnalyzer;
use crate::search::VectorChannel;
use crate::vector::VectorStore;

/// Loaded analyzers and stores; `Default` is "none of them".
#[derive(Default)]
pub struct Indexes {
    pub korean: Option<KoreanAnalyzer>,
    pub vectors: Option<(Embedder, VectorStore)>,
    /// Why an index is off, each with a hint.
    pub warnings: Vec<String>,
}

impl Indexes {
    /// Load what is configured and installed. `vectors` says whether to
    /// load the embedding model at all. Problems become warnings, so
    /// lexical work always proceeds.
    pub fn open(app: &App, vectors: bool) -> Indexes {
        let dir = app.paths.vector_dir();
        Indexes::open_with_vectors_in(app, vectors.then_some(dir.as_path()))
    }

    /// As [`Indexes::open`], with the vector table kept in `vector_dir`
    /// (a separate index, such as `kebab eval beir`'s) when given.
    pub fn open_with_vectors_in(app: &App, vector_dir: Option<&std::path::Path>) -> Indexes {
        let mut out = Indexes::default();
        match load_korean(app) {
            Ok(k) => out.korean = k,
            Err(why) => out.warnings.push(why),
        }
        if let Some(vector_dir) = vector_dir {
            match load_vectors(app, vector_dir, Workload::Many) {
                Ok(v) => out.vectors = v,
                Err(why) => out.warnings.push(why),
            }
        }
        out
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

/// The configured embedding model (prepared for `workload`) and its table
/// in `vector_dir` (`Ok(None)` when no model is configured); why vector
/// search is off, with a hint, when either does not load.
pub fn load_vectors(
    app: &App,
    vector_dir: &std::path::Path,
    workload: Workload,
) -> Result<Option<(Embedder, VectorStore)>, String> {
    let embedder = match app.embedder(workload) {
        Ok(Some(embedder)) => embedder,
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("vector index off: {e} (hint: {})", e.hint())),
    };
    let spec = embedder.spec();
    let mut table = VectorStore::open(vector_dir, &spec.id(), spec.dimensions)
        .map_err(|e| format!("vector index off: {e}"))?;
    table.set_ann(app.config.search.ann());
    tracing::info!(model = %spec.id(), "embedding model loaded");
    Ok(Some((embedder, table)))
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
