//! `kebab watch`: roots kept fresh by themselves. Each root is brought up
//! to date first, then file-system events (inotify, FSEvents,
//! ReadDirectoryChangesW through `notify`) are applied through the same
//! pipeline, writer lock and validation as `kebab ingest`
//! ([`crate::ingest::apply_changes`]) — never a second code path.
//!
//! - **Only what a walk would enter is watched**: one non-recursive watch
//!   per directory the walk keeps (`.gitignore`, `.kebabignore`, excludes
//!   and the built-in blacklist apply), so a build storm in `target/`
//!   costs nothing. A new directory is watched and scanned when it
//!   appears.
//! - **Changes are queued by path, not by event**: the event threads fold
//!   every path into a set, so an atomic save, a burst of saves or a
//!   checkout of thousands of files holds one entry per path however many
//!   events came. A root's queue is applied once it has been quiet for
//!   [`WatchSettings::quiet`], or at the latest [`WatchSettings::max_delay`]
//!   after its first change; a queue of more than [`MAX_BATCH`] paths is
//!   applied by reading the directories they are in again (one walk each,
//!   through the same bulk pipeline as `kebab ingest`), not path by path.
//! - **Fallbacks**: a root whose directories exceed the OS watch limit
//!   (`fs.inotify.max_user_watches`) or `[watch] max_dirs`, or whose event
//!   queue overflowed, is said so once and rescanned every
//!   [`WatchSettings::rescan`] instead; a root that disappears (an
//!   unmounted drive), or is replaced by a link, is reported, its
//!   documents kept, and retried.
//! - **Containment**: every batch is applied through the walk's own rule
//!   ([`crate::walk`]), checked again when it is applied: a watched
//!   directory swapped for a link out of the root, however often and
//!   however timed, is left (what was indexed under it goes), and a file is
//!   read only where its descriptor really lies inside the root.
//! - **Freshness**: every [`HEARTBEAT`] the watcher records in the index,
//!   per root, that it is alive and how many changes are queued, which
//!   search, ask and `schema` report.
//! - Ctrl-C and SIGTERM finish the current document and stop; the next
//!   start reconciles each root with the disk (unchanged files are
//!   skipped), so nothing is missed or indexed twice.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use serde::Serialize;

use crate::app::{App, Plugins};
use crate::indexes::Indexes;
use crate::ingest::{IngestError, IngestReport, Progress};
use kebab_store::{Root, StoreError};

pub mod settings;
pub use settings::WatchSettings;

/// How often a watcher tells the index it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// How often the watcher looks at its queue while a batch, a rescan or a
/// missing root waits.
const BUSY_TICK: Duration = Duration::from_millis(100);
/// … and when nothing waits (a change rings the queue's bell at once).
const IDLE_TICK: Duration = Duration::from_secs(1);
/// Most changed paths applied one by one in a batch; past it the batch
/// rescans the directories holding them (a checkout of 50 000 files is a
/// walk of their directories, not 50 000 replayed events).
pub const MAX_BATCH: usize = 2_000;

/// Failures that stop the watcher (a file's problem never does).
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(transparent)]
    Ingest(#[from] IngestError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start a file-system watcher: {0}")]
    Watcher(String),
}

