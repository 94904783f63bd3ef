//! The configuration file (`config.toml`) and where kebab keeps its files.
//!
//! Precedence: built-in defaults → config file → `KEBAB_*` environment
//! variables → command-line flags.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use kebab_core::bounds::at_most;
use kebab_core::document::ChunkPolicy;
use kebab_core::sanitize::summarise_warnings;
use kebab_plugin_host::config::PluginsConfig;
use kebab_search::cjk::JapaneseConfig;
use kebab_search::config::SearchConfig;
use kebab_search::korean::KoreanConfig;
use kebab_store::vector::VectorPlace;

use crate::rag::RagConfig;
use crate::watch::settings::WatchSettings;

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
    /// A `KEBAB_<SECTION>_<KEY>` environment variable whose value the key
    /// cannot take.
    #[error("invalid environment variable {var} (config key `{key}`): {message}")]
    Env {
        var: String,
        key: String,
        message: String,
    },
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
            ConfigError::Env { .. } => {
                "fix or unset the environment variable it names (KEBAB_<SECTION>_<KEY> overrides that config key)"
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
    /// `[[roots]]`: trees the index holds, declared ahead (`kebab ingest`
    /// and `kebab watch` add them under these names and excludes).
    pub roots: Vec<RootConfig>,
    pub storage: StorageConfig,
    pub indexing: IndexingConfig,
    pub chunking: ChunkingConfig,
    pub search: SearchConfig,
    pub plugins: PluginsConfig,
    pub models: ModelsConfig,
    pub rag: RagConfig,
    /// `[watch]`: how `kebab watch` batches changes and falls back.
    pub watch: WatchSettings,
    /// `[ocr]`: reading text in images for plugins (the plugin host's).
    pub ocr: kebab_plugin_host::ocr::tesseract::OcrConfig,
    /// `[serve]`: who may call `kebab serve`, beyond its flags.
    pub serve: ServeConfig,
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
    pub embedding: kebab_search::embed::EmbeddingConfig,
    /// `[models.korean]`: the morphological dictionary for Korean search.
    pub korean: KoreanConfig,
    /// `[models.japanese]`: the morphological dictionary for Japanese
    /// search (Chinese needs none: jieba's is built in).
    pub japanese: JapaneseConfig,
}

impl Default for ModelsConfig {
    fn default() -> Self {
        ModelsConfig {
            max_download_mb: 4096,
            llm: Default::default(),
            embedding: Default::default(),
            korean: Default::default(),
            japanese: Default::default(),
        }
    }
}

impl ModelsConfig {
    /// The cap on one downloaded model file.
    pub fn download_cap(&self) -> kebab_core::http::DownloadCap {
        kebab_core::http::DownloadCap::mib(self.max_download_mb, "[models] max_download_mb")
    }
}

/// `[workspace]`: what `kebab ingest` walks.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct WorkspaceConfig {
    /// A root declared the older way: an ingested path inside it belongs
    /// to it (as a `[[roots]]` entry without a name would).
    pub root: Option<String>,
    /// Extra gitignore-style patterns to leave out of every root.
    pub exclude: Vec<String>,
}

/// `[[roots]]`: one tree of the index.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct RootConfig {
    /// The directory (`~` and `${VAR}` expanded).
    pub path: String,
    /// Its name [default: the directory's name, made unique].
    pub name: Option<String>,
    /// Gitignore-style patterns left out of this root only.
    pub exclude: Vec<String>,
}

/// `[serve]`: the users of `kebab serve`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct ServeConfig {
    /// `[[serve.users]]`: people and agents with a token of their own,
    /// each reading only the roots named (the server's own token, when
    /// set, still reads everything).
    pub users: Vec<ServeUser>,
}

/// One `[[serve.users]]` entry.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ServeUser {
    /// The user's name: letters, digits, `_`, `.` and `-`, at most 64.
    pub name: String,
    /// The environment variable holding the user's token.
    pub token_env: Option<String>,
    /// The blake3 hash of the user's token, 64 hex digits (`printf %s
    /// "$TOKEN" | b3sum`): the config holds no secret.
    pub token_blake3: Option<String>,
    /// The roots (by name) the user may read; none: nothing.
    pub roots: Vec<String>,
}

/// Longest `[[serve.users]]` name.
const MAX_USER_NAME: usize = 64;

