//! The wasmtime engine that runs plugins: compilation (through the on-disk
//! [`cache`](crate::cache)), API-version checks, and sandboxed calls (wall-clock
//! deadline, memory cap, Ctrl-C, no files, no environment, no network).
//!
//! # Why plugin calls are async
//!
//! An epoch deadline only interrupts *running* wasm. A guest that blocks in
//! a WASI host call — `std::thread::sleep` is `monotonic-clock`
//! `subscribe-duration` + `poll` — runs no wasm, so a synchronous host would
//! wait for the host call to return, however long the guest asked for.
//! Therefore the engine runs its guests asynchronously:
//!
//! - WASI is linked with its async host implementation, so a guest blocked
//!   in `poll` is a pending future on a per-thread tokio executor, not a
//!   blocked thread;
//! - while wasm runs, the epoch callback yields to the executor every
//!   [`EPOCH_TICK`], so a spinning guest is a future that returns
//!   `Pending` regularly;
//! - each call (`info`, `parse`, `chunk-document`) is raced against its
//!   deadline and against the Ctrl-C flag; the loser's future — with the
//!   instance and its `Store` — is dropped, which wasmtime supports at any
//!   await point.
//!
//! So every call ends within its deadline plus about one tick, whatever the
//! guest does, and Ctrl-C stops a call within [`CANCEL_POLL`].

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use semver::Version;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable, types::ComponentItem};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter,
    Store, Trap, UpdateDeadline,
};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::attach::{Attachment, Handed};
use crate::cache::PluginCache;
use crate::contract::{current, v1_0, v1_1, v1_2};
use crate::ocr::{GrayImage, OcrEngine, OcrError, OcrUse, TextLine, check_image};
use crate::{HOST_API_VERSION, PluginError, PluginInfo};
use kebab_core::document::{Chunk, ChunkPolicy, Document, Settings};
use kebab_core::sanitize::bounded;

/// How often the engine's epoch advances: how often running wasm yields so
/// its deadline and Ctrl-C can be checked.
const EPOCH_TICK: Duration = Duration::from_millis(10);
/// How often a call waiting on its guest looks at the Ctrl-C flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// Log lines kept per call; the rest are only counted.
const MAX_LOG_LINES: usize = 50;
/// Longest log line kept, in bytes.
const MAX_LOG_LINE: usize = 500;
/// Longest error message from a plugin kept, in bytes.
const MAX_ERROR_MESSAGE: usize = 500;
/// Bytes of guest stderr kept (panic messages).
const STDERR_CAPACITY: usize = 16 * 1024;
/// Plugin instances alive at once in one engine's pool: ingest runs at
/// most 64 workers, each with one instance.
const POOL_INSTANCES: u32 = 128;
/// Core instances and tables one plugin instance may use (a Rust plugin
/// has one or two, the CPython `org` component 16 core instances and 4
/// tables).
const POOL_PER_INSTANCE: u32 = 24;
/// Elements per pooled table (wasmtime's default, 20 000, is tight for
/// large runtimes compiled to wasm).
const POOL_TABLE_ELEMENTS: usize = 100_000;
/// Largest per-instance metadata the pool holds (wasmtime's default is 1 MiB).
const POOL_INSTANCE_METADATA: usize = 8 << 20;
/// Bytes of each pooled memory and table kept resident between instances
/// when only touched pages need resetting.
const KEEP_RESIDENT: usize = 4 << 20;
/// Export name prefix every parser plugin must have.
const PARSER_EXPORT: &str = "kebab:plugin/parser@";

