//! The wasmtime engine that runs plugins: compilation with an on-disk cache of
//! precompiled code, API-version checks, and sandboxed calls (CPU deadline,
//! memory cap, no files, no environment, no network).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use semver::Version;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable, types::ComponentItem};
use wasmtime::{Config, Engine, ResourceLimiter, Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::bindings::kebab::plugin::log;
use super::bindings::{Plugin, PluginPre};
use super::{Chunk, ChunkPolicy, Document, HOST_API_VERSION, PluginError, PluginInfo};

/// How often the engine's epoch advances; the granularity of deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(10);
/// Log lines kept per call; the rest are only counted.
const MAX_LOG_LINES: usize = 50;
/// Longest log line kept, in bytes.
const MAX_LOG_LINE: usize = 500;
/// Bytes of guest stderr kept (panic messages).
const STDERR_CAPACITY: usize = 16 * 1024;
/// Export name prefix every parser plugin must have.
const PARSER_EXPORT: &str = "kebab:plugin/parser@";

/// Per-call sandbox limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock budget of each call.
    pub timeout: Duration,
    /// Cap on the instance's linear memory.
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(10),
            memory_bytes: 512 << 20,
        }
    }
}

/// Failures loading a plugin component.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Engine set-up failed.
    #[error("cannot start the WebAssembly engine: {0}")]
    Engine(String),
    /// The bytes are not a valid component for this engine.
    #[error("not a loadable WebAssembly component: {0}")]
    NotAComponent(String),
    /// The component does not export the parser interface.
    #[error("component does not export `kebab:plugin/parser` (is it a kebab plugin?)")]
    MissingExport,
    /// The plugin targets an API this host cannot serve.
    #[error(
        "plugin API {plugin} is incompatible with host API {host} (same major, minor ≤ host's required)"
    )]
    IncompatibleApi { plugin: String, host: String },
    /// The component's imports or exports do not match the world.
    #[error("component does not fit the kebab plugin world: {0}")]
    WorldMismatch(String),
    /// `info()` failed.
    #[error("plugin info() failed: {0}")]
    Info(CallError),
    /// `info()` returned something unusable.
    #[error("plugin info is invalid: {0}")]
    BadInfo(String),
}

/// Why one plugin call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    /// The call ran past its deadline.
    #[error("timed out after {0} ms")]
    Timeout(u128),
    /// The instance tried to grow memory past the cap.
    #[error("exceeded the memory limit of {0} MiB")]
    MemoryLimit(usize),
    /// The guest trapped (panic, unreachable, out-of-bounds…).
    #[error("trapped: {0}")]
    Trap(String),
    /// The plugin returned an error.
    #[error("{}", describe_plugin_error(.0))]
    Plugin(PluginError),
}

fn describe_plugin_error(e: &PluginError) -> String {
    match e {
        PluginError::Unsupported(m) => format!("unsupported: {m}"),
        PluginError::Malformed(m) => format!("malformed: {m}"),
    }
}

/// A compiled plugin, ready to instantiate.
pub struct LoadedPlugin {
    pre: PluginPre<CallState>,
    /// What the plugin says about itself.
    pub info: PluginInfo,
    /// The plugin's own semver.
    pub version: Version,
    /// The plugin API version it was built against.
    pub api_version: Version,
    /// blake3 of the component bytes.
    pub wasm_hash: String,
}

/// What one parse + chunk produced.
#[derive(Debug)]
pub struct CallOutput {
    pub document: Document,
    pub chunks: Vec<Chunk>,
    /// Log lines the plugin sent (capped).
    pub logs: Vec<String>,
    /// Log lines dropped past the cap.
    pub logs_dropped: u64,
}

