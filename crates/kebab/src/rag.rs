//! `kebab ask`: retrieve → score gate → pack evidence → prompt (`[rag]
//! prompt_template_version`, [`prompt`]) → stream → strict `[#n]` citation check → answer, persisted
//! on every path.

pub mod config;
pub mod prompt;

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde_json::{Value, json};

use kebab_core::wire::{
    Answer, AnswerCitation, AnswerClaim, AnswerRetrieval, ClaimEvidence, EmbeddingRef, ModelRef,
    Usage,
};
use kebab_plugin_sdk::text::estimate_tokens;
use kebab_search::config::SearchConfig;
use kebab_search::search::{self, Retrieved};
use kebab_store::{AnswerRow, ChunkFilter, Store, TurnRow};

use crate::llm::{Completion, LlmClient, LlmError};
pub use config::RagConfig;
pub use prompt::{Packed, Template};

/// Candidates listed with a score-gate refusal.
const CANDIDATES: usize = 3;

/// Phrases that mark an answer as the model declining.
const REFUSAL_PHRASES: &[&str] = &[
    "insufficient evidence",
    "not enough evidence",
    "근거가 부족",
    "근거 부족",
];

/// Options of one question.
#[derive(Debug, Clone)]
pub struct AskOptions<'a> {
    /// How retrieval shapes and fuses hits (`[search]`).
    pub search: &'a SearchConfig,
    /// Chunks to retrieve (defaults to `[rag] k`).
    pub k: Option<usize>,
    /// Keep the packed evidence in the stored answer.
    pub explain: bool,
    /// Conversation to continue (created on first use).
    pub session: Option<String>,
    /// The vector channel; with it retrieval is hybrid (or `mode`), else
    /// lexical.
    pub vectors: Option<search::VectorChannel<'a>>,
    /// The retrieval mode asked for [default: hybrid with a vector
    /// channel, else lexical]; vector and hybrid need `vectors`.
    pub mode: Option<search::Mode>,
    /// Korean analyzer for the question.
    pub korean: Option<&'a kebab_search::korean::KoreanAnalyzer>,
    /// Cross-encoder that reorders the evidence (`[search.rerank]`).
    pub rerank: Option<&'a kebab_search::rerank::Reranker>,
    /// Only evidence from these roots (every root when empty).
    pub roots: Vec<String>,
    /// Only evidence from documents in this language.
    pub lang: Option<String>,
    /// Only evidence from documents trusted at least this much.
    pub trust_min: Option<kebab_core::trust::TrustLevel>,
}

/// Everything `ask` produced, for printing.
#[derive(Debug)]
pub struct AskOutcome {
    pub answer: Answer,
    /// All retrieved chunks, best first (the `--explain` trace).
    pub retrieved: Vec<Retrieved>,
    pub packed: Vec<Packed>,
    /// Set when the model call failed (the answer then holds any partial text).
    pub error: Option<LlmError>,
}

