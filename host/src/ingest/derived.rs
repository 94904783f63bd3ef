//! Indexes derived from the chunks, brought up to date after every run:
//! Korean morphemes in FTS5 and vectors in LanceDB.
//!
//! SQLite is the source of truth. Vectors are reconciled, not patched: rows
//! whose chunk has no `embedding_records` entry any more (the chunk was
//! deleted or replaced) are removed, then every chunk without a record is
//! embedded — from the cache when its exact text was embedded before — and
//! recorded. A crash at any point is repaired by the next run.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde::Serialize;

use super::Progress;
use crate::embed::Embedder;
use crate::korean::KoreanAnalyzer;
use crate::store::{ModelKey, Store, StoreError, text_hash};
use crate::vector::{VectorError, VectorRow, VectorStore};

/// Chunks handled per round trip to the model and the stores.
const BATCH: usize = 256;

/// Chunks read at once to be embedded, shortest first, in [`BATCH`]es: a
/// wider window pads the model's batches less (with 1 024 instead of 256,
/// ~5 % more chunks per second on SciFact abstracts; BENCHMARKS.md
/// "Embedding throughput against raw ONNX Runtime").
const EMBED_WINDOW: usize = 4 * BATCH;

/// Failures while updating derived indexes.
#[derive(Debug, thiserror::Error)]
pub enum DerivedError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Vector(#[from] VectorError),
    #[error(transparent)]
    Embed(#[from] crate::embed::EmbedError),
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
    /// Korean morphological analysis.
    pub korean_ms: f64,
    /// Running the embedding model.
    pub embed_ms: f64,
    /// Vector table and cache writes.
    pub vector_store_ms: f64,
}

/// Analyse chunks stored without Korean morphemes. Returns how many.
pub fn backfill_korean(
    store: &mut Store,
    korean: &KoreanAnalyzer,
    timings: &mut Timings,
) -> Result<usize, StoreError> {
    let started = Instant::now();
    let mut done = 0;
    loop {
        let pending = store.chunks_missing_korean(BATCH)?;
        if pending.is_empty() {
            break;
        }
        let tokens: Vec<(String, String)> = pending
            .into_iter()
            .map(|(id, text)| {
                // An analysis failure indexes the chunk without morphemes
                // rather than retrying it forever.
                let t = korean.morphemes(&text).ok().flatten().unwrap_or_default();
                (id, t)
            })
            .collect();
        done += tokens.len();
        store.set_korean_tokens(&tokens)?;
    }
    timings.korean_ms += started.elapsed().as_secs_f64() * 1000.0;
    Ok(done)
}

/// Bring the vector table in line with the chunks.
pub fn sync_vectors(
    store: &mut Store,
    embedder: &Embedder,
    vectors: &VectorStore,
    ann_min_rows: usize,
    timings: &mut Timings,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<VectorReport, DerivedError> {
    let spec = embedder.spec().clone();
    let key: ModelKey<'_> = (&spec.name, &spec.version, spec.dimensions);
    let mut report = VectorReport {
        model: spec.id(),
        table: vectors.name().to_string(),
        ..Default::default()
    };

    // 1. Remove rows SQLite does not vouch for (and duplicates).
    let t = Instant::now();
    report.removed = remove_unvouched(store, vectors, key)?;
    timings.vector_store_ms += t.elapsed().as_secs_f64() * 1000.0;

    // 2. Embed what has no vector.
    let mut total_missing: Option<usize> = None;
    loop {
        let mut window = store.chunks_missing_vectors(key, EMBED_WINDOW)?;
        if window.is_empty() {
            break;
        }
        let total = *total_missing.get_or_insert_with(|| {
            // One count query for the progress bar's length.
            store
                .count_chunks_missing_vectors(key)
                .unwrap_or(window.len())
        });
        window.sort_by_key(|m| m.text.len());
        while !window.is_empty() {
            let rest = window.split_off(BATCH.min(window.len()));
            let missing = std::mem::replace(&mut window, rest);
            let batch_started = Instant::now();
            on_progress(&Progress::EmbedBatchStarted {
                n_chunks: missing.len(),
            });
            let ids = embed_batch(store, embedder, vectors, key, missing, timings, &mut report)?;
            on_progress(&Progress::EmbedBatchFinished {
                n_chunks: ids.len(),
                ms: batch_started.elapsed().as_millis() as u64,
                done: report.embedded + report.from_cache,
                total,
            });
        }
    }

    let t = Instant::now();
    report.total = vectors.count()?;
    let (_, layout) = vectors.compact()?;
    report.fragments = layout.fragments;
    if report.embedded + report.from_cache > 0 {
        report.ann_index =
            vectors.ensure_index(ann_min_rows, report.embedded + report.from_cache)?;
    }
    report.index_parts = vectors.layout()?.index_parts;
    vectors.prune(crate::vector::PRUNE_AFTER)?;
    timings.vector_store_ms += t.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// Delete vector rows SQLite does not record for this model, and every
/// copy of a duplicated row (re-embedded later); how many were stale.
fn remove_unvouched(
    store: &mut Store,
    vectors: &VectorStore,
    key: ModelKey<'_>,
) -> Result<usize, DerivedError> {
    let recorded = store.embedded_chunk_ids(key)?;
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
    vectors.delete_chunks(&stale)?;
    if !duplicated.is_empty() {
        vectors.delete_chunks(&duplicated)?;
        store.forget_embeddings(key, &duplicated)?;
    }
    Ok(stale.len())
}

/// Vectors for one batch of chunks: cached ones by text hash, the rest
/// embedded (each distinct text once); stored in the table and recorded
/// in SQLite. The batch's chunk ids.
fn embed_batch(
    store: &mut Store,
    embedder: &Embedder,
    vectors: &VectorStore,
    key: ModelKey<'_>,
    missing: Vec<crate::store::MissingVector>,
    timings: &mut Timings,
    report: &mut VectorReport,
) -> Result<Vec<String>, DerivedError> {
    let t = Instant::now();
    let texts: Vec<String> = missing
        .iter()
        .map(|m| embedder.passage_text(&m.text))
        .collect();
    let hashes: Vec<String> = texts.iter().map(|t| text_hash(t)).collect();
    let mut known: HashMap<String, Vec<f32>> = store.cached_vectors(key, &hashes)?;
    timings.vector_store_ms += t.elapsed().as_secs_f64() * 1000.0;

    let t = Instant::now();
    let mut to_embed: Vec<usize> = Vec::new();
    let mut queued = HashSet::new();
    for (i, h) in hashes.iter().enumerate() {
        if !known.contains_key(h) && queued.insert(h.clone()) {
            to_embed.push(i);
        }
    }
    let fresh = embedder.embed_passages(
        &to_embed
            .iter()
            .map(|&i| texts[i].clone())
            .collect::<Vec<_>>(),
    )?;
    timings.embed_ms += t.elapsed().as_secs_f64() * 1000.0;

    let t = Instant::now();
    let fresh: Vec<(String, Vec<f32>)> = to_embed
        .iter()
        .map(|&i| hashes[i].clone())
        .zip(fresh)
        .collect();
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
    timings.vector_store_ms += t.elapsed().as_secs_f64() * 1000.0;
    Ok(ids)
}
