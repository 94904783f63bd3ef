//! The open index: resolved paths, configuration and the store, and the one
//! owner of how every other piece of it is loaded on demand — the plugin
//! runtime and registry, the Korean analyser, the embedding model, vector
//! tables and channels — and of why a piece is off.

use std::path::{Path, PathBuf};

use crate::config::{self, Config, ConfigError, RootConfig};
use crate::walk::WalkOptions;
use kebab_plugin_host::registry::Registry;
use kebab_plugin_host::runtime::{LoadError, Runtime};
use kebab_search::cjk::CjkAnalyzer;
use kebab_search::embed::{self, EmbedError, Embedder, ModelSpec, Workload};
use kebab_search::korean::{KoreanAnalyzer, KoreanError};
use kebab_search::search::VectorChannel;
use kebab_store::vector::{VectorError, VectorPlace, VectorStore};
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

    /// Places searched for a built dictionary named `name` under
    /// `models/` ([`KO_DIC`], [`JA_DIC`]), in order: the configured path
    /// alone when there is one.
    pub fn dictionary_candidates(&self, name: &str, configured: Option<&str>) -> Vec<PathBuf> {
        match configured {
            Some(p) => vec![config::expand_home(p)],
            None => vec![
                self.data_dir.join("models").join(name),
                self.cache_dir.join("models").join(name),
            ],
        }
    }
}

/// Directory name of the built Korean dictionary under `models/`.
pub const KO_DIC: &str = "ko-dic";
/// Directory name of the built Japanese dictionary under `models/`.
pub const JA_DIC: &str = "ja-dic";

/// The kebab binary, when plugins are compiled in a process of their own
/// (see [`compile_plugins_apart`]).
static COMPILER: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Compile plugins that are not in the cache yet by running `exe plugin
/// warm` (set once by the binary). A first run otherwise keeps ~150 MB of
/// the compiler's freed memory for the rest of the run, beside the
/// embedding model: it peaked at 850–920 MB where every later run, which
/// maps the cached code, peaks at 700–745 MB (BENCHMARKS.md, "First-run
/// ingest peak").
pub fn compile_plugins_apart(exe: PathBuf) {
    let _ = COMPILER.set(exe);
}

impl App {
    /// When a compiler process is set, compile every plugin not compiled
    /// yet in it (into the cache this process then maps). A failure is
    /// logged and changes nothing: the plugins are then compiled here, as
    /// without it.
    fn compile_apart(&self) {
        let Some(exe) = COMPILER.get() else {
            return;
        };
        let ran = std::process::Command::new(exe)
            .arg("--data-dir")
            .arg(&self.paths.data_dir)
            .arg("--config")
            .arg(&self.paths.config_file)
            .args(["plugin", "warm"])
            .env("KEBAB_CACHE_DIR", &self.paths.cache_dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        match ran {
            Ok(status) if status.success() => {
                tracing::info!("plugins compiled in a process of their own");
            }
            // An optimisation only: what failed there fails here too, and
            // says so in its own words.
            other => tracing::info!(?other, "compiling plugins apart failed; compiling here"),
        }
    }
}

/// Return the heap's free pages to the system (glibc keeps freed memory in
/// its arenas; a no-op elsewhere).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Make everything this process creates private to its user (umask 077):
/// the index, its locks, kept one-off copies, caches and logs. Called first
/// thing by the binary.
pub fn create_private_files() {
    // SAFETY: umask only sets the process's file-creation mask.
    unsafe {
        libc::umask(0o077);
    }
}

/// Make `data_dir` private to its owner when an older kebab (or a looser
/// umask) left it readable by others: the directory 0700, the files
/// directly in it (the index, its locks) 0600. A directory of another user
/// is left as it is. What was changed, for a note.
pub fn make_private(data_dir: &Path) -> Option<String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(data_dir).ok()?;
    if meta.uid() != kebab_core::lock_file::current_uid() || meta.mode() & 0o077 == 0 {
        return None;
    }
    let was = meta.mode() & 0o777;
    std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700)).ok()?;
    for entry in std::fs::read_dir(data_dir).into_iter().flatten().flatten() {
        if let Ok(m) = entry.metadata()
            && m.is_file()
            && m.mode() & 0o077 != 0
        {
            let _ = std::fs::set_permissions(
                entry.path(),
                std::fs::Permissions::from_mode(m.mode() & 0o700),
            );
        }
    }
    Some(format!(
        "the data directory {} was open to other users (mode {was:o}): made it private (700), its \
         files 600",
        data_dir.display()
    ))
}

