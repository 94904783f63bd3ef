//! Natural-language inference: a cross-encoder trained on entailment
//! (XNLI/MNLI-style: a (premise, hypothesis) pair → logits over
//! entailment, neutral, contradiction) tells how strongly a piece of
//! evidence entails a sentence. `kebab ask`'s verification gate
//! (`[rag.verify]`) scores every answer with it; this module only loads
//! the model and turns its logits into the entailment probability.
//!
//! Any such model exported to ONNX with its `tokenizer.json` fits (for
//! example `MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7`
//! exported with `optimum-cli export onnx --task text-classification`);
//! `labels` names its output classes in order, as its `config.json`'s
//! `id2label` lists them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::cross_encoder::{CrossEncoder, CrossEncoderError};

/// The class whose probability is the verdict.
pub const ENTAILMENT: &str = "entailment";

/// `[rag.verify]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct VerifyConfig {
    /// Entailment probability (0–1) every cited sentence of an answer must
    /// reach; 0, the default, turns verification off.
    pub threshold: f32,
    /// Directory holding the NLI model's `model.onnx` and
    /// `tokenizer.json`.
    pub path: Option<String>,
    /// The model's output classes, in order; one must be `entailment`.
    pub labels: Vec<String>,
    /// Token limit of an (evidence, sentence) pair; longer evidence is cut.
    pub max_length: usize,
    /// Pairs per model call.
    pub batch_size: usize,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            threshold: 0.0,
            path: None,
            labels: vec![ENTAILMENT.into(), "neutral".into(), "contradiction".into()],
            max_length: 512,
            batch_size: 8,
        }
    }
}

impl VerifyConfig {
    /// Whether answers are verified.
    pub fn enabled(&self) -> bool {
        self.threshold > 0.0
    }

    /// The section as the gate can use it: a threshold within 0–1 and
    /// labels naming `entailment` once among two or more classes.
    pub fn check(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(format!(
                "threshold {} is out of range: expected 0 (off) to 1",
                self.threshold
            ));
        }
        let entailment = self.labels.iter().filter(|l| *l == ENTAILMENT).count();
        if self.labels.len() < 2 || entailment != 1 {
            return Err(format!(
                "labels {:?} must list the model's classes in order, `{ENTAILMENT}` once among them",
                self.labels
            ));
        }
        Ok(())
    }
}

/// Problems loading or running the NLI model.
#[derive(Debug, thiserror::Error)]
pub enum NliError {
    #[error("[rag.verify] threshold is set but `path` (the NLI model directory) is not")]
    NoPath,
    #[error("NLI model: {0}")]
    Model(#[from] CrossEncoderError),
    #[error("NLI model returns {got} classes per pair; [rag.verify] labels lists {expected}")]
    Classes { expected: usize, got: usize },
}

impl NliError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            NliError::NoPath | NliError::Model(CrossEncoderError::Missing(_)) => {
                "set [rag.verify] path to an NLI cross-encoder exported to ONNX (model.onnx + \
                 tokenizer.json), or set [rag.verify] threshold = 0 to answer unverified"
                    .into()
            }
            NliError::Model(CrossEncoderError::Model(e)) => e.hint(),
            NliError::Model(CrossEncoderError::Shape(_)) | NliError::Classes { .. } => {
                "set [rag.verify] labels to the model's classes in order (its config.json's \
                 id2label)"
                    .into()
            }
        }
    }
}

/// A loaded NLI model.
#[derive(Debug)]
pub struct NliModel {
    model: CrossEncoder,
    labels: usize,
    entailment: usize,
}

impl NliModel {
    /// Load the model `config` names, with ONNX Runtime from the first of
    /// `runtime_candidates` holding it.
    pub fn load(
        config: &VerifyConfig,
        runtime_candidates: &[PathBuf],
    ) -> Result<NliModel, NliError> {
        let dir = PathBuf::from(config.path.as_deref().ok_or(NliError::NoPath)?);
        Ok(NliModel {
            model: CrossEncoder::load(
                &dir,
                config.max_length,
                config.batch_size,
                runtime_candidates,
            )?,
            labels: config.labels.len(),
            entailment: config
                .labels
                .iter()
                .position(|l| l == ENTAILMENT)
                .unwrap_or(0),
        })
    }

    /// The probability that each `(premise, hypothesis)` pair's premise
    /// entails its hypothesis (the softmax of the logits, at
    /// `entailment`), in order.
    pub fn entailment(&self, pairs: &[(&str, &str)]) -> Result<Vec<f32>, NliError> {
        self.model
            .rows(pairs)?
            .iter()
            .map(|row| {
                if row.len() != self.labels {
                    return Err(NliError::Classes {
                        expected: self.labels,
                        got: row.len(),
                    });
                }
                Ok(softmax_at(row, self.entailment))
            })
            .collect()
    }

    /// Score one pair, to show the model loads and runs (`kebab doctor`).
    pub fn probe(&self) -> Result<String, NliError> {
        let p = self.entailment(&[(
            "kebab doctor checks the verification model.",
            "kebab doctor checks the verification model.",
        )])?[0];
        Ok(format!("loaded; a sentence entails itself with p={p:.3}"))
    }
}

/// `softmax(row)[at]`, computed stably.
fn softmax_at(row: &[f32], at: usize) -> f32 {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f32 = row.iter().map(|x| (x - max).exp()).sum();
    (row[at] - max).exp() / sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entailment_probability_is_the_softmax_at_its_class() {
        assert!((softmax_at(&[0.0, 0.0], 0) - 0.5).abs() < 1e-6);
        assert!(softmax_at(&[10.0, 5.0, 0.0], 0) > 0.99);
        assert!(softmax_at(&[10.0, 5.0, 0.0], 2) < 0.01);
        // Large logits do not overflow.
        assert!((softmax_at(&[1000.0, 1000.0], 1) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn labels_must_name_entailment_once() {
        let ok = VerifyConfig::default();
        assert!(ok.check().is_ok());
        assert!(!ok.enabled());
        for labels in [
            vec!["neutral", "contradiction"],
            vec!["entailment"],
            vec!["entailment", "entailment", "neutral"],
        ] {
            let bad = VerifyConfig {
                labels: labels.into_iter().map(String::from).collect(),
                ..Default::default()
            };
            assert!(bad.check().is_err(), "{:?}", bad.labels);
        }
        let out_of_range = VerifyConfig {
            threshold: 1.5,
            ..Default::default()
        };
        assert!(out_of_range.check().is_err());
    }

    #[test]
    fn an_unset_path_is_named() {
        let config = VerifyConfig {
            threshold: 0.5,
            ..Default::default()
        };
        assert!(matches!(
            NliModel::load(&config, &[]),
            Err(NliError::NoPath)
        ));
    }
}
