//! Retrieval evaluation use cases: a golden suite over the user's index
//! (`eval_report.v1`, recorded in the index) and a BEIR dataset in an
//! index of its own (`beir_report.v1`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;

use super::{ApiError, Session};
use crate::app::{App, Paths};
use crate::eval::{self, Aggregate, QueryResult, RankedHit};
use crate::indexes::Indexes;
use crate::ingest::VectorReport;
use kebab_search::fusion::Fusion;
use kebab_search::rerank::Reranker;
use kebab_search::search::{Mode, Request, SearchError};
use kebab_store::vector::VectorPlace;

/// `eval_report.v1`: a golden suite measured per mode (`kebab eval run`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EvalReport {
    pub schema_version: &'static str,
    /// The recorded run (`eval_runs` table).
    pub run_id: String,
    pub suite: String,
    pub k: usize,
    /// Queries in the suite.
    pub queries: usize,
    /// Means per mode.
    pub modes: BTreeMap<&'static str, Aggregate>,
    /// Every query in every mode.
    pub per_query: Vec<QueryResult>,
    /// Rates of the answers, with `--answers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<eval::AnswerAggregate>,
    /// Each query's answer, with `--answers`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_query_answers: Vec<eval::AnswerResult>,
}

/// One measured variant of `beir_report.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BeirRow {
    pub mode: &'static str,
    /// The fusion, for hybrid.
    pub fusion: Option<String>,
    pub queries: usize,
    pub ndcg_at_10: Option<f64>,
    pub recall_at_100: Option<f64>,
    /// Candidate gathering plus this variant's ranking, per query.
    pub ms_per_query: f64,
}

/// What ingesting the BEIR corpus did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BeirIngest {
    /// Documents indexed for the first time.
    pub new: usize,
    pub vectors: Option<VectorReport>,
}

/// `beir_report.v1`: a BEIR dataset measured per mode and fusion
/// (`kebab eval beir`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BeirReport {
    pub schema_version: &'static str,
    pub dataset: String,
    pub documents: usize,
    /// Queries with at least one positive judgement (after `--limit`).
    pub judged_queries: usize,
    pub ingest: BeirIngest,
    pub modes: Vec<BeirRow>,
}

/// A measured mode: a search mode, optionally followed by the reranker
/// (`hybrid+rerank`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EvalMode {
    mode: Mode,
    rerank: bool,
}

impl EvalMode {
    /// The mode's name in reports.
    fn label(self) -> &'static str {
        match (self.mode, self.rerank) {
            (m, false) => m.as_str(),
            (Mode::Lexical, true) => "lexical+rerank",
            (Mode::Vector, true) => "vector+rerank",
            (Mode::Hybrid, true) => "hybrid+rerank",
        }
    }

    /// Parse a `--mode` value: a search mode, optionally with `+rerank`.
    fn parse(s: &str) -> Result<EvalMode, ApiError> {
        let (base, rerank) = match s.strip_suffix("+rerank") {
            Some(base) => (base, true),
            None => (s, false),
        };
        let mode = Mode::parse(base).ok_or_else(|| {
            ApiError::invalid(
                "mode",
                format!(
                    "unknown mode `{s}`: expected lexical, vector or hybrid, \
                     optionally followed by +rerank"
                ),
            )
        })?;
        Ok(EvalMode { mode, rerank })
    }
}

/// The modes to measure: those asked for, else every mode available
/// (hybrid+rerank when a reranker is loaded; a note says when vectors are
/// off).
fn modes(
    requested: &[String],
    indexes: &Indexes,
    app: &App,
    reranker: Option<&Reranker>,
    note: &mut dyn FnMut(String),
) -> Result<Vec<EvalMode>, ApiError> {
    let vectors = indexes.vector_channel(app).is_some();
    let plain = |mode| EvalMode {
        mode,
        rerank: false,
    };
    if requested.is_empty() {
        let mut out = if vectors {
            vec![
                plain(Mode::Lexical),
                plain(Mode::Vector),
                plain(Mode::Hybrid),
            ]
        } else {
            for w in &indexes.warnings {
                note(format!("{w}; measuring lexical search only"));
            }
            vec![plain(Mode::Lexical)]
        };
        if reranker.is_some() {
            let best = out[out.len() - 1].mode;
            out.push(EvalMode {
                mode: best,
                rerank: true,
            });
        }
        return Ok(out);
    }
    requested
        .iter()
        .map(|m| {
            let mode = EvalMode::parse(m)?;
            if mode.mode != Mode::Lexical && !vectors {
                return Err(SearchError::NoVectors {
                    mode: mode.mode.as_str(),
                    reason: indexes.warnings.join("; "),
                }
                .into());
            }
            Ok(mode)
        })
        .collect()
}

