//! `kebab eval`: retrieval quality on a golden query suite
//! or a BEIR dataset, per search mode.

pub mod beir;
pub mod metrics;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Problems reading an evaluation input.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// One golden query (`fixtures/golden_queries.yaml` format). Retrieval
/// metrics need `expected_chunk_ids` or expected documents (ids or paths);
/// `must_contain` / `forbidden` judge the answer `kebab eval run --answers`
/// asks for ([`score_answer`]).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct GoldenQuery {
    pub id: String,
    pub query: String,
    pub expected_chunk_ids: Vec<String>,
    pub expected_doc_ids: Vec<String>,
    /// Documents by workspace path (resolved to doc ids against the index).
    pub expected_paths: Vec<String>,
    pub must_contain: Vec<String>,
    pub forbidden: Vec<String>,
}

/// A suite file: `queries: [...]`, or the list alone.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum SuiteFile {
    Wrapped { queries: Vec<GoldenQuery> },
    Bare(Vec<GoldenQuery>),
}

/// Read a suite; queries without an id get `q<n>`.
pub fn load_suite(path: &Path) -> Result<Vec<GoldenQuery>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let file: SuiteFile = serde_yaml::from_str(&text).map_err(|e| EvalError::Invalid {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let mut queries = match file {
        SuiteFile::Wrapped { queries } | SuiteFile::Bare(queries) => queries,
    };
    for (i, q) in queries.iter_mut().enumerate() {
        if q.id.is_empty() {
            q.id = format!("q{}", i + 1);
        }
        if q.query.trim().is_empty() {
            return Err(EvalError::Invalid {
                path: path.display().to_string(),
                message: format!("query {} has no text", q.id),
            });
        }
    }
    Ok(queries)
}

/// A ranked hit as the metrics see it.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedHit {
    pub chunk_id: String,
    pub doc_id: String,
}

/// Metrics of one query in one mode (`None` where undefined).
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct QueryResult {
    pub id: String,
    pub mode: &'static str,
    pub hit_at_k: Option<f64>,
    pub mrr: Option<f64>,
    pub recall_at_k_doc: Option<f64>,
    pub precision_at_k_chunk: Option<f64>,
    pub ndcg_at_10: Option<f64>,
    pub top_chunk_ids: Vec<String>,
}

/// Means over the queries of one mode.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Aggregate {
    pub queries: usize,
    pub hit_at_k: Option<f64>,
    pub mrr: Option<f64>,
    pub recall_at_k_doc: Option<f64>,
    pub precision_at_k_chunk: Option<f64>,
    pub ndcg_at_10: Option<f64>,
}

/// Score one query's hits. Chunk-level judgements are used where given;
/// otherwise hit@k, MRR and nDCG are measured on documents.
pub fn score_query(
    q: &GoldenQuery,
    doc_ids: &HashSet<String>,
    hits: &[RankedHit],
    k: usize,
    mode: &'static str,
) -> QueryResult {
    let chunks: Vec<String> = hits.iter().map(|h| h.chunk_id.clone()).collect();
    let docs = metrics::first_occurrences(hits.iter().map(|h| h.doc_id.clone()));
    let expected_chunks: HashSet<String> = q.expected_chunk_ids.iter().cloned().collect();
    let (ranked, relevant) = if !expected_chunks.is_empty() {
        (&chunks, &expected_chunks)
    } else {
        (&docs, doc_ids)
    };
    let judged = !relevant.is_empty();
    let gains: HashMap<String, f64> = relevant.iter().map(|r| (r.clone(), 1.0)).collect();
    QueryResult {
        id: q.id.clone(),
        mode,
        hit_at_k: judged.then(|| metrics::hit_at_k(ranked, relevant, k)),
        mrr: judged.then(|| metrics::reciprocal_rank(ranked, relevant, k)),
        recall_at_k_doc: (!doc_ids.is_empty()).then(|| {
            let top_docs =
                metrics::first_occurrences(hits.iter().take(k).map(|h| h.doc_id.clone()));
            metrics::recall_at_k(&top_docs, doc_ids, usize::MAX)
        }),
        precision_at_k_chunk: (!expected_chunks.is_empty())
            .then(|| metrics::precision_at_k(&chunks, &expected_chunks, k)),
        ndcg_at_10: judged.then(|| metrics::ndcg_at_k(ranked, &gains, 10)),
        top_chunk_ids: chunks.into_iter().take(k).collect(),
    }
}

