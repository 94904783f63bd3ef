//! `kebab ask`: retrieve (in one pass, or hop by hop: [`multi_hop`]) →
//! score gate → pack evidence → prompt (`[rag] prompt_template_version`,
//! [`prompt`]) → stream → strict `[#n]` citation check → verification
//! ([`verify`], when `[rag.verify]` is on) → answer, persisted on every
//! path.

pub mod config;
pub mod multi_hop;
pub mod prompt;
mod verify;

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde_json::{Value, json};

use kebab_core::wire::{
    Answer, AnswerCitation, AnswerClaim, AnswerRetrieval, ClaimEvidence, EmbeddingRef, Hop,
    ModelRef, Usage, Verification,
};
use kebab_plugin_sdk::text::estimate_tokens;
use kebab_search::config::SearchConfig;
use kebab_search::search::{self, Retrieved};
use kebab_store::{AnswerRow, ChunkFilter, Store, TurnRow};

use crate::llm::{Completion, LlmClient, LlmError};
pub use config::{MultiHop, RagConfig};
use multi_hop::End;
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
    /// Korean, Japanese and Chinese analysis of the question.
    pub cjk: Option<&'a kebab_search::cjk::CjkAnalyzer>,
    /// Cross-encoder that reorders the evidence (`[search.rerank]`).
    pub rerank: Option<&'a kebab_search::rerank::Reranker>,
    /// Only evidence from these roots (every root when empty).
    pub roots: Vec<String>,
    /// Only evidence from documents in this language.
    pub lang: Option<String>,
    /// Only evidence from documents trusted at least this much.
    pub trust_min: Option<kebab_core::trust::TrustLevel>,
    /// Multi-hop or one pass [default: `[rag] multi_hop`].
    pub multi_hop: Option<MultiHop>,
    /// The entailment model of `[rag.verify]` when verification is on, or
    /// why it is unavailable (the answer is then refused).
    pub verifier: Option<Result<&'a kebab_search::nli::NliModel, &'a str>>,
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
    /// Whether the answer's tokens went to `on_token` as they came (not
    /// when the answer had to be verified first).
    pub streamed: bool,
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
    let mut draft = Draft::new(llm, rag, question, k, opts, history.len());
    draft.mode = mode.as_str();
    draft.embedding = vectors.map(|v| EmbeddingRef::from(v.embedder.spec()));
    // An answer that must pass verification is not shown before it has.
    let streamed = opts.verifier.is_none();
    let mut quiet = |_: &str| {};
    let on_token: &mut dyn FnMut(&str) = if streamed { on_token } else { &mut quiet };
    let turn = Turn {
        question,
        history: &history,
        explain: opts.explain,
    };
    let multi_hop = opts.multi_hop.unwrap_or_else(|| rag.multi_hop());
    let single_pass =
        |draft: &mut Draft<'_>, on_token: &mut dyn FnMut(&str)| -> Result<_, search::SearchError> {
            let retrieved = retrieve(store, opts, &query, k, mode)?;
            draft.returned = retrieved.len();
            let (packed, error) = answer_from(draft, &turn, &retrieved, on_token, cancel);
            Ok((retrieved, packed, error))
        };
    let (retrieved, packed, error) = if let Some(Err(why)) = opts.verifier {
        // Fail-closed before any model call: no answer could be accepted.
        draft.model_unavailable(why);
        (Vec::new(), Vec::new(), None)
    } else if multi_hop == MultiHop::Off {
        single_pass(&mut draft, on_token)?
    } else {
        let auto = multi_hop == MultiHop::Auto;
        let gathered =
            multi_hop::gather(store, llm, rag, opts, question, &query, mode, auto, cancel)?;
        draft.notes = gathered.notes;
        draft.hops = Some(gathered.hops);
        draft.returned = gathered.candidates.len();
        match gathered.end {
            Some(End::SinglePass) => single_pass(&mut draft, on_token)?,
            Some(End::DecomposeFailed) => {
                let korean = kebab_search::korean::has_hangul(question);
                let text = refusal_text(korean, "multi_hop_decompose_failed", rag.score_gate, &[]);
                draft.refuse("multi_hop_decompose_failed", text, Vec::new());
                (gathered.candidates, Vec::new(), None)
            }
            Some(End::Model(e)) => {
                // A planning call's partial reply is a plan, not an answer.
                draft.failed(&e);
                draft.text.clear();
                draft
                    .notes
                    .push(format!("multi-hop: a planning call failed: {e}"));
                (gathered.candidates, Vec::new(), Some(e))
            }
            None => {
                draft.template = &prompt::RAG_MULTI_HOP_V1;
                let timer = Instant::now();
                // With no chunk past the gate, the candidates make the
                // gate's refusal.
                let evidence = if gathered.evidence.is_empty() {
                    &gathered.candidates
                } else {
                    &gathered.evidence
                };
                let (packed, error) = answer_from(&mut draft, &turn, evidence, on_token, cancel);
                if !packed.is_empty() {
                    let iter = draft.hops.as_ref().map_or(0, |h| h.len() as u32);
                    draft.hops.get_or_insert_with(Vec::new).push(Hop {
                        kind: "synthesize",
                        iter,
                        sub_queries: Vec::new(),
                        context_chunks_added: 0,
                        llm_call_ms: timer.elapsed().as_millis() as u64,
                        forced_stop: false,
                    });
                }
                (gathered.candidates, packed, error)
            }
        }
    };
    if draft.grounded
        && let Some(Ok(model)) = opts.verifier
    {
        draft.verify(model, &packed);
    }
    let mut answer = draft.finish(started);
    if answer.grounded {
        answer.claims = claims(&answer.answer, &packed);
    }
    let outcome = AskOutcome {
        answer,
        retrieved,
        packed,
        error,
        streamed,
    };
    record(store, &draft, &outcome, opts, &history, question, llm)?;
    Ok(outcome)
}

