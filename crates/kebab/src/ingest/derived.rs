//! Indexes derived from the chunks, brought up to date after every run:
//! Korean, Japanese and Chinese words, the lexical index and vectors in
//! LanceDB.
//!
//! SQLite is the source of truth. Vectors are reconciled, not patched: rows
//! whose chunk has no `embedding_records` entry any more (the chunk was
//! deleted or replaced) are removed, records whose row the table does not
//! hold (its directory was deleted or rebuilt) are forgotten, then every
//! chunk without a record is embedded — from the cache when its exact text
//! was embedded before — and recorded. A crash at any point, or a lost
//! vector table, is repaired by the next run.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde::Serialize;

use super::Progress;
use kebab_search::cjk::CjkAnalyzer;
use kebab_search::embed::Embedder;
use kebab_store::vector::{VectorError, VectorRow, VectorStore};
use kebab_store::{MissingVector, ModelKey, Store, StoreError, text_hash};

/// Chunks handled per round trip to the model and the stores.
const BATCH: usize = 256;

/// Chunks read at once to be embedded, shortest first, in [`BATCH`]es: a
/// wider window pads the model's batches less (with 1 024 instead of 256,
/// ~5 % more chunks per second on SciFact abstracts; BENCHMARKS.md
/// "Embedding throughput against raw ONNX Runtime").
pub(super) const EMBED_WINDOW: usize = 4 * BATCH;

/// Failures while updating derived indexes.
#[derive(Debug, thiserror::Error)]
pub enum DerivedError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Vector(#[from] VectorError),
    #[error(transparent)]
    Embed(#[from] kebab_search::embed::EmbedError),
}

/// What the derived-index pass did (`vectors` in `ingest_report.v1`).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct VectorReport {
    pub model: String,
    pub table: String,
    /// Chunks embedded by the model in this run.
    pub embedded: usize,
    /// Chunks whose vector came from the cache.
    pub from_cache: usize,
    /// Stale rows removed from the vector table.
    pub removed: usize,
    /// Rows in the table afterwards.
    pub total: usize,
    /// Whether the table has an ANN index that now covers the new rows.
    pub ann_index: bool,
    /// Data fragments of the table afterwards (compacted when many small
    /// ones or many deleted rows had gathered).
    pub fragments: usize,
    /// Parts of the ANN index afterwards (0 without one; at most
    /// `vector::MAX_INDEX_PARTS`): new rows become a part, merged with
    /// the newest parts of a similar size.
    pub index_parts: usize,
}

/// Time spent per stage, in milliseconds (fractional: one document's
/// write takes well under a millisecond).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Timings {
    /// Plugin parse + chunk (wall clock, workers in parallel).
    pub parse_ms: f64,
    /// SQLite writes of documents, blocks and chunks.
    pub store_ms: f64,
    /// Korean, Japanese and Chinese analysis (the name is from when only
    /// Korean was analysed).
    pub korean_ms: f64,
    /// Bringing the lexical index up to date (or rebuilding it).
    pub lexical_ms: f64,
    /// Running the embedding model.
    pub embed_ms: f64,
    /// Vector table and cache writes.
    pub vector_store_ms: f64,
}

/// What [`backfill_cjk`] did.
pub struct Backfill {
    /// Chunks analysed.
    pub done: usize,
    /// Why it stopped early: a dictionary that does not load (the chunks
    /// left wait for the next run rather than being stored without their
    /// words).
    pub stopped: Option<String>,
}

