//! `[rag]`: the ask pipeline's own section of kebab's config — the prompt
//! template, the score gate, the evidence budget and `k` — with its
//! defaults and the rule that the template is one this kebab has.

use kebab_core::bounds::at_most;
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
    /// The prompt template asked for (`rag-v3` should the name be one
    /// [`RagConfig::check`] refuses).
    pub fn template(&self) -> &'static Template {
        Template::by_version(&self.prompt_template_version).unwrap_or(TEMPLATES[0])
    }

    /// The section as `ask` can use it: a prompt template this kebab has,
    /// `k` and the evidence budget within their bounds. The first problem
    /// names its key.
    pub fn check(&self) -> Result<(), String> {
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
            .map_err(|e| format!("[rag] {e}"))
    }
}
