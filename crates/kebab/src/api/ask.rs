//! `ask`: a question answered from the index with strict citations, or
//! refused (the pipeline itself is [`crate::rag`]).

use std::sync::atomic::AtomicBool;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ApiError, Session};
use crate::llm::LlmClient;
use crate::rag::{AskOptions, AskOutcome, MultiHop};

/// One question as a front end receives it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskInput {
    /// The question.
    pub question: String,
    /// Continue (or start) a conversation with this id.
    #[serde(default)]
    pub session: Option<String>,
    /// Retrieval mode: `lexical`, `vector` or `hybrid` [default: hybrid
    /// when an embedding model is installed, else lexical].
    #[serde(default)]
    pub mode: Option<String>,
    /// Chunks to retrieve [default: the config's `[rag] k`].
    #[serde(default)]
    pub k: Option<usize>,
    /// Only evidence from these roots (`kebab roots` lists them) [default:
    /// every root].
    #[serde(default)]
    pub roots: Vec<String>,
    /// Only evidence from documents in this language (`en`, `ko`).
    #[serde(default)]
    pub lang: Option<String>,
    /// Only evidence from documents trusted at least this much:
    /// `primary`, `secondary` or `generated`.
    #[serde(default)]
    pub trust_min: Option<String>,
    /// Multi-hop: `always` (split the question into searches, gather
    /// evidence hop by hop, then answer), `auto` (when the question is
    /// compound) or `off` [default: the config's `[rag] multi_hop`].
    #[serde(default)]
    pub multi_hop: Option<String>,
    /// Keep the packed evidence with the stored answer (`--explain`).
    #[serde(skip)]
    pub explain: bool,
    /// Whose question it is (set by the server; never from the wire).
    #[serde(skip)]
    #[schemars(skip)]
    pub scope: super::Scope,
}

impl Session {
    /// `kebab ask`: retrieve, gate, prompt, stream (`on_token` gets each
    /// piece; `cancel` stops the stream and keeps the partial answer),
    /// check citations, store the answer (`answer.v1`).
    pub fn ask(
        &self,
        input: &AskInput,
        on_token: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<AskOutcome, ApiError> {
        if input.question.trim().is_empty() {
            return Err(ApiError::invalid("question", "is empty"));
        }
        let mut mode = super::search::parse_mode(input.mode.as_deref())?;
        let multi_hop = input
            .multi_hop
            .as_deref()
            .map(|m| {
                MultiHop::parse(m).ok_or_else(|| {
                    ApiError::invalid(
                        "multi_hop",
                        format!("unknown value `{m}`: expected off, auto or always"),
                    )
                })
            })
            .transpose()?;
        let llm = LlmClient::new(self.config.models.llm.clone())?;
        let mut opts = AskOptions {
            search: &self.config.search,
            k: input.k,
            explain: input.explain,
            session: input
                .session
                .as_deref()
                .map(|id| input.scope.session_key(id)),
            vectors: None,
            mode,
            cjk: None,
            rerank: None,
            roots: input.roots.clone(),
            lang: super::search::normalise_lang(input.lang.as_deref()),
            trust_min: super::search::parse_trust_min(input.trust_min.as_deref())?,
            multi_hop,
            verifier: None,
        };
        if let Err(e) = self.indexed_app() {
            return Err(match e {
                ApiError::NotIndexed { data_dir, .. } => ApiError::NotIndexed {
                    data_dir,
                    refusal: Some(Box::new(crate::rag::refuse_without_index(
                        &llm,
                        &self.config.rag,
                        &input.question,
                        &opts,
                    ))),
                },
                other => other,
            });
        }
        let readable = self.readable_roots(self.app()?, &input.scope, &input.roots)?;
        opts.roots = readable.clone();
        let roots = self.freshness_of(self.app()?, &readable)?;
        let mut notes = Vec::new();
        opts.vectors = self.channel_for(&mut mode, &mut notes)?;
        self.full_text_for(&mut mode, opts.vectors.is_some(), &mut notes)?;
        opts.mode = mode;
        opts.cjk = self.cjk_for(&input.question, &mut notes);
        opts.rerank = self.reranker()?;
        opts.verifier = self.verifier();
        // Answers and chat turns are written through a connection of
        // their own: the session's stays a reader.
        let mut store = crate::app::open_store(&self.config, &self.paths)?;
        let mut outcome = crate::rag::ask(
            &mut store,
            &llm,
            &self.config.rag,
            &input.question,
            &opts,
            on_token,
            cancel,
        )?;
        outcome.answer.notes.splice(0..0, notes);
        outcome.answer.roots = roots;
        outcome.answer.conversation_id = outcome
            .answer
            .conversation_id
            .as_deref()
            .and_then(|id| input.scope.shown_session(id));
        Ok(outcome)
    }
}