/// The reranker when `[search.rerank]` is enabled or a requested mode
/// asks for one (`hybrid+rerank` loads the configured model even while
/// search runs without it).
fn reranker(app: &App, requested: &[String]) -> Result<Option<Reranker>, ApiError> {
    let config = &app.config.search.rerank;
    if !config.enabled && !requested.iter().any(|m| m.ends_with("+rerank")) {
        return Ok(None);
    }
    Reranker::load(config, &app.runtime_candidates())
        .map(Some)
        .map_err(|e| SearchError::from(e).into())
}

/// The search request evaluation uses for `query`.
fn request<'a>(
    app: &App,
    indexes: &'a Indexes,
    query: &'a str,
    mode: EvalMode,
    k: usize,
    filter: &'a kebab_store::ChunkFilter,
    reranker: Option<&'a Reranker>,
) -> Request<'a> {
    Request {
        query,
        k,
        mode: mode.mode,
        filter,
        snippet_chars: 40,
        fusion: app.config.search.fusion(),
        candidates: app.config.search.candidates.max(k),
        cjk: Some(&indexes.cjk),
        rerank: reranker.filter(|_| mode.rerank),
    }
}

/// The queries with at least one positive judgement, at most `limit`.
fn judged_queries(beir: &eval::beir::Beir, limit: Option<usize>) -> Vec<&(String, String)> {
    beir.queries
        .iter()
        .filter(|(id, _)| {
            beir.qrels
                .get(id)
                .is_some_and(|q| q.values().any(|g| *g > 0.0))
        })
        .take(limit.unwrap_or(usize::MAX))
        .collect()
}

/// The mode whose channels cover every measured mode.
fn widest(modes: &[EvalMode]) -> EvalMode {
    let has = |m| modes.iter().any(|e| e.mode == m);
    let mode = if has(Mode::Hybrid) || (has(Mode::Lexical) && has(Mode::Vector)) {
        Mode::Hybrid
    } else {
        modes[0].mode
    };
    EvalMode {
        mode,
        rerank: false,
    }
}