/// Analyse chunks stored without their Korean, Japanese and Chinese words,
/// about `at_most` of them (whole batches; fewer when no more are
/// missing).
pub fn backfill_cjk(
    store: &mut Store,
    cjk: &CjkAnalyzer,
    timings: &mut Timings,
    at_most: usize,
) -> Result<Backfill, StoreError> {
    let started = Instant::now();
    let mut out = Backfill {
        done: 0,
        stopped: None,
    };
    'batches: while out.done < at_most {
        let pending = store.chunks_missing_analysis(BATCH)?;
        if pending.is_empty() {
            break;
        }
        let mut words = Vec::with_capacity(pending.len());
        for chunk in pending {
            match cjk.morphemes(&chunk.text, chunk.lang.as_deref()) {
                Ok(w) => words.push((chunk.chunk_id, w.unwrap_or_default())),
                Err(e) if e.is_dictionary() => {
                    out.stopped = Some(format!("{e} (hint: `kebab doctor`)"));
                    store.set_analysed_words(&words)?;
                    out.done += words.len();
                    break 'batches;
                }
                // One text the analyser fails on is indexed without its
                // words rather than retried forever.
                Err(_) => words.push((chunk.chunk_id, String::new())),
            }
        }
        out.done += words.len();
        store.set_analysed_words(&words)?;
    }
    timings.korean_ms += elapsed_ms(started);
    Ok(out)
}

impl VectorReport {
    /// An empty report for `embedder`'s vectors in `vectors`.
    pub(super) fn new(embedder: &Embedder, vectors: &VectorStore) -> VectorReport {
        VectorReport {
            model: embedder.spec().id(),
            table: vectors.name().to_string(),
            ..Default::default()
        }
    }

    /// Chunks that got a vector so far (embedded or from the cache).
    pub(super) fn done(&self) -> usize {
        self.embedded + self.from_cache
    }
}

