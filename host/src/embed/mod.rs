//! Text embeddings computed locally: an ONNX model run by ONNX Runtime
//! (`ort`) behind its Hugging Face `tokenizers` tokenizer.
//!
//! Sentence-transformer style models: token embeddings are mean-pooled over
//! the attention mask and L2-normalised, so a dot product is the cosine.

pub mod catalog;
pub mod pull;
pub mod runtime;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ort::session::Session;
use ort::value::Tensor;
use serde::{Deserialize, Serialize};
use tokenizers::{Tokenizer, TruncationParams};

/// Problems finding, loading or running an embedding model.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("ONNX Runtime library not found (searched: {})", list(searched))]
    RuntimeMissing { searched: Vec<PathBuf> },
    #[error("cannot load ONNX Runtime from {path}: {message}")]
    RuntimeLoad { path: PathBuf, message: String },
    #[error("embedding model `{name}` not found (searched: {})", list(searched))]
    ModelMissing {
        name: String,
        searched: Vec<PathBuf>,
    },
    #[error(
        "embedding model `{name}` is not in kebab's catalog; set [models.embedding] path and dimensions"
    )]
    UnknownModel { name: String },
    #[error("cannot load {path}: {message}")]
    Load { path: PathBuf, message: String },
    #[error("embedding failed: {0}")]
    Run(String),
    #[error("model produced {got} dimensions, config says {expected}")]
    Dimensions { expected: usize, got: usize },
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl EmbedError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            EmbedError::RuntimeMissing { .. } | EmbedError::RuntimeLoad { .. } => {
                "install ONNX Runtime (`pip install onnxruntime==1.22.1`) and point \
                 ORT_DYLIB_PATH or [models.embedding] runtime at \
                 site-packages/onnxruntime/capi/libonnxruntime.so.1.22.1"
                    .into()
            }
            EmbedError::ModelMissing { name, .. } => format!(
                "run `kebab models pull {name}`, or set [models.embedding] path to a directory \
                 holding model.onnx and tokenizer.json"
            ),
            EmbedError::UnknownModel { .. } => "see `kebab models list`".into(),
            _ => "check the model files; `kebab doctor` shows what was found".into(),
        }
    }
}

/// `[models.embedding]`: the model that turns chunks and queries into
/// vectors. An empty `model` turns vector search off.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct EmbeddingConfig {
    /// Model name (see `kebab models list`); empty = no vector search.
    pub model: String,
    /// Version label stored with every vector; bump it to re-embed.
    pub version: String,
    /// Directory holding `model.onnx` and `tokenizer.json`; default: the
    /// data dir's `models/<model>`, then the user cache's.
    pub path: Option<String>,
    /// Output dimensions (default: the catalog's).
    pub dimensions: Option<usize>,
    /// Texts per model call.
    pub batch_size: usize,
    /// Token limit per text (default: the catalog's); longer input is cut.
    pub max_length: Option<usize>,
    /// ONNX Runtime library (file or directory); default: ORT_DYLIB_PATH,
    /// then `onnxruntime/` under the data and cache directories.
    pub runtime: Option<String>,
    /// Prefix for queries (default: the catalog's, e.g. `query: ` for E5).
    pub query_prefix: Option<String>,
    /// Prefix for passages (default: the catalog's).
    pub passage_prefix: Option<String>,
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            model: "multilingual-e5-small".into(),
            version: "v1".into(),
            path: None,
            dimensions: None,
            batch_size: 32,
            max_length: None,
            runtime: None,
            query_prefix: None,
            passage_prefix: None,
        }
    }
}

/// A model with every setting decided and its files located.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    pub name: String,
    pub version: String,
    pub dir: PathBuf,
    pub dimensions: usize,
    pub max_length: usize,
    pub batch_size: usize,
    pub query_prefix: String,
    pub passage_prefix: String,
}

