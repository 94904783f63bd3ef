//! Reranking: a cross-encoder reads the query and each of the top fused
//! hits together and scores how well the passage answers the query; search
//! reorders its top `top_n` hits by that score ([`crate::search::rerank`]:
//! this module only scores). Off by default
//! (`[search.rerank]`); applied by search, ask and `kebab eval beir`
//! (`hybrid+rerank`).
//!
//! The model is a [`CrossEncoder`] returning one logit per pair (`[batch,
//! 1]` or `[batch]`; with two classes, the second is "relevant").
//! Sentence-transformers cross-encoders (`cross-encoder/ms-marco-MiniLM-L-6-v2`
//! exported with `optimum-cli export onnx`) have this shape.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::cross_encoder::{CrossEncoder, CrossEncoderError};
use crate::embed::EmbedError;

/// `[search.rerank]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RerankConfig {
    /// Rerank every search, ask and eval (off by default).
    pub enabled: bool,
    /// Directory holding the cross-encoder's `model.onnx` and
    /// `tokenizer.json`.
    pub path: Option<String>,
    /// How many of the best fused hits are rescored (hits below keep their
    /// fused order after them).
    pub top_n: usize,
    /// Pairs per model call.
    pub batch_size: usize,
    /// Token limit of a (query, passage) pair; longer passages are cut.
    pub max_length: usize,
}

impl Default for RerankConfig {
    fn default() -> Self {
        RerankConfig {
            enabled: false,
            path: None,
            top_n: 20,
            batch_size: 8,
            max_length: 512,
        }
    }
}

/// Problems loading or running the reranker.
#[derive(Debug, thiserror::Error)]
pub enum RerankError {
    #[error("[search.rerank] is enabled but `path` (the model directory) is not set")]
    NoPath,
    #[error("reranker model not found: {0} needs model.onnx and tokenizer.json")]
    Missing(PathBuf),
    #[error("reranker: {0}")]
    Model(#[from] EmbedError),
    #[error("reranker output has shape {0:?}; expected one logit (or two classes) per pair")]
    Shape(Vec<usize>),
}

impl RerankError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            RerankError::NoPath | RerankError::Missing(_) => {
                "set [search.rerank] path to a cross-encoder exported to ONNX (model.onnx + \
                 tokenizer.json), or set enabled = false"
                    .into()
            }
            RerankError::Model(e) => e.hint(),
            RerankError::Shape(_) => "the model is not a cross-encoder".into(),
        }
    }
}

impl From<CrossEncoderError> for RerankError {
    fn from(e: CrossEncoderError) -> RerankError {
        match e {
            CrossEncoderError::Missing(dir) => RerankError::Missing(dir),
            CrossEncoderError::Model(e) => RerankError::Model(e),
            CrossEncoderError::Shape(dims) => RerankError::Shape(dims),
        }
    }
}

/// A loaded cross-encoder.
pub struct Reranker {
    model: CrossEncoder,
    top_n: usize,
}

impl std::fmt::Debug for Reranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reranker")
            .field("top_n", &self.top_n)
            .finish()
    }
}

impl Reranker {
    /// Load the model `config` names, with ONNX Runtime from the first of
    /// `runtime_candidates` holding it.
    pub fn load(
        config: &RerankConfig,
        runtime_candidates: &[PathBuf],
    ) -> Result<Reranker, RerankError> {
        let dir = PathBuf::from(config.path.as_deref().ok_or(RerankError::NoPath)?);
        Ok(Reranker {
            model: CrossEncoder::load(
                &dir,
                config.max_length,
                config.batch_size,
                runtime_candidates,
            )?,
            top_n: config.top_n.max(1),
        })
    }

    /// How many hits are rescored; a search asks the channels for at
    /// least this many.
    pub fn top_n(&self) -> usize {
        self.top_n
    }

    /// Score one pair, to show the model loads and runs (`kebab doctor`).
    pub fn probe(&self) -> Result<String, RerankError> {
        let score = self.scores("kebab doctor", &["kebab doctor checks the reranker"])?[0];
        Ok(format!(
            "loaded; top_n {}, probe pair scored {score:.3}",
            self.top_n
        ))
    }

    /// The relevance logit of each passage for `query`, in order.
    pub fn scores(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError> {
        let pairs: Vec<(&str, &str)> = passages.iter().map(|p| (query, *p)).collect();
        self.model
            .rows(&pairs)?
            .iter()
            .map(|row| relevance(row))
            .collect()
    }
}

/// The relevance logit of a row: its one logit, or the second of two
/// classes.
fn relevance(row: &[f32]) -> Result<f32, RerankError> {
    match row {
        [x] | [_, x] => Ok(*x),
        _ => Err(RerankError::Shape(vec![1, row.len()])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevance_is_the_one_logit_or_the_second_class() {
        assert_eq!(relevance(&[1.5]).unwrap(), 1.5);
        assert_eq!(relevance(&[9.0, 0.5]).unwrap(), 0.5);
        assert!(matches!(
            relevance(&[0.0; 3]),
            Err(RerankError::Shape(d)) if d == vec![1, 3]
        ));
    }

    #[test]
    fn a_missing_model_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let config = RerankConfig {
            enabled: true,
            path: Some(dir.path().display().to_string()),
            ..Default::default()
        };
        match Reranker::load(&config, &[]) {
            Err(RerankError::Missing(p)) => assert_eq!(p, dir.path()),
            other => panic!("{other:?}"),
        }
        let unset = RerankConfig {
            enabled: true,
            ..Default::default()
        };
        assert!(matches!(
            Reranker::load(&unset, &[]),
            Err(RerankError::NoPath)
        ));
    }
}