/// Bring the vector table in line with the chunks. `ahead` is what the
/// document pass already embedded beside parsing (see `embed_ahead`).
pub fn sync_vectors(
    store: &mut Store,
    embedder: &Embedder,
    vectors: &VectorStore,
    ann_min_rows: usize,
    ahead: Option<VectorReport>,
    timings: &mut Timings,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<VectorReport, DerivedError> {
    let spec = embedder.spec().clone();
    let key: ModelKey<'_> = (&spec.name, &spec.version, spec.dimensions);
    let mut report = ahead.unwrap_or_else(|| VectorReport::new(embedder, vectors));
    let ahead_done = report.done();

    // 1. Remove rows SQLite does not vouch for (and duplicates); forget
    // records of rows the table lost.
    let t = Instant::now();
    report.removed = reconcile_rows(store, vectors, key)?;
    timings.vector_store_ms += elapsed_ms(t);

    // 2. Embed what has no vector.
    let mut total_missing: Option<usize> = None;
    loop {
        let window = store.chunks_missing_vectors(key, EMBED_WINDOW)?;
        if window.is_empty() {
            break;
        }
        let total = *total_missing.get_or_insert_with(|| {
            // One count query for the progress bar's length.
            ahead_done
                + store
                    .count_chunks_missing_vectors(key)
                    .unwrap_or(window.len())
        });
        for missing in into_batches(window) {
            let batch_started = Instant::now();
            on_progress(&Progress::EmbedBatchStarted {
                n_chunks: missing.len(),
            });
            let ids = embed_batch(store, embedder, vectors, key, missing, timings, &mut report)?;
            on_progress(&Progress::EmbedBatchFinished {
                n_chunks: ids.len(),
                ms: batch_started.elapsed().as_millis() as u64,
                done: report.done(),
                total,
            });
        }
    }

    let t = Instant::now();
    report.total = vectors.count()?;
    let (_, layout) = vectors.compact()?;
    report.fragments = layout.fragments;
    if report.done() > 0 {
        report.ann_index = vectors.ensure_index(ann_min_rows, report.done())?;
    }
    report.index_parts = vectors.layout()?.index_parts;
    vectors.prune(vectors.prune_grace())?;
    timings.vector_store_ms += elapsed_ms(t);
    Ok(report)
}

/// A window of chunks cut into model batches of at most [`BATCH`],
/// shortest texts first.
fn into_batches(mut window: Vec<MissingVector>) -> Vec<Vec<MissingVector>> {
    window.sort_by_key(|m| m.text.len());
    let mut batches = Vec::with_capacity(window.len().div_ceil(BATCH));
    while !window.is_empty() {
        let rest = window.split_off(BATCH.min(window.len()));
        batches.push(std::mem::replace(&mut window, rest));
    }
    batches
}

/// Delete vector rows SQLite does not record for this model, and every
/// copy of a duplicated row; forget the records of duplicated rows and of
/// rows the table does not hold, so those chunks are embedded again (from
/// the cache). How many rows were stale.
fn reconcile_rows(
    store: &mut Store,
    vectors: &VectorStore,
    key: ModelKey<'_>,
) -> Result<usize, DerivedError> {
    let recorded = store.embedded_chunk_ids(key)?;
    if store.is_shared() {
        // The rows other machines recorded before that read: in view.
        vectors.refresh()?;
    }
    let mut seen = HashSet::new();
    let mut stale = Vec::new();
    let mut duplicated = Vec::new();
    for id in vectors.chunk_ids()? {
        if !recorded.contains(&id) {
            stale.push(id);
        } else if !seen.insert(id.clone()) {
            duplicated.push(id);
        }
    }
    stale.sort();
    stale.dedup();
    if store.is_shared() {
        // Another machine writes a vector before recording it: a row not
        // recorded when this pass read the records may be one it is
        // recording now. Only a row whose chunk is gone is stale here.
        let live = store.admitted(&stale, &Default::default())?;
        stale.retain(|id| !live.contains(id));
    }
    vectors.delete_chunks(&stale)?;
    if !duplicated.is_empty() {
        vectors.delete_chunks(&duplicated)?;
    }
    let lost: Vec<String> = recorded
        .into_iter()
        .filter(|id| !seen.contains(id))
        .collect();
    if !lost.is_empty() {
        tracing::warn!(
            rows = lost.len(),
            table = vectors.name(),
            "recorded vectors missing from the table"
        );
    }
    let forget: Vec<String> = lost.into_iter().chain(duplicated).collect();
    if !forget.is_empty() {
        store.forget_embeddings(key, &forget)?;
    }
    Ok(stale.len())
}

/// One batch of chunks on its way to vectors: what the cache already held,
/// and the texts the model still has to embed (each distinct text once).
pub(super) struct EmbedPlan {
    missing: Vec<MissingVector>,
    hashes: Vec<String>,
    known: HashMap<String, Vec<f32>>,
    /// Distinct uncached texts, and their hashes in the same order.
    to_embed: Vec<String>,
    to_embed_hashes: Vec<String>,
}

impl EmbedPlan {
    /// Look the batch's texts up in the vector cache. Chunks whose text
    /// hash is in `leave` (texts being embedded elsewhere right now) are
    /// left out of the batch: they stay without a vector for a later pass,
    /// which finds theirs in the cache.
    pub(super) fn new(
        store: &Store,
        embedder: &Embedder,
        key: ModelKey<'_>,
        missing: Vec<MissingVector>,
        leave: &HashSet<String>,
    ) -> Result<EmbedPlan, DerivedError> {
        let (mut kept, mut texts, mut hashes) = (Vec::new(), Vec::new(), Vec::new());
        for m in missing {
            let text = embedder.passage_text(&m.text);
            let hash = text_hash(&text);
            if !leave.contains(&hash) {
                kept.push(m);
                texts.push(text);
                hashes.push(hash);
            }
        }
        let missing = kept;
        let known = store.cached_vectors(key, &hashes)?;
        let mut to_embed = Vec::new();
        let mut to_embed_hashes = Vec::new();
        let mut queued = HashSet::new();
        for (text, h) in texts.into_iter().zip(&hashes) {
            if !known.contains_key(h) && queued.insert(h.clone()) {
                to_embed.push(text);
                to_embed_hashes.push(h.clone());
            }
        }
        Ok(EmbedPlan {
            missing,
            hashes,
            known,
            to_embed,
            to_embed_hashes,
        })
    }

    /// Chunks in the batch.
    pub(super) fn len(&self) -> usize {
        self.missing.len()
    }

    /// Hashes of the texts the model will embed for this batch.
    pub(super) fn hashes_to_embed(&self) -> &[String] {
        &self.to_embed_hashes
    }

    /// The model's vectors for the uncached texts (the only step that
    /// needs no store, so it may run on a thread of its own).
    pub(super) fn compute(&self, embedder: &Embedder) -> Result<Vec<Vec<f32>>, DerivedError> {
        Ok(embedder.embed_passages(&self.to_embed)?)
    }

    /// Store the batch: `fresh` (the vectors [`EmbedPlan::compute`] made)
    /// in the cache, every chunk's row in the table, and the records in
    /// SQLite. The batch's chunk ids.
    pub(super) fn commit(
        self,
        store: &mut Store,
        vectors: &VectorStore,
        key: ModelKey<'_>,
        fresh: Vec<Vec<f32>>,
        report: &mut VectorReport,
    ) -> Result<Vec<String>, DerivedError> {
        let EmbedPlan {
            missing,
            hashes,
            mut known,
            to_embed_hashes,
            ..
        } = self;
        let fresh: Vec<(String, Vec<f32>)> = to_embed_hashes.into_iter().zip(fresh).collect();
        store.cache_vectors(key, &fresh)?;
        report.embedded += fresh.len();
        report.from_cache += missing.len() - fresh.len();
        known.extend(fresh);
        let rows: Vec<VectorRow> = missing
            .iter()
            .zip(&hashes)
            .map(|(m, h)| VectorRow {
                chunk_id: m.chunk_id.clone(),
                doc_id: m.doc_id.clone(),
                vector: known[h].clone(),
            })
            .collect();
        vectors.add(&rows)?;
        let ids: Vec<String> = missing.into_iter().map(|m| m.chunk_id).collect();
        store.record_embeddings(key, vectors.name(), &ids)?;
        Ok(ids)
    }
}

/// Vectors for one batch of chunks, planned, computed and committed on
/// this thread. The batch's chunk ids.
fn embed_batch(
    store: &mut Store,
    embedder: &Embedder,
    vectors: &VectorStore,
    key: ModelKey<'_>,
    missing: Vec<MissingVector>,
    timings: &mut Timings,
    report: &mut VectorReport,
) -> Result<Vec<String>, DerivedError> {
    let t = Instant::now();
    let plan = EmbedPlan::new(store, embedder, key, missing, &HashSet::new())?;
    timings.vector_store_ms += elapsed_ms(t);
    let t = Instant::now();
    let fresh = plan.compute(embedder)?;
    timings.embed_ms += elapsed_ms(t);
    let t = Instant::now();
    let ids = plan.commit(store, vectors, key, fresh, report)?;
    timings.vector_store_ms += elapsed_ms(t);
    Ok(ids)
}

/// Milliseconds since `t`, fractional.
pub(super) fn elapsed_ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_becomes_batches_of_at_most_batch_chunks_shortest_first() {
        let window: Vec<MissingVector> = (0..600)
            .map(|i| MissingVector {
                chunk_id: format!("c{i}"),
                doc_id: "d".into(),
                text: "x".repeat((i * 7919) % 97 + 1),
            })
            .collect();
        let batches = into_batches(window);
        let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert_eq!(sizes, [BATCH, BATCH, 600 - 2 * BATCH]);
        let lengths: Vec<usize> = batches.iter().flatten().map(|m| m.text.len()).collect();
        assert!(lengths.windows(2).all(|w| w[0] <= w[1]), "{lengths:?}");
        let ids: HashSet<&str> = batches
            .iter()
            .flatten()
            .map(|m| m.chunk_id.as_str())
            .collect();
        assert_eq!(ids.len(), 600);
    }
}
