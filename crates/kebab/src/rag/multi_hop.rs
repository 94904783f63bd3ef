//! Multi-hop evidence gathering (design §3.8): the model splits the
//! question into search queries (`decompose`), each query's chunks past the
//! score gate join the evidence, and the model decides whether that is
//! enough (`stop`) or which searches would find the rest (`continue`),
//! round after round until it stops, `[rag] max_depth` rounds have run or
//! `[rag] multi_hop_secs` has passed (`forced_stop`: then no decision is
//! asked for, since none could be followed). The answer is then
//! written from all the evidence by the single-pass machinery with the
//! `rag-multi-hop-v1` template ([`super::ask`]).
//!
//! The planning replies are JSON the model writes; they are read
//! leniently (the first `{` to the last `}`, unknown fields ignored) and
//! every search query is cleaned and bounded: at most
//! [`MAX_SUB_QUERIES`] a step, each at most [`MAX_QUERY_CHARS`]
//! characters, none asked twice.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use kebab_core::wire::Hop;
use kebab_search::search::{self, Retrieved};
use kebab_store::Store;

use super::prompt::{self, MULTI_HOP_DECIDE, MULTI_HOP_DECOMPOSE, Template};
use super::{AskOptions, RagConfig, evidence_budget, pack, retrieve};
use crate::llm::{LlmClient, LlmError};

/// Search queries one planning step may ask for.
pub const MAX_SUB_QUERIES: usize = 5;

/// Characters of one search query the planner wrote.
const MAX_QUERY_CHARS: usize = 200;

/// What the gathering produced.
#[derive(Debug, Default)]
pub(super) struct Gathered {
    /// Chunks past the score gate, in the order they were found (each
    /// round's queries interleaved by rank).
    pub evidence: Vec<Retrieved>,
    /// Every chunk retrieved, best relevance first (the refusal's
    /// candidates and the `--explain` trace when no evidence passed).
    pub candidates: Vec<Retrieved>,
    /// The steps taken.
    pub hops: Vec<Hop>,
    /// The outcome that ends the ask early, instead of an answer.
    pub end: Option<End>,
    /// Why the gathering did less than asked, for `answer.v1.notes`.
    pub notes: Vec<String>,
}

/// Why a multi-hop ask ends without writing an answer from evidence.
#[derive(Debug)]
pub(super) enum End {
    /// The question could not be split into search queries.
    DecomposeFailed,
    /// `auto` mode: the question is not compound; answer it in one pass.
    SinglePass,
    /// A planning call failed (or was cancelled).
    Model(LlmError),
}

/// A planning reply as the model writes it.
#[derive(Debug, Default, Deserialize)]
struct Reply {
    #[serde(default)]
    compound: Option<bool>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    sub_queries: Vec<Value>,
}