/// How one golden query's answer fared (`eval_report.v1` `answers`).
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct AnswerResult {
    pub id: String,
    /// Whether the answer was accepted as grounded (cited evidence).
    pub grounded: bool,
    /// Why not, when it was refused (`answer.v1` `refusal_reason`).
    pub refusal_reason: Option<&'static str>,
    /// Sentences of the answer that cite evidence.
    pub cited_claims: usize,
    /// `must_contain` strings the answer lacks.
    pub missing: Vec<String>,
    /// `forbidden` strings the answer holds.
    pub forbidden_found: Vec<String>,
    /// Grounded, nothing missing and nothing forbidden.
    pub passed: bool,
}

/// Rates over the answered queries of a run.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct AnswerAggregate {
    pub queries: usize,
    /// Share of answers accepted as grounded.
    pub grounded_rate: f64,
    /// Share of the queries with `must_contain` whose answer holds all of it.
    pub must_contain_rate: Option<f64>,
    /// Share of the queries with `forbidden` whose answer holds none of it.
    pub forbidden_free_rate: Option<f64>,
    /// Share of answers that pass ([`AnswerResult::passed`]).
    pub pass_rate: f64,
}

/// Judge an answer against `q`'s `must_contain` and `forbidden`: each
/// string is looked for case-insensitively (Unicode lowercase) in the
/// answer's text. A refused answer passes nothing it must contain.
pub fn score_answer(
    q: &GoldenQuery,
    text: &str,
    grounded: bool,
    refusal_reason: Option<&'static str>,
    cited_claims: usize,
) -> AnswerResult {
    let text = text.to_lowercase();
    let holds = |s: &String| text.contains(&s.to_lowercase());
    let missing: Vec<String> = q
        .must_contain
        .iter()
        .filter(|s| !grounded || !holds(s))
        .cloned()
        .collect();
    let forbidden_found: Vec<String> = q.forbidden.iter().filter(|s| holds(s)).cloned().collect();
    AnswerResult {
        id: q.id.clone(),
        grounded,
        refusal_reason,
        cited_claims,
        passed: grounded && missing.is_empty() && forbidden_found.is_empty(),
        missing,
        forbidden_found,
    }
}

/// The rates of `results`, the answers to `queries` (in order).
pub fn aggregate_answers(queries: &[GoldenQuery], results: &[AnswerResult]) -> AnswerAggregate {
    let share = |n: usize, of: usize| n as f64 / of.max(1) as f64;
    let judged = |f: fn(&GoldenQuery) -> bool, ok: fn(&AnswerResult) -> bool| {
        let pairs: Vec<_> = queries.iter().zip(results).filter(|(q, _)| f(q)).collect();
        (!pairs.is_empty()).then(|| share(pairs.iter().filter(|(_, r)| ok(r)).count(), pairs.len()))
    };
    AnswerAggregate {
        queries: results.len(),
        grounded_rate: share(results.iter().filter(|r| r.grounded).count(), results.len()),
        must_contain_rate: judged(|q| !q.must_contain.is_empty(), |r| r.missing.is_empty()),
        forbidden_free_rate: judged(
            |q| !q.forbidden.is_empty(),
            |r| r.forbidden_found.is_empty(),
        ),
        pass_rate: share(results.iter().filter(|r| r.passed).count(), results.len()),
    }
}

