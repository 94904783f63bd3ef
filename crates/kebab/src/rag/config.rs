//! `[rag]`: the ask pipeline's own section of kebab's config — the prompt
//! template, the score gate, the evidence budget, `k`, multi-hop and the
//! verification model (`[rag.verify]`) — with its defaults and the rules
//! its values must keep.

use kebab_core::bounds::{MAX_TIMEOUT_SECS, at_most, within};
use kebab_search::nli::VerifyConfig;
use kebab_search::search::MAX_K;
use serde::{Deserialize, Serialize};

use super::prompt::{TEMPLATES, Template};
use crate::llm::MAX_MODEL_TOKENS;

/// `[rag]`: how `kebab ask` retrieves, gates and packs evidence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RagConfig {
    /// Prompt template: `rag-v3` (the default), or the legacy `rag-v2`
    /// or `rag-v1`.
    pub prompt_template_version: String,
    /// Minimum relevance of the best chunk (0–1) before the LLM is asked;
    /// 0 asks the model whatever was found.
    pub score_gate: f64,
    /// Token budget for evidence and history.
    pub max_context_tokens: u32,
    /// Chunks retrieved per question (and per search query of a
    /// multi-hop ask).
    pub k: usize,
    /// Multi-hop ask: `off` (one retrieval pass), `always` (`ask
    /// --multi-hop`: split the question into search queries, gather
    /// evidence hop by hop, then answer), or `auto` (multi-hop when the
    /// model's split of the question says it is compound).
    pub multi_hop: String,
    /// Retrieval rounds of a multi-hop ask, the first included (1–5).
    pub max_depth: u32,
    /// Wall-time budget of a multi-hop ask's planning, in seconds: past
    /// it no further round starts and the answer is written from the
    /// evidence gathered (1 to a day).
    pub multi_hop_secs: u64,
    /// `[rag.verify]`: an entailment model that must accept every answer.
    pub verify: VerifyConfig,
}

/// What `[rag] multi_hop` (or `ask --multi-hop`) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultiHop {
    /// One retrieval pass.
    Off,
    /// Multi-hop when the question's split says it is compound.
    Auto,
    /// Always multi-hop.
    Always,
}

impl MultiHop {
    /// `off`, `auto` or `always`.
    pub fn parse(value: &str) -> Option<MultiHop> {
        match value {
            "off" => Some(MultiHop::Off),
            "auto" => Some(MultiHop::Auto),
            "always" => Some(MultiHop::Always),
            _ => None,
        }
    }
}

/// The most retrieval rounds a multi-hop ask may take.
pub const MAX_DEPTH: u32 = 5;

impl Default for RagConfig {
    fn default() -> Self {
        RagConfig {
            prompt_template_version: "rag-v3".into(),
            score_gate: 0.30,
            max_context_tokens: 8000,
            k: 8,
            multi_hop: "off".into(),
            max_depth: 3,
            multi_hop_secs: 300,
            verify: VerifyConfig::default(),
        }
    }
}

impl RagConfig {
    /// The prompt template asked for (`rag-v3` should the name be one
    /// [`RagConfig::check`] refuses).
    pub fn template(&self) -> &'static Template {
        Template::by_version(&self.prompt_template_version).unwrap_or(TEMPLATES[0])
    }

    /// The configured multi-hop mode (`off` should the value be one
    /// [`RagConfig::check`] refuses).
    pub fn multi_hop(&self) -> MultiHop {
        MultiHop::parse(&self.multi_hop).unwrap_or(MultiHop::Off)
    }

    /// The section as `ask` can use it: a prompt template this kebab has,
    /// a multi-hop mode it knows, `k`, the evidence budget, the depth and
    /// the verification settings within their bounds. The first problem
    /// names its key.
    pub fn check(&self) -> Result<(), String> {
        if MultiHop::parse(&self.multi_hop).is_none() {
            return Err(format!(
                "[rag] multi_hop `{}` is unknown: expected off, auto or always",
                self.multi_hop
            ));
        }
        if self.max_depth == 0 {
            return Err("[rag] max_depth must be at least 1".into());
        }
        self.verify
            .check()
            .map_err(|e| format!("[rag.verify] {e}"))?;
        if Template::by_version(&self.prompt_template_version).is_none() {
            let known: Vec<&str> = TEMPLATES.iter().map(|t| t.version).collect();
            return Err(format!(
                "[rag] prompt_template_version `{}` is unknown: this kebab has {}",
                self.prompt_template_version,
                known.join(", ")
            ));
        }
        at_most("k", self.k, MAX_K)
            .and_then(|()| {
                at_most(
                    "max_context_tokens",
                    self.max_context_tokens,
                    MAX_MODEL_TOKENS,
                )
            })
            .and_then(|()| at_most("max_depth", self.max_depth, MAX_DEPTH))
            .map_err(|e| format!("[rag] {e}"))?;
        within("score_gate", self.score_gate, 0.0, 1.0)
            .and_then(|()| {
                within(
                    "multi_hop_secs",
                    self.multi_hop_secs as f64,
                    1.0,
                    MAX_TIMEOUT_SECS as f64,
                )
            })
            .map_err(|e| format!("[rag] {e}"))
    }
}