/// Memory cap that remembers whether it refused a growth.
struct MemoryCap {
    max: usize,
    refused: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max {
            self.refused = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// Store data of one call.
struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryCap,
    logs: Vec<String>,
    logs_dropped: u64,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl log::Host for CallState {
    fn log(&mut self, level: log::Level, message: String) {
        if self.logs.len() >= MAX_LOG_LINES {
            self.logs_dropped += 1;
            return;
        }
        let mut line = format!("{level:?}: {message}").to_lowercase();
        if line.len() > MAX_LOG_LINE {
            let mut cut = MAX_LOG_LINE;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        self.logs.push(line);
    }
}

impl super::bindings::kebab::plugin::types::Host for CallState {}

/// Advances the engine epoch every [`EPOCH_TICK`] until dropped.
struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine) -> EpochTicker {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("kebab-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("spawn epoch ticker");
        EpochTicker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The plugin engine. One per process; shared by all worker threads.
pub struct Runtime {
    engine: Engine,
    linker: Linker<CallState>,
    cache_dir: Option<PathBuf>,
    engine_key: String,
    _ticker: EpochTicker,
}

impl Runtime {
    /// A runtime caching compiled code under `cache_dir` (if given).
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Runtime, LoadError> {
        let mut config = Config::new();
        config.wasm_component_model(true).epoch_interruption(true);
        let engine = Engine::new(&config).map_err(|e| LoadError::Engine(e.to_string()))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine_key = format!("{:016x}", hasher.finish());
        Ok(Runtime {
            _ticker: EpochTicker::start(engine.clone()),
            engine,
            linker,
            cache_dir: cache_dir.map(|d| d.join("components")),
            engine_key,
        })
    }

    /// Compile (or load from cache), check the API version, and read the
    /// plugin's info.
    pub fn load(&self, wasm: &[u8]) -> Result<LoadedPlugin, LoadError> {
        let wasm_hash = crate::ids::checksum(wasm);
        let component = self.compile(wasm, &wasm_hash)?;
        let api_version = self.api_version(&component)?;
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::WorldMismatch(format!("{e:#}")))?;
        let pre =
            PluginPre::new(instance_pre).map_err(|e| LoadError::WorldMismatch(format!("{e:#}")))?;
        let (info, _) = self
            .with_instance(&pre, &Limits::default(), |store, plugin| {
                plugin.kebab_plugin_parser().call_info(store)
            })
            .map_err(LoadError::Info)?;
        let version = Version::parse(&info.version).map_err(|e| {
            LoadError::BadInfo(format!("version `{}` is not semver: {e}", info.version))
        })?;
        if info.name.is_empty()
            || !info
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return Err(LoadError::BadInfo(format!(
                "name `{}` must be lowercase letters, digits, `-` or `_`",
                info.name
            )));
        }
        Ok(LoadedPlugin {
            pre,
            info,
            version,
            api_version,
            wasm_hash,
        })
    }

    /// Parse `bytes` and chunk the result, in one fresh sandboxed instance.
    pub fn parse_and_chunk(
        &self,
        plugin: &LoadedPlugin,
        limits: &Limits,
        path: &str,
        bytes: &[u8],
        policy: ChunkPolicy,
    ) -> Result<CallOutput, CallError> {
        let ((document, chunks), state) = self.with_instance(&plugin.pre, limits, |store, p| {
            let parser = p.kebab_plugin_parser();
            let document = match parser.call_parse(&mut *store, path, bytes)? {
                Ok(doc) => doc,
                Err(e) => return Ok(Err(e)),
            };
            store.set_epoch_deadline(deadline_ticks(limits.timeout));
            Ok(parser
                .call_chunk_document(&mut *store, &document, policy)?
                .map(|chunks| (document, chunks)))
        })?;
        Ok(CallOutput {
            document,
            chunks,
            logs: state.logs,
            logs_dropped: state.logs_dropped,
        })
    }

    /// Run `f` against a fresh instance under `limits`; classify failures.
    fn with_instance<R>(
        &self,
        pre: &PluginPre<CallState>,
        limits: &Limits,
        f: impl FnOnce(&mut Store<CallState>, &Plugin) -> wasmtime::Result<R>,
    ) -> Result<(R::Value, CallState), CallError>
    where
        R: ResultLike,
    {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        let wasi = WasiCtxBuilder::new().stderr(stderr.clone()).build();
        let mut store = Store::new(
            &self.engine,
            CallState {
                wasi,
                table: ResourceTable::new(),
                memory: MemoryCap {
                    max: limits.memory_bytes,
                    refused: false,
                },
                logs: Vec::new(),
                logs_dropped: 0,
            },
        );
        store.limiter(|s| &mut s.memory);
        store.set_epoch_deadline(deadline_ticks(limits.timeout));
        store.epoch_deadline_trap();
        let outcome = pre
            .instantiate(&mut store)
            .and_then(|plugin| f(&mut store, &plugin));
        match outcome {
            Ok(value) => {
                let value = value.into_call_result()?;
                Ok((value, store.into_data()))
            }
            Err(e) => Err(classify(&e, &store, limits, &stderr)),
        }
    }

    fn compile(&self, wasm: &[u8], wasm_hash: &str) -> Result<Component, LoadError> {
        let cached = self
            .cache_dir
            .as_ref()
            .map(|d| d.join(format!("{}-{}.cwasm", &wasm_hash[..32], self.engine_key)));
        if let Some(path) = cached.as_deref().filter(|p| p.is_file()) {
            // SAFETY: the cache holds only files this runtime serialised, keyed by
            // the component hash and the engine's compatibility hash, in the
            // user's own cache directory.
            match unsafe { Component::deserialize_file(&self.engine, path) } {
                Ok(c) => return Ok(c),
                Err(_) => {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        let component = Component::new(&self.engine, wasm)
            .map_err(|e| LoadError::NotAComponent(format!("{e:#}")))?;
        if let Some(path) = cached {
            // The cache is an optimisation: failing to write it is not an error.
            let _ = write_cache(&path, &component);
        }
        Ok(component)
    }

    fn api_version(&self, component: &Component) -> Result<Version, LoadError> {
        let ty = component.component_type();
        let name = ty
            .exports(&self.engine)
            .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentInstance(_)))
            .map(|(name, _)| name.to_string())
            .find(|name| name.starts_with(PARSER_EXPORT))
            .ok_or(LoadError::MissingExport)?;
        let raw = &name[PARSER_EXPORT.len()..];
        let version = Version::parse(raw).map_err(|_| LoadError::IncompatibleApi {
            plugin: raw.to_string(),
            host: HOST_API_VERSION.to_string(),
        })?;
        if !api_compatible(&version, &HOST_API_VERSION) {
            return Err(LoadError::IncompatibleApi {
                plugin: version.to_string(),
                host: HOST_API_VERSION.to_string(),
            });
        }
        Ok(version)
    }
}

/// Same major as the host, minor not newer than the host's.
pub fn api_compatible(plugin: &Version, host: &Version) -> bool {
    plugin.major == host.major && plugin.minor <= host.minor
}

fn deadline_ticks(timeout: Duration) -> u64 {
    (timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64 + 1
}

fn write_cache(path: &Path, component: &Component) -> std::io::Result<()> {
    let bytes = component
        .serialize()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

fn classify(
    err: &wasmtime::Error,
    store: &Store<CallState>,
    limits: &Limits,
    stderr: &MemoryOutputPipe,
) -> CallError {
    if err.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
        return CallError::Timeout(limits.timeout.as_millis());
    }
    if store.data().memory.refused {
        return CallError::MemoryLimit(limits.memory_bytes >> 20);
    }
    let output = String::from_utf8_lossy(&stderr.contents()).into_owned();
    let panic: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    let detail = if panic.is_empty() {
        format!("{err:#}")
    } else {
        panic[panic.len().saturating_sub(2)..].join(" ")
    };
    let mut detail = detail.replace('\n', " ");
    if detail.len() > 300 {
        let mut cut = 300;
        while !detail.is_char_boundary(cut) {
            cut -= 1;
        }
        detail.truncate(cut);
    }
    CallError::Trap(detail)
}

/// Results of guest calls: either a plain value or the WIT
/// `result<_, error>` whose error becomes [`CallError::Plugin`].
trait ResultLike {
    type Value;
    fn into_call_result(self) -> Result<Self::Value, CallError>;
}

impl ResultLike for PluginInfo {
    type Value = PluginInfo;
    fn into_call_result(self) -> Result<PluginInfo, CallError> {
        Ok(self)
    }
}

impl<T> ResultLike for Result<T, PluginError> {
    type Value = T;
    fn into_call_result(self) -> Result<T, CallError> {
        self.map_err(CallError::Plugin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_compatibility_is_same_major_and_not_newer_minor() {
        let host = Version::new(1, 2, 0);
        assert!(api_compatible(&Version::new(1, 0, 0), &host));
        assert!(api_compatible(&Version::new(1, 2, 7), &host));
        assert!(!api_compatible(&Version::new(1, 3, 0), &host));
        assert!(!api_compatible(&Version::new(2, 0, 0), &host));
        assert!(!api_compatible(&Version::new(0, 9, 0), &host));
        assert!(api_compatible(&Version::new(1, 0, 3), &HOST_API_VERSION));
    }

    fn text_plugin() -> &'static [u8] {
        crate::plugin::registry::BUILT_IN
            .iter()
            .find(|(name, _)| *name == "text")
            .expect("text is built in")
            .1
    }

    fn cached_files(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir.join("components"))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn compiled_code_is_cached_and_a_corrupt_cache_entry_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = Runtime::new(Some(dir.path().to_path_buf())).unwrap();
        let first = runtime.load(text_plugin()).unwrap();
        assert_eq!(first.info.name, "text");
        let files = cached_files(dir.path());
        assert_eq!(files.len(), 1, "one precompiled component: {files:?}");
        assert!(files[0].to_string_lossy().ends_with(".cwasm"));
        let written = std::fs::metadata(&files[0]).unwrap().modified().unwrap();

        // A second runtime (a later `kebab` run) loads from the cache without rewriting it.
        let again = Runtime::new(Some(dir.path().to_path_buf())).unwrap();
        again.load(text_plugin()).unwrap();
        assert_eq!(
            std::fs::metadata(&files[0]).unwrap().modified().unwrap(),
            written
        );

        std::fs::write(&files[0], b"garbage").unwrap();
        let repaired = Runtime::new(Some(dir.path().to_path_buf())).unwrap();
        let p = repaired.load(text_plugin()).unwrap();
        let out = repaired
            .parse_and_chunk(
                &p,
                &Limits::default(),
                "a.txt",
                b"hello\n",
                ChunkPolicy {
                    target_tokens: 10,
                    overlap_tokens: 0,
                },
            )
            .unwrap();
        assert_eq!(out.chunks.len(), 1);
        assert!(
            std::fs::metadata(&files[0]).unwrap().len() > 1000,
            "cache entry rewritten"
        );
    }

    #[test]
    fn non_components_are_refused_with_a_reason() {
        let runtime = Runtime::new(None).unwrap();
        let err = runtime.load(b"definitely not wasm").err().expect("refused");
        assert!(matches!(err, LoadError::NotAComponent(_)), "{err}");
        assert!(
            err.to_string()
                .starts_with("not a loadable WebAssembly component")
        );
    }

    #[test]
    fn deadline_has_at_least_two_ticks() {
        assert_eq!(deadline_ticks(Duration::from_millis(1)), 2);
        assert_eq!(deadline_ticks(Duration::from_secs(1)), 101);
    }
}
