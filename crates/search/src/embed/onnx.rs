//! One ONNX transformer behind its Hugging Face tokenizer: loading both and
//! running a batch of encodings. Shared by the embedding model and the
//! cross-encoders ([`crate::cross_encoder`]), which differ only in what
//! they encode (single texts or pairs) and how they read the output.

use std::path::Path;
use std::sync::Mutex;

use ort::session::builder::GraphOptimizationLevel;
use ort::session::{RunOptions, Session};
use ort::value::Tensor;
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use super::unigram::Unigram;
use super::{EmbedError, Workload};

/// ONNX Runtime's run option that shrinks the named devices' arenas at
/// the end of a run (`onnxruntime_run_options_config_keys.h`).
const ARENA_SHRINKAGE: &str = "memory.enable_memory_arena_shrinkage";

/// What a model is loaded to encode: single texts (an embedding model) or
/// pairs (a cross-encoder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inputs {
    Texts,
    Pairs,
}

/// A model's tokenizer: kebab's own [`Unigram`] where it reproduces the
/// file exactly and only single texts are encoded (it loads
/// multilingual-e5-small's in a tenth of a second and 15 MB, against a
/// second and 300 MB), else Hugging Face's.
enum Tokens {
    Unigram(Box<Unigram>),
    Hf(Box<Tokenizer>),
}

/// A loaded model directory (`model.onnx` + `tokenizer.json`).
pub struct OnnxModel {
    tokens: Tokens,
    session: Mutex<Session>,
    wants_token_types: bool,
    /// Run options that hand the CPU arena's unused memory back to the
    /// system once the run is over (see [`OnnxModel::run_rows`]).
    release: RunOptions,
}

/// One text's tokens as the model reads them: ids, attention mask and
/// token types, of equal length (a borrowed [`Encoding`], or a
/// [`TokenRow`] kept without the encoding's strings and offsets).
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub ids: &'a [u32],
    pub mask: &'a [u32],
    pub types: &'a [u32],
}

impl<'a> From<&'a Encoding> for Row<'a> {
    fn from(e: &'a Encoding) -> Row<'a> {
        Row {
            ids: e.get_ids(),
            mask: e.get_attention_mask(),
            types: e.get_type_ids(),
        }
    }
}

/// The parts of an [`Encoding`] a model run needs, owned: 12 bytes a
/// token, without the encoding's token strings, offsets and word ids or
/// the overflow a truncated text keeps.
#[derive(Debug, Clone, Default)]
pub struct TokenRow {
    ids: Vec<u32>,
    mask: Vec<u32>,
    types: Vec<u32>,
}

impl TokenRow {
    /// The row of unpadded single-text `ids`: all attended, all of type 0.
    pub fn from_ids(ids: Vec<u32>) -> TokenRow {
        let n = ids.len();
        TokenRow {
            ids,
            mask: vec![1; n],
            types: vec![0; n],
        }
    }

    /// Tokens in the row (special tokens included).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the row has no tokens.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The row as [`OnnxModel::run_rows`] reads it.
    pub fn row(&self) -> Row<'_> {
        Row {
            ids: &self.ids,
            mask: &self.mask,
            types: &self.types,
        }
    }
}