/// Per-call sandbox limits (the default is `[plugins]`' default, see
/// [`crate::config`]).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock budget of each call.
    pub timeout: Duration,
    /// Cap on the instance's linear memory.
    pub memory_bytes: usize,
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
    /// The call ran past its deadline (running, looping, or blocked in a
    /// host call).
    #[error("timed out after {0} ms")]
    Timeout(u128),
    /// Ctrl-C stopped the call.
    #[error("interrupted")]
    Interrupted,
    /// The instance tried to grow memory past the cap.
    #[error("exceeded the memory limit of {0} MiB")]
    MemoryLimit(usize),
    /// The guest trapped (panic, unreachable, out-of-bounds…).
    #[error("trapped: {0}")]
    Trap(String),
    /// The guest overflowed its stack (runaway recursion).
    #[error("stack overflow")]
    StackOverflow,
    /// The plugin returned an error.
    #[error("{}", describe_plugin_error(.0))]
    Plugin(PluginError),
}

fn describe_plugin_error(e: &PluginError) -> String {
    match e {
        PluginError::Unsupported(m) => format!("unsupported: {}", bounded(m, MAX_ERROR_MESSAGE)),
        PluginError::Malformed(m) => format!("malformed: {}", bounded(m, MAX_ERROR_MESSAGE)),
    }
}

/// A compiled component bound with the bindings of the API version it was
/// built against.
enum Bound {
    V1_0(v1_0::PluginPre<CallState>),
    V1_1(v1_1::PluginPre<CallState>),
    V1_2(v1_2::PluginPre<CallState>),
}

/// A compiled plugin, ready to instantiate.
pub struct LoadedPlugin {
    pre: Bound,
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
    /// Files inside the file the plugin handed over (API 1.2.0), for the
    /// caller to read with their own plugins.
    pub attachments: Vec<Attachment>,
    /// Why attachments were refused (one line each).
    pub attachments_refused: Vec<String>,
    /// What the plugin asked of the OCR engine.
    pub ocr: OcrUse,
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
    /// What the `settings` import answers.
    settings: Arc<Settings>,
    /// What the `attachments` import took.
    handed: Handed,
    /// What answers the `ocr` import, if anything, and the time it may
    /// take for one file.
    ocr: Option<(Arc<dyn OcrEngine>, Duration)>,
    ocr_use: OcrUse,
    /// Time spent in the host for the guest, added to its deadline.
    host_time: HostTime,
}

