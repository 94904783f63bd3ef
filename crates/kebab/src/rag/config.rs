//! `[rag]`: the ask pipeline's own section of kebab's config — the prompt
//! template, the score gate, the evidence budget and `k` — with its
//! defaults and the rule that the template is one this kebab has.

use kebab_core::bounds::at_most;
use kebab_search::search::MAX_K;
use serde::{Deserialize, Serialize};

use super::prompt::PROMPT_TEMPLATE;
use crate::llm::MAX_MODEL_TOKENS;

/// `[rag]`: how `kebab ask` retrieves, gates and packs evidence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RagConfig {
    /// Prompt template; only `rag-v3` exists in this version.
    pub prompt_template_version: String,
    /// Minimum relevance of the best chunk (0–1) before the LLM is asked.
    pub score_gate: f64,
    /// Token budget for evidence and history.
    pub max_context_tokens: u32,
    /// Chunks retrieved per question.
    pub k: usize,
}

impl Default for RagConfig {
    fn default() -> Self {
        RagConfig {
            prompt_template_version: "rag-v3".into(),
            score_gate: 0.30,
            max_context_tokens: 8000,
            k: 8,
        }
    }
}

impl RagConfig {
    /// The section as `ask` can use it: a prompt template this kebab has,
    /// `k` and the evidence budget within their bounds. The first problem
    /// names its key.
    pub fn check(&self) -> Result<(), String> {
        if self.prompt_template_version != PROMPT_TEMPLATE {
            return Err(format!(
                "[rag] prompt_template_version `{}` is unknown: this kebab has `{PROMPT_TEMPLATE}`",
                self.prompt_template_version
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
            .map_err(|e| format!("[rag] {e}"))
    }
}