/// Answer `question` from the index.
pub fn ask(
    store: &mut Store,
    llm: &LlmClient,
    rag: &RagConfig,
    question: &str,
    opts: &AskOptions<'_>,
    on_token: &mut dyn FnMut(&str),
    cancel: &AtomicBool,
) -> Result<AskOutcome, search::SearchError> {
    let started = Instant::now();
    let k = opts.k.unwrap_or(rag.k).max(1);
    let history = match &opts.session {
        Some(id) => store.session_turns(id)?,
        None => Vec::new(),
    };
    let query = follow_up_query(question, history.last());
    let mode = retrieval_mode(opts)?;
    let vectors = opts.vectors.filter(|_| mode != search::Mode::Lexical);
    let retrieved = retrieve(store, opts, &query, k, mode)?;
    // The gate needs a bounded relevance: the best chunk's share of the
    // question's words or its cosine similarity, whichever is larger.
    let top_score = retrieved.iter().map(|r| r.relevance).fold(0.0, f64::max);
    let korean = kebab_search::korean::has_hangul(question);
    let mut draft = Draft::new(
        llm,
        rag,
        question,
        k,
        top_score,
        retrieved.len(),
        opts,
        history.len(),
    );
    draft.mode = mode.as_str();
    draft.embedding = vectors.map(|v| EmbeddingRef::from(v.embedder.spec()));

    let (packed, error) = if retrieved.is_empty() {
        draft.refuse(
            "no_chunks",
            refusal_text(korean, "no_chunks", rag.score_gate, &[]),
            Vec::new(),
        );
        (Vec::new(), None)
    } else if top_score < rag.score_gate {
        let nearest = &retrieved[..retrieved.len().min(CANDIDATES)];
        let candidates: Vec<AnswerCitation> = nearest
            .iter()
            .map(|r| AnswerCitation {
                marker: None,
                citation: r.hit.citation.clone(),
            })
            .collect();
        let text = refusal_text(korean, "score_gate", rag.score_gate, nearest);
        draft.refuse("score_gate", text, candidates);
        (Vec::new(), None)
    } else {
        let turn = Turn {
            question,
            history: &history,
            explain: opts.explain,
        };
        generate(&mut draft, llm, rag, &turn, &retrieved, on_token, cancel)
    };
    let mut answer = draft.finish(started);
    if answer.grounded {
        answer.claims = claims(&answer.answer, &packed);
    }
    let outcome = AskOutcome {
        answer,
        retrieved,
        packed,
        error,
    };
    record(store, &draft, &outcome, opts, &history, question, llm)?;
    Ok(outcome)
}

/// Characters of the previous answer a follow-up is retrieved with.
const FOLLOW_UP_CHARS: usize = 200;

/// What a question is retrieved with: a follow-up ("and its X?") together
/// with the first [`FOLLOW_UP_CHARS`] characters of the answer before it,
/// its `[#n]` markers left out (design §3.8, retrieval query expansion).
fn follow_up_query(question: &str, previous: Option<&TurnRow>) -> String {
    match previous {
        Some(prev) => {
            let context: String = strip_markers(&prev.answer)
                .chars()
                .take(FOLLOW_UP_CHARS)
                .collect();
            format!("{question} {}", context.trim())
        }
        None => question.to_string(),
    }
}

/// The refusal of a question asked of an index that holds nothing
/// (`refusal_reason` `no_index`); nothing is stored and no model is called.
pub fn refuse_without_index(
    llm: &LlmClient,
    rag: &RagConfig,
    question: &str,
    opts: &AskOptions<'_>,
) -> Answer {
    let k = opts.k.unwrap_or(rag.k).max(1);
    let mut draft = Draft::new(llm, rag, question, k, 0.0, 0, opts, 0);
    let korean = kebab_search::korean::has_hangul(question);
    draft.refuse(
        "no_index",
        refusal_text(korean, "no_index", rag.score_gate, &[]),
        Vec::new(),
    );
    draft.finish(Instant::now())
}

/// The evidence for `query`: the top `k` chunks in `mode`.
fn retrieve(
    store: &Store,
    opts: &AskOptions<'_>,
    query: &str,
    k: usize,
    mode: search::Mode,
) -> Result<Vec<Retrieved>, search::SearchError> {
    let filter = ChunkFilter {
        roots: opts.roots.clone(),
        lang: opts.lang.clone(),
        trust_min: opts.trust_min,
        ..Default::default()
    };
    let request = search::Request {
        query,
        k,
        mode,
        filter: &filter,
        snippet_chars: opts.search.snippet_chars,
        fusion: opts.search.fusion(),
        candidates: opts.search.candidates,
        korean: opts.korean,
        rerank: opts.rerank,
    };
    let vectors = opts.vectors.filter(|_| mode != search::Mode::Lexical);
    search::retrieve(store, vectors, &request)
}

/// The retrieval mode of an ask: the one asked for (vector modes need a
/// loaded model), else hybrid with a model and lexical without.
fn retrieval_mode(opts: &AskOptions<'_>) -> Result<search::Mode, search::SearchError> {
    Ok(match (opts.mode, opts.vectors) {
        (Some(search::Mode::Lexical), _) | (None, None) => search::Mode::Lexical,
        (Some(m), Some(_)) => m,
        (None, Some(_)) => search::Mode::Hybrid,
        (Some(m), None) => {
            return Err(search::SearchError::NoVectors {
                mode: m.as_str(),
                reason: "no embedding model is loaded".into(),
            });
        }
    })
}