impl CallState {
    fn record_log(&mut self, level: current::kebab::plugin::log::Level, message: &str) {
        if self.logs.len() >= MAX_LOG_LINES {
            self.logs_dropped += 1;
            return;
        }
        let line = format!("{level:?}: {message}").to_lowercase();
        self.logs.push(bounded(&line, MAX_LOG_LINE));
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl v1_2::kebab::plugin::log::Host for CallState {
    fn log(&mut self, level: v1_2::kebab::plugin::log::Level, message: String) {
        self.record_log(level, &message);
    }
}

impl v1_2::kebab::plugin::settings::Host for CallState {
    fn get(&mut self, key: String) -> Option<String> {
        self.settings.get(&key).cloned()
    }
}

impl v1_2::kebab::plugin::attachments::Host for CallState {
    fn add(
        &mut self,
        name: String,
        bytes: Vec<u8>,
        heading_path: Vec<String>,
        within: Option<v1_2::kebab::plugin::types::Span>,
    ) -> bool {
        self.handed.offer(Attachment {
            name,
            bytes,
            heading_path,
            within: within.map(Into::into),
        })
    }
}

impl v1_2::kebab::plugin::ocr::Host for CallState {
    fn max_pixels(&mut self) -> u64 {
        self.ocr
            .as_ref()
            .map_or(0, |(engine, _)| engine.max_pixels())
    }

    fn recognize(
        &mut self,
        image: v1_2::kebab::plugin::ocr::GrayImage,
    ) -> Result<Vec<v1_2::kebab::plugin::ocr::TextLine>, v1_2::kebab::plugin::ocr::OcrError> {
        use v1_2::kebab::plugin::ocr as wit;
        let Some((engine, per_file)) = self.ocr.clone() else {
            return Err(wit::OcrError::Unavailable(
                "OCR is off: install Tesseract (scripts/setup.sh does) and set `[ocr] enabled = \
                 true`"
                    .into(),
            ));
        };
        if self.ocr_use.elapsed >= per_file {
            return Err(wit::OcrError::Failed(format!(
                "this file's OCR budget ({} s, `[ocr] file_budget_secs`) is spent",
                per_file.as_secs()
            )));
        }
        let image = GrayImage {
            width: image.width,
            height: image.height,
            pixels: image.pixels,
        };
        let started = std::time::Instant::now();
        let read =
            check_image(&image, engine.max_pixels()).and_then(|()| engine.recognize_traced(&image));
        let spent = started.elapsed();
        self.host_time.add(spent);
        self.ocr_use.elapsed += spent;
        match read {
            Ok((lines, cached)) => {
                self.ocr_use.images += 1;
                self.ocr_use.cached += u32::from(cached);
                Ok(lines
                    .into_iter()
                    .map(|l: TextLine| wit::TextLine {
                        text: l.text,
                        x: l.x,
                        y: l.y,
                        width: l.width,
                        height: l.height,
                        confidence: if l.confidence.is_finite() {
                            l.confidence.clamp(0.0, 1.0)
                        } else {
                            0.0
                        },
                    })
                    .collect())
            }
            Err(OcrError::Unavailable(m)) => Err(wit::OcrError::Unavailable(m)),
            Err(OcrError::Rejected(m)) => Err(wit::OcrError::Rejected(m)),
            Err(OcrError::Failed(m)) => Err(wit::OcrError::Failed(m)),
        }
    }
}

impl v1_2::kebab::plugin::types::Host for CallState {}

impl v1_1::kebab::plugin::log::Host for CallState {
    fn log(&mut self, level: v1_1::kebab::plugin::log::Level, message: String) {
        self.record_log(level.into(), &message);
    }
}

impl v1_0::kebab::plugin::log::Host for CallState {
    fn log(&mut self, level: v1_0::kebab::plugin::log::Level, message: String) {
        self.record_log(level.into(), &message);
    }
}

impl v1_1::kebab::plugin::settings::Host for CallState {
    fn get(&mut self, key: String) -> Option<String> {
        self.settings.get(&key).cloned()
    }
}

impl v1_1::kebab::plugin::types::Host for CallState {}
impl v1_0::kebab::plugin::types::Host for CallState {}

/// Advances the engine epoch every [`EPOCH_TICK`] while a sandbox is open
/// ([`EpochTicker::ticking`]), and sleeps while none is, so an idle
/// process (a watcher, a server) spends no CPU on it; stops when dropped.
struct EpochTicker {
    state: Arc<TickerState>,
    thread: Option<JoinHandle<()>>,
}

/// What the ticker thread and the sandboxes share.
struct TickerState {
    /// Sandboxes open; `None` once the ticker is to stop.
    open: Mutex<Option<usize>>,
    /// Rung when the first sandbox opens and when the ticker is to stop.
    wake: Condvar,
}

/// An open sandbox's claim on the ticker: the epoch advances until the
/// last claim is dropped.
struct Ticking(Arc<TickerState>);

impl EpochTicker {
    fn start(engine: Engine) -> EpochTicker {
        let state = Arc::new(TickerState {
            open: Mutex::new(Some(0)),
            wake: Condvar::new(),
        });
        let shared = state.clone();
        let thread = std::thread::Builder::new()
            .name("kebab-epoch".into())
            .spawn(move || {
                loop {
                    {
                        let open = shared.open.lock().expect("epoch ticker");
                        let open = shared
                            .wake
                            .wait_while(open, |open| *open == Some(0))
                            .expect("epoch ticker");
                        if open.is_none() {
                            return;
                        }
                    }
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("spawn epoch ticker");
        EpochTicker {
            state,
            thread: Some(thread),
        }
    }

    /// A claim that keeps the epoch advancing while it lives.
    fn ticking(&self) -> Ticking {
        let mut open = self.state.open.lock().expect("epoch ticker");
        if let Some(n) = open.as_mut() {
            *n += 1;
            if *n == 1 {
                self.state.wake.notify_all();
            }
        }
        Ticking(self.state.clone())
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        if let Some(n) = self.0.open.lock().expect("epoch ticker").as_mut() {
            *n -= 1;
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        *self.state.open.lock().expect("epoch ticker") = None;
        self.state.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Why a raced call did not produce its own result.
enum Stopped {
    Deadline,
    Cancelled,
}

thread_local! {
    /// The executor plugin calls of this thread run on: current-thread, so
    /// a call and the timers racing it never leave the calling thread.
    static EXECUTOR: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread tokio runtime needs only a timer");
}

/// Time the host spent working for a guest during a call (reading text in
/// its images): added to the call's deadline, so a plugin is not timed out
/// for the host's work, which has budgets of its own.
#[derive(Debug, Clone, Default)]
struct HostTime(Arc<std::sync::atomic::AtomicU64>);

impl HostTime {
    fn add(&self, spent: Duration) {
        self.0.fetch_add(
            u64::try_from(spent.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    fn get(&self) -> Duration {
        Duration::from_micros(self.0.load(Ordering::Relaxed))
    }
}

/// Run `call` to completion unless `timeout` (plus the host's time for the
/// guest, `host`) passes or `cancel` is raised first; in those cases `call`
/// is dropped unfinished.
fn race<T>(
    timeout: Duration,
    host: &HostTime,
    cancel: &AtomicBool,
    call: impl Future<Output = T>,
) -> Result<T, Stopped> {
    EXECUTOR.with(|executor| {
        executor.block_on(async {
            let started = tokio::time::Instant::now();
            let watch_cancel = async {
                while !cancel.load(Ordering::Relaxed) {
                    tokio::time::sleep(CANCEL_POLL).await;
                }
            };
            let watch_deadline = async {
                loop {
                    let due = started + timeout + host.get();
                    if tokio::time::Instant::now() >= due {
                        break;
                    }
                    tokio::time::sleep_until(due).await;
                }
            };
            let watch_deadline = std::pin::pin!(watch_deadline);
            let watch_cancel = std::pin::pin!(watch_cancel);
            let stop = futures::future::select(watch_deadline, watch_cancel);
            match futures::future::select(std::pin::pin!(call), stop).await {
                futures::future::Either::Left((value, _)) => Ok(value),
                futures::future::Either::Right((futures::future::Either::Left(_), _)) => {
                    Err(Stopped::Deadline)
                }
                futures::future::Either::Right((futures::future::Either::Right(_), _)) => {
                    Err(Stopped::Cancelled)
                }
            }
        })
    })
}

/// One sandboxed instance: a fresh `Store` (a trap poisons an instance, so
/// none is reused across files) and the guest's captured stderr.
struct Sandbox<'a> {
    store: Store<CallState>,
    stderr: MemoryOutputPipe,
    limits: &'a Limits,
    cancel: &'static AtomicBool,
    /// The epoch advances while the sandbox is open.
    _ticking: Ticking,
}

impl Sandbox<'_> {
    /// Run one guest call under the deadline and Ctrl-C; classify failures.
    fn call<T, F>(&mut self, call: F) -> Result<T, CallError>
    where
        F: AsyncFnOnce(&mut Store<CallState>) -> wasmtime::Result<T>,
    {
        let limits = self.limits;
        let host = self.store.data().host_time.clone();
        let outcome = race(limits.timeout, &host, self.cancel, call(&mut self.store));
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(classify(&e, &self.store, limits, &self.stderr)),
            Err(Stopped::Deadline) => Err(CallError::Timeout(limits.timeout.as_millis())),
            Err(Stopped::Cancelled) => Err(CallError::Interrupted),
        }
    }
}

/// `info()` of a bound component in `sandbox`, as the current type. A macro
/// because each API version's bindings are distinct types with the same
/// shape.
macro_rules! call_info {
    ($sandbox:expr, $pre:expr) => {{
        let pre = $pre;
        let sandbox = &mut $sandbox;
        sandbox
            .call(async |store| pre.instantiate_async(store).await)
            .and_then(|plugin| {
                sandbox.call(async |store| plugin.kebab_plugin_parser().call_info(store).await)
            })
            .map(PluginInfo::from)
    }};
}

/// `parse` then `chunk-document` of a bound component in `sandbox`, as the
/// current types; returns early with the [`CallError`].
macro_rules! call_parse_and_chunk {
    ($sandbox:expr, $pre:expr, $path:expr, $bytes:expr, $policy:expr) => {{
        let pre = $pre;
        let sandbox = &mut $sandbox;
        let instance = sandbox.call(async |store| pre.instantiate_async(store).await)?;
        let parser = instance.kebab_plugin_parser();
        let document = sandbox
            .call(async |store| parser.call_parse(store, $path, $bytes).await)?
            .map_err(|e| CallError::Plugin(e.into()))?;
        let policy = current::kebab::plugin::types::ChunkPolicy::from($policy).into();
        let chunks = sandbox
            .call(async |store| parser.call_chunk_document(store, &document, policy).await)?
            .map_err(|e| CallError::Plugin(e.into()))?;
        (
            Document::from(current::kebab::plugin::types::Document::from(document)),
            chunks
                .into_iter()
                .map(|c| Chunk::from(current::kebab::plugin::types::Chunk::from(c)))
                .collect::<Vec<_>>(),
        )
    }};
}

/// The plugin engine. One per process; shared by all worker threads.
pub struct Runtime {
    engine: Engine,
    linker: Linker<CallState>,
    cache: PluginCache,
    cancel: &'static AtomicBool,
    /// Limits of the `info()` call made when a component is first loaded.
    info_limits: Limits,
    /// What answers plugins' `ocr` import, and the time it may take for
    /// one file; none: `unavailable`.
    ocr: Option<(Arc<dyn OcrEngine>, Duration)>,
    ticker: EpochTicker,
}

impl Runtime {
    /// A runtime caching compiled code and plugin info under `cache_dir`
    /// (if given), whose calls stop on Ctrl-C.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Runtime, LoadError> {
        Runtime::with_cancel(cache_dir, kebab_core::interrupt::flag())
    }

    /// Like [`Runtime::new`], with calls stopped when `cancel` is raised.
    pub fn with_cancel(
        cache_dir: Option<PathBuf>,
        cancel: &'static AtomicBool,
    ) -> Result<Runtime, LoadError> {
        let engine = new_engine()?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        v1_0::Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        v1_1::Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        v1_2::Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        let engine_key = format!("{:016x}", {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            engine.precompile_compatibility_hash().hash(&mut hasher);
            hasher.finish()
        });
        Ok(Runtime {
            ticker: EpochTicker::start(engine.clone()),
            engine,
            linker,
            cache: PluginCache::new(cache_dir.as_deref(), engine_key),
            cancel,
            info_limits: Limits::default(),
            ocr: None,
        })
    }

    /// Answer plugins' `ocr` import with `engine`, which may spend at most
    /// `per_file` on one file's images (past it, `failed`). Time spent
    /// reading text is not counted against a call's deadline.
    pub fn with_ocr(mut self, engine: Arc<dyn OcrEngine>, per_file: Duration) -> Runtime {
        self.ocr = Some((engine, per_file));
        self
    }

    /// Run `info()` under `limits` (default: [`Limits::default`]).
    pub fn with_info_limits(mut self, limits: Limits) -> Runtime {
        self.info_limits = limits;
        self
    }

    /// Whether loading the component whose checksum is `wasm_hash` would
    /// compile nothing and call nothing: its code and its `info()` are in
    /// the cache.
    pub(crate) fn is_cached(&self, wasm_hash: &str) -> bool {
        self.cache.holds(wasm_hash)
    }

    /// Compile (or load from cache), check the API version, and read the
    /// plugin's info (from the cache when this component answered before).
    pub fn load(&self, wasm: &[u8]) -> Result<LoadedPlugin, LoadError> {
        self.load_hashed(wasm, &kebab_core::ids::checksum(wasm))
    }

    /// [`Runtime::load`] of `wasm` whose checksum (`kebab_core::ids::checksum`)
    /// the caller already has: the cache's key, so it must be that one.
    pub(crate) fn load_hashed(
        &self,
        wasm: &[u8],
        wasm_hash: &str,
    ) -> Result<LoadedPlugin, LoadError> {
        let wasm_hash = wasm_hash.to_string();
        let component = self
            .cache
            .component(&self.engine, wasm, &wasm_hash)
            .map_err(|e| LoadError::NotAComponent(format!("{e:#}")))?;
        let api_version = self.api_version(&component)?;
        let pre = self.bind(&component, &api_version)?;
        let (info, version) = match self.cache.info(&wasm_hash) {
            Some(info) => {
                let version = crate::identity::check_info(&info).map_err(LoadError::BadInfo)?;
                (info, version)
            }
            None => {
                let mut sandbox = self.sandbox(&self.info_limits, Arc::default());
                let info = match &pre {
                    Bound::V1_0(pre) => call_info!(sandbox, pre),
                    Bound::V1_1(pre) => call_info!(sandbox, pre),
                    Bound::V1_2(pre) => call_info!(sandbox, pre),
                }
                .map_err(LoadError::Info)?;
                let version = crate::identity::check_info(&info).map_err(LoadError::BadInfo)?;
                self.cache.store_info(&wasm_hash, &info);
                (info, version)
            }
        };
        Ok(LoadedPlugin {
            pre,
            info,
            version,
            api_version,
            wasm_hash,
        })
    }

    /// Bind `component` with the bindings of `api_version` (already checked
    /// compatible).
    fn bind(&self, component: &Component, api_version: &Version) -> Result<Bound, LoadError> {
        let mismatch = |e: wasmtime::Error| LoadError::WorldMismatch(format!("{e:#}"));
        let instance_pre = self.linker.instantiate_pre(component).map_err(mismatch)?;
        match (api_version.major, api_version.minor) {
            (1, 0) => Ok(Bound::V1_0(
                v1_0::PluginPre::new(instance_pre).map_err(mismatch)?,
            )),
            (1, 1) => Ok(Bound::V1_1(
                v1_1::PluginPre::new(instance_pre).map_err(mismatch)?,
            )),
            (1, 2) => Ok(Bound::V1_2(
                v1_2::PluginPre::new(instance_pre).map_err(mismatch)?,
            )),
            _ => Err(LoadError::IncompatibleApi {
                plugin: api_version.to_string(),
                host: HOST_API_VERSION.to_string(),
            }),
        }
    }

    /// Parse `bytes` and chunk the result, in one fresh sandboxed instance
    /// that answers the `settings` import from `settings`; each of the two
    /// calls has the full deadline.
    pub fn parse_and_chunk(
        &self,
        plugin: &LoadedPlugin,
        limits: &Limits,
        settings: &Arc<Settings>,
        path: &str,
        bytes: &[u8],
        policy: ChunkPolicy,
    ) -> Result<CallOutput, CallError> {
        let mut sandbox = self.sandbox(limits, settings.clone());
        let (document, chunks) = match &plugin.pre {
            Bound::V1_0(pre) => call_parse_and_chunk!(sandbox, pre, path, bytes, policy),
            Bound::V1_1(pre) => call_parse_and_chunk!(sandbox, pre, path, bytes, policy),
            Bound::V1_2(pre) => call_parse_and_chunk!(sandbox, pre, path, bytes, policy),
        };
        let state = sandbox.store.into_data();
        Ok(CallOutput {
            document,
            chunks,
            logs: state.logs,
            logs_dropped: state.logs_dropped,
            attachments: state.handed.taken,
            attachments_refused: state.handed.refused,
            ocr: state.ocr_use,
        })
    }

    /// A fresh instance store under `limits`: memory cap, locked-down WASI
    /// with stderr captured, and an epoch callback that yields every tick.
    fn sandbox<'a>(&self, limits: &'a Limits, settings: Arc<Settings>) -> Sandbox<'a> {
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
                settings,
                handed: Handed::default(),
                ocr: self.ocr.clone(),
                ocr_use: OcrUse::default(),
                host_time: HostTime::default(),
            },
        );
        store.limiter(|s| &mut s.memory);
        // Yield to the executor at every tick so the deadline race and the
        // Ctrl-C watch get to run while the guest computes.
        store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Yield(1)));
        store.set_epoch_deadline(1);
        Sandbox {
            store,
            stderr,
            limits,
            cancel: self.cancel,
            _ticking: self.ticker.ticking(),
        }
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
            plugin: bounded(raw, 64),
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

/// The engine: component model, epoch interruption, and instances drawn
/// from a pool of slots (memories, tables, fiber stacks) mapped once and
/// reused, so a fresh instance per file costs no `mmap`/`munmap`. Where the
/// kernel can report which pages an instance touched (`PAGEMAP_SCAN`, Linux
/// 6.7+), up to [`KEEP_RESIDENT`] of each slot stays resident and only the
/// touched pages are reset, so the next instance takes no page faults
/// there; elsewhere slots are handed back to the kernel (resetting whole
/// slots with `memset` costs more than the faults it saves for large
/// plugins). Falls back to allocating each instance on demand when the
/// pool's address space cannot be reserved (a `ulimit -v`, for one).
/// Measured in BENCHMARKS.md "Where WASM parse time goes".
fn new_engine() -> Result<Engine, LoadError> {
    let mut config = Config::new();
    config.wasm_component_model(true).epoch_interruption(true);
    let (pagemap_scan, keep_resident) = if PoolingAllocationConfig::is_pagemap_scan_available() {
        (Enabled::Yes, KEEP_RESIDENT)
    } else {
        (Enabled::No, 0)
    };
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(POOL_INSTANCES)
        .total_core_instances(POOL_INSTANCES * POOL_PER_INSTANCE)
        .total_memories(POOL_INSTANCES * 2)
        .total_tables(POOL_INSTANCES * POOL_PER_INSTANCE)
        .total_stacks(POOL_INSTANCES)
        .table_elements(POOL_TABLE_ELEMENTS)
        .max_core_instance_size(POOL_INSTANCE_METADATA)
        .max_component_instance_size(POOL_INSTANCE_METADATA)
        .pagemap_scan(pagemap_scan)
        .linear_memory_keep_resident(keep_resident)
        .table_keep_resident(keep_resident);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Engine::new(&config).or_else(|_| {
        config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
        Engine::new(&config).map_err(|e| LoadError::Engine(e.to_string()))
    })
}

/// Same major as the host, minor not newer than the host's.
pub fn api_compatible(plugin: &Version, host: &Version) -> bool {
    plugin.major == host.major && plugin.minor <= host.minor
}

fn classify(
    err: &wasmtime::Error,
    store: &Store<CallState>,
    limits: &Limits,
    stderr: &MemoryOutputPipe,
) -> CallError {
    match err.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => return CallError::StackOverflow,
        Some(Trap::Interrupt) => return CallError::Timeout(limits.timeout.as_millis()),
        _ => {}
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
    CallError::Trap(bounded(&detail.replace('\n', " "), 300))
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
        crate::registry::BUILT_IN
            .iter()
            .find(|(name, _)| *name == "text")
            .expect("text is built in")
            .1
    }

    fn cached_files(dir: &std::path::Path, suffix: &str) -> Vec<PathBuf> {
        std::fs::read_dir(dir.join("components"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.to_string_lossy().ends_with(suffix))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn compiled_code_is_cached_and_a_corrupt_cache_entry_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = Runtime::new(Some(dir.path().to_path_buf())).unwrap();
        let first = runtime.load(text_plugin()).unwrap();
        assert_eq!(first.info.name, "text");
        let files = cached_files(dir.path(), ".cwasm");
        assert_eq!(files.len(), 1, "one precompiled component: {files:?}");
        let infos = cached_files(dir.path(), ".info.json");
        assert_eq!(infos.len(), 1, "one cached info(): {infos:?}");
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
                &Default::default(),
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
}