/// Means per mode, in the order the modes were run.
pub fn aggregate(results: &[QueryResult]) -> BTreeMap<&'static str, Aggregate> {
    let mut by_mode: BTreeMap<&'static str, Vec<&QueryResult>> = BTreeMap::new();
    for r in results {
        by_mode.entry(r.mode).or_default().push(r);
    }
    by_mode
        .into_iter()
        .map(|(mode, rs)| {
            let m = |f: fn(&QueryResult) -> Option<f64>| {
                metrics::mean(&rs.iter().map(|r| f(r)).collect::<Vec<_>>())
            };
            (
                mode,
                Aggregate {
                    queries: rs.len(),
                    hit_at_k: m(|r| r.hit_at_k),
                    mrr: m(|r| r.mrr),
                    recall_at_k_doc: m(|r| r.recall_at_k_doc),
                    precision_at_k_chunk: m(|r| r.precision_at_k_chunk),
                    ndcg_at_10: m(|r| r.ndcg_at_10),
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(c: &str, d: &str) -> RankedHit {
        RankedHit {
            chunk_id: c.into(),
            doc_id: d.into(),
        }
    }

    #[test]
    fn suites_load_wrapped_or_bare_and_reject_empty_queries() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        std::fs::write(
            &p,
            "queries:\n  - query: raft leader\n    expected_paths: [raft.md]\n  - id: k\n    query: x\n",
        )
        .unwrap();
        let q = load_suite(&p).unwrap();
        assert_eq!((q[0].id.as_str(), q[1].id.as_str()), ("q1", "k"));
        assert_eq!(q[0].expected_paths, vec!["raft.md"]);
        std::fs::write(&p, "- query: a\n  expected_doc_ids: [d]\n").unwrap();
        assert_eq!(load_suite(&p).unwrap()[0].expected_doc_ids, vec!["d"]);
        std::fs::write(&p, "- query: ''\n").unwrap();
        assert!(matches!(load_suite(&p), Err(EvalError::Invalid { .. })));
        std::fs::write(&p, "- query: a\n  expected: [d]\n").unwrap();
        assert!(load_suite(&p).is_err(), "unknown keys are rejected");
    }

    #[test]
    fn answers_are_judged_by_what_they_hold_and_refusals_fail() {
        let q = GoldenQuery {
            id: "a".into(),
            query: "x".into(),
            must_contain: vec!["Raft".into(), "leader".into()],
            forbidden: vec!["paxos".into()],
            ..Default::default()
        };
        let good = score_answer(&q, "A raft cluster elects a LEADER [#1].", true, None, 1);
        assert!(good.passed && good.missing.is_empty(), "{good:?}");
        let bad = score_answer(&q, "Raft is Paxos [#1].", true, None, 1);
        assert_eq!(bad.missing, vec!["leader"]);
        assert_eq!(bad.forbidden_found, vec!["paxos"]);
        assert!(!bad.passed);
        // A refusal that happens to quote the words still misses them.
        let refused = score_answer(&q, "raft leader?", false, Some("llm_self_judge"), 0);
        assert_eq!(refused.missing.len(), 2);
        assert!(!refused.passed);
        let none = GoldenQuery {
            id: "b".into(),
            must_contain: vec![],
            forbidden: vec![],
            ..q.clone()
        };
        let plain = score_answer(&none, "anything [#1]", true, None, 1);
        let agg = aggregate_answers(&[q, none], &[good, plain]);
        assert_eq!(agg.pass_rate, 1.0);
        assert_eq!(agg.must_contain_rate, Some(1.0));
        assert_eq!(agg.forbidden_free_rate, Some(1.0));
        assert_eq!(agg.grounded_rate, 1.0);
    }

    #[test]
    fn chunk_judgements_win_and_documents_fill_in() {
        let hits = vec![hit("c1", "d1"), hit("c2", "d1"), hit("c3", "d2")];
        let q = GoldenQuery {
            id: "a".into(),
            query: "x".into(),
            expected_chunk_ids: vec!["c2".into()],
            ..Default::default()
        };
        let docs: HashSet<String> = ["d2".to_string()].into();
        let r = score_query(&q, &docs, &hits, 10, "hybrid");
        assert_eq!(r.mrr, Some(0.5));
        assert_eq!(r.precision_at_k_chunk, Some(0.1));
        assert_eq!(r.recall_at_k_doc, Some(1.0));
        let q = GoldenQuery {
            expected_chunk_ids: vec![],
            ..q
        };
        let r = score_query(&q, &docs, &hits, 10, "lexical");
        // Documents in first-occurrence order: d1, d2 → d2 at rank 2.
        assert_eq!(r.mrr, Some(0.5));
        assert_eq!(r.precision_at_k_chunk, None);
        let agg = aggregate(&[
            r.clone(),
            QueryResult {
                mrr: Some(1.0),
                ..r
            },
        ]);
        assert_eq!(agg["lexical"].mrr, Some(0.75));
        assert_eq!(agg["lexical"].queries, 2);
    }
}