/// The conversation turn being answered.
struct Turn<'a> {
    question: &'a str,
    history: &'a [TurnRow],
    /// Keep the packed evidence in the answer (`--explain`).
    explain: bool,
}

/// Pack the evidence into the model's budget, ask the model, and let the
/// draft judge the completion; the packed evidence and the model's error.
fn generate(
    draft: &mut Draft<'_>,
    llm: &LlmClient,
    rag: &RagConfig,
    turn: &Turn<'_>,
    retrieved: &[Retrieved],
    on_token: &mut dyn FnMut(&str),
    cancel: &AtomicBool,
) -> (Vec<Packed>, Option<LlmError>) {
    let budget = rag
        .max_context_tokens
        .min(llm.config().context_tokens.saturating_sub(
            estimate_tokens(&rag.template().system_prompt())
                + estimate_tokens(turn.question)
                + llm.config().max_answer_tokens,
        ))
        .max(1);
    let packed = pack(retrieved, budget);
    let used: u32 = packed.iter().map(|p| p.tokens).sum();
    let messages = prompt::messages(
        rag.template(),
        turn.question,
        &packed,
        turn.history,
        budget.saturating_sub(used),
        &prompt::new_tag(),
    );
    let error = match llm.chat(&messages, on_token, cancel) {
        Ok(completion) => {
            draft.judge(&completion, &packed);
            None
        }
        Err(e) => {
            draft.failed(&e);
            Some(e)
        }
    };
    draft.chunks_used = packed.len() as u32;
    if turn.explain {
        draft.packed_json = Some(Value::Array(
            packed
                .iter()
                .map(|p| json!({ "marker": p.marker, "chunk_id": p.retrieved.hit.chunk_id, "text": p.retrieved.text }))
                .collect(),
        ));
    }
    (packed, error)
}

/// Store the answer, and the turn when the ask belongs to a session and
/// the model answered.
fn record(
    store: &mut Store,
    draft: &Draft<'_>,
    outcome: &AskOutcome,
    opts: &AskOptions<'_>,
    history: &[TurnRow],
    question: &str,
    llm: &LlmClient,
) -> Result<(), search::SearchError> {
    let answer = &outcome.answer;
    store.insert_answer(&draft.row(answer))?;
    if let (Some(session), None) = (&opts.session, &outcome.error) {
        let turn = TurnRow {
            turn_index: history.len() as u32,
            question: question.to_string(),
            answer: answer.answer.clone(),
        };
        let snapshot = json!({
            "prompt_template_version": answer.prompt_template_version,
            "model": llm.config().model,
        });
        store.append_turn(
            session,
            &turn,
            &serde_json::to_value(&answer.citations).unwrap_or_default(),
            &snapshot,
        )?;
    }
    Ok(())
}

/// Evidence in rank order while it fits `budget` tokens; the first chunk
/// always goes in (cut to the budget if it alone is too long).
pub fn pack(retrieved: &[Retrieved], budget: u32) -> Vec<Packed> {
    let mut out: Vec<Packed> = Vec::new();
    let mut used = 0u32;
    for r in retrieved {
        let tokens = estimate_tokens(&r.text) + 16;
        if used + tokens > budget {
            if out.is_empty() {
                let mut first = r.clone();
                let keep = (budget as usize).saturating_mul(3);
                first.text = first.text.chars().take(keep).collect();
                out.push(Packed {
                    marker: 1,
                    tokens: estimate_tokens(&first.text) + 16,
                    retrieved: first,
                });
            }
            break;
        }
        used += tokens;
        out.push(Packed {
            marker: out.len() as u32 + 1,
            retrieved: r.clone(),
            tokens,
        });
    }
    out
}

