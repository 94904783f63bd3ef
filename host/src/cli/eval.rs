//! `kebab eval run` and `kebab eval beir`.

use std::collections::{HashMap, HashSet};

use super::prelude::*;
use kebab::eval::{self, GoldenQuery, QueryResult, RankedHit};
use kebab::indexes::Indexes;
use kebab::search::{Mode, Request};

/// The modes to measure: those asked for, else every mode available.
fn modes(requested: &[String], indexes: &Indexes, app: &App) -> Result<Vec<Mode>> {
    let vectors = indexes.vector_channel(app).is_some();
    if requested.is_empty() {
        return Ok(if vectors {
            vec![Mode::Lexical, Mode::Vector, Mode::Hybrid]
        } else {
            for w in &indexes.warnings {
                eprintln!("note: {w}; measuring lexical search only");
            }
            vec![Mode::Lexical]
        });
    }
    requested
        .iter()
        .map(|m| {
            let mode = Mode::parse(m).with_context(|| {
                format!("unknown --mode {m}: expected lexical, vector or hybrid")
            })?;
            if mode != Mode::Lexical && !vectors {
                anyhow::bail!(kebab::search::SearchError::NoVectors {
                    mode: mode.as_str(),
                    reason: indexes.warnings.join("; "),
                });
            }
            Ok(mode)
        })
        .collect()
}

/// Ranked hits of one query.
fn ranked(
    app: &App,
    indexes: &Indexes,
    query: &str,
    mode: Mode,
    k: usize,
) -> Result<Vec<(RankedHit, String)>> {
    let filter = Default::default();
    let request = Request {
        query,
        k,
        mode,
        filter: &filter,
        snippet_chars: 40,
        fusion: app.config.search.fusion(),
        candidates: app.config.search.candidates.max(k),
        korean: indexes.korean.as_ref(),
    };
    Ok(
        kebab::search::retrieve(&app.store, indexes.vector_channel(app), &request)?
            .into_iter()
            .map(|r| {
                (
                    RankedHit {
                        chunk_id: r.hit.chunk_id,
                        doc_id: r.hit.doc_id,
                    },
                    r.hit.doc_path,
                )
            })
            .collect(),
    )
}

/// `kebab eval run SUITE`.
pub(crate) fn eval_run(
    app: &mut App,
    suite: &std::path::Path,
    requested: &[String],
    k: usize,
    json: bool,
) -> Result<u8> {
    let queries = eval::load_suite(suite)?;
    let indexes = Indexes::open(app, true);
    let modes = modes(requested, &indexes, app)?;
    let by_path: HashMap<String, String> = app
        .store
        .list_docs()?
        .into_iter()
        .map(|d| (d.workspace_path, d.doc_id))
        .collect();
    let mut results: Vec<QueryResult> = Vec::new();
    for q in &queries {
        let mut docs: HashSet<String> = q.expected_doc_ids.iter().cloned().collect();
        for p in &q.expected_paths {
            match by_path.get(p) {
                Some(id) => {
                    docs.insert(id.clone());
                }
                None => eprintln!("warning: {}: {p} is not indexed", q.id),
            }
        }
        for &mode in &modes {
            let hits: Vec<RankedHit> = ranked(app, &indexes, &q.query, mode, k)?
                .into_iter()
                .map(|(h, _)| h)
                .collect();
            results.push(eval::score_query(q, &docs, &hits, k, mode));
        }
    }
    let aggregate = eval::aggregate(&results);
    let run_id = record(app, &suite.display().to_string(), &aggregate, &results, k)?;
    report(
        &run_id,
        &suite.display().to_string(),
        k,
        &aggregate,
        &results,
        &queries,
        json,
    )
}

fn record(
    app: &mut App,
    suite: &str,
    aggregate: &impl Serialize,
    results: &[QueryResult],
    k: usize,
) -> Result<String> {
    let now = kebab::store::now_rfc3339();
    let run_id =
        kebab::ids::id_from(&serde_json::json!({ "kind": "eval_run", "suite": suite, "at": now }));
    let config = serde_json::json!({ "k": k, "search": app.config.search, "embedding": app.config.models.embedding });
    app.store.record_eval_run(
        &run_id,
        suite,
        &config,
        &serde_json::to_value(aggregate)?,
        &results
            .iter()
            .map(|r| {
                (
                    format!("{}:{}", r.id, r.mode),
                    serde_json::to_value(r).unwrap_or_default(),
                )
            })
            .collect::<Vec<_>>(),
    )?;
    Ok(run_id)
}