impl From<Encoding> for TokenRow {
    fn from(e: Encoding) -> TokenRow {
        TokenRow {
            ids: e.get_ids().to_vec(),
            mask: e.get_attention_mask().to_vec(),
            types: e.get_type_ids().to_vec(),
        }
    }
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
    /// Load ONNX Runtime from `library`, then the tokenizer for `inputs`
    /// (truncating to `max_length` tokens, no padding; see [`Tokens`]) and
    /// the model `file` in `dir`, its
    /// prepared for `workload` ([`Workload::optimises`],
    /// [`Workload::spins`]), run on `threads` threads (0: one per core).
    ///
    /// ONNX Runtime's memory pattern is off: it plans one block for all of
    /// a run's intermediate tensors per input shape, and every batch here
    /// has a shape of its own (texts per batch × the longest one's
    /// tokens), so the plans only made the CPU arena grow (with it and
    /// unbounded batches an ingest of 1 326 chunks peaked at 1.97 GB:
    /// BENCHMARKS.md "Memory of ingest and of a loaded model").
    pub fn load(
        dir: &Path,
        file: &str,
        max_length: usize,
        threads: usize,
        library: &Path,
        workload: Workload,
        inputs: Inputs,
    ) -> Result<OnnxModel, EmbedError> {
        let runtime = super::runtime::init(library)?;
        let load_err = |path: &Path, message: String| EmbedError::Load {
            path: path.to_path_buf(),
            message,
        };
        let tokenizer_path = dir.join("tokenizer.json");
        let own = match inputs {
            Inputs::Texts => Unigram::from_file(&tokenizer_path, max_length)
                .map_err(|e| load_err(&tokenizer_path, e))?,
            Inputs::Pairs => None,
        };
        let tokens = match own {
            Some(unigram) => Tokens::Unigram(Box::new(unigram)),
            None => {
                let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
                    .map_err(|e| load_err(&tokenizer_path, e.to_string()))?;
                tokenizer.with_padding(None);
                tokenizer
                    .with_truncation(Some(TruncationParams {
                        max_length,
                        ..Default::default()
                    }))
                    .map_err(|e| load_err(&tokenizer_path, e.to_string()))?;
                Tokens::Hf(Box::new(tokenizer))
            }
        };
        let model_path = dir.join(file);
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let optimisation = match workload.optimises() {
            true => GraphOptimizationLevel::All,
            false => GraphOptimizationLevel::Disable,
        };
        let session = Session::builder(&runtime.environment)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .with_optimization_level(optimisation)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .with_intra_threads(threads)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .with_intra_op_spinning(workload.spins())
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .with_inter_op_spinning(workload.spins())
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .with_memory_pattern(false)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .commit_from_file(&model_path)
            .map_err(|e| load_err(&model_path, e.to_string()))?;
        let wants_token_types = session
            .inputs()
            .iter()
            .any(|i| i.name() == "token_type_ids");
        let mut release = RunOptions::new().map_err(|e| load_err(&model_path, e.to_string()))?;
        release
            .set(ARENA_SHRINKAGE, "cpu:0")
            .map_err(|e| load_err(&model_path, e.to_string()))?;
        Ok(OnnxModel {
            tokens,
            session: Mutex::new(session),
            wants_token_types,
            release,
        })
    }

    /// Hugging Face's tokenizer, to encode pairs for [`OnnxModel::run`]
    /// (a model loaded for [`Inputs::Pairs`] has it).
    pub fn tokenizer(&self) -> Result<&Tokenizer, EmbedError> {
        match &self.tokens {
            Tokens::Hf(tokenizer) => Ok(tokenizer),
            Tokens::Unigram(_) => Err(EmbedError::Run(
                "the model was loaded to encode single texts".into(),
            )),
        }
    }

    /// The rows of single `texts`, for [`OnnxModel::run_rows`].
    pub fn encode_rows(&self, texts: &[String]) -> Result<Vec<TokenRow>, EmbedError> {
        Ok(match &self.tokens {
            Tokens::Unigram(unigram) => unigram
                .encode_batch(texts)
                .into_iter()
                .map(TokenRow::from_ids)
                .collect(),
            Tokens::Hf(tokenizer) => tokenizer
                .encode_batch(texts.to_vec(), true)
                .map_err(|e| EmbedError::Run(e.to_string()))?
                .into_iter()
                .map(TokenRow::from)
                .collect(),
        })
    }

    /// Run one batch of encodings (see [`OnnxModel::run_rows`]); the arena
    /// keeps its memory for the next batch.
    pub fn run(&self, encodings: &[Encoding]) -> Result<Output, EmbedError> {
        let rows: Vec<Row<'_>> = encodings.iter().map(Row::from).collect();
        self.run_rows(&rows, false)
    }

    /// Run one batch: the rows are right-padded with id 0 and mask 0 to
    /// the longest, and fed as `input_ids`, `attention_mask` and (when the
    /// model takes it) `token_type_ids`. With `release`, ONNX Runtime
    /// frees the arena memory no tensor holds any more once the run is
    /// over — for the last batch of a call, so a process that stays up
    /// (a watcher, a server) does not keep the largest batch's memory;
    /// the next call's first batch allocates it again.
    pub fn run_rows(&self, rows: &[Row<'_>], release: bool) -> Result<Output, EmbedError> {
        let run = |e: &dyn std::fmt::Display| EmbedError::Run(e.to_string());
        let batch = rows.len();
        let seq = rows.iter().map(|r| r.ids.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0i64; batch * seq];
        let mut mask = vec![0i64; batch * seq];
        let mut types = vec![0i64; batch * seq];
        for (row, r) in rows.iter().enumerate() {
            for (col, ((&id, &m), &t)) in r.ids.iter().zip(r.mask).zip(r.types).enumerate() {
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
        let outputs = if release {
            session.run_with_options(inputs, &self.release)
        } else {
            session.run(inputs)
        }
        .map_err(|e| run(&e))?;
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