/// The `[#…]` markers of `text`, in order: `Some(n)` for a strict `[#n]`
/// (`[#` + ASCII digits without a leading zero + `]`), `None` for any other
/// number-shaped one (`[#01]`, `[#0]`, `[#1a]`, `[# 1]`, `[#1,2]`, `[#-1]`,
/// `[#１]`), which can point at no entry. `[#` followed by no number
/// (`[#]`, `[#anchor]`) is not a marker.
pub fn markers(text: &str) -> Vec<Option<u32>> {
    text.match_indices("[#")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let number = rest.trim_start_matches([' ', '+', '-']);
            if !number.starts_with(|c: char| c.is_numeric()) {
                return None;
            }
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let strict = digits > 0 && !rest.starts_with('0') && rest[digits..].starts_with(']');
            Some(strict.then(|| rest[..digits].parse().ok()).flatten())
        })
        .collect()
}

/// Each sentence of `answer` that cites evidence, without its markers,
/// with the packed entries it cites (markers naming no entry are left out)
/// and, for each, the entry's line sharing the most words with the
/// sentence: what `ask --explain` shows and every front end receives.
pub fn claims(answer: &str, packed: &[Packed]) -> Vec<AnswerClaim> {
    answer
        .split_inclusive(['.', '!', '?', '。', '\n'])
        .filter_map(|sentence| {
            let cited = markers(sentence);
            if cited.is_empty() {
                return None;
            }
            let text = strip_markers(sentence)
                .trim()
                .trim_end_matches(['.', '!', '?', '。'])
                .to_string();
            let evidence = cited
                .into_iter()
                .flatten()
                .filter_map(|m| {
                    let p = (m as usize).checked_sub(1).and_then(|i| packed.get(i))?;
                    Some(ClaimEvidence {
                        marker: format!("[#{m}]"),
                        uri: p.retrieved.hit.citation.uri().to_string(),
                        line: best_line(&p.retrieved.text, &text),
                    })
                })
                .collect();
            Some(AnswerClaim { text, evidence })
        })
        .collect()
}

/// `text` without its strict `[#n]` markers.
fn strip_markers(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("[#") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 2..];
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(']') {
            rest = &tail[digits + 1..];
        } else {
            out.push_str("[#");
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// The line of `evidence` sharing the most words with `claim`, cut to 160
/// characters.
fn best_line(evidence: &str, claim: &str) -> Option<String> {
    let words = search::query_terms(claim);
    evidence
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let lw = search::query_terms(l);
            (words.iter().filter(|w| lw.contains(w)).count(), l)
        })
        .filter(|(n, _)| *n > 0)
        .max_by_key(|(n, _)| *n)
        .map(|(_, l)| l.chars().take(160).collect())
}

/// Whether the answer is grounded: non-empty, at least one marker, every
/// marker a strict `[#n]` naming a packed entry, and no refusal phrase.
/// Returns the cited markers in order of first use.
pub fn judge(text: &str, packed: usize) -> (bool, Vec<u32>) {
    let found = markers(text);
    let mut cited: Vec<u32> = Vec::new();
    for m in found.iter().flatten() {
        if !cited.contains(m) {
            cited.push(*m);
        }
    }
    let lower = text.to_lowercase();
    let refused = REFUSAL_PHRASES.iter().any(|p| lower.contains(p));
    let valid = !found.is_empty()
        && found
            .iter()
            .all(|m| m.is_some_and(|n| n >= 1 && n as usize <= packed));
    (!text.trim().is_empty() && valid && !refused, cited)
}

/// kebab's own refusal text, in the question's language.
fn refusal_text(korean: bool, reason: &str, gate: f64, candidates: &[Retrieved]) -> String {
    let mut text = match (reason, korean) {
        ("no_index", true) => {
            "근거 없음. 아직 색인된 문서가 없습니다 (`kebab ingest <dir>`).".to_string()
        }
        ("no_index", false) => {
            "Nothing is indexed yet, so there is no evidence to answer from (`kebab ingest <dir>`)."
                .to_string()
        }
        ("no_chunks", true) => "근거 부족. KB 에 해당 내용 없음.".to_string(),
        ("no_chunks", false) => {
            "Not enough evidence: nothing in the knowledge base matches.".to_string()
        }
        (_, true) => {
            format!("근거 부족. KB 에 해당 내용 없음.\n가까운 후보 (모두 임계 {gate:.2} 미만):")
        }
        (_, false) => format!(
            "Not enough evidence in the knowledge base.\nClosest candidates (all below the {gate:.2} gate):"
        ),
    };
    for c in candidates {
        text.push_str(&format!(
            "\n  · {} (score {:.2})",
            c.hit.citation.uri(),
            c.relevance
        ));
    }
    text
}