fn report(
    run_id: &str,
    suite: &str,
    k: usize,
    aggregate: &std::collections::BTreeMap<&'static str, eval::Aggregate>,
    results: &[QueryResult],
    queries: &[GoldenQuery],
    json: bool,
) -> Result<u8> {
    if json {
        print_json(&serde_json::json!({
            "schema_version": "eval_report.v1",
            "run_id": run_id,
            "suite": suite,
            "k": k,
            "queries": queries.len(),
            "modes": aggregate,
            "per_query": results,
        }))?;
        return Ok(EXIT_OK);
    }
    let f = |v: Option<f64>| v.map_or("   -  ".to_string(), |v| format!("{v:.4}"));
    println!(
        "{suite}: {} queries, k = {k}  (run {run_id})",
        queries.len()
    );
    println!("mode      hit@k   MRR     recall@k_doc  precision@k  nDCG@10");
    for (mode, a) in aggregate {
        println!(
            "{mode:<9} {}  {}  {}        {}       {}",
            f(a.hit_at_k),
            f(a.mrr),
            f(a.recall_at_k_doc),
            f(a.precision_at_k_chunk),
            f(a.ndcg_at_10)
        );
    }
    Ok(EXIT_OK)
}

/// What `kebab eval beir` measures: a mode and, for hybrid, a fusion.
struct Variant {
    mode: Mode,
    fusion: kebab::fusion::Fusion,
    ndcg: Vec<Option<f64>>,
    recall: Vec<Option<f64>>,
    rank_secs: f64,
}

/// One variant per mode, and per requested fusion for hybrid (default:
/// the configured fusion).
fn variants(modes: &[Mode], fusions: &[String], app: &App) -> Result<Vec<Variant>> {
    let configured = app.config.search.fusion();
    let fusions: Vec<kebab::fusion::Fusion> = if fusions.is_empty() {
        vec![configured]
    } else {
        fusions
            .iter()
            .map(|f| kebab::fusion::Fusion::parse(f, configured))
            .collect::<Result<_, _>>()?
    };
    let mut out = Vec::new();
    for &mode in modes {
        let per_mode: &[kebab::fusion::Fusion] = if mode == Mode::Hybrid {
            &fusions
        } else {
            &fusions[..1]
        };
        for &fusion in per_mode {
            out.push(Variant {
                mode,
                fusion,
                ndcg: Vec::new(),
                recall: Vec::new(),
                rank_secs: 0.0,
            });
        }
    }
    Ok(out)
}

