//! A cross-encoder: one ONNX transformer that reads two texts together
//! (`[CLS] a [SEP] b [SEP]`) and returns a row of logits for the pair. The
//! reranker ([`crate::rerank`]: query, passage → relevance) and the
//! verifier ([`crate::nli`]: evidence, claim → entailment) load and run
//! their models here and differ only in how they read the rows.
//!
//! A model directory holds `model.onnx` and `tokenizer.json`, like an
//! embedding model's; the graph takes the tokenised pair (`input_ids`,
//! `attention_mask`, `token_type_ids`) and returns `[batch]` or
//! `[batch, classes]` logits.

use std::path::{Path, PathBuf};

use crate::embed::EmbedError;
use crate::embed::onnx::OnnxModel;

/// Problems loading or running a cross-encoder.
#[derive(Debug, thiserror::Error)]
pub enum CrossEncoderError {
    #[error("model not found: {0} needs model.onnx and tokenizer.json")]
    Missing(PathBuf),
    #[error(transparent)]
    Model(#[from] EmbedError),
    #[error("model output has shape {0:?}; expected a row of logits per pair")]
    Shape(Vec<usize>),
}

/// A loaded cross-encoder.
pub struct CrossEncoder {
    model: OnnxModel,
    batch_size: usize,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder")
            .field("batch_size", &self.batch_size)
            .finish()
    }
}

impl CrossEncoder {
    /// Load `dir`'s model (pairs cut to `max_length` tokens, run
    /// `batch_size` pairs a call) with ONNX Runtime from the first of
    /// `runtime_candidates` holding it.
    pub fn load(
        dir: &Path,
        max_length: usize,
        batch_size: usize,
        runtime_candidates: &[PathBuf],
    ) -> Result<CrossEncoder, CrossEncoderError> {
        if !dir.join("model.onnx").is_file() || !dir.join("tokenizer.json").is_file() {
            return Err(CrossEncoderError::Missing(dir.to_path_buf()));
        }
        let library = crate::embed::runtime::locate(runtime_candidates)?;
        Ok(CrossEncoder {
            model: OnnxModel::load(
                dir,
                "model.onnx",
                max_length,
                0,
                &library,
                crate::embed::Workload::Queries,
                crate::embed::onnx::Inputs::Pairs,
            )?,
            batch_size: batch_size.max(1),
        })
    }

    /// The logits of each `(first, second)` pair, in order, every row as
    /// wide as the model's output classes.
    pub fn rows(&self, pairs: &[(&str, &str)]) -> Result<Vec<Vec<f32>>, CrossEncoderError> {
        let mut out = Vec::with_capacity(pairs.len());
        for batch in pairs.chunks(self.batch_size) {
            let owned: Vec<(String, String)> = batch
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            let encodings = self
                .model
                .tokenizer()?
                .encode_batch(owned, true)
                .map_err(|e| EmbedError::Run(e.to_string()))?;
            let output = self.model.run(&encodings)?;
            out.extend(rows(&output.dims, &output.data, batch.len())?);
        }
        Ok(out)
    }
}

/// One row per pair from a `[n]` (one logit each) or `[n, classes]`
/// output.
fn rows(dims: &[usize], data: &[f32], n: usize) -> Result<Vec<Vec<f32>>, CrossEncoderError> {
    match dims {
        [b] if *b == n => Ok(data.iter().map(|&x| vec![x]).collect()),
        [b, c] if *b == n && *c > 0 => Ok(data.chunks(*c).map(<[f32]>::to_vec).collect()),
        _ => Err(CrossEncoderError::Shape(dims.to_vec())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_from_every_output_shape() {
        assert_eq!(
            rows(&[2], &[0.5, 1.5], 2).unwrap(),
            vec![vec![0.5], vec![1.5]]
        );
        assert_eq!(
            rows(&[2, 1], &[0.5, 1.5], 2).unwrap(),
            vec![vec![0.5], vec![1.5]]
        );
        assert_eq!(
            rows(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2).unwrap(),
            vec![vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]]
        );
        assert!(matches!(
            rows(&[3, 1], &[0.0; 3], 2),
            Err(CrossEncoderError::Shape(d)) if d == vec![3, 1]
        ));
        assert!(rows(&[2, 2, 2], &[0.0; 8], 2).is_err());
    }

    #[test]
    fn a_missing_model_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        match CrossEncoder::load(dir.path(), 512, 8, &[]) {
            Err(CrossEncoderError::Missing(p)) => assert_eq!(p, dir.path()),
            other => panic!("{other:?}"),
        }
    }
}