/// An answer being assembled.
struct Draft<'a> {
    llm: &'a LlmClient,
    rag: &'a RagConfig,
    question: &'a str,
    k: usize,
    top_score: f64,
    returned: usize,
    text: String,
    grounded: bool,
    reason: Option<&'static str>,
    citations: Vec<AnswerCitation>,
    chunks_used: u32,
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
    packed_json: Option<Value>,
    trace_id: String,
    conversation_id: Option<String>,
    turn_index: Option<u32>,
    /// The retrieval mode used (`answer.v1.retrieval.mode`).
    mode: &'static str,
    /// The embedding model, when the vector channel took part.
    embedding: Option<EmbeddingRef>,
}

impl<'a> Draft<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        llm: &'a LlmClient,
        rag: &'a RagConfig,
        question: &'a str,
        k: usize,
        top_score: f64,
        returned: usize,
        opts: &AskOptions<'_>,
        turns: usize,
    ) -> Draft<'a> {
        let now = kebab_core::clock::now_rfc3339();
        let trace = kebab_core::ids::id_from(
            &json!({ "kind": "trace", "q": question, "at": now, "pid": std::process::id() }),
        );
        Draft {
            llm,
            rag,
            question,
            k,
            top_score,
            returned,
            text: String::new(),
            grounded: false,
            reason: None,
            citations: Vec::new(),
            chunks_used: 0,
            prompt_tokens: None,
            completion_tokens: None,
            packed_json: None,
            trace_id: format!("ret_{}", &trace[..8]),
            conversation_id: opts.session.clone(),
            turn_index: opts.session.as_ref().map(|_| turns as u32),
            mode: "lexical",
            embedding: None,
        }
    }

    fn refuse(&mut self, reason: &'static str, text: String, citations: Vec<AnswerCitation>) {
        self.reason = Some(reason);
        self.text = text;
        self.citations = citations;
    }

    fn judge(&mut self, completion: &Completion, packed: &[Packed]) {
        let (grounded, cited) = judge(&completion.text, packed.len());
        self.text = completion.text.clone();
        self.grounded = grounded;
        self.reason = (!grounded).then_some("llm_self_judge");
        self.prompt_tokens = completion.prompt_tokens;
        self.completion_tokens = completion.completion_tokens;
        if grounded {
            self.citations = cited
                .iter()
                .map(|&m| AnswerCitation {
                    marker: Some(format!("[#{m}]")),
                    citation: packed[m as usize - 1].retrieved.hit.citation.clone(),
                })
                .collect();
        }
    }

    fn failed(&mut self, e: &LlmError) {
        self.text = e.partial().to_string();
        // The refusal reason of a failed call is its error.v1 code.
        self.reason = Some(e.code());
    }

    fn finish(&self, started: Instant) -> Answer {
        let cfg = self.llm.config();
        Answer {
            schema_version: "answer.v1",
            answer: self.text.clone(),
            citations: self.citations.clone(),
            grounded: self.grounded,
            refusal_reason: self.reason,
            model: ModelRef {
                id: cfg.model.clone(),
                provider: cfg.provider.as_str(),
            },
            embedding: self.embedding.clone(),
            prompt_template_version: self.rag.template().version,
            retrieval: AnswerRetrieval {
                trace_id: self.trace_id.clone(),
                mode: self.mode,
                k: self.k as u32,
                score_gate: self.rag.score_gate,
                top_score: self.top_score,
                chunks_returned: self.returned as u32,
                chunks_used: self.chunks_used,
            },
            usage: Usage {
                prompt_tokens: self.prompt_tokens,
                completion_tokens: self.completion_tokens,
                latency_ms: started.elapsed().as_millis() as u64,
            },
            created_at: kebab_core::clock::now_rfc3339(),
            conversation_id: self.conversation_id.clone(),
            turn_index: self.turn_index,
            notes: Vec::new(),
            claims: Vec::new(),
            roots: Vec::new(),
        }
    }

    fn row(&self, a: &Answer) -> AnswerRow {
        AnswerRow {
            trace_id: a.retrieval.trace_id.clone(),
            query: self.question.to_string(),
            answer: a.answer.clone(),
            grounded: a.grounded,
            refusal_reason: a.refusal_reason.map(String::from),
            model_id: a.model.id.clone(),
            model_provider: a.model.provider.to_string(),
            prompt_template_version: a.prompt_template_version.to_string(),
            retrieval_mode: a.retrieval.mode.to_string(),
            embedding_model_id: a.embedding.as_ref().map(|e| e.id.clone()),
            embedding_dimensions: a.embedding.as_ref().map(|e| e.dimensions as u32),
            retrieval_k: a.retrieval.k,
            score_gate: a.retrieval.score_gate,
            top_score: a.retrieval.top_score,
            chunks_returned: a.retrieval.chunks_returned,
            chunks_used: a.retrieval.chunks_used,
            citations: serde_json::to_value(&a.citations).unwrap_or(Value::Null),
            packed_chunks: self.packed_json.clone(),
            prompt_tokens: a.usage.prompt_tokens,
            completion_tokens: a.usage.completion_tokens,
            latency_ms: a.usage.latency_ms,
            created_at: a.created_at.clone(),
            conversation_id: a.conversation_id.clone(),
            turn_index: a.turn_index,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_strict() {
        assert_eq!(
            markers("a [#1] b [#12][#3] [#1234]"),
            vec![Some(1), Some(12), Some(3), Some(1234)]
        );
        assert!(markers("prose [1], vec![1], [foo], [ #1 ], [#], [#anchor]").is_empty());
        for shaped in [
            "[#01]",
            "[#0]",
            "[#1a]",
            "[# 1]",
            "[#1,2]",
            "[#1-2]",
            "[#-1]",
            "[#+1]",
            "[#１]",
            "[#99999999999]",
            "[#1",
        ] {
            assert_eq!(markers(shaped), vec![None], "{shaped}");
        }
    }

    #[test]
    fn a_follow_up_is_retrieved_with_the_previous_answer() {
        assert_eq!(follow_up_query("What is Raft?", None), "What is Raft?");
        let prev = TurnRow {
            turn_index: 0,
            question: "What is Raft?".into(),
            answer: format!("Raft elects a leader [#1]. {}", "x".repeat(300)),
        };
        let query = follow_up_query("And its log?", Some(&prev));
        assert!(
            query.starts_with("And its log? Raft elects a leader . x"),
            "{query}"
        );
        assert!(
            !query.contains("What is Raft") && !query.contains("[#1]"),
            "{query}"
        );
        assert_eq!(
            query.chars().count(),
            "And its log? ".len() + FOLLOW_UP_CHARS
        );
    }

    #[test]
    fn judge_rules() {
        assert_eq!(judge("X is Y [#1]. Z [#2][#1].", 2), (true, vec![1, 2]));
        assert!(!judge("X is Y [#7].", 3).0, "unknown marker");
        assert!(!judge("X is Y [1].", 3).0, "prose marker");
        assert!(!judge("let v = vec![1];", 3).0, "code is no marker");
        assert!(!judge("INSUFFICIENT EVIDENCE", 3).0, "refusal phrase");
        assert!(
            !judge("근거가 부족합니다 [#1]", 3).0,
            "refusal phrase with marker"
        );
        assert!(!judge("   ", 3).0);
        assert!(!judge("[#0]", 3).0);
        assert!(!judge("X [#01].", 3).0, "[#01] is not [#1]");
        assert!(
            !judge("X [#1] and Y [#1234].", 3).0,
            "a marker past the packed"
        );
        assert!(!judge("X [#1] and Y [#2, #3].", 3).0, "a list is no marker");
    }
}
