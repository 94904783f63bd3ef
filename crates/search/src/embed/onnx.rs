//! One ONNX transformer behind its Hugging Face tokenizer: loading both and
//! running a batch of encodings. Shared by the embedding model and the
//! cross-encoder reranker ([`crate::rerank`]), which differ only in what
//! they encode (single texts or pairs) and how they read the output.

use std::path::Path;
use std::sync::Mutex;

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use super::{EmbedError, Workload};

/// A loaded model directory (`model.onnx` + `tokenizer.json`).
pub struct OnnxModel {
    tokenizer: Tokenizer,
    session: Mutex<Session>,
    wants_token_types: bool,
}

/// A model's output for one batch: the first output tensor's shape and
/// data, and the attention mask the batch was run with (`[batch * seq]`).
pub struct Output {
    pub dims: Vec<usize>,
    pub data: Vec<f32>,
    pub mask: Vec<i64>,
    pub batch: usize,
    pub seq: usize,
}

impl OnnxModel {
    /// Load ONNX Runtime from `library`, then the tokenizer (truncating to
    /// `max_length` tokens, no padding) and the model `file` in `dir`, its
    /// graph optimised only for [`Workload::Many`].
    pub fn load(
        dir: &Path,
        file: &str,
        max_length: usize,
        library: &Path,
        workload: Workload,
    ) -> Result<OnnxModel, EmbedError> {
        let runtime = super::runtime::init(library)?;
        let load_err = |path: &Path, message: String| EmbedError::Load {
            path: path.to_path_buf(),
            message,
        };
        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| load_err(&tokenizer_path, e.to_string()))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                ..Default::default()
            }))
            .map_err(|e| load_err(&tokenizer_path, e.to_string()))?;
        let model_path = dir.join(file);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let optimisation = match workload {
            Workload::Many => GraphOptimizationLevel::All,
            Workload::One => GraphOptimizationLevel::Disable,
        };
        let session = Session::builder(&runtime.environment)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .with_optimization_level(optimisation)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .with_intra_threads(threads)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .commit_from_file(&model_path)
            .map_err(|e| load_err(&model_path, e.to_string()))?;
        let wants_token_types = session
            .inputs()
            .iter()
            .any(|i| i.name() == "token_type_ids");
        Ok(OnnxModel {
            tokenizer,
            session: Mutex::new(session),
            wants_token_types,
        })
    }

    /// The tokenizer, to encode texts or pairs for [`OnnxModel::run`].
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Run one batch: the encodings are right-padded with id 0 and mask 0
    /// to the longest, and fed as `input_ids`, `attention_mask` and (when
    /// the model takes it) `token_type_ids`.
    pub fn run(&self, encodings: &[Encoding]) -> Result<Output, EmbedError> {
        let run = |e: &dyn std::fmt::Display| EmbedError::Run(e.to_string());
        let batch = encodings.len();
        let seq = encodings
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut ids = vec![0i64; batch * seq];
        let mut mask = vec![0i64; batch * seq];
        let mut types = vec![0i64; batch * seq];
        for (row, enc) in encodings.iter().enumerate() {
            for (col, ((&id, &m), &t)) in enc
                .get_ids()
                .iter()
                .zip(enc.get_attention_mask())
                .zip(enc.get_type_ids())
                .enumerate()
            {
                ids[row * seq + col] = id as i64;
                mask[row * seq + col] = m as i64;
                types[row * seq + col] = t as i64;
            }
        }
        let shape = [batch, seq];
        let tensor = |v: Vec<i64>| Tensor::from_array((shape, v)).map_err(|e| run(&e));
        let mut inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask.clone())?,
        ];
        if self.wants_token_types {
            inputs.push(("token_type_ids".into(), tensor(types)?.into()));
        }
        let mut session = self.session.lock().map_err(|e| run(&e))?;
        let outputs = session.run(inputs).map_err(|e| run(&e))?;
        let (out_shape, data) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| run(&e))?;
        Ok(Output {
            dims: out_shape.iter().map(|&d| d as usize).collect(),
            data: data.to_vec(),
            mask,
            batch,
            seq,
        })
    }
}