/// What the watcher did, for the front end to show.
#[derive(Debug)]
pub enum WatchEvent<'a> {
    /// Watching `dirs` directories of `root` by events.
    Watching { root: &'a str, dirs: usize },
    /// A batch of changes (or a full sync) of `root` was applied.
    Applied {
        root: &'a str,
        paths: usize,
        report: &'a IngestReport,
    },
    /// `root` is rescanned every `every` instead of watched, and why.
    Polling {
        root: &'a str,
        reason: String,
        every: Duration,
    },
    /// `root`'s directory is gone; its documents are kept.
    Missing { root: &'a str },
    /// `root`'s directory is back.
    Back { root: &'a str },
    /// Progress of the pipeline.
    Progress(&'a Progress),
}

/// `watch_event.v1`: one line of `kebab watch --json` — what the watcher
/// did to a root.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WatchLine {
    pub schema_version: &'static str,
    pub ts: String,
    /// `watching`, `applied`, `polling`, `missing` or `back`.
    pub event: &'static str,
    pub root: String,
    /// Directories watched (`watching`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirs: Option<usize>,
    /// Paths the batch brought up to date (`applied`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<usize>,
    /// What the batch did (`applied`): `ingest_report.v1`'s totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<crate::ingest::Counts>,
    /// Its duration in milliseconds (`applied`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u128>,
    /// Why the root is rescanned instead of watched (`polling`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Seconds between its rescans (`polling`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every_secs: Option<u64>,
}

impl WatchEvent<'_> {
    /// The event as a `watch_event.v1` line (`None` for pipeline progress,
    /// which has `ingest_progress.v1`).
    pub fn line(&self) -> Option<WatchLine> {
        let line = |event, root: &str| WatchLine {
            schema_version: "watch_event.v1",
            ts: kebab_core::clock::now_rfc3339(),
            event,
            root: root.to_string(),
            dirs: None,
            paths: None,
            counts: None,
            duration_ms: None,
            reason: None,
            every_secs: None,
        };
        Some(match self {
            WatchEvent::Watching { root, dirs } => WatchLine {
                dirs: Some(*dirs),
                ..line("watching", root)
            },
            WatchEvent::Applied {
                root,
                paths,
                report,
            } => WatchLine {
                paths: Some(*paths),
                counts: Some(report.counts.clone()),
                duration_ms: Some(report.duration_ms),
                ..line("applied", root)
            },
            WatchEvent::Polling {
                root,
                reason,
                every,
            } => WatchLine {
                reason: Some(reason.clone()),
                every_secs: Some(every.as_secs()),
                ..line("polling", root)
            },
            WatchEvent::Missing { root } => line("missing", root),
            WatchEvent::Back { root } => line("back", root),
            WatchEvent::Progress(_) => return None,
        })
    }
}

/// Changes seen for one root, by path.
#[derive(Default)]
struct Pending {
    paths: HashSet<PathBuf>,
    /// When the first and the last change since the last batch came.
    first: Option<Instant>,
    last: Option<Instant>,
    /// The event queue overflowed: the whole root needs a rescan.
    rescan: bool,
    /// Directories that appeared: to watch (and scan) before the batch.
    new_dirs: BTreeSet<PathBuf>,
    /// Directories that went away: to forget.
    gone_dirs: BTreeSet<PathBuf>,
    /// A watch error the event thread saw (the watch limit, say).
    error: Option<String>,
}

impl Pending {
    fn note(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// Whether anything waits for the next pass: changes, a rescan,
    /// directories appeared or gone, an error to report.
    fn is_waiting(&self) -> bool {
        self.first.is_some()
            || self.rescan
            || !self.new_dirs.is_empty()
            || !self.gone_dirs.is_empty()
            || self.error.is_some()
    }

    fn queued(&self) -> u64 {
        self.paths.len() as u64 + u64::from(self.rescan)
    }

    /// Whether the batch is due: quiet for `quiet`, or waiting `max_delay`.
    fn due(&self, now: Instant, settings: &WatchSettings) -> bool {
        match (self.first, self.last) {
            (Some(first), Some(last)) => {
                now - last >= settings.quiet() || now - first >= settings.max_delay()
            }
            _ => false,
        }
    }
}

/// The queues every event thread writes into, and the bell that wakes the
/// watcher.
struct Queue {
    pending: Mutex<Vec<Pending>>,
    bell: Condvar,
}

/// One root being kept fresh.
struct Watched {
    root: Root,
    /// The OS watcher of this root (one per root, so an overflow tells
    /// which root to rescan); `None` while polling or missing.
    watcher: Option<RecommendedWatcher>,
    dirs: HashSet<PathBuf>,
    /// Rescanned every `rescan` instead of watched.
    polling: bool,
    missing: bool,
    next_rescan: Instant,
}

/// Keep `roots` fresh until `cancel` is raised: sync each, watch each,
/// apply what changes. `on_event` hears what happened.
pub fn watch(
    app: &mut App,
    plugins: &Plugins,
    indexes: &mut Indexes,
    roots: Vec<Root>,
    settings: &WatchSettings,
    cancel: &AtomicBool,
    on_event: &mut dyn FnMut(WatchEvent<'_>),
) -> Result<(), WatchError> {
    lower_priority(settings.nice);
    let queue = Arc::new(Queue {
        pending: Mutex::new(roots.iter().map(|_| Pending::default()).collect()),
        bell: Condvar::new(),
    });
    let now = Instant::now();
    let mut watched: Vec<Watched> = roots
        .into_iter()
        .map(|root| Watched {
            root,
            watcher: None,
            dirs: HashSet::new(),
            polling: false,
            missing: false,
            next_rescan: now,
        })
        .collect();
    // Watch first, then sync: a change made during the first sync is
    // queued and applied after it.
    for (i, w) in watched.iter_mut().enumerate() {
        if !crate::walk::is_intact_root(&w.root.path) {
            w.missing = true;
            on_event(WatchEvent::Missing { root: &w.root.name });
            continue;
        }
        start_watching(app, w, i, &queue, settings, on_event)?;
        sync(
            app,
            plugins,
            indexes,
            w,
            std::slice::from_ref(&w.root.path),
            cancel,
            on_event,
        )?;
    }
    let pid = std::process::id();
    let mut next_heartbeat = Instant::now();
    while !cancel.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= next_heartbeat {
            heartbeat(app, &watched, &queue, pid)?;
            next_heartbeat = now + HEARTBEAT;
        }
        for i in 0..watched.len() {
            if cancel.load(Ordering::Relaxed) {
                break;
            }
            tend(
                app,
                plugins,
                indexes,
                &mut watched,
                i,
                &queue,
                settings,
                cancel,
                on_event,
            )?;
        }
        let guard = queue.pending.lock().expect("watch queue");
        // Sleep until a change comes, a batch is due, or a tick passes: a
        // short tick while something waits (a batch, a rescan, a missing
        // root), else only to see Ctrl-C and to beat the heart.
        let busy =
            guard.iter().any(Pending::is_waiting) || watched.iter().any(|w| w.missing || w.polling);
        let tick = if busy { BUSY_TICK } else { IDLE_TICK };
        let _ = queue.bell.wait_timeout(guard, tick).expect("watch queue");
    }
    for w in &watched {
        app.store.set_watch_state(w.root.root_id, None)?;
    }
    Ok(())
}

/// One pass over root `i`: reappearance and rescans, new and gone
/// directories, and its batch when due.
#[allow(clippy::too_many_arguments)]
fn tend(
    app: &mut App,
    plugins: &Plugins,
    indexes: &mut Indexes,
    watched: &mut [Watched],
    i: usize,
    queue: &Arc<Queue>,
    settings: &WatchSettings,
    cancel: &AtomicBool,
    on_event: &mut dyn FnMut(WatchEvent<'_>),
) -> Result<(), WatchError> {
    let now = Instant::now();
    let w = &mut watched[i];
    if w.missing || w.polling {
        if now < w.next_rescan {
            return Ok(());
        }
        w.next_rescan = now + settings.rescan();
        if !crate::walk::is_intact_root(&w.root.path) {
            if !w.missing {
                w.missing = true;
                w.watcher = None;
                on_event(WatchEvent::Missing { root: &w.root.name });
            }
            return Ok(());
        }
        if w.missing {
            w.missing = false;
            on_event(WatchEvent::Back { root: &w.root.name });
            start_watching(app, w, i, queue, settings, on_event)?;
        }
        let whole = [w.root.path.clone()];
        return sync(app, plugins, indexes, w, &whole, cancel, on_event);
    }
    let (paths, new_dirs, gone_dirs, rescan, error) = {
        let mut pending = queue.pending.lock().expect("watch queue");
        let p = &mut pending[i];
        if p.error.is_none() && !p.due(now, settings) {
            return Ok(());
        }
        let paths: Vec<PathBuf> = if p.paths.len() > MAX_BATCH {
            // More changes than a batch: replaying them one by one costs
            // more than reading the directories they are in again.
            let dirs: BTreeSet<PathBuf> = p
                .paths
                .drain()
                .filter_map(|q| q.parent().map(Path::to_path_buf))
                .collect();
            dirs.into_iter().collect()
        } else {
            let mut paths: Vec<PathBuf> = p.paths.drain().collect();
            paths.sort();
            paths
        };
        let batch = (
            paths,
            std::mem::take(&mut p.new_dirs),
            std::mem::take(&mut p.gone_dirs),
            std::mem::take(&mut p.rescan),
            p.error.take(),
        );
        // Every queued change is in this batch.
        p.first = None;
        p.last = None;
        batch
    };
    if !crate::walk::is_intact_root(&w.root.path) {
        // The root went away: its documents stay until it is back.
        w.missing = true;
        w.watcher = None;
        w.dirs.clear();
        w.next_rescan = now + settings.rescan();
        on_event(WatchEvent::Missing { root: &w.root.name });
        return Ok(());
    }
    if let Some(reason) = error {
        fall_back_to_polling(w, reason, settings, on_event);
        let whole = [w.root.path.clone()];
        return sync(app, plugins, indexes, w, &whole, cancel, on_event);
    }
    for dir in &gone_dirs {
        w.dirs.retain(|d| !d.starts_with(dir));
    }
    let mut paths = paths;
    for dir in &new_dirs {
        add_watches(app, w, dir, settings)
            .map_err(|reason| fall_back_to_polling(w, reason, settings, on_event))
            .ok();
        // Files created before the directory's watch existed are only
        // found by scanning it.
        paths.push(dir.clone());
    }
    if rescan {
        paths = vec![w.root.path.clone()];
    }
    if paths.is_empty() {
        return Ok(());
    }
    let paths = outermost(paths);
    sync(app, plugins, indexes, w, &paths, cancel, on_event)
}

/// Bring `paths` of `w`'s root up to date through the ingest pipeline.
fn sync(
    app: &mut App,
    plugins: &Plugins,
    indexes: &mut Indexes,
    w: &Watched,
    paths: &[PathBuf],
    cancel: &AtomicBool,
    on_event: &mut dyn FnMut(WatchEvent<'_>),
) -> Result<(), WatchError> {
    let report =
        crate::ingest::apply_changes(app, plugins, indexes, &w.root, paths, cancel, &mut |p| {
            on_event(WatchEvent::Progress(p))
        })?;
    on_event(WatchEvent::Applied {
        root: &w.root.name,
        paths: paths.len(),
        report: &report,
    });
    Ok(())
}

/// `paths` without those under another of them (a directory's walk covers
/// its files).
fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

/// Start watching root `i`: an OS watcher whose events go into the root's
/// queue, and a watch on every directory its walk enters. A root over the
/// watch limit is polled instead.
fn start_watching(
    app: &App,
    w: &mut Watched,
    i: usize,
    queue: &Arc<Queue>,
    settings: &WatchSettings,
    on_event: &mut dyn FnMut(WatchEvent<'_>),
) -> Result<(), WatchError> {
    let sink = Arc::clone(queue);
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let mut pending = sink.pending.lock().expect("watch queue");
        receive(&mut pending[i], event);
        sink.bell.notify_one();
    })
    .map_err(|e| WatchError::Watcher(e.to_string()))?;
    w.watcher = Some(watcher);
    w.dirs.clear();
    w.polling = false;
    let root = w.root.path.clone();
    match add_watches(app, w, &root, settings) {
        Ok(()) => on_event(WatchEvent::Watching {
            root: &w.root.name,
            dirs: w.dirs.len(),
        }),
        Err(reason) => fall_back_to_polling(w, reason, settings, on_event),
    }
    Ok(())
}

/// Fold one event into a root's queue.
fn receive(pending: &mut Pending, event: notify::Result<notify::Event>) {
    let now = Instant::now();
    let event = match event {
        Ok(event) => event,
        Err(e) => {
            pending.error = Some(watch_error_reason(&e));
            pending.note(now);
            return;
        }
    };
    if event.need_rescan() {
        pending.rescan = true;
        pending.note(now);
        return;
    }
    let is_dir = |p: &Path| p.is_dir();
    match event.kind {
        EventKind::Access(_) => return,
        EventKind::Create(notify::event::CreateKind::Folder) => {
            pending.new_dirs.extend(event.paths.iter().cloned());
        }
        EventKind::Remove(notify::event::RemoveKind::Folder) => {
            pending.gone_dirs.extend(event.paths.iter().cloned());
        }
        EventKind::Modify(notify::event::ModifyKind::Name(_)) => {
            for p in &event.paths {
                if is_dir(p) {
                    pending.new_dirs.insert(p.clone());
                } else if !p.exists() {
                    // Moved away: a file or a whole directory.
                    pending.gone_dirs.insert(p.clone());
                }
            }
        }
        _ => {}
    }
    pending.paths.extend(event.paths);
    pending.note(now);
}

/// Watch `dir` and every directory a walk of it enters, up to the root's
/// `max_dirs`; the reason the root cannot be watched when the OS or the
/// setting says no.
fn add_watches(
    app: &App,
    w: &mut Watched,
    dir: &Path,
    settings: &WatchSettings,
) -> Result<(), String> {
    let Some(watcher) = w.watcher.as_mut() else {
        return Ok(());
    };
    let opts = app.walk_options(&w.root).map_err(|e| e.to_string())?;
    for d in crate::walk::dirs(dir, &w.root.path, &opts) {
        if w.dirs.contains(&d) {
            continue;
        }
        if w.dirs.len() >= settings.max_dirs {
            return Err(format!(
                "it has more than {} directories ([watch] max_dirs)",
                settings.max_dirs
            ));
        }
        match watcher.watch(&d, RecursiveMode::NonRecursive) {
            Ok(()) => {
                w.dirs.insert(d);
            }
            // Gone between the walk and the watch: its parent's event
            // tells the rest.
            Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => {}
            Err(e) => return Err(watch_error_reason(&e)),
        }
    }
    Ok(())
}

/// Lower this thread's CPU priority to `nice` (`[watch] nice`), unless it
/// is lower already. On Linux a niceness is a thread's, and the threads
/// this one starts later (the parse workers, ONNX Runtime's pool when the
/// model loads) inherit it: so under `kebab serve --watch` only the
/// watcher's work runs behind the queries.
#[cfg(unix)]
fn lower_priority(nice: i32) {
    // SAFETY: getpriority and setpriority read and set the calling
    // thread's (process's) niceness; no memory is passed.
    unsafe {
        let now = libc::getpriority(libc::PRIO_PROCESS as _, 0);
        if now < nice {
            libc::setpriority(libc::PRIO_PROCESS as _, 0, nice);
        }
    }
}

#[cfg(not(unix))]
fn lower_priority(_nice: i32) {}

/// Why watching failed, with the setting that fixes it when there is one.
fn watch_error_reason(e: &notify::Error) -> String {
    match &e.kind {
        notify::ErrorKind::MaxFilesWatch => "the OS limit on watched directories is reached \
             (raise fs.inotify.max_user_watches, e.g. `sysctl fs.inotify.max_user_watches=524288`)"
            .to_string(),
        _ => format!("watching failed: {e}"),
    }
}

/// Stop watching `w`'s root (freeing its OS watches) and rescan it every
/// `rescan` instead, saying so once.
fn fall_back_to_polling(
    w: &mut Watched,
    reason: String,
    settings: &WatchSettings,
    on_event: &mut dyn FnMut(WatchEvent<'_>),
) {
    if w.polling {
        return;
    }
    w.watcher = None;
    w.dirs.clear();
    w.polling = true;
    w.next_rescan = Instant::now() + settings.rescan();
    on_event(WatchEvent::Polling {
        root: &w.root.name,
        reason,
        every: settings.rescan(),
    });
}

/// Record in the index that this watcher is alive, with each root's queue.
fn heartbeat(
    app: &mut App,
    watched: &[Watched],
    queue: &Queue,
    pid: u32,
) -> Result<(), StoreError> {
    let queued: Vec<u64> = {
        let pending = queue.pending.lock().expect("watch queue");
        pending.iter().map(Pending::queued).collect()
    };
    for (w, queued) in watched.iter().zip(queued) {
        app.store
            .set_watch_state(w.root.root_id, Some((pid, queued)))?;
    }
    Ok(())
}

/// The roots `names` asks for — each a root's name or a directory (a new
/// directory becomes a root, under the writer lock) — or every root of the
/// index and of the config when none is named.
pub fn resolve_roots(
    app: &mut App,
    names: &[String],
    cancel: &AtomicBool,
) -> Result<Vec<Root>, WatchError> {
    let _writer = kebab_store::writer_lock::WriterLock::acquire(
        &app.paths.data_dir,
        "kebab watch",
        cancel,
        &mut |_| {},
    )
    .map_err(IngestError::from)?;
    let mut roots: HashMap<i64, Root> = HashMap::new();
    if names.is_empty() {
        for (dir, _, _) in app.declared_roots() {
            let root = app.root_for(&dir)?;
            roots.insert(root.root_id, root);
        }
        for root in app.store.roots()? {
            roots.insert(root.root_id, root);
        }
    }
    for name in names {
        let root = match app.store.root_named(name)? {
            Some(root) => root,
            None => {
                let dir = Path::new(name)
                    .canonicalize()
                    .map_err(|source| IngestError::Path {
                        path: PathBuf::from(name),
                        source,
                    })?;
                app.root_for(&dir)?
            }
        };
        roots.insert(root.root_id, root);
    }
    let mut roots: Vec<Root> = roots.into_values().collect();
    roots.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_covers_each_tree_once() {
        let paths = vec![
            PathBuf::from("/r/a/x.md"),
            PathBuf::from("/r/a"),
            PathBuf::from("/r/b.md"),
            PathBuf::from("/r/a/y/z.md"),
            PathBuf::from("/r/b.md"),
        ];
        assert_eq!(
            outermost(paths),
            vec![PathBuf::from("/r/a"), PathBuf::from("/r/b.md")]
        );
    }

    #[test]
    fn a_batch_is_due_when_quiet_or_waiting_too_long() {
        let settings = WatchSettings::default();
        let t0 = Instant::now();
        let mut p = Pending::default();
        assert!(!p.due(t0, &settings));
        p.note(t0);
        assert!(!p.due(t0 + Duration::from_millis(100), &settings));
        assert!(p.due(t0 + Duration::from_millis(300), &settings));
        // A steady stream of changes still gets applied every max_delay.
        for ms in (0..2_000).step_by(100) {
            p.note(t0 + Duration::from_millis(ms));
        }
        assert!(!p.due(t0 + Duration::from_millis(1_950), &settings));
        assert!(p.due(t0 + Duration::from_millis(2_000), &settings));
    }

    #[test]
    fn events_are_kept_by_path_however_many_arrive() {
        let mut p = Pending::default();
        for _ in 0..10_000 {
            let event = notify::Event::new(EventKind::Modify(notify::event::ModifyKind::Any))
                .add_path(PathBuf::from("/r/a.md"));
            receive(&mut p, Ok(event));
        }
        let open = notify::Event::new(EventKind::Access(notify::event::AccessKind::Any))
            .add_path(PathBuf::from("/r/b.md"));
        receive(&mut p, Ok(open));
        assert_eq!(p.paths.len(), 1);
        assert_eq!(p.queued(), 1);
        let overflow = notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        receive(&mut p, Ok(overflow));
        assert!(p.rescan);
    }
}
