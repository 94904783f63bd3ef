//! The lexical index kebab chose (tantivy, `kebab_store::lexical`) against
//! the full-text index LanceDB offers, on the same chunks, the same
//! analysis and the same queries, in one process (issue 33's engine
//! comparison, candidate (b)).
//!
//! ```sh
//! cargo bench -p kebab --bench lexical_engines -- DATA_DIR QUERIES WORK_DIR [BEIR_DIR]
//! ```
//!
//! DATA_DIR is a kebab data directory whose lexical index is built (e.g.
//! the one `scripts/bench_lexical.py` ingests); QUERIES holds one query a
//! line. Every chunk's text is read from DATA_DIR's SQLite, analysed as
//! kebab analyses it (index terms, [`kebab_core::analysis::words`]) and
//! written to a LanceDB table in WORK_DIR with an FTS index over the
//! analysed text (whitespace tokens: no stemming, stop words or folding of
//! its own, so both engines see the same terms). Each query becomes kebab's
//! content terms; both engines are asked for the best 10 by BM25, three
//! rounds after a warm-up. Prints one JSON object: index build time and
//! size, per-query p50/p95 for each engine, and the share of tantivy's top
//! 10 that LanceDB also returns. With BEIR_DIR (the dataset DATA_DIR holds,
//! as `kebab eval beir` writes it: DATA_DIR is then its
//! `eval/beir-<name>/` directory), also each engine's nDCG@10 over the
//! dataset's judged queries, computed as `eval beir` does (the best 100
//! chunks, their documents in order of first appearance). A release run needs a target directory of
//! its own: the benches' dev-dependencies change features of crates the
//! release binary shares, so they would be rebuilt.

// A bench prints its figures.
#![allow(clippy::disallowed_macros)]

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use futures_util::TryStreamExt;
use lancedb::index::Index;
use lancedb::index::scalar::{FtsIndexBuilder, FullTextSearchQuery};
use lancedb::query::{ExecutableQuery, QueryBase, Select};

/// Rows written to LanceDB per batch.
const BATCH: usize = 20_000;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (data, queries, work, beir) = match &args[..] {
        [data, queries, work] => (data, queries, work, None),
        [data, queries, work, beir] => (data, queries, work, Some(Path::new(beir))),
        _ => {
            eprintln!("usage: lexical_engines DATA_DIR QUERIES WORK_DIR [BEIR_DIR]");
            std::process::exit(2);
        }
    };
    let data = Path::new(data);
    let conn = rusqlite::Connection::open_with_flags(
        data.join("kebab.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open kebab.sqlite");
    let chunks = chunks(&conn);
    let queries: Vec<Vec<String>> = std::fs::read_to_string(queries)
        .expect("queries")
        .lines()
        .map(query_terms)
        .filter(|t| !t.is_empty())
        .collect();
    let reader = kebab_store::lexical::LexicalReader::open(&data.join("lexical"))
        .expect("lexical index")
        .expect("DATA_DIR has a lexical index");
    assert_eq!(
        reader.num_docs() as usize,
        chunks.len(),
        "the lexical index is not in step with the chunks"
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let work = Path::new(work);
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).unwrap();
    let started = Instant::now();
    let table = runtime.block_on(lance_table(work, &chunks));
    let written = started.elapsed();
    let started = Instant::now();
    runtime.block_on(async {
        let params = FtsIndexBuilder::default()
            .base_tokenizer("whitespace".into())
            .lower_case(false)
            .stem(false)
            .remove_stop_words(false)
            .ascii_folding(false)
            .with_position(false);
        table
            .create_index(&["body"], Index::FTS(params))
            .execute()
            .await
            .expect("FTS index")
    });
    let indexed = started.elapsed();

    let tantivy = |terms: &Vec<String>, k: usize| -> Vec<i64> {
        reader
            .search(terms, k, None)
            .unwrap()
            .into_iter()
            .map(|(rowid, _)| rowid)
            .collect()
    };
    let lance = |terms: &Vec<String>, k: usize| -> Vec<i64> {
        runtime.block_on(async {
            let batches: Vec<RecordBatch> = table
                .query()
                .full_text_search(FullTextSearchQuery::new(terms.join(" ")))
                .select(Select::columns(&["rowid"]))
                .limit(k)
                .execute()
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            batches
                .iter()
                .flat_map(|b| {
                    let ids = b.column_by_name("rowid").expect("rowid column");
                    let ids = ids.as_any().downcast_ref::<Int64Array>().expect("i64");
                    ids.values().to_vec()
                })
                .collect()
        })
    };
    let (tantivy_ms, tantivy_hits) = timed(&queries, |q| tantivy(q, 10));
    let (lance_ms, lance_hits) = timed(&queries, |q| lance(q, 10));
    let shared: usize = tantivy_hits
        .iter()
        .zip(&lance_hits)
        .map(|(t, l)| {
            let l: HashSet<&i64> = l.iter().collect();
            t.iter().filter(|id| l.contains(id)).count()
        })
        .sum();
    let expected: usize = tantivy_hits.iter().map(Vec::len).sum();
    let quality = beir.map(|dir| {
        let judged = Judged::load(dir, &conn);
        serde_json::json!({
            "judged_queries": judged.queries.len(),
            "tantivy_ndcg_at_10": judged.ndcg_at_10(tantivy),
            "lance_fts_ndcg_at_10": judged.ndcg_at_10(lance),
        })
    });
    let report = serde_json::json!({
        "chunks": chunks.len(),
        "queries": queries.len(),
        "tantivy": {
            "index_mb": mb(dir_bytes(&data.join("lexical"))),
            "p50_ms": pct(&tantivy_ms, 50.0),
            "p95_ms": pct(&tantivy_ms, 95.0),
        },
        "lance_fts": {
            "write_s": written.as_secs_f64(),
            "index_s": indexed.as_secs_f64(),
            "index_mb": mb(dir_bytes(&work.join("chunks.lance").join("_indices"))),
            "p50_ms": pct(&lance_ms, 50.0),
            "p95_ms": pct(&lance_ms, 95.0),
        },
        "top10_shared_with_tantivy": shared as f64 / expected.max(1) as f64,
        "quality": quality,
    });
    println!("{report}");
}

