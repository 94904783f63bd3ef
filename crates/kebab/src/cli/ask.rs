//! `kebab ask`: streaming, the answer with its references, errors with hints.

use super::prelude::*;

pub(crate) fn ask(session: &Session, input: &kebab::api::ask::AskInput, json: bool) -> Result<u8> {
    // Ctrl-C stops the stream; the partial answer is kept and stored.
    kebab::interrupt::install_handler();
    let cancel = kebab::interrupt::flag();
    let stream = !json && std::io::stdout().is_terminal();
    let mut on_token = |t: &str| {
        if stream {
            super::term::stream(t);
        }
    };
    let outcome = match session.ask(input, &mut on_token, cancel) {
        Ok(outcome) => outcome,
        Err(e) => {
            // A refusal that comes with the error (`no_index`) is shown too.
            if let kebab::api::ApiError::NotIndexed {
                refusal: Some(answer),
                ..
            } = &e
            {
                if json {
                    print_json(answer)?;
                } else {
                    outln!("{}", answer.answer);
                }
            }
            return Err(e.into());
        }
    };
    if json {
        print_json(&outcome.answer)?;
    } else {
        for note in &outcome.answer.notes {
            errln!("note: {note}");
        }
        let fusion = session.config().search.fusion().label();
        let shown = Shown {
            streamed: stream && outcome.streamed,
            explain: input.explain,
            question: &input.question,
            fusion: &fusion,
        };
        print_answer(&outcome, &shown);
    }
    if let Some(e) = &outcome.error {
        report_llm_error(e, &session.config().models.llm, session.paths(), json);
        return Ok(EXIT_ERROR);
    }
    if outcome.answer.refusal_reason == Some("nli_model_unavailable") {
        let report = ErrorReport {
            schema_version: "error.v1",
            code: "nli_model_unavailable",
            message: "the answer could not be verified: the verification model is unavailable"
                .into(),
            hint: Some(
                "`kebab doctor` shows why; set [rag.verify] path to an NLI model exported to \
                 ONNX, or [rag.verify] threshold = 0 to answer unverified"
                    .into(),
            ),
            details: None,
        };
        print_error_report(&report, json);
        return Ok(EXIT_ERROR);
    }
    Ok(if outcome.answer.grounded {
        EXIT_OK
    } else {
        EXIT_NO_HIT
    })
}

/// How an answer is shown.
pub(crate) struct Shown<'a> {
    /// Its text already went to the terminal as it came.
    pub streamed: bool,
    /// `--explain`: claims and the retrieval trace.
    pub explain: bool,
    pub question: &'a str,
    /// The configured hybrid fusion (`rrf:60`).
    pub fusion: &'a str,
}

pub(crate) fn print_answer(outcome: &kebab::rag::AskOutcome, shown: &Shown<'_>) {
    let a = &outcome.answer;
    // Text the model wrote that kebab did not accept.
    let unaccepted = a.refusal_reason.is_some_and(|r| {
        matches!(
            r,
            "llm_self_judge" | "llm_stream_aborted" | "timeout" | "answer_too_long"
        )
    });
    if shown.streamed && (a.refusal_reason.is_none() || unaccepted) {
        outln!();
    } else if unaccepted && !outcome.streamed {
        // Verification is on: unverified text is never shown.
        outln!(
            "(the model's reply was not accepted and is not shown unverified; the answers table keeps it)"
        );
    } else if !a.answer.is_empty() {
        outln!("{}", a.answer);
    }
    print_searched(outcome, shown.question);
    outln!("{}", "─".repeat(57));
    for c in a.citations.iter().filter(|c| c.marker.is_some()) {
        outln!("{} {}", c.marker.as_deref().unwrap_or(""), c.citation.uri());
        if let kebab::wire::CitationBody::Line {
            section: Some(s), ..
        } = &c.citation.body
        {
            outln!("     {s}");
        }
    }
    let chunks = match a.refusal_reason {
        None => format!("{} chunks", a.retrieval.chunks_used),
        Some("llm_self_judge") => {
            format!("{} chunks searched, 0 grounded", a.retrieval.chunks_used)
        }
        Some(_) => format!(
            "{} chunks used",
            a.citations.iter().filter(|c| c.marker.is_some()).count()
        ),
    };
    outln!(
        "grounded {}  {}  {}  {chunks}",
        if a.grounded { "✓" } else { "✗" },
        a.model.id,
        a.prompt_template_version
    );
    if shown.explain {
        if a.grounded {
            outln!();
            print_claims(&a.claims);
        }
        outln!();
        print_trace(outcome, shown);
    }
}

/// Under a refusal of an answer the model wrote from evidence (the model
/// declined, or verification did not confirm it), the evidence searched
/// (design §1.4).
fn print_searched(outcome: &kebab::rag::AskOutcome, question: &str) {
    let a = &outcome.answer;
    let korean = kebab::korean::has_hangul(question);
    let header = match (a.refusal_reason, korean) {
        (Some("llm_self_judge"), true) => "검색은 됨, LLM 이 결론 부재 판단:",
        (Some("llm_self_judge"), false) => "Searched, but the model found no answer in:",
        (Some("nli_verification_failed"), true) => "검증에 쓴 근거:",
        (Some("nli_verification_failed"), false) => "Evidence the answer was checked against:",
        _ => return,
    };
    if a.citations.is_empty() {
        return;
    }
    outln!("{header}");
    for c in &a.citations {
        let uri = c.citation.uri();
        let score = outcome
            .retrieved
            .iter()
            .find(|r| r.hit.citation.uri() == uri)
            .map_or(String::new(), |r| format!(" (score {:.2})", r.relevance));
        outln!("  · {uri}{score}");
    }
}