impl ModelSpec {
    /// Resolve `config` against the catalog and the model directories.
    /// `Ok(None)` when no model is configured.
    pub fn resolve(
        config: &EmbeddingConfig,
        data_dir: &Path,
        cache_dir: &Path,
    ) -> Result<Option<ModelSpec>, EmbedError> {
        let name = config.model.trim();
        if name.is_empty() {
            return Ok(None);
        }
        let card = catalog::card(name);
        let dimensions = config
            .dimensions
            .or(card.map(|c| c.dimensions))
            .ok_or_else(|| EmbedError::UnknownModel { name: name.into() })?;
        let searched: Vec<PathBuf> = match &config.path {
            Some(p) => vec![crate::config::expand_home(p)],
            None => vec![
                data_dir.join("models").join(name),
                cache_dir.join("models").join(name),
            ],
        };
        let dir = searched
            .iter()
            .find(|d| d.join("model.onnx").is_file() && d.join("tokenizer.json").is_file())
            .cloned()
            .ok_or_else(|| EmbedError::ModelMissing {
                name: name.into(),
                searched: searched.clone(),
            })?;
        Ok(Some(ModelSpec {
            name: name.into(),
            version: config.version.clone(),
            dir,
            dimensions,
            max_length: config
                .max_length
                .or(card.map(|c| c.max_length))
                .unwrap_or(512),
            batch_size: config.batch_size.max(1),
            query_prefix: config
                .query_prefix
                .clone()
                .unwrap_or_else(|| card.map(|c| c.query_prefix).unwrap_or("").into()),
            passage_prefix: config
                .passage_prefix
                .clone()
                .unwrap_or_else(|| card.map(|c| c.passage_prefix).unwrap_or("").into()),
        }))
    }

    /// The model's identity in stored records: `name@version`.
    pub fn id(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// A loaded model.
pub struct Embedder {
    spec: ModelSpec,
    tokenizer: Tokenizer,
    session: Mutex<Session>,
    wants_token_types: bool,
    runtime: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("spec", &self.spec)
            .finish()
    }
}

impl Embedder {
    /// Load ONNX Runtime from `library` and the model described by `spec`.
    pub fn load(spec: ModelSpec, library: &Path) -> Result<Embedder, EmbedError> {
        let runtime = runtime::init(library)?;
        let load_err = |path: &Path, message: String| EmbedError::Load {
            path: path.to_path_buf(),
            message,
        };
        let tokenizer_path = spec.dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| load_err(&tokenizer_path, e.to_string()))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: spec.max_length,
                ..Default::default()
            }))
            .map_err(|e| load_err(&tokenizer_path, e.to_string()))?;
        let model_path = spec.dir.join("model.onnx");
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let session = Session::builder(&runtime.environment)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .with_intra_threads(threads)
            .map_err(|e| load_err(&model_path, e.to_string()))?
            .commit_from_file(&model_path)
            .map_err(|e| load_err(&model_path, e.to_string()))?;
        let wants_token_types = session
            .inputs()
            .iter()
            .any(|i| i.name() == "token_type_ids");
        Ok(Embedder {
            spec,
            tokenizer,
            session: Mutex::new(session),
            wants_token_types,
            runtime: runtime.library,
        })
    }

    /// What was loaded.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// The ONNX Runtime library in use.
    pub fn runtime_library(&self) -> &Path {
        &self.runtime
    }

    /// The vector of a search query (with the query prefix).
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let text = format!("{}{}", self.spec.query_prefix, query);
        Ok(self.embed_batch(&[text])?.remove(0))
    }

    /// The text a passage is embedded as (with the passage prefix); the
    /// embedding cache is keyed by this.
    pub fn passage_text(&self, text: &str) -> String {
        format!("{}{}", self.spec.passage_prefix, text)
    }

    /// Vectors of passages already prefixed by [`Embedder::passage_text`],
    /// in batches of the configured size.
    pub fn embed_passages(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.spec.batch_size) {
            out.extend(self.embed_batch(batch)?);
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let run = |e: &dyn std::fmt::Display| EmbedError::Run(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| run(&e))?;
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
        let dims: Vec<usize> = out_shape.iter().map(|&d| d as usize).collect();
        let vectors = match dims.as_slice() {
            // Token embeddings [batch, seq, hidden]: mean over real tokens.
            [b, s, h] if *b == batch && *s == seq => mean_pool(data, &mask, batch, seq, *h),
            // Already pooled [batch, hidden].
            [b, h] if *b == batch => data.chunks(*h).map(<[f32]>::to_vec).collect(),
            _ => return Err(EmbedError::Run(format!("unexpected output shape {dims:?}"))),
        };
        let vectors: Vec<Vec<f32>> = vectors.into_iter().map(normalise).collect();
        if let Some(v) = vectors.first()
            && v.len() != self.spec.dimensions
        {
            return Err(EmbedError::Dimensions {
                expected: self.spec.dimensions,
                got: v.len(),
            });
        }
        Ok(vectors)
    }
}

