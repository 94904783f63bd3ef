//! The configuration file (`config.toml`) and where kebab keeps its files.
//!
//! Precedence: built-in defaults → config file → `KEBAB_*` environment
//! variables → command-line flags.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bounds::{OutOfBounds, at_most};

/// Problems reading or writing the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The path is not a regular file (a FIFO, a device such as
    /// `/dev/zero`, a directory): never read.
    #[error("config {path} is a {what}, not a regular file")]
    NotRegular { path: PathBuf, what: &'static str },
    /// The file is over [`MAX_CONFIG_BYTES`]: not read past the bound.
    #[error("config {path} is larger than {limit} bytes")]
    TooLarge { path: PathBuf, limit: u64 },
    /// The file is not valid TOML for this schema.
    #[error("invalid config {path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// Writing the default file failed.
    #[error("cannot write config {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ConfigError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            ConfigError::Invalid { .. } => {
                "fix the key it names, or `kebab init --force` to rewrite defaults"
            }
            ConfigError::NotRegular { .. } | ConfigError::TooLarge { .. } => {
                "a config file is a regular TOML file of at most 8 MiB: point --config (or KEBAB_CONFIG) at one"
            }
            ConfigError::Read { .. } | ConfigError::Write { .. } => {
                "check the file's permissions, or pass --config FILE"
            }
        }
    }
}

/// The largest config file read (far above any real one; 200 000 keys fit).
pub const MAX_CONFIG_BYTES: u64 = 8 << 20;

/// Warnings of one kind shown one by one; the rest are counted in one
/// more line.
pub const MAX_WARNINGS: usize = 20;

/// The first [`MAX_WARNINGS`] of `warnings`, then `… and N more {what}`
/// when there are more (so 200 000 unknown keys print 21 lines).
pub fn summarise_warnings(warnings: impl IntoIterator<Item = String>, what: &str) -> Vec<String> {
    let mut warnings = warnings.into_iter();
    let mut out: Vec<String> = warnings.by_ref().take(MAX_WARNINGS).collect();
    let more = warnings.count();
    if more > 0 {
        out.push(format!("… and {more} more {what} (not listed)"));
    }
    out
}

/// The longest key text a warning shows.
const MAX_KEY_SHOWN: usize = 200;

/// The whole configuration file. Keys kebab does not know (the design's
/// `[storage] sqlite`, a future option, a typo) are accepted and named in
/// [`Config::warnings`], never fatal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Config {
    /// Config schema version; always 1 for now.
    pub schema_version: u32,
    pub workspace: WorkspaceConfig,
    pub storage: StorageConfig,
    pub indexing: IndexingConfig,
    pub chunking: ChunkingConfig,
    pub search: SearchConfig,
    pub plugins: PluginsConfig,
    pub models: ModelsConfig,
    pub rag: RagConfig,
    /// What loading the file noticed: keys kebab ignores.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// `[models]`: the models kebab talks to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ModelsConfig {
    /// Largest file `kebab models pull` downloads, in MiB (the catalog's
    /// biggest model file is about 1.1 GB).
    pub max_download_mb: u64,
    /// `[models.llm]`: the chat model behind `kebab ask`.
    pub llm: crate::llm::LlmConfig,
    /// `[models.embedding]`: the model behind vector search.
    pub embedding: crate::embed::EmbeddingConfig,
    /// `[models.korean]`: the morphological dictionary for Korean search.
    pub korean: KoreanConfig,
}

impl Default for ModelsConfig {
    fn default() -> Self {
        ModelsConfig {
            max_download_mb: 4096,
            llm: Default::default(),
            embedding: Default::default(),
            korean: Default::default(),
        }
    }
}

impl ModelsConfig {
    /// The cap on one downloaded model file.
    pub fn download_cap(&self) -> crate::http::DownloadCap {
        crate::http::DownloadCap::mib(self.max_download_mb, "[models] max_download_mb")
    }
}

