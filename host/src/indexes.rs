//! The optional indexes beside FTS5 — Korean morphology and vectors — as
//! loaded for one command, with why any of them is off.

use crate::app::App;
use crate::embed::Embedder;
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
        match app.korean() {
            Ok(k) => out.korean = k,
            Err(e) => out.warnings.push(format!(
                "Korean analysis off: {e} (hint: `kebab models import-ko-dic <dir>`)"
            )),
        }
        let Some(vector_dir) = vector_dir else {
            return out;
        };
        match app.embedder() {
            Ok(Some(embedder)) => match VectorStore::open(
                vector_dir,
                &embedder.spec().id(),
                embedder.spec().dimensions,
            ) {
                Ok(store) => out.vectors = Some((embedder, store)),
                Err(e) => out.warnings.push(format!("vector index off: {e}")),
            },
            Ok(None) => {}
            Err(e) => out
                .warnings
                .push(format!("vector index off: {e} (hint: {})", e.hint())),
        }
        out
    }

    /// The vector channel for search, with the configured (or the model
    /// card's) similarity floor.
    pub fn vector_channel(&self, app: &App) -> Option<VectorChannel<'_>> {
        self.vectors
            .as_ref()
            .map(|(embedder, table)| VectorChannel {
                embedder,
                table,
                min_score: app.config.search.min_vector_score.unwrap_or_else(|| {
                    crate::embed::catalog::card(&embedder.spec().name).map_or(0.0, |c| c.min_score)
                }),
            })
    }
}