impl ServeConfig {
    /// Each user named once, validly, with exactly one way to its token.
    fn check(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for u in &self.users {
            let valid = !u.name.is_empty()
                && u.name.len() <= MAX_USER_NAME
                && u.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            if !valid {
                return Err(format!(
                    "[[serve.users]] name `{}`: letters, digits, `_`, `.` and `-`, 1 to \
                     {MAX_USER_NAME} of them",
                    u.name
                ));
            }
            if !seen.insert(u.name.as_str()) {
                return Err(format!("[[serve.users]] name `{}` is given twice", u.name));
            }
            match (&u.token_env, &u.token_blake3) {
                (Some(_), None) => {}
                (None, Some(hash))
                    if hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {}
                (None, Some(_)) => {
                    return Err(format!(
                        "[[serve.users]] `{}`: token_blake3 is 64 hex digits",
                        u.name
                    ));
                }
                _ => {
                    return Err(format!(
                        "[[serve.users]] `{}`: give exactly one of token_env and token_blake3",
                        u.name
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `[storage]`: where the index lives.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct StorageConfig {
    /// Data directory (SQLite file, installed plugins). Default:
    /// `$XDG_DATA_HOME/kebab`.
    pub data_dir: Option<String>,
    /// Keep the vector tables in an S3-compatible bucket
    /// (`s3://bucket/prefix`) instead of the data directory; endpoint and
    /// credentials from the standard `AWS_*` variables. Unset: the data
    /// directory's `lancedb/`.
    pub objects: Option<String>,
    /// Keep the index (documents, chunks, roots, answers, sessions) in
    /// this PostgreSQL database (`postgres://user@host/db`) instead of the
    /// data directory's SQLite file; the data directory then holds only
    /// what this machine derives (the lexical index) and its caches.
    pub database: Option<String>,
}

/// A database address with its password (if any) hidden.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{name}:***@{host}")
        }
        _ => url.to_string(),
    }
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

impl IndexingConfig {
    /// `max_file_mb` in bytes: the largest file (or stdin document) indexed.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_mb.saturating_mul(1_000_000)
    }
}

/// `[chunking]`: the policy handed to every chunker.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ChunkingConfig {
    pub target_tokens: u32,
    pub overlap_tokens: u32,
}

impl Config {
    /// At most `threads` threads parse files and at most `threads` compute
    /// a local embedding model's vectors (`kebab watch --max-threads`), so
    /// a background indexer leaves the rest of the machine free.
    pub fn limit_threads(&mut self, threads: usize) {
        let threads = threads.max(1);
        let indexing = &mut self.indexing.max_parallel_extractors;
        *indexing = (*indexing).min(threads);
        let embedding = &mut self.models.embedding.threads;
        *embedding = match *embedding {
            0 => threads,
            n => n.min(threads),
        };
    }

    /// The chunk policy every plugin is given.
    pub fn chunk_policy(&self) -> ChunkPolicy {
        ChunkPolicy {
            target_tokens: self.chunking.target_tokens,
            overlap_tokens: self.chunking.overlap_tokens,
        }
    }

    /// The policy hash the documents of plugin `name` carry: the chunk
    /// policy and the plugin's settings.
    pub fn policy_hash_for(&self, name: &str) -> String {
        kebab_core::ids::policy_hash(
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
            roots: Vec::new(),
            storage: StorageConfig::default(),
            indexing: IndexingConfig::default(),
            chunking: ChunkingConfig::default(),
            search: SearchConfig::default(),
            plugins: PluginsConfig::default(),
            models: ModelsConfig::default(),
            rag: RagConfig::default(),
            watch: WatchSettings::default(),
            ocr: Default::default(),
            serve: ServeConfig::default(),
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

/// Largest file ingest reads, in MB (1 TB).
pub const MAX_FILE_MB: u64 = 1 << 20;

impl Config {
    /// Every section as kebab can use it — each section checks its own
    /// values ([`SearchConfig::check`], [`RagConfig::check`], the model
    /// configs', [`PluginsConfig::check_bounds`]) and this adds the
    /// settings of the sections it owns — so nothing sized or timed from a
    /// setting can overflow: the first problem names its section, key and
    /// bound. Settings that are only compared (counts of blocks, chunks,
    /// rows) need none.
    pub fn check(&self) -> Result<(), String> {
        self.search.check()?;
        self.rag.check()?;
        self.models.llm.check()?;
        self.models.embedding.check()?;
        at_most("max_file_mb", self.indexing.max_file_mb, MAX_FILE_MB)
            .map_err(|e| format!("[indexing] {e}"))?;
        self.plugins.check_bounds()?;
        self.ocr.check_bounds()?;
        self.serve.check()?;
        if let Some(database) = &self.storage.database
            && !["postgres://", "postgresql://"]
                .iter()
                .any(|scheme| database.starts_with(scheme))
        {
            return Err(format!(
                "[storage] database: `{}` is not a PostgreSQL address; write \
                 postgres://user@host:5432/database",
                redacted(database)
            ));
        }
        // Machines sharing a database share its record of which vectors
        // exist: their tables must be one, or each would drop the others'.
        if self.storage.database.is_some()
            && self.storage.objects.is_none()
            && !self.models.embedding.model.trim().is_empty()
        {
            return Err(
                "[storage] database: the vectors must be shared too — set [storage] \
                 objects = \"s3://bucket/prefix\" (or turn embeddings off with \
                 [models.embedding] model = \"\")"
                    .into(),
            );
        }
        if let Some(objects) = &self.storage.objects {
            VectorPlace::new(Some(objects), PathBuf::new())
                .map_err(|e| format!("[storage] objects: {e}"))?;
        }
        self.watch.check()
    }

    /// Read `path` (a missing file yields the defaults), then apply the
    /// process's `KEBAB_<SECTION>_<KEY>` environment variables over it.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(name, value)| {
                let name = name.into_string().ok()?;
                name.starts_with(ENV_PREFIX)
                    .then(|| (name, value.to_string_lossy().into_owned()))
            })
            .collect();
        Config::load_with_env(path, &env)
    }

    /// [`Config::load`] with the environment given: the file's keys over
    /// the defaults, then each variable of `env` that names a config key
    /// ([`env_overrides`]) over those, in name order. A value the key
    /// cannot take is [`ConfigError::Env`], naming the variable.
    pub fn load_with_env(path: &Path, env: &[(String, String)]) -> Result<Config, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.into(),
            message,
        };
        let mut table = match read_bounded(path)? {
            Some(text) => toml::from_str::<toml::Table>(&text)
                .map_err(|e| invalid(e.message().to_string()))?,
            None => toml::Table::new(),
        };
        let (mut config, mut ignored) = Config::from_table(&table).map_err(invalid)?;
        let overrides = env_overrides(&table, env);
        for o in &overrides {
            (config, ignored) = o.apply(&mut table)?;
        }
        config.warnings = summarise_warnings(
            ignored.iter().map(|key| {
                let set_by = overrides
                    .iter()
                    .rev()
                    .find(|o| o.key == *key)
                    .map(|o| format!(" (set by {})", o.var))
                    .unwrap_or_default();
                format!(
                    "config key `{}`{set_by} is not used by this kebab; ignored",
                    kebab_core::sanitize::bounded(key, MAX_KEY_SHOWN)
                )
            }),
            "unknown config keys, ignored",
        );
        config.expand_variables();
        Ok(config)
    }

    /// The configuration `table` describes, checked, with the keys it
    /// holds that kebab does not use.
    fn from_table(table: &toml::Table) -> Result<(Config, Vec<String>), String> {
        let mut ignored = Vec::new();
        let config: Config = serde_ignored::deserialize(toml::Value::Table(table.clone()), |key| {
            ignored.push(key.to_string())
        })
        .map_err(|e| e.to_string())?;
        config.check()?;
        Ok((config, ignored))
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
    fn path_fields(&mut self) -> Vec<Option<&mut String>> {
        let mut fields = vec![
            self.storage.data_dir.as_mut(),
            self.workspace.root.as_mut(),
            self.models.embedding.path.as_mut(),
            self.models.embedding.runtime.as_mut(),
            self.models.korean.dictionary.as_mut(),
            self.models.japanese.dictionary.as_mut(),
            self.search.rerank.path.as_mut(),
        ];
        fields.extend(self.roots.iter_mut().map(|r| Some(&mut r.path)));
        fields
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

/// The prefix of the environment variables that override config keys.
const ENV_PREFIX: &str = "KEBAB_";

/// One `KEBAB_<SECTION>_<KEY>` variable and the config key it sets.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvOverride {
    /// The variable's name.
    pub var: String,
    /// The dotted key (`models.embedding.model`).
    pub key: String,
    path: Vec<String>,
    value: String,
    /// Whether the key holds text (its value is then taken verbatim).
    text: bool,
}

impl EnvOverride {
    /// Set the key in `table` and read the result: the value as TOML
    /// (`0.4`, `true`, `["a", "b"]`) unless the key holds text, else
    /// verbatim as text.
    fn apply(&self, table: &mut toml::Table) -> Result<(Config, Vec<String>), ConfigError> {
        let typed = (!self.text)
            .then(|| toml::from_str::<toml::Table>(&format!("v = {}", self.value)).ok())
            .flatten()
            .and_then(|mut t| t.remove("v"));
        let candidates = typed
            .into_iter()
            .chain([toml::Value::String(self.value.clone())]);
        let mut first_error = None;
        for value in candidates {
            let mut trial = table.clone();
            set_path(&mut trial, &self.path, value);
            match Config::from_table(&trial) {
                Ok(read) => {
                    *table = trial;
                    return Ok(read);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(ConfigError::Env {
            var: self.var.clone(),
            key: self.key.clone(),
            message: first_error.unwrap_or_default(),
        })
    }
}

/// The variables of `env` that name a config key, sorted by name:
/// `KEBAB_` + the section path + the key, upper-case, `_` between them —
/// `KEBAB_RAG_SCORE_GATE` sets `[rag] score_gate`,
/// `KEBAB_MODELS_EMBEDDING_MODEL` sets `[models.embedding] model`,
/// `KEBAB_PLUGINS_LIMITS_PDF_MEMORY_MB` sets `[plugins.limits.pdf]
/// memory_mb` when the file has that table. The section is the longest
/// table (of the defaults and `file`) the name begins with; a variable
/// naming no section (`KEBAB_CONFIG`, `KEBAB_DATA_DIR`, `KEBAB_LOG_DIR`)
/// is not an override.
pub fn env_overrides(file: &toml::Table, env: &[(String, String)]) -> Vec<EnvOverride> {
    let mut tree = toml::Value::try_from(Config::default())
        .ok()
        .and_then(|v| v.as_table().cloned())
        .expect("the defaults serialise to a table");
    merge(&mut tree, file);
    let mut out: Vec<EnvOverride> = env
        .iter()
        .filter_map(|(var, value)| {
            let rest = var.strip_prefix(ENV_PREFIX)?.to_ascii_lowercase();
            let path = key_path(&tree, &rest)?;
            let mut at = &tree;
            for part in &path[..path.len() - 1] {
                at = at.get(part)?.as_table()?;
            }
            let text = at
                .get(&path[path.len() - 1])
                .is_some_and(toml::Value::is_str);
            Some(EnvOverride {
                var: var.clone(),
                key: path.join("."),
                path,
                value: value.clone(),
                text,
            })
        })
        .collect();
    out.sort_by(|a, b| a.var.cmp(&b.var));
    out
}

/// The key path `name` (lower-case, `_`-joined) spells in `tree`: one or
/// more tables, longest names first, then the key; `None` unless it
/// begins with a table.
fn key_path(tree: &toml::Table, name: &str) -> Option<Vec<String>> {
    let mut tables: Vec<(&String, &toml::Table)> = tree
        .iter()
        .filter_map(|(k, v)| Some((k, v.as_table()?)))
        .collect();
    tables.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
    tables.into_iter().find_map(|(section, table)| {
        let rest = name.strip_prefix(section.as_str())?.strip_prefix('_')?;
        let mut path = vec![section.clone()];
        match key_path(table, rest) {
            Some(deeper) => path.extend(deeper),
            None if !rest.is_empty() => path.push(rest.to_string()),
            None => return None,
        }
        Some(path)
    })
}

/// `from`'s keys written over `into`'s, tables merged key by key.
fn merge(into: &mut toml::Table, from: &toml::Table) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Set `path` in `table` to `value`, creating the tables on the way.
fn set_path(table: &mut toml::Table, path: &[String], value: toml::Value) {
    let (last, tables) = path.split_last().expect("a key path is never empty");
    let mut at = table;
    for part in tables {
        let entry = at
            .entry(part.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        at = entry.as_table_mut().expect("made a table above");
    }
    at.insert(last.clone(), value);
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
    let bytes =
        kebab_core::paths::read_regular_file(&real, MAX_CONFIG_BYTES).map_err(|e| match e {
            kebab_core::paths::ReadRefusal::NotRegular(what) => ConfigError::NotRegular {
                path: path.into(),
                what,
            },
            kebab_core::paths::ReadRefusal::TooLarge(_) => ConfigError::TooLarge {
                path: path.into(),
                limit: MAX_CONFIG_BYTES,
            },
            kebab_core::paths::ReadRefusal::Io(e) => read_err(e),
            kebab_core::paths::ReadRefusal::Outside(to) => {
                read_err(std::io::Error::other(format!("it leads to {to}")))
            }
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

/// Where logs go: `$KEBAB_LOG_DIR`, else `$XDG_STATE_HOME/kebab/logs`.
pub fn default_log_dir() -> PathBuf {
    std::env::var_os("KEBAB_LOG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| xdg("XDG_STATE_HOME", ".local/state").join("kebab/logs"))
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
    fn serve_users_are_named_once_validly_with_one_way_to_their_token() {
        let check = |toml: &str| toml::from_str::<Config>(toml).unwrap().check();
        let hash = "ab".repeat(32);
        assert_eq!(
            check(&format!(
                "[[serve.users]]\nname = \"ana\"\ntoken_env = \"T\"\nroots = [\"wiki\"]\n\
                 [[serve.users]]\nname = \"bo.b-2\"\ntoken_blake3 = \"{hash}\"\n"
            )),
            Ok(())
        );
        for (bad, says) in [
            ("name = \"a b\"\ntoken_env = \"T\"", "letters"),
            ("name = \"\"\ntoken_env = \"T\"", "letters"),
            ("name = \"ana\"", "exactly one"),
            (
                &format!("name = \"ana\"\ntoken_env = \"T\"\ntoken_blake3 = \"{hash}\""),
                "exactly one",
            ),
            ("name = \"ana\"\ntoken_blake3 = \"xyz\"", "64 hex"),
        ] {
            let e = check(&format!("[[serve.users]]\n{bad}\n")).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let twice = "[[serve.users]]\nname = \"a\"\ntoken_env = \"T\"\n".repeat(2);
        assert!(check(&twice).unwrap_err().contains("twice"));
        assert!(
            toml::from_str::<Config>("[[serve.users]]\nname = \"a\"\ntoken = \"x\"\n").is_err()
        );
    }

    #[test]
    fn objects_must_be_an_s3_address_and_the_environment_sets_it() {
        let check = |toml: &str| toml::from_str::<Config>(toml).unwrap().check();
        assert_eq!(
            check("[storage]\nobjects = \"s3://team-kb/vectors\"\n"),
            Ok(())
        );
        let e = check("[storage]\nobjects = \"/srv/vectors\"\n").unwrap_err();
        assert!(
            e.starts_with("[storage] objects:") && e.contains("s3://"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let c = Config::load_with_env(
            &dir.path().join("absent.toml"),
            &[("KEBAB_STORAGE_OBJECTS".into(), "s3://b/p".into())],
        )
        .unwrap();
        assert_eq!(c.storage.objects.as_deref(), Some("s3://b/p"));
    }

    #[test]
    fn a_database_is_postgresql_and_shares_the_vectors_too() {
        let check = |toml: &str| toml::from_str::<Config>(toml).unwrap().check();
        let pg = "[storage]\ndatabase = \"postgres://kb:secret@db/kebab\"\n";
        let e = check(pg).unwrap_err();
        assert!(e.contains("[storage] objects"), "{e}");
        assert_eq!(check(&format!("{pg}objects = \"s3://b/p\"\n")), Ok(()));
        assert_eq!(
            check(&format!("{pg}[models.embedding]\nmodel = \"\"\n")),
            Ok(())
        );
        let e = check("[storage]\ndatabase = \"mysql://kb:secret@db/kebab\"\n").unwrap_err();
        assert!(e.starts_with("[storage] database:"), "{e}");
        assert!(!e.contains("secret"), "{e}");
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
    fn ann_settings_load_zero_probes_are_refused_and_zero_refine_means_none() {
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
            kebab_store::vector::AnnParams::default()
        );
        for zero in ["ann_nprobes = 0", "ann_ef = 0"] {
            std::fs::write(&path, format!("[search]\n{zero}\n")).unwrap();
            let err = Config::load(&path).unwrap_err().to_string();
            assert!(err.contains("at least 1"), "{zero}: {err}");
        }
        std::fs::write(&path, "[search]\nann_refine_factor = 0\n").unwrap();
        assert_eq!(Config::load(&path).unwrap().search.ann().refine_factor, 0);
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

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn environment_variables_override_the_file_key_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[rag]\nscore_gate = 0.2\nk = 4\n[models.llm]\nmodel = \"from-file\"\n\
             [plugins.limits.pdf]\nmemory_mb = 64\n",
        )
        .unwrap();
        let vars = env(&[
            ("KEBAB_RAG_SCORE_GATE", "0.45"),
            ("KEBAB_MODELS_LLM_MODEL", "qwen2.5:14b"),
            ("KEBAB_MODELS_EMBEDDING_MODEL", "123"),
            ("KEBAB_CHUNKING_TARGET_TOKENS", "120"),
            ("KEBAB_WORKSPACE_EXCLUDE", r#"["drafts/**", "*.tmp"]"#),
            ("KEBAB_STORAGE_DATA_DIR", "/srv/kebab"),
            ("KEBAB_PLUGINS_LIMITS_PDF_MEMORY_MB", "128"),
            ("KEBAB_INDEXING_INDEX_UNKNOWN_TEXT", "false"),
            // Not config keys: other settings of kebab and its tests.
            ("KEBAB_DATA_DIR", "/elsewhere"),
            ("KEBAB_CONFIG", "/other.toml"),
            ("KEBAB_LOG_DIR", "/logs"),
        ]);
        let c = Config::load_with_env(&path, &vars).unwrap();
        assert_eq!(c.rag.score_gate, 0.45);
        assert_eq!(c.rag.k, 4, "keys the environment does not name stay");
        assert_eq!(c.models.llm.model, "qwen2.5:14b");
        assert_eq!(
            c.models.embedding.model, "123",
            "text keys take text as it is"
        );
        assert_eq!(c.chunking.target_tokens, 120);
        assert_eq!(c.workspace.exclude, vec!["drafts/**", "*.tmp"]);
        assert_eq!(c.storage.data_dir.as_deref(), Some("/srv/kebab"));
        assert_eq!(c.plugins.limits_for("pdf").memory_bytes, 128 << 20);
        assert!(!c.indexing.index_unknown_text);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // Without a file, over the defaults.
        let none = dir.path().join("missing.toml");
        let c = Config::load_with_env(&none, &env(&[("KEBAB_SEARCH_DEFAULT_K", "3")])).unwrap();
        assert_eq!(c.search.default_k, 3);
        assert_eq!(
            Config::load_with_env(&none, &[]).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn a_bad_environment_value_names_its_variable() {
        let none = tempfile::tempdir().unwrap().path().join("none.toml");
        for (var, value, says) in [
            ("KEBAB_RAG_SCORE_GATE", "high", "invalid type"),
            ("KEBAB_CHUNKING_TARGET_TOKENS", "-5", "invalid value"),
            ("KEBAB_RAG_K", "100000000", "k"),
            ("KEBAB_INDEXING_INDEX_UNKNOWN_TEXT", "maybe", "invalid type"),
        ] {
            let err = Config::load_with_env(&none, &env(&[(var, value)])).unwrap_err();
            assert!(
                matches!(&err, ConfigError::Env { var: v, .. } if v == var),
                "{err}"
            );
            let text = err.to_string();
            assert!(text.contains(var) && text.contains(says), "{text}");
        }
        // A key kebab does not use is a warning naming the variable.
        let c = Config::load_with_env(&none, &env(&[("KEBAB_RAG_SCORE_GAT", "1")])).unwrap();
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(
            c.warnings[0].contains("`rag.score_gat`")
                && c.warnings[0].contains("KEBAB_RAG_SCORE_GAT"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn variable_names_resolve_to_the_longest_section() {
        let tree = toml::Value::try_from(Config::default())
            .unwrap()
            .as_table()
            .cloned()
            .unwrap();
        let path = |name: &str| key_path(&tree, name).map(|p| p.join("."));
        assert_eq!(
            path("models_embedding_max_length").as_deref(),
            Some("models.embedding.max_length")
        );
        assert_eq!(
            path("models_max_download_mb").as_deref(),
            Some("models.max_download_mb")
        );
        assert_eq!(path("data_dir"), None);
        assert_eq!(path("config"), None);
        assert_eq!(path("rag"), None);
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