/// `[models.korean]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct KoreanConfig {
    /// Built lindera ko-dic directory; default: `models/ko-dic` under the
    /// data directory, then under the user cache (`kebab models
    /// import-ko-dic` writes it there).
    pub dictionary: Option<String>,
}

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

/// `[workspace]`: what `kebab ingest` walks.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct WorkspaceConfig {
    /// Workspace root; stored paths are relative to it when an ingested path
    /// lies inside it, else relative to the ingested directory.
    pub root: Option<String>,
    /// Extra gitignore-style patterns to leave out.
    pub exclude: Vec<String>,
}

/// `[storage]`: where the index lives.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct StorageConfig {
    /// Data directory (SQLite file, installed plugins). Default:
    /// `$XDG_DATA_HOME/kebab`.
    pub data_dir: Option<String>,
}

/// `[indexing]`: ingest behaviour.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct IndexingConfig {
    /// Files parsed at the same time.
    pub max_parallel_extractors: usize,
    /// Files larger than this are skipped (`size_exceeded`).
    pub max_file_mb: u64,
    /// Text files no plugin claims (`.css`, `.ini`, `LICENSE`, scripts
    /// without an extension, …) are indexed by the text plugin, labelled
    /// from their extension or `#!` line; `false` skips them as
    /// `unsupported`. Binary files are skipped either way.
    pub index_unknown_text: bool,
}

/// `[chunking]`: the policy handed to every chunker.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ChunkingConfig {
    pub target_tokens: u32,
    pub overlap_tokens: u32,
}

/// `[search]`: result shaping.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct SearchConfig {
    pub default_k: usize,
    pub snippet_chars: usize,
    /// RRF constant: a chunk at rank r in a channel scores 1 / (rrf_k + r).
    pub rrf_k: u32,
    /// Hybrid fusion: `rrf`, `blend` (min–max normalised scores mixed with
    /// `blend_weight` on the lexical side), `blend-z` (z-scores), or a spec
    /// with its parameter (`rrf:60`, `blend:0.3`).
    pub fusion: String,
    /// Lexical weight of `blend` / `blend-z` when the spec has none.
    pub blend_weight: f64,
    /// Candidates each channel contributes to hybrid fusion.
    pub candidates: usize,
    /// Vector rows before an ANN index is built (exact search below). At
    /// 5 000 rows the exact scan (~1 µs per row) costs what the index does
    /// (~5 ms, recall@10 ≥ 0.995); BENCHMARKS.md "Where the index starts".
    pub ann_min_rows: usize,
    /// IVF partitions a vector query searches once the index exists
    /// (unset: Lance's adaptive probing). `kebab eval ann` measures the
    /// recall each setting gives on this index.
    pub ann_nprobes: Option<usize>,
    /// HNSW candidates per searched partition (unset: 1.5 × the limit;
    /// raised to the rows a query fetches × `ann_refine_factor` when lower).
    pub ann_ef: Option<usize>,
    /// Rows re-scored with their full vectors, per row asked for.
    pub ann_refine_factor: u32,
    /// Neighbours below this cosine similarity are not vector hits
    /// (default: the embedding model's own floor from the catalog).
    pub min_vector_score: Option<f32>,
    /// `[search.rerank]`: a cross-encoder over the best fused hits.
    pub rerank: crate::rerank::RerankConfig,
}

