//! The facade the CLI drives: resolved paths, configuration, the open index
//! and (on demand) the plugin runtime.

use std::path::{Path, PathBuf};

use crate::config::{self, Config, ConfigError};
use crate::embed::{self, EmbedError, Embedder, ModelSpec};
use crate::korean::{KoreanAnalyzer, KoreanError};
use crate::plugin::registry::Registry;
use crate::plugin::runtime::{LoadError, Runtime};
use crate::store::{Store, StoreError};
use crate::vector::{VectorError, VectorStore};

/// Where this invocation reads and writes.
#[derive(Debug, Clone)]
pub struct Paths {
    pub config_file: PathBuf,
    pub data_dir: PathBuf,
    pub cache_dir: PathBuf,
}

impl Paths {
    /// Resolve paths: explicit flags (or their env variables) first, then the
    /// config file's `[storage] data_dir`, then XDG defaults.
    pub fn resolve(
        config_flag: Option<PathBuf>,
        data_dir_flag: Option<PathBuf>,
        config: &Config,
    ) -> Paths {
        let config_file = config_flag.unwrap_or_else(config::default_config_path);
        let data_dir = data_dir_flag
            .or_else(|| config.storage.data_dir.as_deref().map(config::expand_home))
            .unwrap_or_else(config::default_data_dir);
        Paths {
            config_file,
            data_dir,
            cache_dir: config::default_cache_dir(),
        }
    }

    /// The SQLite file.
    pub fn sqlite(&self) -> PathBuf {
        self.data_dir.join("kebab.sqlite")
    }

    /// The LanceDB directory holding the vector tables.
    pub fn vector_dir(&self) -> PathBuf {
        self.data_dir.join("lancedb")
    }

    /// Places searched for the Korean dictionary, in order.
    pub fn korean_dictionary_candidates(&self, configured: Option<&str>) -> Vec<PathBuf> {
        match configured {
            Some(p) => vec![config::expand_home(p)],
            None => vec![
                self.data_dir.join("models").join(KO_DIC),
                self.cache_dir.join("models").join(KO_DIC),
            ],
        }
    }
}

/// Directory name of the built Korean dictionary under `models/`.
pub const KO_DIC: &str = "ko-dic";

/// Failures opening the app.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Plugins(#[from] LoadError),
    #[error("cannot create data directory {path}: {source}")]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An opened kebab: configuration plus index.
pub struct App {
    pub config: Config,
    pub paths: Paths,
    pub store: Store,
}

/// Plugins ready to run.
pub struct Plugins {
    pub runtime: Runtime,
    pub registry: Registry,
    /// Installed plugins that could not be loaded.
    pub warnings: Vec<String>,
}

impl App {
    /// Open the index under `paths` (creating the data directory).
    pub fn open(config: Config, paths: Paths) -> Result<App, AppError> {
        std::fs::create_dir_all(&paths.data_dir).map_err(|source| AppError::DataDir {
            path: paths.data_dir.clone(),
            source,
        })?;
        let store = Store::open(&paths.sqlite())?;
        Ok(App {
            config,
            paths,
            store,
        })
    }

    /// The plugin engine: compiled code and `info()` cached under the cache
    /// dir, `info()` bounded by the configured deadline, calls stopped by
    /// Ctrl-C.
    pub fn runtime(&self) -> Result<Runtime, AppError> {
        Ok(Runtime::new(Some(self.paths.cache_dir.clone()))?
            .with_info_limits(self.config.plugins.limits_for("")))
    }

    /// Start the plugin runtime and load every plugin.
    pub fn plugins(&self) -> Result<Plugins, AppError> {
        self.plugins_on(self.runtime()?)
    }

    /// Load every plugin on a runtime already started (one that just
    /// installed a component, say).
    pub fn plugins_on(&self, runtime: Runtime) -> Result<Plugins, AppError> {
        let (registry, warnings) =
            Registry::load(&runtime, &self.paths.data_dir, &self.config.plugins)?;
        Ok(Plugins {
            runtime,
            registry,
            warnings,
        })
    }

    /// The Korean analyzer, when a dictionary is installed (`Ok(None)`
    /// when none is found).
    pub fn korean(&self) -> Result<Option<KoreanAnalyzer>, KoreanError> {
        let candidates = self
            .paths
            .korean_dictionary_candidates(self.config.models.korean.dictionary.as_deref());
        match candidates
            .iter()
            .find(|d| d.join("metadata.json").is_file())
        {
            Some(dir) => KoreanAnalyzer::load(dir).map(Some),
            None if self.config.models.korean.dictionary.is_some() => {
                Err(KoreanError::Missing(candidates[0].clone()))
            }
            None => Ok(None),
        }
    }

    /// The configured embedding model, loaded for `workload` (`Ok(None)`
    /// when no model is configured).
    pub fn embedder(&self, workload: embed::Workload) -> Result<Option<Embedder>, EmbedError> {
        let config = &self.config.models.embedding;
        let Some(spec) = ModelSpec::resolve(config, &self.paths.data_dir, &self.paths.cache_dir)?
        else {
            return Ok(None);
        };
        Embedder::load(spec, &self.runtime_candidates(), workload).map(Some)
    }

    /// Where ONNX Runtime is looked for (`[models.embedding] runtime`
    /// first), for the embedding model and the reranker alike.
    pub fn runtime_candidates(&self) -> Vec<PathBuf> {
        embed::runtime::candidates(
            self.config.models.embedding.runtime.as_deref(),
            &self.paths.data_dir,
            &self.paths.cache_dir,
        )
    }

    /// The vector table for a model.
    pub fn vectors(&self, spec: &ModelSpec) -> Result<VectorStore, VectorError> {
        VectorStore::open(&self.paths.vector_dir(), &spec.id(), spec.dimensions)
    }

    /// The workspace root for `path`: the configured root when it contains
    /// `path`, else `path` itself (or its directory, for a file).
    pub fn workspace_root(&self, path: &Path) -> PathBuf {
        if let Some(root) = self
            .config
            .workspace
            .root
            .as_deref()
            .map(config::expand_home)
            && let Ok(root) = root.canonicalize()
            && path.starts_with(&root)
        {
            return root;
        }
        if path.is_dir() {
            path.to_path_buf()
        } else {
            path.parent().map(Path::to_path_buf).unwrap_or_default()
        }
    }
}
