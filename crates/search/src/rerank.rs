//! Reranking: a cross-encoder reads the query and each of the top fused
//! hits together and scores how well the passage answers the query; search
//! reorders its top `top_n` hits by that score ([`crate::search::rerank`]:
//! this module only scores). Off by default
//! (`[search.rerank]`); applied by search, ask and `kebab eval beir`
//! (`hybrid+rerank`).
//!
//! A model directory holds `model.onnx` and `tokenizer.json`, like an
//! embedding model's; the graph takes the tokenised pair (`input_ids`,
//! `attention_mask`, `token_type_ids`) and returns one logit per pair
//! (`[batch, 1]` or `[batch]`; with two classes, the second is "relevant").
//! Sentence-transformers cross-encoders (`cross-encoder/ms-marco-MiniLM-L-6-v2`
//! exported with `optimum-cli export onnx`) have this shape.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::embed::EmbedError;
use crate::embed::onnx::OnnxModel;

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

/// A loaded cross-encoder.
pub struct Reranker {
    model: OnnxModel,
    top_n: usize,
    batch_size: usize,
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
        if !dir.join("model.onnx").is_file() || !dir.join("tokenizer.json").is_file() {
            return Err(RerankError::Missing(dir));
        }
        let library = crate::embed::runtime::locate(runtime_candidates)?;
        Ok(Reranker {
            model: OnnxModel::load(
                &dir,
                "model.onnx",
                config.max_length,
                0,
                &library,
                crate::embed::Workload::Many,
            )?,
            top_n: config.top_n.max(1),
            batch_size: config.batch_size.max(1),
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
        let mut out = Vec::with_capacity(passages.len());
        for batch in passages.chunks(self.batch_size) {
            let pairs: Vec<(String, String)> = batch
                .iter()
                .map(|p| (query.to_string(), p.to_string()))
                .collect();
            let encodings = self
                .model
                .tokenizer()
                .encode_batch(pairs, true)
                .map_err(|e| EmbedError::Run(e.to_string()))?;
            let output = self.model.run(&encodings)?;
            out.extend(logits(&output.dims, &output.data, batch.len())?);
        }
        Ok(out)
    }
}

/// One logit per pair from a `[n, 1]`, `[n]` or `[n, 2]` output.
fn logits(dims: &[usize], data: &[f32], n: usize) -> Result<Vec<f32>, RerankError> {
    match dims {
        [b] | [b, 1] if *b == n => Ok(data.to_vec()),
        [b, 2] if *b == n => Ok(data.chunks(2).map(|c| c[1]).collect()),
        _ => Err(RerankError::Shape(dims.to_vec())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logits_are_read_from_every_cross_encoder_shape() {
        assert_eq!(logits(&[2, 1], &[0.5, 1.5], 2).unwrap(), vec![0.5, 1.5]);
        assert_eq!(logits(&[2], &[0.5, 1.5], 2).unwrap(), vec![0.5, 1.5]);
        assert_eq!(
            logits(&[2, 2], &[9.0, 0.5, 9.0, 1.5], 2).unwrap(),
            vec![0.5, 1.5]
        );
        assert!(matches!(
            logits(&[2, 3], &[0.0; 6], 2),
            Err(RerankError::Shape(d)) if d == vec![2, 3]
        ));
        assert!(logits(&[3, 1], &[0.0; 3], 2).is_err());
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