/// `[plugins]`: sandbox limits applied to every plugin call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct PluginsConfig {
    /// Wall-clock budget for one `parse` or `chunk-document` call.
    pub timeout_ms: u64,
    /// Linear-memory cap per plugin instance.
    pub memory_mb: u64,
    /// Cap on everything one file's output holds (all texts together).
    pub max_output_mb: u64,
    /// Cap on blocks per document.
    pub max_blocks: usize,
    /// Cap on chunks per document.
    pub max_chunks: usize,
    /// Cap on any single block or chunk text, in KiB.
    pub max_text_kb: usize,
    /// Cap on every other string a plugin returns (title, language, heading
    /// path entries, symbols, metadata keys), in bytes.
    pub max_field_bytes: usize,
    /// Cap on one document metadata value, in KiB.
    pub max_metadata_value_kb: usize,
    /// Cap on the spans one chunk cites.
    pub max_spans_per_chunk: usize,
    /// Cap on the blocks one chunk lists.
    pub max_blocks_per_chunk: usize,
    /// Cap on heading-path depth.
    pub max_heading_depth: usize,
    /// Cap on document metadata entries.
    pub max_metadata_entries: usize,
    /// Largest component `kebab plugin install` reads (a download or a
    /// file), in MiB.
    pub max_download_mb: u64,
    /// Plugins never routed to (the text plugin still serves as fallback).
    pub disabled: Vec<String>,
    /// `"glob" = "plugin"`: files matching the glob go to that plugin first.
    pub routes: std::collections::BTreeMap<String, String>,
    /// Per-plugin overrides of the limits above.
    pub limits: std::collections::BTreeMap<String, PluginLimits>,
    /// `[plugins.config.<name>]`: settings a plugin reads through the
    /// contract's `settings` import (API ≥ 1.1.0).
    pub config: std::collections::BTreeMap<String, toml::Table>,
}

/// `[plugins.limits.<name>]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct PluginLimits {
    pub timeout_ms: Option<u64>,
    pub memory_mb: Option<u64>,
    pub max_output_mb: Option<u64>,
    pub max_blocks: Option<usize>,
    pub max_chunks: Option<usize>,
    pub max_text_kb: Option<usize>,
    pub max_field_bytes: Option<usize>,
    pub max_metadata_value_kb: Option<usize>,
    pub max_spans_per_chunk: Option<usize>,
    pub max_blocks_per_chunk: Option<usize>,
    pub max_heading_depth: Option<usize>,
    pub max_metadata_entries: Option<usize>,
}

impl PluginsConfig {
    /// The cap on a component `kebab plugin install` reads.
    pub fn download_cap(&self) -> crate::http::DownloadCap {
        crate::http::DownloadCap::mib(self.max_download_mb, "[plugins] max_download_mb")
    }

    /// Limits that apply to plugin `name`.
    pub fn limits_for(&self, name: &str) -> crate::plugin::runtime::Limits {
        let o = self.limits.get(name).cloned().unwrap_or_default();
        crate::plugin::runtime::Limits {
            timeout: std::time::Duration::from_millis(o.timeout_ms.unwrap_or(self.timeout_ms)),
            memory_bytes: mib(o.memory_mb.unwrap_or(self.memory_mb)),
        }
    }

