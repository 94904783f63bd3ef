//! The indexes beside FTS5 — Korean, Japanese and Chinese words, vectors — as a
//! writer (an ingest, `kebab eval`) holds them for one run, with why any of
//! them is off. How each is loaded is [`App`]'s; a reader's are cached by
//! the `api::Session`.

use kebab_search::cjk::CjkAnalyzer;
use kebab_search::embed::{Embedder, Workload};
use kebab_search::search::VectorChannel;
use kebab_store::vector::{VectorError, VectorPlace, VectorStore};

use crate::app::{App, VectorsOff};

/// Loaded analyzers and stores.
pub struct Indexes {
    /// Korean, Japanese and Chinese analysis (each dictionary loads when
    /// its script is first met).
    pub cjk: CjkAnalyzer,
    pub vectors: Option<(Embedder, VectorStore)>,
    /// Why an index is off, each with a hint.
    pub warnings: Vec<String>,
    /// A writer's vector place ([`Indexes::for_ingest`]), and its
    /// embedding model with the damage when the table there did not open.
    writer: Option<(VectorPlace, Option<(Embedder, VectorError)>)>,
}

/// No dictionaries (Chinese only, its dictionary built in), no vectors.
impl Default for Indexes {
    fn default() -> Indexes {
        Indexes {
            cjk: CjkAnalyzer::lazy(None, None),
            vectors: None,
            warnings: Vec::new(),
            writer: None,
        }
    }
}

impl Indexes {
    /// Load what is configured and installed. `vectors` says whether to
    /// load the embedding model at all. Problems become warnings, so
    /// lexical work always proceeds.
    pub fn open(app: &App, vectors: bool) -> Indexes {
        if !vectors {
            return Indexes::open_with_vectors_in(app, None);
        }
        match app.vector_place() {
            Ok(place) => Indexes::open_with_vectors_in(app, Some(&place)),
            Err(e) => {
                let mut out = Indexes::open_with_vectors_in(app, None);
                out.warnings.push(VectorsOff::from(e).reason);
                out
            }
        }
    }

    /// As [`Indexes::open`] for an ingest, with the vector table kept at
    /// `place` (the index's own — see [`App::vector_writer_place`] — or a
    /// separate one such as `kebab eval beir`'s). A damaged table is left
    /// for [`Indexes::repair_vectors`].
    pub fn for_ingest(app: &App, place: VectorPlace) -> Indexes {
        let mut out = Indexes::open_with_vectors_in(app, None);
        let mut damaged = None;
        match app.embedder_or_off(Workload::Many) {
            Ok(None) => {}
            Ok(Some(embedder)) => match app.vector_table(&place, embedder.spec()) {
                Ok(table) => out.vectors = Some((embedder, table)),
                Err(e @ VectorError::Damaged { .. }) => damaged = Some((embedder, e)),
                Err(e) => out.warnings.push(VectorsOff::from(e).reason),
            },
            Err(off) => out.warnings.push(off.reason),
        }
        out.writer = Some((place, damaged));
        out
    }

    /// As [`Indexes::open`], with the vector table kept at `place` when
    /// given.
    fn open_with_vectors_in(app: &App, place: Option<&VectorPlace>) -> Indexes {
        let (cjk, warnings) = app.cjk();
        let mut out = Indexes {
            cjk,
            warnings,
            ..Indexes::default()
        };
        if let Some(place) = place {
            match app.load_vectors(place, Workload::Many) {
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
        let Some((place, damaged)) = self.writer.as_mut() else {
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
        match VectorStore::rebuild(place, &spec.id(), spec.dimensions) {
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
            .map(|(embedder, table)| app.channel(embedder, table))
    }
}