/// A BEIR dataset's judged queries (as kebab's content terms) and the
/// document each chunk of its kebab index belongs to.
struct Judged {
    /// Terms and graded judgements (document id → gain) of each query.
    queries: Vec<(Vec<String>, HashMap<String, f64>)>,
    /// Chunk rowid → BEIR document id.
    documents: HashMap<i64, String>,
}

impl Judged {
    fn load(dir: &Path, conn: &rusqlite::Connection) -> Judged {
        let beir = kebab::eval::beir::load(dir).expect("BEIR dataset");
        let ids: HashMap<String, String> = beir
            .corpus
            .iter()
            .map(|(id, _, _)| (kebab::eval::beir::file_stem(id), id.clone()))
            .collect();
        let mut stmt = conn
            .prepare(
                "SELECT c.rowid, d.workspace_path FROM chunks c JOIN documents d USING (doc_id)",
            )
            .unwrap();
        let documents = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .unwrap()
            .filter_map(|row| {
                let (rowid, path) = row.unwrap();
                let stem = Path::new(&path).file_stem()?.to_string_lossy().into_owned();
                Some((rowid, ids.get(&stem)?.clone()))
            })
            .collect();
        let queries = beir
            .queries
            .iter()
            .filter_map(|(id, text)| Some((query_terms(text), beir.qrels.get(id)?.clone())))
            .collect();
        Judged { queries, documents }
    }

    /// Mean nDCG@10 of `search`'s best 100 chunks, as documents.
    fn ndcg_at_10(&self, mut search: impl FnMut(&Vec<String>, usize) -> Vec<i64>) -> f64 {
        let total: f64 = self
            .queries
            .iter()
            .map(|(terms, gains)| {
                let docs = kebab::eval::metrics::first_occurrences(
                    search(terms, 100)
                        .into_iter()
                        .filter_map(|rowid| self.documents.get(&rowid).cloned()),
                );
                kebab::eval::metrics::ndcg_at_k(&docs, gains, 10)
            })
            .sum();
        total / self.queries.len().max(1) as f64
    }
}

/// Every chunk's rowid and its text as kebab analyses it.
fn chunks(conn: &rusqlite::Connection) -> Vec<(i64, String)> {
    let mut stmt = conn
        .prepare("SELECT rowid, text FROM chunks ORDER BY rowid")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|row| {
            let (rowid, text) = row.unwrap();
            (rowid, analysed(&text))
        })
        .collect()
}

/// `text`'s index terms, space separated.
fn analysed(text: &str) -> String {
    kebab_core::analysis::words(text)
        .map(|w| w.term)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A query's terms as kebab's lexical channel asks for them.
fn query_terms(query: &str) -> Vec<String> {
    let terms = kebab_search::search::content_terms(&kebab_search::search::query_terms(query));
    let mut seen = HashSet::new();
    terms
        .iter()
        .flat_map(|t| kebab_core::analysis::words(t).map(|w| w.term))
        .filter(|w| seen.insert(w.clone()))
        .collect()
}

/// A LanceDB table `chunks` in `dir` holding `rows` as (rowid, body).
async fn lance_table(dir: &Path, rows: &[(i64, String)]) -> lancedb::Table {
    let schema = Arc::new(Schema::new(vec![
        Field::new("rowid", DataType::Int64, false),
        Field::new("body", DataType::Utf8, false),
    ]));
    let db = lancedb::connect(&dir.to_string_lossy())
        .execute()
        .await
        .unwrap();
    let table = db
        .create_empty_table("chunks", schema.clone())
        .execute()
        .await
        .unwrap();
    for part in rows.chunks(BATCH) {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(part.iter().map(|r| r.0))),
                Arc::new(StringArray::from_iter_values(
                    part.iter().map(|r| r.1.as_str()),
                )),
            ],
        )
        .unwrap();
        table.add(batch).execute().await.unwrap();
    }
    table
}

/// Each query's time (ms) over three rounds after a warm-up, and the
/// warm-up's hits.
fn timed(
    queries: &[Vec<String>],
    mut search: impl FnMut(&Vec<String>) -> Vec<i64>,
) -> (Vec<f64>, Vec<Vec<i64>>) {
    let hits: Vec<Vec<i64>> = queries.iter().map(&mut search).collect();
    let mut ms = Vec::new();
    for _ in 0..3 {
        for q in queries {
            let started = Instant::now();
            std::hint::black_box(search(q));
            ms.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    (ms, hits)
}

/// The `p`th percentile of `values` (nearest rank).
fn pct(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[((p / 100.0) * (v.len() - 1) as f64).round() as usize]
}

/// Bytes of the files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => dir_bytes(&e.path()),
                    _ => e.metadata().map_or(0, |m| m.len()),
                })
                .sum()
        })
        .unwrap_or(0)
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}