    /// The settings of plugin `name`: strings as they are, other values as
    /// their TOML text.
    pub fn settings_for(&self, name: &str) -> crate::plugin::Settings {
        self.config
            .get(name)
            .map(|table| {
                table
                    .iter()
                    .map(|(key, value)| {
                        let text = match value {
                            toml::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (key.clone(), text)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Bounds on what plugin `name` may return for one file.
    pub fn output_limits_for(&self, name: &str) -> crate::plugin::validate::OutputLimits {
        let o = self.limits.get(name).cloned().unwrap_or_default();
        crate::plugin::validate::OutputLimits {
            max_blocks: o.max_blocks.unwrap_or(self.max_blocks),
            max_chunks: o.max_chunks.unwrap_or(self.max_chunks),
            max_text_bytes: o
                .max_text_kb
                .unwrap_or(self.max_text_kb)
                .saturating_mul(1 << 10),
            max_total_bytes: mib(o.max_output_mb.unwrap_or(self.max_output_mb)),
            max_field_bytes: o.max_field_bytes.unwrap_or(self.max_field_bytes),
            max_metadata_value_bytes: o
                .max_metadata_value_kb
                .unwrap_or(self.max_metadata_value_kb)
                .saturating_mul(1 << 10),
            max_spans_per_chunk: o.max_spans_per_chunk.unwrap_or(self.max_spans_per_chunk),
            max_blocks_per_chunk: o.max_blocks_per_chunk.unwrap_or(self.max_blocks_per_chunk),
            max_heading_depth: o.max_heading_depth.unwrap_or(self.max_heading_depth),
            max_metadata_entries: o.max_metadata_entries.unwrap_or(self.max_metadata_entries),
        }
    }
}

/// `mb` MiB in bytes, saturating (a config in force is within
/// [`MAX_PLUGIN_MEMORY_MB`]; one built in code may not be).
fn mib(mb: u64) -> usize {
    usize::try_from(mb)
        .unwrap_or(usize::MAX)
        .saturating_mul(1 << 20)
}

impl Config {
    /// The chunk policy every plugin is given.
    pub fn chunk_policy(&self) -> crate::plugin::ChunkPolicy {
        crate::plugin::ChunkPolicy {
            target_tokens: self.chunking.target_tokens,
            overlap_tokens: self.chunking.overlap_tokens,
        }
    }

    /// The policy hash the documents of plugin `name` carry: the chunk
    /// policy and the plugin's settings.
    pub fn policy_hash_for(&self, name: &str) -> String {
        crate::ids::policy_hash(
            self.chunking.target_tokens,
            self.chunking.overlap_tokens,
            &self.plugins.settings_for(name),
        )
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            schema_version: 1,
            workspace: WorkspaceConfig::default(),
            storage: StorageConfig::default(),
            indexing: IndexingConfig::default(),
            chunking: ChunkingConfig::default(),
            search: SearchConfig::default(),
            plugins: PluginsConfig::default(),
            models: ModelsConfig::default(),
            rag: RagConfig::default(),
            warnings: Vec::new(),
        }
    }
}

impl Default for IndexingConfig {
    fn default() -> Self {
        IndexingConfig {
            max_parallel_extractors: 2,
            max_file_mb: 10,
            index_unknown_text: true,
        }
    }
}

impl Default for ChunkingConfig {
    fn default() -> Self {
        ChunkingConfig {
            target_tokens: 500,
            overlap_tokens: 80,
        }
    }
}

/// The hybrid fusion kebab uses unless configured: the z-score blend with
/// equal weights, the best of the measured fusions on the SciFact train
/// split (BENCHMARKS.md "Fusion": nDCG@10 0.7200 against RRF's 0.7005).
pub const DEFAULT_FUSION: &str = "blend-z";
/// The default lexical weight of a blend.
pub const DEFAULT_BLEND_WEIGHT: f64 = 0.5;

impl SearchConfig {
    /// What a vector query asks of the ANN index.
    pub fn ann(&self) -> crate::vector::AnnParams {
        crate::vector::AnnParams {
            nprobes: self.ann_nprobes,
            ef: self.ann_ef,
            refine_factor: self.ann_refine_factor,
        }
    }

    /// The configured hybrid fusion (checked when the config is loaded;
    /// an unparsable spec given in code falls back to RRF).
    pub fn fusion(&self) -> crate::fusion::Fusion {
        self.parse_fusion()
            .unwrap_or(crate::fusion::Fusion::Rrf { k: self.rrf_k })
    }

    /// The configured hybrid fusion, or why it does not parse.
    pub fn parse_fusion(&self) -> Result<crate::fusion::Fusion, crate::fusion::UnknownFusion> {
        let default = match self.fusion.split(':').next() {
            Some("blend" | "blend-z") => crate::fusion::Fusion::Blend {
                weight: self.blend_weight,
                norm: crate::fusion::Norm::MinMax,
            },
            _ => crate::fusion::Fusion::Rrf { k: self.rrf_k },
        };
        crate::fusion::Fusion::parse(&self.fusion, default)
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            default_k: 10,
            snippet_chars: 220,
            rrf_k: 60,
            fusion: DEFAULT_FUSION.to_string(),
            blend_weight: DEFAULT_BLEND_WEIGHT,
            candidates: 100,
            ann_min_rows: 5_000,
            ann_nprobes: None,
            ann_ef: None,
            ann_refine_factor: crate::vector::AnnParams::default().refine_factor,
            min_vector_score: None,
            rerank: Default::default(),
        }
    }
}

impl Default for PluginsConfig {
    fn default() -> Self {
        PluginsConfig {
            timeout_ms: 10_000,
            memory_mb: 512,
            max_output_mb: 256,
            max_blocks: 200_000,
            max_chunks: 100_000,
            max_text_kb: 4096,
            max_field_bytes: 16 << 10,
            max_metadata_value_kb: 1024,
            max_spans_per_chunk: 4096,
            max_blocks_per_chunk: 65_536,
            max_heading_depth: 32,
            max_metadata_entries: 1_000,
            max_download_mb: 64,
            disabled: Vec::new(),
            routes: Default::default(),
            limits: Default::default(),
            config: Default::default(),
        }
    }
}

/// Longest timeout a setting takes, in seconds (a day): no deadline
/// computed from one can overflow the clock.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;
/// Largest plugin memory cap, in MiB: a wasm32 instance addresses 4 GiB.
pub const MAX_PLUGIN_MEMORY_MB: u64 = 4 << 10;
/// Largest cap on one file's plugin output, in MiB.
pub const MAX_PLUGIN_OUTPUT_MB: u64 = 4 << 10;
/// Largest cap on one text a plugin returns, in KiB (1 GiB).
pub const MAX_PLUGIN_TEXT_KB: usize = 1 << 20;
/// Largest file ingest reads, in MB (1 TB).
pub const MAX_FILE_MB: u64 = 1 << 20;
/// Largest token count a model setting takes (context, answer, evidence).
pub const MAX_MODEL_TOKENS: u32 = 1 << 20;
/// Largest embedding dimension.
pub const MAX_EMBEDDING_DIMENSIONS: usize = 1 << 16;

impl PluginLimits {
    /// The overrides within the bounds [`PluginsConfig::check_bounds`]
    /// applies to the defaults.
    fn check_bounds(&self) -> Result<(), OutOfBounds> {
        at_most(
            "timeout_ms",
            self.timeout_ms.unwrap_or(0),
            MAX_TIMEOUT_SECS * 1000,
        )?;
        at_most(
            "memory_mb",
            self.memory_mb.unwrap_or(0),
            MAX_PLUGIN_MEMORY_MB,
        )?;
        at_most(
            "max_output_mb",
            self.max_output_mb.unwrap_or(0),
            MAX_PLUGIN_OUTPUT_MB,
        )?;
        at_most(
            "max_text_kb",
            self.max_text_kb.unwrap_or(0),
            MAX_PLUGIN_TEXT_KB,
        )?;
        at_most(
            "max_metadata_value_kb",
            self.max_metadata_value_kb.unwrap_or(0),
            MAX_PLUGIN_TEXT_KB,
        )
    }
}

impl SearchConfig {
    /// Every size within its bound ([`crate::search::MAX_K`] and the
    /// others beside it, the ANN parameters' own).
    fn check_bounds(&self) -> Result<(), OutOfBounds> {
        use crate::search::{MAX_CANDIDATES, MAX_K, MAX_SNIPPET_CHARS};
        at_most("default_k", self.default_k, MAX_K)?;
        at_most("candidates", self.candidates, MAX_CANDIDATES)?;
        at_most("snippet_chars", self.snippet_chars, MAX_SNIPPET_CHARS)?;
        self.ann().check()
    }
}

impl RagConfig {
    /// `k` and the evidence budget within their bounds.
    fn check_bounds(&self) -> Result<(), OutOfBounds> {
        at_most("k", self.k, crate::search::MAX_K)?;
        at_most(
            "max_context_tokens",
            self.max_context_tokens,
            MAX_MODEL_TOKENS,
        )
    }
}

impl ModelsConfig {
    /// The model servers' timeouts, token counts and dimensions within
    /// their bounds, named with their section.
    fn check_bounds(&self) -> Result<(), String> {
        let llm = &self.llm;
        at_most("timeout_secs", llm.timeout_secs, MAX_TIMEOUT_SECS)
            .and_then(|()| at_most("context_tokens", llm.context_tokens, MAX_MODEL_TOKENS))
            .and_then(|()| at_most("max_answer_tokens", llm.max_answer_tokens, MAX_MODEL_TOKENS))
            .map_err(in_section("models.llm"))?;
        let embedding = &self.embedding;
        at_most("timeout_secs", embedding.timeout_secs, MAX_TIMEOUT_SECS)
            .and_then(|()| {
                at_most(
                    "dimensions",
                    embedding.dimensions.unwrap_or(0),
                    MAX_EMBEDDING_DIMENSIONS,
                )
            })
            .map_err(in_section("models.embedding"))
    }
}

/// A bound's violation as `[section] key = value is over its bound of max`.
fn in_section(section: &'static str) -> impl Fn(OutOfBounds) -> String {
    move |e| format!("[{section}] {e}")
}

impl Config {
    /// Every numeric setting within its documented bound, so nothing sized
    /// or timed from one can overflow: the first one over names its
    /// section, key and bound. Settings that are only compared (counts of
    /// blocks, chunks, rows) need none.
    pub fn check_bounds(&self) -> Result<(), String> {
        self.search.check_bounds().map_err(in_section("search"))?;
        at_most("top_n", self.search.rerank.top_n, crate::search::MAX_K)
            .map_err(in_section("search.rerank"))?;
        self.rag.check_bounds().map_err(in_section("rag"))?;
        self.models.check_bounds()?;
        at_most("max_file_mb", self.indexing.max_file_mb, MAX_FILE_MB)
            .map_err(in_section("indexing"))?;
        let plugins = &self.plugins;
        PluginLimits {
            timeout_ms: Some(plugins.timeout_ms),
            memory_mb: Some(plugins.memory_mb),
            max_output_mb: Some(plugins.max_output_mb),
            max_text_kb: Some(plugins.max_text_kb),
            max_metadata_value_kb: Some(plugins.max_metadata_value_kb),
            ..PluginLimits::default()
        }
        .check_bounds()
        .map_err(in_section("plugins"))?;
        for (name, limits) in &plugins.limits {
            limits
                .check_bounds()
                .map_err(|e| format!("[plugins.limits.{name}] {e}"))?;
        }
        Ok(())
    }

    /// Read `path`; a missing file yields the defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let Some(text) = read_bounded(path)? else {
            return Ok(Config::default());
        };
        let invalid = |message: String| ConfigError::Invalid {
            path: path.into(),
            message,
        };
        let mut ignored = Vec::new();
        let mut config: Config = serde_ignored::deserialize(
            toml::Deserializer::parse(&text).map_err(|e| invalid(e.message().to_string()))?,
            |key| ignored.push(key.to_string()),
        )
        .map_err(|e| invalid(e.message().to_string()))?;
        config.warnings = summarise_warnings(
            ignored.iter().map(|key| {
                format!(
                    "config key `{}` is not used by this kebab; ignored",
                    crate::sanitize::bounded(key, MAX_KEY_SHOWN)
                )
            }),
            "unknown config keys, ignored",
        );
        config
            .search
            .parse_fusion()
            .map_err(|e| invalid(format!("[search] fusion: {e}")))?;
        if config.search.ann_nprobes == Some(0)
            || config.search.ann_ef == Some(0)
            || config.search.ann_refine_factor == 0
        {
            return Err(invalid(
                "[search] ann_nprobes, ann_ef and ann_refine_factor must be at least 1 \
                 (leave them out for the defaults)"
                    .into(),
            ));
        }
        config.check_bounds().map_err(invalid)?;
        if config.rag.prompt_template_version != crate::rag::PROMPT_TEMPLATE {
            return Err(invalid(format!(
                "[rag] prompt_template_version `{}` is unknown: this kebab has `{}`",
                config.rag.prompt_template_version,
                crate::rag::PROMPT_TEMPLATE
            )));
        }
        config.expand_variables();
        Ok(config)
    }

    /// `${VAR}` and `${VAR:-default}` in the path settings, from the
    /// environment, then a leading `~` (`{data_dir}` is filled in by
    /// [`Config::with_data_dir`]). Modules reading a path setting take it
    /// as it is.
    fn expand_variables(&mut self) {
        for value in self.path_fields().into_iter().flatten() {
            *value = expand_home(&expand_env(value))
                .to_string_lossy()
                .into_owned();
        }
    }

    /// Fill `{data_dir}` in the path settings.
    pub fn with_data_dir(mut self, data_dir: &Path) -> Config {
        let dir = data_dir.to_string_lossy();
        for value in self.path_fields().into_iter().flatten() {
            *value = value.replace("{data_dir}", &dir);
        }
        self
    }

    /// The settings that hold a path.
    fn path_fields(&mut self) -> [Option<&mut String>; 6] {
        [
            self.storage.data_dir.as_mut(),
            self.workspace.root.as_mut(),
            self.models.embedding.path.as_mut(),
            self.models.embedding.runtime.as_mut(),
            self.models.korean.dictionary.as_mut(),
            self.search.rerank.path.as_mut(),
        ]
    }

    /// Write the defaults to `path` (creating its directory).
    pub fn write_default(path: &Path) -> Result<(), ConfigError> {
        let wrap = |source| ConfigError::Write {
            path: path.into(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(wrap)?;
        }
        let body = toml::to_string_pretty(&Config::default()).expect("defaults serialise");
        std::fs::write(path, format!("# kebab configuration\n{body}")).map_err(wrap)
    }
}

/// The text of the config file at `path` (`None` when there is none): the
/// path is resolved (a symlinked config is fine), then opened without
/// blocking and read only when it is a regular file of at most
/// [`MAX_CONFIG_BYTES`], so `/dev/zero`, `/dev/urandom` or a FIFO fail at
/// once instead of reading forever or hanging.
fn read_bounded(path: &Path) -> Result<Option<String>, ConfigError> {
    let read_err = |source| ConfigError::Read {
        path: path.into(),
        source,
    };
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_err(e)),
    };
    let bytes = crate::walk::read_regular_file(&real, MAX_CONFIG_BYTES).map_err(|e| match e {
        crate::walk::ReadRefusal::NotRegular(what) => ConfigError::NotRegular {
            path: path.into(),
            what,
        },
        crate::walk::ReadRefusal::TooLarge(_) => ConfigError::TooLarge {
            path: path.into(),
            limit: MAX_CONFIG_BYTES,
        },
        crate::walk::ReadRefusal::Io(e) => read_err(e),
    })?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ConfigError::Invalid {
            path: path.into(),
            message: "not UTF-8 text".into(),
        })
}