/// Failures opening the app.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Plugins(#[from] LoadError),
    /// `[storage] objects` is unusable for writing (unreachable, or it
    /// ignores conditional writes).
    #[error(transparent)]
    Objects(#[from] VectorError),
    #[error("cannot create data directory {path}: {source}")]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Open the index `config` names: the PostgreSQL database of `[storage]
/// database` (team mode; what this machine derives from it kept in the
/// data directory), else the SQLite file in the data directory.
pub fn open_store(config: &Config, paths: &Paths) -> Result<Store, StoreError> {
    match &config.storage.database {
        Some(url) => Store::open_postgres(url, &paths.data_dir),
        None => Store::open(&paths.sqlite()),
    }
}

/// Where the index lives, for people: the SQLite file, or the PostgreSQL
/// database without its password.
pub fn index_place(config: &Config, paths: &Paths) -> String {
    match &config.storage.database {
        Some(url) => format!("PostgreSQL {}", crate::config::redacted(url)),
        None => paths.sqlite().display().to_string(),
    }
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
        let store = open_store(&config, &paths)?;
        Ok(App {
            config,
            paths,
            store,
        })
    }

    /// The plugin engine: compiled code and `info()` cached under the cache
    /// dir, `info()` bounded by the configured deadline, calls stopped by
    /// Ctrl-C, and plugins' images read by Tesseract when `[ocr]` is on
    /// (loaded on the first image; what it read cached under the cache dir's
    /// `ocr/`, by the image's pixels).
    pub fn runtime(&self) -> Result<Runtime, AppError> {
        let runtime = Runtime::new(Some(self.paths.cache_dir.clone()))?
            .with_info_limits(self.config.plugins.limits_for(""));
        let ocr = &self.config.ocr;
        if !ocr.enabled {
            return Ok(runtime);
        }
        use kebab_plugin_host::ocr::{cache::CachedOcr, tesseract::TesseractEngine};
        let engine = CachedOcr::new(
            TesseractEngine::from_config(ocr),
            self.paths.cache_dir.join("ocr"),
        );
        Ok(runtime.with_ocr(
            std::sync::Arc::new(engine),
            std::time::Duration::from_secs(ocr.file_budget_secs),
        ))
    }

    /// Start the plugin runtime and load every plugin.
    pub fn plugins(&self) -> Result<Plugins, AppError> {
        self.plugins_on(self.runtime()?)
    }

    /// Load every plugin on a runtime already started (one that just
    /// installed a component, say).
    pub fn plugins_on(&self, runtime: Runtime) -> Result<Plugins, AppError> {
        let (registry, warnings) = Registry::load(
            &runtime,
            &self.paths.data_dir,
            &self.config.plugins,
            &mut || self.compile_apart(),
        )?;
        // Compiling plugins here (cranelift, a few hundred MB for the
        // built-in ones) leaves that memory with the allocator; give back
        // what it can before the embedding model loads beside it.
        release_freed_memory();
        Ok(Plugins {
            runtime,
            registry,
            warnings,
        })
    }

    /// The built dictionary named `name` ([`KO_DIC`], [`JA_DIC`]) to use:
    /// the configured directory, else the first installed under a
    /// `models/` directory (`Ok(None)` when none is); `Err` with the
    /// configured directory when it holds none.
    fn dictionary_dir(
        &self,
        name: &str,
        configured: Option<&str>,
    ) -> Result<Option<PathBuf>, PathBuf> {
        let candidates = self.paths.dictionary_candidates(name, configured);
        match candidates
            .iter()
            .find(|d| d.join("metadata.json").is_file())
        {
            Some(dir) => Ok(Some(dir.clone())),
            None if configured.is_some() => Err(candidates[0].clone()),
            None => Ok(None),
        }
    }

    /// The Korean dictionary's directory (see [`App::dictionary_dir`]).
    pub fn korean_dictionary(&self) -> Result<Option<PathBuf>, PathBuf> {
        self.dictionary_dir(KO_DIC, self.config.models.korean.dictionary.as_deref())
    }

    /// The Japanese dictionary's directory (see [`App::dictionary_dir`]).
    pub fn japanese_dictionary(&self) -> Result<Option<PathBuf>, PathBuf> {
        self.dictionary_dir(JA_DIC, self.config.models.japanese.dictionary.as_deref())
    }

    /// The Korean analyzer, when a dictionary is installed (`Ok(None)`
    /// when none is found).
    pub fn korean(&self) -> Result<Option<KoreanAnalyzer>, KoreanError> {
        match self.korean_dictionary().map_err(KoreanError::Missing)? {
            Some(dir) => KoreanAnalyzer::load(&dir).map(Some),
            None => Ok(None),
        }
    }

    /// Korean, Japanese and Chinese analysis for the lexical index, each
    /// dictionary loaded the first time its script is met, with why a
    /// configured dictionary is not used (it is left out: Korean is then
    /// not analysed, Japanese is read by jieba).
    pub fn cjk(&self) -> (CjkAnalyzer, Vec<String>) {
        let mut warnings = Vec::new();
        let mut or_warn = |found: Result<Option<PathBuf>, PathBuf>,
                           language: &str,
                           command: &str| {
            found.unwrap_or_else(|missing| {
                warnings.push(format!(
                    "{language} analysis off: no dictionary at {} (hint: `kebab models {command} <dir>`)",
                    missing.display()
                ));
                None
            })
        };
        let korean = or_warn(self.korean_dictionary(), "Korean", "import-ko-dic");
        let japanese = or_warn(self.japanese_dictionary(), "Japanese", "import-ja-dic");
        (CjkAnalyzer::lazy(korean, japanese), warnings)
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

    /// Where this index's vector tables live: `[storage] objects` when
    /// set, else the data directory's `lancedb/`.
    pub fn vector_place(&self) -> Result<VectorPlace, VectorError> {
        VectorPlace::new(
            self.config.storage.objects.as_deref(),
            self.paths.vector_dir(),
        )
    }

    /// Where an ingest writes vectors: [`App::vector_place`], checked to
    /// take this index's writes when it is object storage (reachable,
    /// honouring conditional writes — else two writers' commits could
    /// overwrite each other — and this index's prefix; else nothing is
    /// written).
    pub fn vector_writer_place(&self) -> Result<VectorPlace, AppError> {
        let place = self.vector_place()?;
        if place.is_shared() {
            place.check_writable(&self.store.index_id()?)?;
        }
        Ok(place)
    }

    /// The model `spec`'s table at this index's [`App::vector_place`], with
    /// the configured ANN parameters.
    pub fn own_vector_table(&self, spec: &ModelSpec) -> Result<VectorStore, VectorError> {
        self.vector_table(&self.vector_place()?, spec)
    }

    /// The model `spec`'s table at `place`, with the configured ANN
    /// parameters.
    pub fn vector_table(
        &self,
        place: &VectorPlace,
        spec: &ModelSpec,
    ) -> Result<VectorStore, VectorError> {
        let mut table = VectorStore::open(place, &spec.id(), spec.dimensions)?;
        table.set_ann(self.config.search.ann());
        Ok(table)
    }

    /// The configured embedding model (prepared for `workload`) and its
    /// table at `place` (`Ok(None)` when no model is configured); why
    /// vector search is off when either does not load.
    pub fn load_vectors(
        &self,
        place: &VectorPlace,
        workload: Workload,
    ) -> Result<Option<(Embedder, VectorStore)>, VectorsOff> {
        let Some(embedder) = self.embedder_or_off(workload)? else {
            return Ok(None);
        };
        let table = self.vector_table(place, embedder.spec())?;
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
        let external = self
            .paths
            .data_dir
            .join(crate::ingest::external::EXTERNAL_DIR);
        let name = match name {
            Some(name) => {
                kebab_store::check_user_root_name(&name)?;
                name
            }
            // The one-off documents' root has its reserved name.
            None if dir == external.canonicalize().unwrap_or(external) => {
                crate::ingest::external::EXTERNAL_DIR.to_string()
            }
            None => self.store.free_root_name(&root_name_for(&dir))?,
        };
        let root = match self.store.add_root(&name, &dir, &exclude) {
            Ok(root) => root,
            // Another machine ingesting into the same database added it
            // meanwhile: the root for this directory is that one.
            Err(StoreError::RootExists(taken)) => match self.store.root_containing(&dir)? {
                Some(root) if root.path == dir => root,
                _ => return Err(StoreError::RootExists(taken)),
            },
            Err(e) => return Err(e),
        };
        tracing::info!(root = %root.name, path = %dir.display(), "root added");
        Ok(root)
    }

    /// How a walk of `root` goes: the size cap, the excludes of every root
    /// and of this one, the other roots nested inside it (left to them),
    /// and kebab's own directories inside it (the data, cache and log
    /// directories: never walked nor watched, wherever they are).
    pub fn walk_options(&self, root: &Root) -> Result<WalkOptions, StoreError> {
        let own_dirs = [
            self.paths.data_dir.clone(),
            self.paths.cache_dir.clone(),
            config::default_log_dir(),
        ]
        .into_iter()
        .map(|d| d.canonicalize().unwrap_or(d))
        .filter(|d| d.starts_with(&root.path) && *d != root.path)
        .collect();
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
            own_dirs,
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
        VectorError::Objects { .. } | VectorError::BadObjects(_) => {
            "check `[storage] objects` and the AWS_* variables (endpoint, keys, region; \
             AWS_ALLOW_HTTP=true for a plain-http endpoint); `kebab doctor` checks the store"
        }
        VectorError::NoConditionalPut(_) => {
            "point `[storage] objects` at a store that honours `If-None-Match: *`"
        }
        VectorError::ForeignIndex { .. } => {
            "give each index its own `[storage] objects` prefix (one index per prefix until \
             the shared PostgreSQL store: docs/design/team-mode.md)"
        }
        _ => "re-run `kebab ingest`; `--mode lexical` works without vectors",
    }
}
