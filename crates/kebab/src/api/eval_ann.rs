//! `kebab eval ann`: the vector index measured against an exact scan of the
//! same table — recall@k and latency per ANN setting (`ann_report.v1`), so
//! `[search] ann_nprobes`, `ann_ef` and `ann_refine_factor` can be chosen
//! on the user's own data.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::{ApiError, Session};
use crate::eval::metrics;
use kebab_search::search::{Mode, SearchError};
use kebab_store::vector::{AnnParams, Probe, VectorStore};

/// Latency of one way of searching, per query.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Latency {
    pub p50_ms: f64,
    pub p95_ms: f64,
}

/// One measured ANN setting.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AnnRow {
    #[serde(flatten)]
    pub params: AnnParams,
    /// Whether this is what `[search]` configures.
    pub configured: bool,
    /// Mean share of the exact scan's first `k` found in the first `k`.
    pub recall_at_k: f64,
    #[serde(flatten)]
    pub latency: Latency,
}

/// `ann_report.v1`: ANN settings against the exact scan (`kebab eval ann`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AnnReport {
    pub schema_version: &'static str,
    /// Rows in the vector table.
    pub rows: usize,
    /// Whether the table has an ANN index (without one every search is
    /// exact and recall is 1 by construction).
    pub indexed: bool,
    /// `[search] ann_min_rows`: rows before ingest builds the index.
    pub ann_min_rows: usize,
    pub k: usize,
    pub queries: usize,
    /// The reference: every row compared with the query.
    pub exact: Latency,
    pub settings: Vec<AnnRow>,
}

/// What `kebab eval ann` is asked to measure.
#[derive(Debug, Clone, Default)]
pub struct AnnSweep {
    /// Query texts.
    pub queries: Vec<String>,
    pub k: usize,
    /// Values to try for each parameter (empty: the configured one).
    pub nprobes: Vec<usize>,
    pub ef: Vec<usize>,
    pub refine_factor: Vec<u32>,
}

/// Query texts from a file: one per line, or JSON lines with a `text` or
/// `query` field (a BEIR `queries.jsonl`); blank lines skipped.
pub fn read_queries(path: &Path) -> Result<Vec<String>, ApiError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ApiError::invalid("queries", format!("cannot read {}: {e}", path.display()))
    })?;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let field = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| {
                ["text", "query"]
                    .iter()
                    .find_map(|f| v.get(f).and_then(|t| t.as_str()).map(str::to_string))
            });
        out.push(field.unwrap_or_else(|| line.to_string()));
    }
    Ok(out)
}

/// Every combination of the swept values, the configured value standing
/// in for a parameter not swept.
fn settings(sweep: &AnnSweep, configured: AnnParams) -> Vec<AnnParams> {
    fn or_configured<T: Copy>(values: &[T], configured: T) -> Vec<T> {
        if values.is_empty() {
            vec![configured]
        } else {
            values.to_vec()
        }
    }
    let nprobes = or_configured(
        &sweep.nprobes.iter().copied().map(Some).collect::<Vec<_>>(),
        configured.nprobes,
    );
    let ef = or_configured(
        &sweep.ef.iter().copied().map(Some).collect::<Vec<_>>(),
        configured.ef,
    );
    let refine = or_configured(&sweep.refine_factor, configured.refine_factor);
    let mut out = Vec::new();
    for &nprobes in &nprobes {
        for &ef in &ef {
            for &refine_factor in &refine {
                out.push(AnnParams {
                    nprobes,
                    ef,
                    refine_factor,
                });
            }
        }
    }
    out
}

/// Each query's `k` nearest ids under `probe` (after one untimed warm-up
/// search), and the time each search took.
fn run(
    table: &VectorStore,
    vectors: &[Vec<f32>],
    k: usize,
    probe: Probe,
) -> Result<(Vec<Vec<String>>, Latency), SearchError> {
    if let Some(first) = vectors.first() {
        table.search_with(first, k, probe)?;
    }
    let mut ids = Vec::with_capacity(vectors.len());
    let mut ms = Vec::with_capacity(vectors.len());
    for v in vectors {
        let started = Instant::now();
        let hits = table.search_with(v, k, probe)?;
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
        ids.push(hits.into_iter().map(|(id, _)| id).collect());
    }
    let latency = Latency {
        p50_ms: metrics::percentile(&ms, 50.0),
        p95_ms: metrics::percentile(&ms, 95.0),
    };
    Ok((ids, latency))
}