/// `${VAR}` and `${VAR:-default}` replaced from the environment (an unset
/// or empty variable without a default becomes empty); other text kept.
pub fn expand_env(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let inner = &rest[start + 2..start + len];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match std::env::var(name) {
            Ok(v) if !v.is_empty() => out.push_str(&v),
            _ => out.push_str(default.unwrap_or("")),
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// Expand a leading `~` to the home directory.
pub fn expand_home(path: &str) -> PathBuf {
    match path.strip_prefix("~") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            home_dir().join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn xdg(var: &str, fallback: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home_dir().join(fallback))
}

/// The default config file: `$XDG_CONFIG_HOME/kebab/config.toml`.
pub fn default_config_path() -> PathBuf {
    xdg("XDG_CONFIG_HOME", ".config").join("kebab/config.toml")
}

/// The default data directory: `$XDG_DATA_HOME/kebab`.
pub fn default_data_dir() -> PathBuf {
    xdg("XDG_DATA_HOME", ".local/share").join("kebab")
}

/// Where compiled plugin code is cached: `$KEBAB_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/kebab`. Entries are keyed by content hash and engine
/// build, so several data directories can share one cache.
pub fn default_cache_dir() -> PathBuf {
    std::env::var_os("KEBAB_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| xdg("XDG_CACHE_HOME", ".cache").join("kebab"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_gives_defaults_and_defaults_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c/config.toml");
        assert_eq!(Config::load(&path).unwrap(), Config::default());
        Config::write_default(&path).unwrap();
        assert_eq!(Config::load(&path).unwrap(), Config::default());
    }

    #[test]
    fn partial_file_overrides_only_its_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[chunking]\ntarget_tokens = 120\n").unwrap();
        let c = Config::load(&path).unwrap();
        assert_eq!(c.chunking.target_tokens, 120);
        assert_eq!(c.chunking.overlap_tokens, 80);
    }

    #[test]
    fn ann_settings_load_and_zero_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[search]\nann_nprobes = 20\nann_refine_factor = 2\n").unwrap();
        let ann = Config::load(&path).unwrap().search.ann();
        assert_eq!(
            (ann.nprobes, ann.ef, ann.refine_factor),
            (Some(20), None, 2)
        );
        assert_eq!(
            Config::default().search.ann(),
            crate::vector::AnnParams::default()
        );
        for zero in ["ann_nprobes = 0", "ann_ef = 0", "ann_refine_factor = 0"] {
            std::fs::write(&path, format!("[search]\n{zero}\n")).unwrap();
            let err = Config::load(&path).unwrap_err().to_string();
            assert!(err.contains("at least 1"), "{zero}: {err}");
        }
    }

    #[test]
    fn plugin_settings_arrive_as_text() {
        let c: Config = toml::from_str(
            "[plugins.config.text]\nlang = \"ko\"\nmax = 3\nflags = [\"a\", \"b\"]\n",
        )
        .unwrap();
        let settings = c.plugins.settings_for("text");
        assert_eq!(settings["lang"], "ko");
        assert_eq!(settings["max"], "3");
        assert_eq!(settings["flags"], r#"["a", "b"]"#);
        assert!(c.plugins.settings_for("markdown").is_empty());
    }

    #[test]
    fn per_plugin_limits_override_the_defaults() {
        let c: Config =
            toml::from_str("[plugins]\ntimeout_ms = 100\n[plugins.limits.pdf]\nmemory_mb = 64\n")
                .unwrap();
        let pdf = c.plugins.limits_for("pdf");
        assert_eq!((pdf.timeout.as_millis(), pdf.memory_bytes), (100, 64 << 20));
        let other = c.plugins.limits_for("markdown");
        assert_eq!(
            (other.timeout.as_millis(), other.memory_bytes),
            (100, 512 << 20)
        );
    }

    #[test]
    fn unknown_keys_are_accepted_and_named_in_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[chunking]\ntarget = 1\ntarget_tokens = 300\n").unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.chunking.target_tokens, 300, "known keys still apply");
        assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
        assert!(config.warnings[0].contains("`chunking.target`"));
        // A wrong type for a known key is still an error, naming the file.
        std::fs::write(&path, "[chunking]\ntarget_tokens = \"many\"\n").unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(err.contains("config.toml"), "{err}");
    }

    #[test]
    fn variables_expand_in_path_settings() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("KEBAB_CONFIG_TEST_HOME", "/srv/kb") };
        assert_eq!(
            expand_env("${KEBAB_CONFIG_TEST_HOME}/notes"),
            "/srv/kb/notes"
        );
        assert_eq!(
            expand_env("${KEBAB_CONFIG_TEST_UNSET:-~/.local/share}/kebab"),
            "~/.local/share/kebab"
        );
        assert_eq!(expand_env("plain/${unclosed"), "plain/${unclosed");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[models.embedding]\npath = \"{data_dir}/models/m\"\n[workspace]\nroot = \"${KEBAB_CONFIG_TEST_HOME}\"\n\
             [search.rerank]\npath = \"~/rr\"\n",
        )
        .unwrap();
        let config = Config::load(&path).unwrap().with_data_dir(Path::new("/d"));
        assert_eq!(config.models.embedding.path.as_deref(), Some("/d/models/m"));
        assert_eq!(config.workspace.root.as_deref(), Some("/srv/kb"));
        let home = std::env::var("HOME").unwrap();
        assert_eq!(
            config.search.rerank.path,
            Some(format!("{}/rr", home.trim_end_matches('/')))
        );
    }
}