/// Rank one query's `candidates` under every variant (a reranked one
/// reorders its best `top_n` with `reranker`) and record its nDCG@10 and
/// recall@100 against the graded judgements `gains` (BEIR document ids;
/// `stems` maps corpus file stems to them).
fn score_variants(
    variants: &mut [Variant],
    store: &kebab_store::Store,
    candidates: &kebab_search::search::Candidates,
    request: &Request<'_>,
    reranker: Option<&Reranker>,
    gains: &HashMap<String, f64>,
    stems: &HashMap<String, String>,
) -> Result<(), SearchError> {
    let relevant: HashSet<String> = gains
        .iter()
        .filter(|(_, g)| **g > 0.0)
        .map(|(d, _)| d.clone())
        .collect();
    for v in variants {
        let started = Instant::now();
        let reranker = reranker.filter(|_| v.mode.rerank);
        let variant = Request {
            mode: v.mode.mode,
            k: request.k.max(reranker.map_or(0, Reranker::top_n)),
            ..request.clone()
        };
        let mut ranked = kebab_search::search::rank(store, candidates, &variant, v.fusion)?;
        if let Some(reranker) = reranker {
            ranked = kebab_search::search::rerank(reranker, request.query, ranked, request.k)?;
        }
        v.rank_secs += started.elapsed().as_secs_f64();
        let docs = eval::metrics::first_occurrences(ranked.into_iter().filter_map(|r| {
            let stem = Path::new(&r.hit.doc_path)
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
    Ok(())
}

/// The report rows: each variant's means over `queries` queries, and its
/// time per query (the shared candidate gathering plus its own ranking).
fn rows(variants: &[Variant], queries: usize, gather_secs: f64) -> Vec<BeirRow> {
    let n = queries.max(1) as f64;
    variants
        .iter()
        .map(|v| BeirRow {
            mode: v.mode.label(),
            fusion: (v.mode.mode == Mode::Hybrid).then(|| v.fusion.label()),
            queries,
            ndcg_at_10: eval::metrics::mean(&v.ndcg),
            recall_at_100: eval::metrics::mean(&v.recall),
            ms_per_query: (gather_secs + v.rank_secs) * 1000.0 / n,
        })
        .collect()
}

/// What `eval beir` measures: a mode and, for hybrid, a fusion.
struct Variant {
    mode: EvalMode,
    fusion: Fusion,
    ndcg: Vec<Option<f64>>,
    recall: Vec<Option<f64>>,
    rank_secs: f64,
}

/// One variant per mode, and per requested fusion for hybrid (default:
/// the configured fusion).
fn variants(
    modes: &[EvalMode],
    fusions: &[String],
    configured: Fusion,
) -> Result<Vec<Variant>, ApiError> {
    let fusions: Vec<Fusion> = if fusions.is_empty() {
        vec![configured]
    } else {
        fusions
            .iter()
            .map(|f| Fusion::parse(f, configured))
            .collect::<Result<_, _>>()
            .map_err(|e| ApiError::invalid("fusion", e.to_string()))?
    };
    let mut out = Vec::new();
    for &mode in modes {
        let per_mode = if mode.mode == Mode::Hybrid {
            &fusions[..]
        } else {
            &fusions[..1]
        };
        out.extend(per_mode.iter().map(|&fusion| Variant {
            mode,
            fusion,
            ndcg: Vec::new(),
            recall: Vec::new(),
            rank_secs: 0.0,
        }));
    }
    Ok(out)
}

impl Session {
    /// `kebab eval run SUITE`: every golden query in every mode (`requested`,
    /// else all available), scored and recorded in the index; with
    /// `answers`, each query is also asked (as `kebab ask` would, one
    /// conversation per query) and its answer judged by its `must_contain`
    /// and `forbidden`. `note` gets what the user should know (vectors off,
    /// expected paths not indexed).
    pub fn eval_run(
        &self,
        suite: &Path,
        requested: &[String],
        k: usize,
        answers: bool,
        note: &mut dyn FnMut(String),
    ) -> Result<EvalReport, ApiError> {
        let app = self.app()?;
        let queries = eval::load_suite(suite)?;
        let indexes = Indexes::open(app, true);
        let reranker = reranker(app, requested)?;
        let modes = modes(requested, &indexes, app, reranker.as_ref(), note)?;
        let by_path: HashMap<String, String> = app
            .store
            .list_docs(None)?
            .into_iter()
            .map(|d| (d.workspace_path, d.doc_id))
            .collect();
        let filter = Default::default();
        let mut results: Vec<QueryResult> = Vec::new();
        for q in &queries {
            let mut docs: HashSet<String> = q.expected_doc_ids.iter().cloned().collect();
            for p in &q.expected_paths {
                match by_path.get(p) {
                    Some(id) => {
                        docs.insert(id.clone());
                    }
                    None => note(format!("{}: {p} is not indexed", q.id)),
                }
            }
            for &mode in &modes {
                let request = request(app, &indexes, &q.query, mode, k, &filter, reranker.as_ref());
                let hits: Vec<RankedHit> = kebab_search::search::retrieve(
                    &app.store,
                    indexes.vector_channel(app),
                    &request,
                )?
                .into_iter()
                .map(|r| RankedHit {
                    chunk_id: r.hit.chunk_id,
                    doc_id: r.hit.doc_id,
                })
                .collect();
                results.push(eval::score_query(q, &docs, &hits, k, mode.label()));
            }
        }
        let answered = if answers {
            self.answer_all(&queries)?
        } else {
            Vec::new()
        };
        let suite = suite.display().to_string();
        let modes = eval::aggregate(&results);
        let answer_rates = answers.then(|| eval::aggregate_answers(&queries, &answered));
        let run_id = record(self, &suite, &modes, &results, &answered, k)?;
        Ok(EvalReport {
            schema_version: "eval_report.v1",
            run_id,
            suite,
            k,
            queries: queries.len(),
            modes,
            per_query: results,
            answers: answer_rates,
            per_query_answers: answered,
        })
    }

    /// Ask every query and judge its answer; after Ctrl-C no further
    /// query is asked and the answers so far are reported.
    fn answer_all(
        &self,
        queries: &[eval::GoldenQuery],
    ) -> Result<Vec<eval::AnswerResult>, ApiError> {
        let cancel = kebab_core::interrupt::flag();
        let mut out = Vec::with_capacity(queries.len());
        for q in queries {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            let input = super::ask::AskInput {
                question: q.query.clone(),
                ..Default::default()
            };
            let answer = self.ask(&input, &mut |_| {}, cancel)?.answer;
            out.push(eval::score_answer(
                q,
                &answer.answer,
                answer.grounded,
                answer.refusal_reason,
                answer.claims.len(),
            ));
        }
        Ok(out)
    }

    /// `kebab eval beir DIR`: ingest the dataset into its own index beside
    /// the user's (`<data>/eval/beir-<name>/`) and measure nDCG@10 and
    /// recall@100 of the judged queries per mode and fusion.
    pub fn eval_beir(
        &self,
        dir: &Path,
        requested: &[String],
        fusions: &[String],
        limit: Option<usize>,
        note: &mut dyn FnMut(String),
    ) -> Result<BeirReport, ApiError> {
        let app = self.app()?;
        let beir = eval::beir::load(dir)?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "beir".into());
        let eval_paths = Paths {
            data_dir: app.paths.data_dir.join("eval").join(format!("beir-{name}")),
            ..app.paths.clone()
        };
        let mut eval_app = App::open(app.config.clone(), eval_paths)?;
        let corpus_dir = eval_app.paths.data_dir.join("corpus");
        let stems = eval::beir::write_corpus(&beir, &corpus_dir)?;
        note(format!(
            "ingesting {} documents from {} into {}",
            beir.corpus.len(),
            dir.display(),
            corpus_dir.display()
        ));
        let plugins = app.plugins()?;
        // A BEIR index is a throw-away of this machine's, never the
        // shared object store.
        let mut indexes = Indexes::for_ingest(app, VectorPlace::Dir(eval_app.paths.vector_dir()));
        let cancel = AtomicBool::new(false);
        let ingest = crate::ingest::ingest(
            &mut eval_app,
            &plugins,
            &mut indexes,
            &corpus_dir,
            None,
            &cancel,
            &mut |_| {},
        )?;
        let reranker = reranker(app, requested)?;
        let modes = modes(requested, &indexes, &eval_app, reranker.as_ref(), note)?;
        let judged = judged_queries(&beir, limit);
        let mut variants = variants(&modes, fusions, app.config.search.fusion())?;
        // Each query's candidates are gathered once, from the channels the
        // widest mode uses, and ranked under every variant: lexical and
        // vector rankings of the top 100 per channel are those of a search
        // per mode.
        let widest = widest(&modes);
        let filter = Default::default();
        let mut gather_secs = 0.0;
        for (qid, text) in &judged {
            let request = request(app, &indexes, text, widest, 100, &filter, None);
            let started = Instant::now();
            let candidates = kebab_search::search::candidates(
                &eval_app.store,
                indexes.vector_channel(&eval_app),
                &request,
            )?;
            gather_secs += started.elapsed().as_secs_f64();
            score_variants(
                &mut variants,
                &eval_app.store,
                &candidates,
                &request,
                reranker.as_ref(),
                &beir.qrels[qid],
                &stems,
            )?;
        }
        let modes = rows(&variants, judged.len(), gather_secs);
        Ok(BeirReport {
            schema_version: "beir_report.v1",
            dataset: name,
            documents: beir.corpus.len(),
            judged_queries: judged.len(),
            ingest: BeirIngest {
                new: ingest.counts.new,
                vectors: ingest.vectors,
            },
            modes,
        })
    }
}

/// Record an eval run in the index (through a connection of its own: the
/// session's stays a reader); its id.
fn record(
    session: &Session,
    suite: &str,
    aggregate: &BTreeMap<&'static str, Aggregate>,
    results: &[QueryResult],
    answers: &[eval::AnswerResult],
    k: usize,
) -> Result<String, ApiError> {
    use serde_json::json;
    let now = kebab_core::clock::now_rfc3339();
    let run_id =
        kebab_core::ids::id_from(&json!({ "kind": "eval_run", "suite": suite, "at": now }));
    let config = session.config();
    let config = json!({ "k": k, "search": config.search, "embedding": config.models.embedding });
    let per_query: Vec<(String, serde_json::Value)> = results
        .iter()
        .map(|r| (format!("{}:{}", r.id, r.mode), json!(r)))
        .chain(
            answers
                .iter()
                .map(|a| (format!("{}:answer", a.id), json!(a))),
        )
        .collect();
    crate::app::open_store(session.config(), session.paths())?.record_eval_run(
        &run_id,
        suite,
        &config,
        &json!(aggregate),
        &per_query,
    )?;
    Ok(run_id)
}