impl Session {
    /// `kebab eval ann`: embed `sweep.queries` once, search the vector
    /// table exactly and under every ANN setting of the sweep, and report
    /// recall@k against the exact result with the latency of each.
    pub fn eval_ann(&self, sweep: &AnnSweep) -> Result<AnnReport, ApiError> {
        if sweep.queries.is_empty() {
            return Err(ApiError::invalid(
                "queries",
                "no queries: give --query TEXT or --queries FILE",
            ));
        }
        if sweep.k == 0 {
            return Err(ApiError::invalid("k", "k must be at least 1"));
        }
        if sweep.nprobes.contains(&0) || sweep.ef.contains(&0) {
            return Err(ApiError::invalid(
                "nprobes",
                "nprobes and ef must be at least 1",
            ));
        }
        kebab_core::bounds::at_most("k", sweep.k, kebab_search::search::MAX_K)?;
        let app = self.app()?;
        let configured = app.config.search.ann();
        let sweeps = settings(sweep, configured);
        for params in &sweeps {
            params.check()?;
        }
        // The session's model and table, as vector search loads them (an
        // explicit mode: a model that does not load is an error).
        let channel = self
            .channel_for(&mut Some(Mode::Vector), &mut Vec::new())?
            .expect("an explicit vector mode has a channel or an error");
        let table = channel.table;
        let vectors = sweep
            .queries
            .iter()
            .map(|q| channel.embedder.embed_query(q))
            .collect::<Result<Vec<_>, _>>()
            .map_err(SearchError::from)?;
        let (exact_ids, exact) = run(table, &vectors, sweep.k, Probe::Exact)?;
        let exact_sets: Vec<HashSet<String>> = exact_ids
            .into_iter()
            .map(|ids| ids.into_iter().collect())
            .collect();
        let mut rows = Vec::new();
        for params in sweeps {
            let (ids, latency) = run(table, &vectors, sweep.k, Probe::Index(params))?;
            let recalls: Vec<Option<f64>> = ids
                .iter()
                .zip(&exact_sets)
                .filter(|(_, exact)| !exact.is_empty())
                .map(|(found, exact)| Some(metrics::recall_at_k(found, exact, sweep.k)))
                .collect();
            rows.push(AnnRow {
                params,
                configured: params == configured,
                recall_at_k: metrics::mean(&recalls).unwrap_or(1.0),
                latency,
            });
        }
        Ok(AnnReport {
            schema_version: "ann_report.v1",
            rows: table.count().map_err(SearchError::from)?,
            indexed: table.has_index().map_err(SearchError::from)?,
            ann_min_rows: app.config.search.ann_min_rows,
            k: sweep.k,
            queries: sweep.queries.len(),
            exact,
            settings: rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_covers_every_combination_and_keeps_what_it_does_not_sweep() {
        let configured = AnnParams {
            nprobes: None,
            ef: Some(30),
            refine_factor: 4,
        };
        let sweep = AnnSweep {
            nprobes: vec![5, 20],
            refine_factor: vec![1, 4, 10],
            ..Default::default()
        };
        let all = settings(&sweep, configured);
        assert_eq!(all.len(), 6);
        assert!(all.iter().all(|p| p.ef == Some(30)));
        assert!(all.contains(&AnnParams {
            nprobes: Some(20),
            ef: Some(30),
            refine_factor: 10
        }));
        assert_eq!(settings(&AnnSweep::default(), configured), vec![configured]);
    }

    #[test]
    fn queries_come_from_plain_lines_or_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.jsonl");
        std::fs::write(
            &path,
            "{\"_id\": \"1\", \"text\": \"beir claim\"}\n\nplain question\n{\"query\": \"q two\"}\n",
        )
        .unwrap();
        assert_eq!(
            read_queries(&path).unwrap(),
            ["beir claim", "plain question", "q two"]
        );
        assert!(read_queries(&dir.path().join("missing")).is_err());
    }
}