/// Gather the evidence for `question` (retrieved with `query`, the
/// question with any follow-up context). `auto`: a question the
/// decomposition calls simple ends with [`End::SinglePass`], and an
/// unreadable decomposition too (with a note), instead of a refusal.
#[allow(clippy::too_many_arguments)]
pub(super) fn gather(
    store: &Store,
    llm: &LlmClient,
    rag: &RagConfig,
    opts: &AskOptions<'_>,
    question: &str,
    query: &str,
    mode: search::Mode,
    auto: bool,
    cancel: &AtomicBool,
) -> Result<Gathered, search::SearchError> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(rag.multi_hop_secs);
    let k = opts.k.unwrap_or(rag.k).max(1);
    let mut out = Gathered::default();
    let mut pool = Pool::default();
    let mut asked: Vec<String> = vec![query.to_lowercase()];

    let timer = Instant::now();
    let reply = match plan(llm, &MULTI_HOP_DECOMPOSE, question, &[], cancel) {
        Ok(reply) => reply,
        Err(e) => {
            out.end = Some(End::Model(e));
            return Ok(out);
        }
    };
    let decompose_ms = timer.elapsed().as_millis() as u64;
    let queries = reply
        .as_ref()
        .map(|r| clean_queries(&r.sub_queries, &mut asked))
        .unwrap_or_default();
    let compound = reply
        .as_ref()
        .is_some_and(|r| r.compound.unwrap_or(queries.len() > 1));
    if auto && (!compound || queries.is_empty()) {
        out.hops
            .push(hop("decompose", 0, queries, 0, decompose_ms, false));
        if reply.is_none() {
            out.notes.push(
                "multi-hop: the model's split of the question was not readable; answered in one pass"
                    .into(),
            );
        }
        out.end = Some(End::SinglePass);
        return Ok(out);
    }
    if queries.is_empty() {
        out.hops
            .push(hop("decompose", 0, queries, 0, decompose_ms, false));
        out.end = Some(End::DecomposeFailed);
        return Ok(out);
    }
    // The question itself is searched too: multi-hop never has less
    // evidence than a single pass would.
    let mut first = vec![query.to_string()];
    first.extend(queries.iter().cloned());
    let added = pool.add(store, opts, &first, k, mode, rag.score_gate)?;
    out.hops
        .push(hop("decompose", 0, queries, added, decompose_ms, false));

    let budget = evidence_budget(llm, rag, &MULTI_HOP_DECIDE, question);
    let mut iter = 1u32;
    loop {
        // At the depth bound no decision is asked for: none could be
        // followed.
        if iter >= rag.max_depth {
            out.hops.push(hop("stop", iter, Vec::new(), 0, 0, true));
            out.notes.push(format!(
                "multi-hop: stopped at [rag] max_depth = {} search rounds",
                rag.max_depth
            ));
            break;
        }
        if Instant::now() >= deadline {
            out.hops.push(hop("stop", iter, Vec::new(), 0, 0, true));
            out.notes.push(format!(
                "multi-hop: stopped after {iter} search rounds, the {} s budget ([rag] multi_hop_secs) spent",
                rag.multi_hop_secs
            ));
            break;
        }
        let packed = pack(&pool.evidence, budget);
        let timer = Instant::now();
        let reply = match plan(llm, &MULTI_HOP_DECIDE, question, &packed, cancel) {
            Ok(reply) => reply,
            Err(e) => {
                out.end = Some(End::Model(e));
                break;
            }
        };
        let ms = timer.elapsed().as_millis() as u64;
        let Some(reply) = reply else {
            out.hops.push(hop("stop", iter, Vec::new(), 0, ms, false));
            out.notes.push(
                "multi-hop: the model's decision was not readable; answered from the evidence found"
                    .into(),
            );
            break;
        };
        let wants_more = reply.kind.as_deref() == Some("continue");
        let queries = if wants_more {
            clean_queries(&reply.sub_queries, &mut asked)
        } else {
            Vec::new()
        };
        if queries.is_empty() {
            out.hops.push(hop("stop", iter, Vec::new(), 0, ms, false));
            break;
        }
        let added = pool.add(store, opts, &queries, k, mode, rag.score_gate)?;
        out.hops
            .push(hop("continue", iter, queries, added, ms, false));
        iter += 1;
    }
    out.evidence = pool.evidence;
    out.candidates = pool.candidates;
    out.candidates
        .sort_by(|a, b| b.relevance.total_cmp(&a.relevance));
    for (i, r) in out.candidates.iter_mut().enumerate() {
        r.hit.rank = i as u32 + 1;
    }
    Ok(out)
}

/// One step's record.
fn hop(
    kind: &'static str,
    iter: u32,
    sub_queries: Vec<String>,
    context_chunks_added: u32,
    llm_call_ms: u64,
    forced_stop: bool,
) -> Hop {
    Hop {
        kind,
        iter,
        sub_queries,
        context_chunks_added,
        llm_call_ms,
        forced_stop,
    }
}

/// Ask the model one planning question: its reply, `None` when it is not
/// the JSON asked for.
fn plan(
    llm: &LlmClient,
    template: &Template,
    question: &str,
    packed: &[prompt::Packed],
    cancel: &AtomicBool,
) -> Result<Option<Reply>, LlmError> {
    let messages = prompt::messages(template, question, packed, &[], 0, &prompt::new_tag());
    let completion = llm.chat(&messages, &mut |_| {}, cancel)?;
    Ok(parse_reply(&completion.text))
}