/// Gate `retrieved` and, when the best chunk passes, answer from it: no
/// chunks and a best chunk under the gate are refused without asking the
/// model. The packed evidence and the model's error.
fn answer_from(
    draft: &mut Draft<'_>,
    turn: &Turn<'_>,
    retrieved: &[Retrieved],
    on_token: &mut dyn FnMut(&str),
    cancel: &AtomicBool,
) -> (Vec<Packed>, Option<LlmError>) {
    // The gate needs a bounded relevance: the best chunk's share of the
    // question's words or its cosine similarity, whichever is larger.
    draft.top_score = retrieved.iter().map(|r| r.relevance).fold(0.0, f64::max);
    let korean = kebab_search::korean::has_hangul(turn.question);
    let gate = draft.rag.score_gate;
    if retrieved.is_empty() {
        draft.refuse(
            "no_chunks",
            refusal_text(korean, "no_chunks", gate, &[]),
            Vec::new(),
        );
        (Vec::new(), None)
    } else if draft.top_score < gate {
        let nearest = &retrieved[..retrieved.len().min(CANDIDATES)];
        let text = refusal_text(korean, "score_gate", gate, nearest);
        draft.refuse("score_gate", text, candidates(nearest));
        (Vec::new(), None)
    } else {
        generate(draft, turn, retrieved, on_token, cancel)
    }
}

