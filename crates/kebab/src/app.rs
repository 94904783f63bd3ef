//! The open index: resolved paths, configuration and the store, and the one
//! owner of how every other piece of it is loaded on demand — the plugin
//! runtime and registry, the Korean analyser, the embedding model, vector
//! tables and channels — and of why a piece is off.

use std::path::{Path, PathBuf};

use crate::config::{self, Config, ConfigError, RootConfig};
use crate::walk::WalkOptions;
use kebab_plugin_host::registry::Registry;
use kebab_plugin_host::runtime::{LoadError, Runtime};
use kebab_search::embed::{self, EmbedError, Embedder, ModelSpec, Workload};
use kebab_search::korean::{KoreanAnalyzer, KoreanError};
use kebab_search::search::VectorChannel;
use kebab_store::vector::{VectorError, VectorStore};
use kebab_store::{Root, Store, StoreError, root_name_for};

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
    pub fn embedder(&self, workload: Workload) -> Result<Option<Embedder>, EmbedError> {
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

    /// The Korean analyser when a dictionary is installed (`Ok(None)`
    /// when none is); why it is off, with a hint, when it does not load.
    pub fn korean_or_off(&self) -> Result<Option<KoreanAnalyzer>, String> {
        self.korean().map_err(|e| {
            format!("Korean analysis off: {e} (hint: `kebab models import-ko-dic <dir>`)")
        })
    }

    /// The configured embedding model, or why vector search is off.
    pub fn embedder_or_off(&self, workload: Workload) -> Result<Option<Embedder>, VectorsOff> {
        let embedder = self.embedder(workload).map_err(|e| VectorsOff {
            reason: format!("vector index off: {e} (hint: {})", e.hint()),
            damaged: false,
        })?;
        if let Some(e) = &embedder {
            tracing::info!(model = %e.spec().id(), "embedding model loaded");
        }
        Ok(embedder)
    }

    /// The model `spec`'s table in `vector_dir`, with the configured ANN
    /// parameters.
    pub fn vector_table(
        &self,
        vector_dir: &Path,
        spec: &ModelSpec,
    ) -> Result<VectorStore, VectorError> {
        let mut table = VectorStore::open(vector_dir, &spec.id(), spec.dimensions)?;
        table.set_ann(self.config.search.ann());
        Ok(table)
    }

    /// The configured embedding model (prepared for `workload`) and its
    /// table in `vector_dir` (`Ok(None)` when no model is configured); why
    /// vector search is off when either does not load.
    pub fn load_vectors(
        &self,
        vector_dir: &Path,
        workload: Workload,
    ) -> Result<Option<(Embedder, VectorStore)>, VectorsOff> {
        let Some(embedder) = self.embedder_or_off(workload)? else {
            return Ok(None);
        };
        let table = self.vector_table(vector_dir, embedder.spec())?;
        Ok(Some((embedder, table)))
    }

    /// The search channel over a loaded model and table, with the
    /// configured (or the model card's) similarity floor.
    pub fn channel<'a>(&self, embedder: &'a Embedder, table: &'a VectorStore) -> VectorChannel<'a> {
        VectorChannel {
            embedder,
            table,
            min_score: self.config.search.min_vector_score.unwrap_or_else(|| {
                embed::catalog::card(&embedder.spec().name).map_or(0.0, |c| c.min_score)
            }),
        }
    }

    /// The roots the config declares (`[[roots]]`, and `[workspace] root`
    /// as one without a name), whose directories exist: `(directory, name,
    /// excludes)`.
    pub fn declared_roots(&self) -> Vec<(PathBuf, Option<String>, Vec<String>)> {
        let legacy = self.config.workspace.root.iter().map(|p| RootConfig {
            path: p.clone(),
            ..Default::default()
        });
        self.config
            .roots
            .iter()
            .cloned()
            .chain(legacy)
            .filter_map(|r| {
                let dir = config::expand_home(&r.path).canonicalize().ok()?;
                Some((dir, r.name, r.exclude))
            })
            .collect()
    }

    /// The root `start` (an absolute, canonical path) belongs to: the
    /// index's root whose directory holds it; else a new root — the
    /// declared root holding it (with its name and excludes), or the
    /// directory itself (a file's directory), named after the directory.
    /// For a writer holding the writer lock.
    pub fn root_for(&mut self, start: &Path) -> Result<Root, StoreError> {
        if let Some(root) = self.store.root_containing(start)? {
            return Ok(root);
        }
        let declared = self
            .declared_roots()
            .into_iter()
            .filter(|(dir, _, _)| start.starts_with(dir))
            .max_by_key(|(dir, _, _)| dir.components().count());
        let (dir, name, exclude) = declared.unwrap_or_else(|| {
            let dir = if start.is_dir() {
                start.to_path_buf()
            } else {
                start.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            (dir, None, Vec::new())
        });
        let name = match name {
            Some(name) => name,
            None => self.store.free_root_name(&root_name_for(&dir))?,
        };
        let root = self.store.add_root(&name, &dir, &exclude)?;
        tracing::info!(root = %root.name, path = %dir.display(), "root added");
        Ok(root)
    }

    /// How a walk of `root` goes: the size cap, the excludes of every root
    /// and of this one, and the other roots nested inside it (left to
    /// them).
    pub fn walk_options(&self, root: &Root) -> Result<WalkOptions, StoreError> {
        let nested_roots = self
            .store
            .roots()?
            .into_iter()
            .filter(|r| r.root_id != root.root_id && r.path.starts_with(&root.path))
            .map(|r| r.path)
            .collect();
        Ok(WalkOptions {
            max_file_bytes: self.config.indexing.max_file_bytes(),
            exclude: self
                .config
                .workspace
                .exclude
                .iter()
                .chain(&root.exclude)
                .cloned()
                .collect(),
            nested_roots,
        })
    }
}

/// Why vector search is off.
#[derive(Debug, Clone)]
pub struct VectorsOff {
    /// The sentence, with a hint.
    pub reason: String,
    /// The vector table is damaged (the model loaded): a hybrid search
    /// goes on lexically, with a note, until an ingest rebuilds it.
    pub damaged: bool,
}

impl From<VectorError> for VectorsOff {
    fn from(e: VectorError) -> VectorsOff {
        VectorsOff {
            reason: format!("vector index off: {e} (hint: {})", vector_hint(&e)),
            damaged: matches!(e, VectorError::Damaged { .. }),
        }
    }
}

/// What to do about a vector table that failed.
pub fn vector_hint(e: &VectorError) -> &'static str {
    match e {
        VectorError::Damaged { .. } => {
            "`kebab ingest` rebuilds it from the index and the embedding cache; lexical search \
             works meanwhile"
        }
        _ => "re-run `kebab ingest`; `--mode lexical` works without vectors",
    }
}