/// `--explain`'s retrieval trace: the query, the gate, the fusion, a
/// multi-hop ask's steps, every retrieved chunk with its channel scores,
/// the model's token use and the embedding model.
fn print_trace(outcome: &kebab::rag::AskOutcome, shown: &Shown<'_>) {
    let a = &outcome.answer;
    outln!("retrieval trace");
    outln!("  query            {:?}", shown.question);
    outln!("  mode             {}", a.retrieval.mode);
    outln!("  k                {}", a.retrieval.k);
    outln!(
        "  threshold (gate) {:.2} → top-1 {:.2} {}",
        a.retrieval.score_gate,
        a.retrieval.top_score,
        if a.retrieval.top_score >= a.retrieval.score_gate {
            "pass"
        } else {
            "fail"
        }
    );
    if a.retrieval.mode == "hybrid" {
        outln!("  fusion           {}", shown.fusion);
    }
    for hop in a.hops.iter().flatten() {
        let mut line = format!("  hop {} {:<10}", hop.iter, hop.kind);
        if !hop.sub_queries.is_empty() {
            line.push_str(&format!(" {:?}", hop.sub_queries));
        }
        if hop.context_chunks_added > 0 {
            line.push_str(&format!(" +{} chunks", hop.context_chunks_added));
        }
        if hop.llm_call_ms > 0 {
            line.push_str(&format!(" {} ms", hop.llm_call_ms));
        }
        if hop.forced_stop {
            line.push_str(" (forced stop)");
        }
        outln!("{line}");
    }
    if let Some(v) = &a.verification {
        outln!(
            "  verification     entailment {:.2} / {:.2} {}",
            v.nli_score,
            v.nli_threshold,
            if v.nli_passed { "pass" } else { "fail" }
        );
    }
    outln!(
        "  chunks (used)    {} / {} returned",
        a.retrieval.chunks_used,
        a.retrieval.chunks_returned
    );
    for r in &outcome.retrieved {
        outln!(
            "  #{} {:.2} {}  {}",
            r.hit.rank,
            r.relevance,
            r.hit.citation.uri(),
            channel_scores(&r.hit.retrieval)
        );
    }
    let n = |v: Option<u32>| v.map_or("?".to_string(), |n| n.to_string());
    outln!(
        "  prompt {} tokens  completion {} tokens  latency {} ms",
        n(a.usage.prompt_tokens),
        n(a.usage.completion_tokens),
        a.usage.latency_ms
    );
    if let Some(e) = &a.embedding {
        outln!(
            "  embedding        {}  index {}",
            e.id,
            kebab::search::INDEX_VERSION
        );
    }
}

pub(crate) fn report_llm_error(
    e: &LlmError,
    cfg: &kebab::llm::LlmConfig,
    paths: &Paths,
    json: bool,
) {
    let hint = match e {
        LlmError::Unreachable { .. } => format!(
            "start the model server (for Ollama: `ollama serve`) or set [models.llm] endpoint in {}",
            paths.config_file.display()
        ),
        LlmError::ModelNotPulled { .. } => match cfg.provider {
            Provider::Ollama => format!("ollama pull {}", cfg.model),
            Provider::OpenAi => {
                "set [models.llm] model to one the server lists (see `kebab doctor`)".into()
            }
        },
        LlmError::Timeout { .. } => {
            "raise [models.llm] timeout_secs, or use a smaller model; the partial answer was kept".into()
        }
        LlmError::TooLong { .. } => {
            "raise [models.llm] max_answer_tokens, or ask a narrower question; the partial answer was kept".into()
        }
        LlmError::Http { .. } => "check the server's log; the request was refused".into(),
        LlmError::Stream { .. } | LlmError::Cancelled { .. } => {
            "the partial answer above was kept in the answers table; ask again".into()
        }
    };
    let report = ErrorReport {
        schema_version: "error.v1",
        code: e.code(),
        message: e.to_string(),
        hint: Some(hint),
        details: None,
    };
    print_error_report(&report, json);
}

/// `--explain`: each cited sentence of the answer, the evidence it cites and the
/// evidence line that best supports it (the answer's `claims`).
fn print_claims(claims: &[kebab::wire::AnswerClaim]) {
    for claim in claims {
        outln!("▎ {}", claim.text);
        for e in &claim.evidence {
            outln!("  └ {}", e.uri);
            if let Some(line) = &e.line {
                outln!("    「{line}」");
            }
        }
    }
}

/// `bm25=12.4 vec=0.78` for whichever channels found a chunk.
fn channel_scores(r: &kebab::wire::Retrieval) -> String {
    let mut parts = Vec::new();
    if let Some(b) = r.lexical_score {
        parts.push(format!("bm25={b:.1}"));
    }
    if let Some(v) = r.vector_score {
        parts.push(format!("vec={v:.2}"));
    }
    if let Some(f) = r.fusion_score {
        parts.push(format!("{}={f:.2}", r.fusion_kind.unwrap_or("fused")));
    }
    parts.join(" ")
}