/// `retrieved` as the citations of a refusal (no markers).
fn candidates<'r>(retrieved: impl IntoIterator<Item = &'r Retrieved>) -> Vec<AnswerCitation> {
    retrieved
        .into_iter()
        .map(|r| {
            AnswerCitation::of_chunk(None, r.hit.citation.clone(), &r.hit.chunk_id, r.relevance)
        })
        .collect()
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
    let mut draft = Draft::new(llm, rag, question, k, opts, 0);
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
        cjk: opts.cjk,
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

/// The tokens left for evidence when `template`'s system prompt, the
/// question and the answer have theirs (at most `[rag]
/// max_context_tokens`, at least 1).
fn evidence_budget(llm: &LlmClient, rag: &RagConfig, template: &Template, question: &str) -> u32 {
    rag.max_context_tokens
        .min(llm.config().context_tokens.saturating_sub(
            estimate_tokens(&template.system_prompt())
                + estimate_tokens(question)
                + llm.config().max_answer_tokens,
        ))
        .max(1)
}

/// Pack the evidence into the model's budget, ask the model, and let the
/// draft judge the completion; the packed evidence and the model's error.
fn generate(
    draft: &mut Draft<'_>,
    turn: &Turn<'_>,
    retrieved: &[Retrieved],
    on_token: &mut dyn FnMut(&str),
    cancel: &AtomicBool,
) -> (Vec<Packed>, Option<LlmError>) {
    let (llm, template) = (draft.llm, draft.template);
    let budget = evidence_budget(llm, draft.rag, template, turn.question);
    let packed = pack(retrieved, budget);
    let used: u32 = packed.iter().map(|p| p.tokens).sum();
    let messages = prompt::messages(
        template,
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
/// and, for each, the entry's line holding the most of the sentence's
/// words: what `ask --explain` shows and every front end receives.
pub fn claims(answer: &str, packed: &[Packed]) -> Vec<AnswerClaim> {
    sentences(answer)
        .filter_map(|sentence| {
            let cited = markers(sentence);
            if cited.is_empty() {
                return None;
            }
            let text = claim_text(sentence);
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

/// The sentences of an answer, each with its markers and end mark.
fn sentences(answer: &str) -> impl Iterator<Item = &str> {
    answer.split_inclusive(['.', '!', '?', '。', '\n'])
}

/// A sentence as a claim reads: without its markers, blanks and end mark.
fn claim_text(sentence: &str) -> String {
    strip_markers(sentence)
        .trim()
        .trim_end_matches(['.', '!', '?', '。'])
        .trim_end()
        .to_string()
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

/// The line of `evidence` holding the most of `claim`'s words, as search
/// finds them ([`search::Held::best_line_start`]), trimmed and cut to 160
/// characters.
fn best_line(evidence: &str, claim: &str) -> Option<String> {
    let at = search::held(evidence, &search::query_terms(claim)).best_line_start?;
    let line = evidence[at..].lines().next().unwrap_or_default();
    Some(line.trim().chars().take(160).collect())
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
        ("multi_hop_decompose_failed", true) => {
            "근거 부족. 질문을 검색어로 나누지 못했습니다 (모델의 분해 응답을 읽을 수 없음). --multi-hop 없이 다시 물어보세요.".to_string()
        }
        ("multi_hop_decompose_failed", false) => {
            "Could not split the question into searches: the model's plan was not readable. Ask again, or without --multi-hop."
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
    /// The template the answer is written with.
    template: &'static Template,
    /// A multi-hop ask's steps.
    hops: Option<Vec<Hop>>,
    /// The verification model's verdict.
    verification: Option<Verification>,
    /// Why the answer was made with less than asked.
    notes: Vec<String>,
}

impl<'a> Draft<'a> {
    fn new(
        llm: &'a LlmClient,
        rag: &'a RagConfig,
        question: &'a str,
        k: usize,
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
            top_score: 0.0,
            returned: 0,
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
            template: rag.template(),
            hops: None,
            verification: None,
            notes: Vec::new(),
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
                .map(|&m| {
                    let r = &packed[m as usize - 1].retrieved;
                    AnswerCitation::of_chunk(
                        Some(format!("[#{m}]")),
                        r.hit.citation.clone(),
                        &r.hit.chunk_id,
                        r.relevance,
                    )
                })
                .collect();
        } else {
            // What was searched, for the refusal (design §1.4).
            self.citations = candidates(packed.iter().take(CANDIDATES).map(|p| &p.retrieved));
        }
    }

    /// Check the grounded answer with the verification model; an answer
    /// it does not confirm (or that cannot be checked) is refused, the
    /// evidence it was checked against listed as the candidates.
    fn verify(&mut self, model: &kebab_search::nli::NliModel, packed: &[Packed]) {
        let korean = kebab_search::korean::has_hangul(self.question);
        let checked = || candidates(packed.iter().map(|p| &p.retrieved));
        match verify::verify(model, &self.text, packed, self.rag.verify.threshold) {
            Ok((v, _)) if v.nli_passed => self.verification = Some(v),
            Ok((v, note)) => {
                let text = if korean {
                    format!(
                        "근거 부족. 답변이 근거로 확인되지 않았습니다 (함의 {:.2}, 기준 {:.2}).",
                        v.nli_score, v.nli_threshold
                    )
                } else {
                    format!(
                        "Not enough evidence: the answer was not confirmed by its evidence \
                         (entailment {:.2}, below the {:.2} threshold).",
                        v.nli_score, v.nli_threshold
                    )
                };
                self.notes.extend(note);
                self.grounded = false;
                self.verification = Some(v);
                self.refuse("nli_verification_failed", text, checked());
            }
            Err(e) => {
                self.notes.push(format!("verification: {e}"));
                self.model_unavailable("the verification model failed to run");
                self.citations = checked();
            }
        }
    }

    /// Refuse because the verification model is unavailable (`why`).
    fn model_unavailable(&mut self, why: &str) {
        let text = if kebab_search::korean::has_hangul(self.question) {
            format!("답변을 검증하지 못했습니다: 검증 모델을 쓸 수 없습니다 ({why}).")
        } else {
            format!(
                "The answer could not be verified: the verification model is unavailable ({why})."
            )
        };
        self.grounded = false;
        self.refuse("nli_model_unavailable", text, Vec::new());
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
            prompt_template_version: self.template.version,
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
            notes: self.notes.clone(),
            claims: Vec::new(),
            roots: Vec::new(),
            hops: self.hops.clone(),
            verification: self.verification.clone(),
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
            hops: a.hops.as_ref().and_then(|h| serde_json::to_value(h).ok()),
            verification: a
                .verification
                .as_ref()
                .and_then(|v| serde_json::to_value(v).ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claims_line_is_the_one_holding_its_words_as_search_finds_them() {
        // Another form of a word counts, a stopword does not.
        let evidence = "# Brewing\n\n  A sour taste marks this espresso.  \nThe espresso is the best of the day.";
        assert_eq!(
            best_line(evidence, "The espresso tastes sour."),
            Some("A sour taste marks this espresso.".into())
        );
        assert_eq!(best_line(evidence, "Tungsten melts late."), None);
        let evidence = "첫 줄\n서울에서 열린 회의는 길었다";
        assert_eq!(
            best_line(evidence, "서울 회의는 길었다."),
            Some("서울에서 열린 회의는 길었다".into())
        );
        let long = format!("intro\n{} espresso", "x".repeat(300));
        assert_eq!(best_line(&long, "espresso").unwrap().chars().count(), 160);
    }

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