/// Mean of the token vectors whose attention mask is 1.
pub fn mean_pool(
    data: &[f32],
    mask: &[i64],
    batch: usize,
    seq: usize,
    hidden: usize,
) -> Vec<Vec<f32>> {
    (0..batch)
        .map(|b| {
            let mut sum = vec![0f32; hidden];
            let mut n = 0f32;
            for t in 0..seq {
                if mask[b * seq + t] == 0 {
                    continue;
                }
                n += 1.0;
                let at = (b * seq + t) * hidden;
                for (s, x) in sum.iter_mut().zip(&data[at..at + hidden]) {
                    *s += x;
                }
            }
            sum.iter().map(|s| s / n.max(1.0)).collect()
        })
        .collect()
}

/// `v` scaled to unit length (zero vectors stay zero).
pub fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Cosine of two unit vectors.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_ignores_padding() {
        // batch 2, seq 3, hidden 2; the second row has one padded token.
        let data = [
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 10.0, 10.0, 20.0, 40.0, 99.0, 99.0,
        ];
        let mask = [1, 1, 1, 1, 1, 0];
        let pooled = mean_pool(&data, &mask, 2, 3, 2);
        assert_eq!(pooled, vec![vec![3.0, 4.0], vec![15.0, 25.0]]);
    }

    #[test]
    fn normalised_vectors_have_unit_length() {
        let v = normalise(vec![3.0, 4.0]);
        assert_eq!(v, vec![0.6, 0.8]);
        assert!((dot(&v, &v) - 1.0).abs() < 1e-6);
        assert_eq!(normalise(vec![0.0, 0.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn resolve_prefers_the_configured_path_and_reports_what_it_searched() {
        let dir = tempfile::tempdir().unwrap();
        let (data, cache) = (dir.path().join("data"), dir.path().join("cache"));
        let config = EmbeddingConfig::default();
        match ModelSpec::resolve(&config, &data, &cache) {
            Err(EmbedError::ModelMissing { name, searched }) => {
                assert_eq!(name, "multilingual-e5-small");
                assert_eq!(
                    searched,
                    vec![
                        data.join("models/multilingual-e5-small"),
                        cache.join("models/multilingual-e5-small")
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
        let model = cache.join("models/multilingual-e5-small");
        std::fs::create_dir_all(&model).unwrap();
        std::fs::write(model.join("model.onnx"), b"x").unwrap();
        std::fs::write(model.join("tokenizer.json"), b"x").unwrap();
        let spec = ModelSpec::resolve(&config, &data, &cache).unwrap().unwrap();
        assert_eq!(spec.dir, model);
        assert_eq!((spec.dimensions, spec.max_length), (384, 512));
        assert_eq!(spec.query_prefix, "query: ");
        assert_eq!(spec.id(), "multilingual-e5-small@v1");

        let off = EmbeddingConfig {
            model: String::new(),
            ..config.clone()
        };
        assert_eq!(ModelSpec::resolve(&off, &data, &cache).unwrap(), None);
        let unknown = EmbeddingConfig {
            model: "my-model".into(),
            ..config
        };
        assert!(matches!(
            ModelSpec::resolve(&unknown, &data, &cache),
            Err(EmbedError::UnknownModel { .. })
        ));
    }
}