/// `kebab eval beir DIR`.
pub(crate) fn eval_beir(
    app: &App,
    dir: &std::path::Path,
    requested: &[String],
    fusions: &[String],
    limit: Option<usize>,
    json: bool,
) -> Result<u8> {
    let beir = eval::beir::load(dir)?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "beir".into());
    // A separate index beside the user's, so the dataset never mixes with
    // their notes: `<data>/eval/beir-<name>/` (corpus files, SQLite, vectors).
    let eval_paths = Paths {
        data_dir: app.paths.data_dir.join("eval").join(format!("beir-{name}")),
        ..app.paths.clone()
    };
    let mut eval_app = App::open(app.config.clone(), eval_paths)?;
    let corpus_dir = eval_app.paths.data_dir.join("corpus");
    let stems = eval::beir::write_corpus(&beir, &corpus_dir)?;
    if !json {
        eprintln!(
            "ingesting {} documents from {} into {}",
            beir.corpus.len(),
            dir.display(),
            corpus_dir.display()
        );
    }
    let plugins = app.plugins().context("cannot load parser plugins")?;
    let indexes = Indexes::open_with_vectors_in(app, Some(&eval_app.paths.vector_dir()));
    let cancel = AtomicBool::new(false);
    let ingest = kebab::ingest::ingest(
        &mut eval_app,
        &plugins,
        &indexes,
        &corpus_dir,
        &cancel,
        &mut |_| {},
    )?;
    let modes = modes(requested, &indexes, &eval_app)?;
    let judged: Vec<&(String, String)> = beir
        .queries
        .iter()
        .filter(|(id, _)| {
            beir.qrels
                .get(id)
                .is_some_and(|q| q.values().any(|g| *g > 0.0))
        })
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let mut variants = variants(&modes, fusions, app)?;
    // Each query's candidates are gathered once, from the channels the
    // widest mode uses, and ranked under every variant: lexical and vector
    // rankings of the top 100 per channel are those of a search per mode.
    let widest = if modes.contains(&Mode::Hybrid)
        || (modes.contains(&Mode::Lexical) && modes.contains(&Mode::Vector))
    {
        Mode::Hybrid
    } else {
        modes[0]
    };
    let filter = Default::default();
    let mut gather_secs = 0.0;
    for (qid, text) in &judged {
        let request = Request {
            query: text,
            k: 100,
            mode: widest,
            filter: &filter,
            snippet_chars: 40,
            fusion: app.config.search.fusion(),
            candidates: app.config.search.candidates.max(100),
            korean: indexes.korean.as_ref(),
        };
        let started = std::time::Instant::now();
        let candidates = kebab::search::candidates(
            &eval_app.store,
            indexes.vector_channel(&eval_app),
            &request,
        )?;
        gather_secs += started.elapsed().as_secs_f64();
        let gains = &beir.qrels[qid];
        let relevant: HashSet<String> = gains
            .iter()
            .filter(|(_, g)| **g > 0.0)
            .map(|(d, _)| d.clone())
            .collect();
        for v in &mut variants {
            let started = std::time::Instant::now();
            let ranked = kebab::search::rank(
                &candidates,
                &Request {
                    mode: v.mode,
                    ..request.clone()
                },
                v.fusion,
            );
            v.rank_secs += started.elapsed().as_secs_f64();
            let docs = eval::metrics::first_occurrences(ranked.into_iter().filter_map(|r| {
                let stem = std::path::Path::new(&r.hit.doc_path)
                    .file_stem()?
                    .to_string_lossy()
                    .into_owned();
                stems.get(&stem).cloned()
            }));
            v.ndcg
                .push(Some(eval::metrics::ndcg_at_k(&docs, gains, 10)));
            v.recall
                .push(Some(eval::metrics::recall_at_k(&docs, &relevant, 100)));
        }
    }
    let n = judged.len().max(1) as f64;
    let rows: Vec<serde_json::Value> = variants
        .iter()
        .map(|v| {
            serde_json::json!({
                "mode": v.mode.as_str(),
                "fusion": (v.mode == Mode::Hybrid).then(|| v.fusion.label()),
                "queries": judged.len(),
                "ndcg_at_10": eval::metrics::mean(&v.ndcg),
                "recall_at_100": eval::metrics::mean(&v.recall),
                "ms_per_query": (gather_secs + v.rank_secs) * 1000.0 / n,
            })
        })
        .collect();
    if json {
        print_json(&serde_json::json!({
            "schema_version": "beir_report.v1",
            "dataset": name,
            "documents": beir.corpus.len(),
            "ingest": { "new": ingest.counts.new, "vectors": ingest.vectors },
            "modes": rows,
        }))?;
    } else {
        println!(
            "{name}: {} documents, {} judged queries",
            beir.corpus.len(),
            judged.len()
        );
        println!("mode                   nDCG@10  recall@100  ms/query");
        for r in &rows {
            let label = match r["fusion"].as_str() {
                Some(f) => format!("{} ({f})", r["mode"].as_str().unwrap_or("")),
                None => r["mode"].as_str().unwrap_or("").to_string(),
            };
            println!(
                "{:<22} {:.4}   {:.4}      {:.1}",
                label,
                r["ndcg_at_10"].as_f64().unwrap_or(0.0),
                r["recall_at_100"].as_f64().unwrap_or(0.0),
                r["ms_per_query"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(EXIT_OK)
}