/// The JSON object in a planning reply: from its first `{` to its last
/// `}` (models wrap it in prose or a code fence).
fn parse_reply(text: &str) -> Option<Reply> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    serde_json::from_str(text.get(start..=end)?).ok()
}

/// The reply's search queries that are strings, cleaned (whitespace
/// collapsed, cut to [`MAX_QUERY_CHARS`]), not asked before (`asked`
/// records them, lower-cased), at most [`MAX_SUB_QUERIES`].
fn clean_queries(raw: &[Value], asked: &mut Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for q in raw.iter().filter_map(Value::as_str) {
        let q: String = q
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(MAX_QUERY_CHARS)
            .collect();
        let key = q.to_lowercase();
        if q.is_empty() || asked.contains(&key) {
            continue;
        }
        asked.push(key);
        out.push(q);
        if out.len() == MAX_SUB_QUERIES {
            break;
        }
    }
    out
}

/// The chunks found so far: each once among the evidence (past the gate
/// for some query) and once among the candidates (its best relevance
/// over the queries that found it).
#[derive(Debug, Default)]
struct Pool {
    in_evidence: HashSet<String>,
    evidence: Vec<Retrieved>,
    candidate_at: HashMap<String, usize>,
    candidates: Vec<Retrieved>,
}

impl Pool {
    /// Retrieve each query's top `k` and add what is new, the queries'
    /// results interleaved by rank (every query's best chunk before any
    /// query's second); how many chunks joined the evidence (passed
    /// `gate` for this round's query and were not evidence yet).
    fn add(
        &mut self,
        store: &Store,
        opts: &AskOptions<'_>,
        queries: &[String],
        k: usize,
        mode: search::Mode,
        gate: f64,
    ) -> Result<u32, search::SearchError> {
        let mut lists = Vec::with_capacity(queries.len());
        for q in queries {
            lists.push(retrieve(store, opts, q, k, mode)?.into_iter());
        }
        let mut added = 0;
        loop {
            let mut any = false;
            for list in &mut lists {
                let Some(r) = list.next() else { continue };
                any = true;
                if r.relevance >= gate && self.in_evidence.insert(r.hit.chunk_id.clone()) {
                    self.evidence.push(r.clone());
                    added += 1;
                }
                match self.candidate_at.get(&r.hit.chunk_id) {
                    Some(&i) if self.candidates[i].relevance >= r.relevance => {}
                    Some(&i) => self.candidates[i] = r,
                    None => {
                        self.candidate_at
                            .insert(r.hit.chunk_id.clone(), self.candidates.len());
                        self.candidates.push(r);
                    }
                }
            }
            if !any {
                break;
            }
        }
        Ok(added)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replies_are_read_from_prose_and_code_fences() {
        let r = parse_reply(
            "Sure!\n```json\n{\"compound\": true, \"sub_queries\": [\"a\", \"b\"]}\n```",
        )
        .unwrap();
        assert_eq!(r.compound, Some(true));
        assert_eq!(r.sub_queries.len(), 2);
        let r = parse_reply("{\"kind\": \"stop\", \"extra\": 1}").unwrap();
        assert_eq!(r.kind.as_deref(), Some("stop"));
        for bad in ["no json here", "{not json}", "} {", ""] {
            assert!(parse_reply(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn queries_are_cleaned_bounded_and_never_asked_twice() {
        let mut asked = vec!["the question".to_string()];
        let raw = json!([
            "  who   wrote\nit ",
            "The Question",
            "",
            42,
            "WHO WROTE IT",
            "x".repeat(500),
            "c",
            "d",
            "e",
            "f",
            "g"
        ]);
        let out = clean_queries(raw.as_array().unwrap(), &mut asked);
        assert_eq!(out.len(), MAX_SUB_QUERIES);
        assert_eq!(out[0], "who wrote it");
        assert_eq!(out[1].chars().count(), MAX_QUERY_CHARS);
        assert_eq!(&out[2..], ["c", "d", "e"]);
        // What was asked stays asked.
        let again = clean_queries(json!(["c", "h"]).as_array().unwrap(), &mut asked);
        assert_eq!(again, ["h"]);
    }
}
