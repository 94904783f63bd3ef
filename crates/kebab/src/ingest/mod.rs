//! The ingest pipeline: walk → route → skip unchanged → sandboxed parse and
//! chunk (in parallel) → validate (text-plugin fallback on any failure) →
//! IDs → one SQLite transaction per document → remove vanished files →
//! report.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use serde_json::{Value, json};

use crate::app::{App, Plugins};
use crate::indexes::Indexes;
use crate::walk::{self, SkipReason, WalkItem};
use kebab_core::document::ChunkPolicy;
use kebab_core::ids;
use kebab_core::paths::{self, ReadRefusal};
use kebab_core::shard::Shard;
use kebab_plugin_host::registry::RegisteredPlugin;
use kebab_plugin_host::runtime::CallOutput;
use kebab_plugin_host::validate::{SourceShape, validate};
use kebab_store::{IndexedDoc, NewDocument, Root, Store, StoreError};

mod derived;
mod document;
mod embed_ahead;
pub mod external;
mod report;

pub use derived::{DerivedError, Timings, VectorReport};
pub use document::CHUNKER_KEY;
use document::build_document;
use embed_ahead::EmbedAhead;
use report::Report;
pub use report::{Counts, IngestItem, IngestReport, Progress, ProgressLine};

/// Bytes inspected for NUL when deciding a file is binary ([`binary_kind`]).
const BINARY_SNIFF: usize = 8192;

/// Ingest failures that stop the whole run (per-file problems never do).
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The writer lock could not be taken (or Ctrl-C while waiting for it).
    #[error(transparent)]
    Lock(#[from] kebab_store::writer_lock::LockError),
    #[error("cannot ingest {path}: {source}")]
    Path {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Neither a directory nor a regular file (a device, a FIFO, a socket).
    #[error("cannot ingest {path}: it is {kind}, not a directory or a regular file")]
    NotAFileOrDirectory { path: PathBuf, kind: &'static str },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Derived(#[from] DerivedError),
    #[error(transparent)]
    External(#[from] external::ExternalError),
}

/// What a worker made of one file.
enum Outcome {
    Skipped(SkipReason, String),
    Failed(String),
    Parsed(Box<Prepared>),
    /// Ctrl-C stopped the plugin call: nothing to record, the file is
    /// handled by the next run.
    Interrupted,
}

struct Prepared {
    doc: NewDocument,
    /// The images whose text OCR read for it.
    ocr: kebab_plugin_host::ocr::OcrUse,
    block_count: usize,
    warnings: Vec<String>,
    /// Same bytes as indexed: re-parsed for a new plugin version, policy or
    /// on request.
    reindex: bool,
    /// No plugin claims the file type; the text plugin indexed it.
    unclaimed: bool,
}

struct Job {
    /// The path as walked (recorded as the document's source).
    abs: PathBuf,
    /// The resolved path that is opened (without following links).
    real: PathBuf,
    rel: String,
}

/// Messages a worker may leave waiting for the main thread: parsing runs
/// ahead of storing by at most this many files per worker, so a run holds
/// a few parsed files, not every file parsed but not yet stored (parsing
/// outpaces SQLite's writes: an unbounded queue held ~5 GB of parsed
/// files on a 49 400-file run).
const QUEUED_PER_WORKER: usize = 2;

enum WorkerMsg {
    Started(usize, String),
    Done(usize, Outcome),
}

/// Everything a worker needs, shared read-only across threads.
struct Shared<'a> {
    /// The root the run's files belong to.
    root: &'a Root,
    plugins: &'a Plugins,
    limits: &'a kebab_plugin_host::config::PluginsConfig,
    policy: ChunkPolicy,
    /// Settings and policy hash of every registered plugin, by name.
    runs: HashMap<String, PluginRun>,
    indexed: &'a HashMap<String, IndexedDoc>,
    /// Re-parse even unchanged files.
    force: bool,
    /// Files above this size are refused even if they grew after the walk.
    max_file_bytes: u64,
    /// Send files no plugin claims to the text plugin.
    unknown_text: bool,
    git: crate::git::GitCache,
    /// Ctrl-C: no fallback is tried for a call it stopped.
    cancel: &'a AtomicBool,
}

/// Whether a document indexed as `existing` is parsed again when its file
/// (bytes unchanged) is routed to plugin `name` at `version`, whose
/// documents carry `policy_hash`: the one staleness rule, also used to
/// tell what a plugin install will re-index.
pub fn reparses(existing: &IndexedDoc, name: &str, version: &str, policy_hash: &str) -> bool {
    existing.plugin_name != name
        || existing.plugin_version != version
        || existing.policy_hash != policy_hash
}

/// What one plugin's calls in a run are given.
struct PluginRun {
    /// Its `[plugins.config.<name>]` settings.
    settings: Arc<kebab_core::document::Settings>,
    /// The policy hash its documents carry (chunk policy + settings).
    policy_hash: String,
}

impl Shared<'_> {
    /// The settings and policy hash of plugin `name` (every registered plugin
    /// has one).
    fn run_for(&self, name: &str) -> &PluginRun {
        &self.runs[name]
    }
}

/// Ingest `path` (directory or file) into the root that holds it — the
/// index's root whose directory contains it, else a new root for it (the
/// directory, or a file's directory; see [`App::root_for`]). Per-file
/// problems are recorded in the report; only storage failures abort.
/// `cancel` stops the run between files.
pub fn ingest(
    app: &mut App,
    plugins: &Plugins,
    indexes: &mut Indexes,
    path: &Path,
    shard: Option<Shard>,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<IngestReport, IngestError> {
    let start = ingestable(path)?;
    let run = Run {
        what: "kebab ingest",
        paths: std::slice::from_ref(&start),
        explicit: true,
        shard: shard.filter(|s| !s.is_whole()),
    };
    run.under_lock(
        app,
        plugins,
        indexes,
        |app| app.root_for(&start),
        cancel,
        on_progress,
    )
}

/// `path` resolved, when it is a directory or a regular file: a device
/// (`/dev/zero`), a FIFO or a socket is refused, so neither it nor the
/// directory holding it ever becomes a root.
fn ingestable(path: &Path) -> Result<PathBuf, IngestError> {
    let start = path.canonicalize().map_err(|source| IngestError::Path {
        path: path.to_path_buf(),
        source,
    })?;
    let meta = std::fs::metadata(&start).map_err(|source| IngestError::Path {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.is_dir() || meta.is_file() {
        return Ok(start);
    }
    Err(IngestError::NotAFileOrDirectory {
        path: path.to_path_buf(),
        kind: kebab_core::paths::file_kind(&meta.file_type()),
    })
}

/// Where `path` is indexed from: a file outside every root of the index
/// and of the config is kept in the data dir's `_external/`
/// ([`external`]) and indexed there — `Some(kept copy)`; anything else
/// (`None`) in place.
pub fn one_off(app: &App, path: &Path) -> Result<Option<PathBuf>, IngestError> {
    let start = ingestable(path)?;
    if !start.is_file()
        || app.store.root_containing(&start)?.is_some()
        || app
            .declared_roots()
            .iter()
            .any(|(dir, _, _)| start.starts_with(dir))
    {
        return Ok(None);
    }
    let max_bytes = app.config.indexing.max_file_bytes();
    let bytes = paths::read_regular_file(&start, max_bytes).map_err(|refusal| match refusal {
        ReadRefusal::TooLarge(_) => external::ExternalError::TooLarge {
            what: start.display().to_string(),
            max_bytes,
        },
        ReadRefusal::NotRegular(kind) => external::ExternalError::Read {
            what: start.display().to_string(),
            source: std::io::Error::other(format!("it is {kind}")),
        },
        ReadRefusal::Io(source) => external::ExternalError::Read {
            what: start.display().to_string(),
            source,
        },
        ReadRefusal::Outside(to) => external::ExternalError::Read {
            what: start.display().to_string(),
            source: std::io::Error::other(format!("it now leads to {to}")),
        },
    })?;
    let name = start.file_name().map(|n| n.to_string_lossy().into_owned());
    let kept = external::keep(
        &app.paths.data_dir.join(external::EXTERNAL_DIR),
        &bytes,
        name.as_deref(),
    )?;
    Ok(Some(kept))
}

/// Bring `paths` of the root `root` up to date: each that exists is walked
/// and its files indexed (unchanged ones skipped), and every document at or
/// under one of them whose file the walks did not see is removed — so a
/// path that no longer exists removes what was indexed there. What a
/// watcher applies after file-system events, through the same pipeline as
/// [`ingest`].
pub fn apply_changes(
    app: &mut App,
    plugins: &Plugins,
    indexes: &mut Indexes,
    root: &Root,
    paths: &[PathBuf],
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<IngestReport, IngestError> {
    let run = Run {
        what: "kebab watch",
        paths,
        explicit: false,
        shard: None,
    };
    run.under_lock(
        app,
        plugins,
        indexes,
        |_| Ok(root.clone()),
        cancel,
        on_progress,
    )
}

/// One run over some paths of one root, as [`ingest`] and
/// [`apply_changes`] make it.
struct Run<'a> {
    /// Who holds the writer lock (`kebab ingest`, `kebab watch`).
    what: &'a str,
    paths: &'a [PathBuf],
    /// The user named the paths (see [`sync_paths`]).
    explicit: bool,
    /// Only the files of this shard (`--shard I/N`); `None`: every file.
    shard: Option<Shard>,
}

impl Run<'_> {
    /// Take the writer lock, heal the derived indexes, find the root, sync
    /// the paths, conclude.
    fn under_lock(
        &self,
        app: &mut App,
        plugins: &Plugins,
        indexes: &mut Indexes,
        root: impl FnOnce(&mut App) -> Result<Root, StoreError>,
        cancel: &AtomicBool,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<IngestReport, IngestError> {
        let started = Instant::now();
        let _writer = take_writer_lock(app, self.what, cancel, on_progress)?;
        let healed = heal_derived(app, indexes)?;
        let root = root(app)?;
        let mut report = Report::default();
        report.warnings.extend(healed);
        let aborted = sync_paths(
            app,
            plugins,
            indexes,
            &root,
            self,
            &mut report,
            cancel,
            on_progress,
        )?;
        let scope = scope(&root, self, &app.config.workspace.exclude);
        conclude(app, indexes, report, scope, started, aborted, on_progress)
    }
}

/// The report's `scope`: the root, the paths brought up to date, the
/// excludes in force, and the shard (`"1/4"`) when the run took one.
fn scope(root: &Root, run: &Run<'_>, exclude: &[String]) -> Value {
    let shown: Vec<String> = run.paths.iter().map(|p| p.display().to_string()).collect();
    let mut scope = json!({
        "root": root.path.display().to_string(),
        "root_name": root.name,
        "path": if shown.len() == 1 { json!(shown[0]) } else { json!(shown) },
        "exclude": exclude.iter().chain(&root.exclude).collect::<Vec<_>>(),
    });
    if let Some(shard) = run.shard {
        scope["shard"] = json!(shard.to_string());
    }
    scope
}

/// Walk each of the run's paths that exists (inside `root`), index what
/// the walks found, and remove the root's documents at or under a path
/// that the walks did not see; a walk of the whole root records the root
/// as synced. `run.explicit`: the paths were named by the user, so a file
/// named is indexed even if an ignore rule matches it; otherwise (changes
/// a watcher saw) the rules apply to files too. With `run.shard`, only
/// that shard's files are indexed or removed, and the root is not marked
/// synced (the other shards' files were not looked at). Returns whether
/// the run was cancelled (nothing is removed then).
#[allow(clippy::too_many_arguments)]
fn sync_paths(
    app: &mut App,
    plugins: &Plugins,
    indexes: &Indexes,
    root: &Root,
    run: &Run<'_>,
    report: &mut Report,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<bool, IngestError> {
    let (starts, explicit) = (run.paths, run.explicit);
    let in_shard = |rel: &str| run.shard.is_none_or(|s| s.owns(rel));
    if !walk::is_intact_root(&root.path) {
        // Replaced by a link, or gone between the check and the run: its
        // documents stay until it is a directory of its own again.
        report.warnings.push(format!(
            "{} is no longer a directory of its own (gone, or replaced by a link): nothing \
             synced, its documents kept",
            root.path.display()
        ));
        return Ok(false);
    }
    let opts = app.walk_options(root)?;
    let shown = match starts {
        [one] => one.display().to_string(),
        many => format!("{} ({} paths)", root.path.display(), many.len()),
    };
    on_progress(&Progress::ScanStarted { root: shown });
    let mut walked = Vec::new();
    let mut ignored = Vec::new();
    // Changed files are taken only if a walk of their directory would take
    // them (ignore rules apply): each directory read once for all of them.
    let (files, dirs): (Vec<&PathBuf>, Vec<&PathBuf>) = starts
        .iter()
        .filter(|s| s.exists())
        .partition(|s| !explicit && !s.is_dir());
    let files: Vec<PathBuf> = files.into_iter().cloned().collect();
    walked.extend(walk::walk_files(&files, &root.path, &opts));
    for start in dirs {
        if !explicit && !walk::enters(start, &root.path, &opts) {
            // A changed directory an ignore rule leaves out: nothing of it
            // is indexed (what was, before the rule, is removed below).
            continue;
        }
        let items = walk::walk(start, &root.path, &opts);
        ignored.extend(walk::ignored(start, &root.path, &opts, &items));
        walked.extend(items);
    }
    walked.retain(|item| in_shard(item.rel()));
    ignored.retain(|(_, rel)| in_shard(rel));
    on_progress(&Progress::ScanCompleted {
        total: walked.len(),
    });
    for (reason, rel) in &ignored {
        report.ignore(rel, *reason);
    }
    let (jobs, seen) = jobs_from(walked, report);
    let indexed = app.store.indexed_docs(root.root_id)?;
    let aborted = run_jobs(
        app,
        plugins,
        indexes,
        root,
        &jobs,
        &indexed,
        false,
        report,
        cancel,
        on_progress,
    )?;
    if !aborted {
        let vanished: Vec<String> = indexed
            .iter()
            .filter(|(rel, doc)| {
                !seen.contains(*rel)
                    && in_shard(rel)
                    && starts.iter().any(|s| within(&doc.source_uri, s))
            })
            .map(|(rel, _)| rel.clone())
            .collect();
        app.store.remove_documents(root.root_id, &vanished)?;
        for rel in vanished {
            report.counts.removed += 1;
            report.items.push(IngestItem::bare("removed", &rel));
        }
        if starts.contains(&root.path) && run.shard.is_none() {
            app.store.mark_root_synced(root.root_id)?;
        }
    }
    Ok(aborted)
}

/// The files to parse from a walk, and every path the walk saw (files it
/// skipped or could not read included, so they are not taken for deleted);
/// skips and errors go to the report.
fn jobs_from(walked: Vec<WalkItem>, report: &mut Report) -> (Vec<Job>, HashSet<String>) {
    let mut seen: HashSet<String> = HashSet::new();
    let mut jobs = Vec::new();
    for item in walked {
        match item {
            WalkItem::File { abs, real, rel, .. } => {
                seen.insert(rel.clone());
                jobs.push(Job { abs, real, rel });
            }
            WalkItem::Skipped {
                rel,
                reason,
                detail,
            } => {
                seen.insert(rel.clone());
                report.skip(&rel, reason, &detail);
            }
            WalkItem::Error { rel, message } => {
                seen.insert(rel.clone());
                report.error(&rel, message);
            }
        }
    }
    (jobs, seen)
}

/// Re-parse every document the plugin `name` is responsible for, in every
/// root, whether or not anything changed (`kebab reindex --plugin NAME`).
pub fn reindex(
    app: &mut App,
    plugins: &Plugins,
    indexes: &mut Indexes,
    name: &str,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<IngestReport, IngestError> {
    let started = Instant::now();
    let _writer = take_writer_lock(app, "kebab reindex", cancel, on_progress)?;
    let healed = heal_derived(app, indexes)?;
    let mut report = Report::default();
    report.warnings.extend(healed);
    let mut aborted = false;
    for root in app.store.roots()? {
        let indexed = app.store.indexed_docs(root.root_id)?;
        let mut jobs: Vec<Job> = indexed
            .iter()
            .filter(|(_, doc)| doc.plugin_name == name)
            .map(|(rel, doc)| {
                let abs = paths::unescape_path(&doc.source_uri);
                Job {
                    real: abs.canonicalize().unwrap_or_else(|_| abs.clone()),
                    abs,
                    rel: rel.clone(),
                }
            })
            .collect();
        if jobs.is_empty() {
            continue;
        }
        jobs.sort_by(|a, b| a.rel.cmp(&b.rel));
        on_progress(&Progress::ScanStarted {
            root: format!("plugin:{name} in {}", root.name),
        });
        on_progress(&Progress::ScanCompleted { total: jobs.len() });
        aborted = run_jobs(
            app,
            plugins,
            indexes,
            &root,
            &jobs,
            &indexed,
            true,
            &mut report,
            cancel,
            on_progress,
        )?;
        if aborted {
            break;
        }
    }
    conclude(
        app,
        indexes,
        report,
        json!({ "plugin": name }),
        started,
        aborted,
        on_progress,
    )
}

/// The index's writer lock, waiting (and saying so) while another process
/// holds it.
fn take_writer_lock(
    app: &App,
    what: &str,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<kebab_store::writer_lock::WriterLock, IngestError> {
    Ok(kebab_store::writer_lock::WriterLock::acquire(
        &app.paths.data_dir,
        what,
        cancel,
        &mut |holder| {
            on_progress(&Progress::WaitingForWriter {
                holder: holder.to_string(),
                pid: holder.pid,
            })
        },
    )?)
}

/// Before a writer (holding the writer lock) writes anything: derived
/// indexes that were dropped or damaged are rebuilt — the full-text table
/// from the chunks, the lexical change log (the lexical index then rebuilt
/// at the run's end), a damaged vector table empty for the vector pass to
/// fill again. What was rebuilt, for the report's warnings.
fn heal_derived(app: &mut App, indexes: &mut Indexes) -> Result<Vec<String>, IngestError> {
    indexes.repair_vectors();
    // The log first: the full-text rebuild logs every chunk into it.
    let log = app.store.heal_lexical_log()?;
    let full_text = app.store.heal_full_text()?;
    Ok(log.into_iter().chain(full_text).collect())
}

/// Bring the lexical index up to date with the chunks stored so far: in
/// the middle of the run, or at its end. Search answers from FTS5 while
/// the index cannot answer, so a failure here is a warning: the next
/// application tries again.
fn apply_lexical(app: &mut App, report: &mut Report, mid_run: bool) {
    let synced = match mid_run {
        true => app.store.sync_lexical_mid_run(),
        false => app.store.sync_lexical(),
    };
    match synced {
        Ok(lexical) => {
            report.timings.lexical_ms += lexical.ms;
            if let Some(reason) = lexical.rebuilt {
                report.warnings.push(format!(
                    "lexical index rebuilt from the chunks ({reason}): {} chunks",
                    lexical.chunks
                ));
            }
        }
        Err(e) => report.warnings.push(format!(
            "the lexical index was not brought up to date ({e}); search answers from the \
             full-text table until the next run"
        )),
    }
}

/// Derived indexes, the final progress event, the report, and its
/// `ingest_runs` row.
fn conclude(
    app: &mut App,
    indexes: &Indexes,
    mut report: Report,
    scope: Value,
    started: Instant,
    aborted: bool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<IngestReport, IngestError> {
    report.warnings.extend(indexes.warnings.iter().cloned());
    // Another analyser (a dictionary installed, new rules) analyses every
    // chunk again. Each chunk whose words change is logged for the lexical
    // index again: a long backfill brings it up to date as a long run of
    // writes does.
    if app.store.adopt_analyzer(&indexes.cjk.version())? {
        tracing::info!(version = %indexes.cjk.version(), "analysing every chunk's CJK words");
    }
    let every = kebab_store::LEXICAL_APPLY_EVERY;
    loop {
        let backfill =
            derived::backfill_cjk(&mut app.store, &indexes.cjk, &mut report.timings, every)?;
        report.korean_analyzed += backfill.done;
        if let Some(why) = backfill.stopped {
            report.warnings.push(why);
            break;
        }
        if backfill.done < every {
            break;
        }
        apply_lexical(app, &mut report, true);
    }
    apply_lexical(app, &mut report, false);
    if let Some((embedder, vectors)) = &indexes.vectors {
        let ann_min_rows = app.config.search.ann_min_rows;
        let ahead = report.vectors.take();
        report.vectors = Some(derived::sync_vectors(
            &mut app.store,
            embedder,
            vectors,
            ann_min_rows,
            ahead,
            &mut report.timings,
            on_progress,
        )?);
    }
    report.counts.embeddings_indexed = report
        .vectors
        .as_ref()
        .map_or(0, |v| v.embedded + v.from_cache);
    let counts = report.counts.clone();
    tracing::info!(
        scanned = counts.scanned,
        new = counts.new,
        updated = counts.updated,
        errors = counts.errors,
        aborted,
        "ingest finished"
    );
    on_progress(&if aborted {
        Progress::Aborted { counts }
    } else {
        Progress::Completed { counts }
    });
    let final_report = report.finish(scope, started.elapsed().as_millis(), aborted);
    let run_id = ids::id_from(
        &json!({ "kind": "ingest_run", "at": kebab_core::clock::now_rfc3339(), "scope": final_report.scope }),
    );
    let as_json = serde_json::to_value(&final_report).unwrap_or(Value::Null);
    app.store
        .record_ingest_run(&run_id, &as_json, &kebab_core::clock::now_rfc3339())?;
    Ok(final_report)
}

/// Parse `jobs` on worker threads and store the results on this one, one
/// transaction per document, while the stored chunks are embedded on one
/// more thread (see [`embed_ahead`]). `force` re-parses unchanged files.
/// Returns whether the run was cancelled.
#[allow(clippy::too_many_arguments)]
fn run_jobs(
    app: &mut App,
    plugins: &Plugins,
    indexes: &Indexes,
    root: &Root,
    jobs: &[Job],
    indexed: &HashMap<String, IndexedDoc>,
    force: bool,
    report: &mut Report,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<bool, IngestError> {
    let policy = app.config.chunk_policy();
    let plugin_config = app.config.plugins.clone();
    let runs = plugin_runs(&app.config, plugins);
    let shared = Shared {
        root,
        plugins,
        limits: &plugin_config,
        policy,
        runs,
        indexed,
        force,
        max_file_bytes: app.config.indexing.max_file_bytes(),
        unknown_text: app.config.indexing.index_unknown_text,
        git: Default::default(),
        cancel,
    };
    let total = jobs.len();
    let workers = app
        .config
        .indexing
        .max_parallel_extractors
        .clamp(1, 64)
        .min(total.max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::sync_channel::<WorkerMsg>(workers * QUEUED_PER_WORKER);
    let started = Instant::now();
    let on_main = |t: &derived::Timings| t.store_ms + t.vector_store_ms + t.lexical_ms;
    let on_main_before = on_main(&report.timings);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, shared) = (&next, &shared);
            scope.spawn(move || work(jobs, next, shared, &tx));
        }
        drop(tx);
        let mut ahead = indexes
            .vectors
            .as_ref()
            .map(|(embedder, vectors)| EmbedAhead::start(scope, embedder, vectors, cancel));
        // Chunks stored since the lexical index was last brought up to
        // date: on a long run it is, every so often, so that readers keep
        // searching it (they hold the changes it lacks in memory).
        let mut unapplied = 0;
        for msg in rx {
            match msg {
                WorkerMsg::Started(i, plugin) => on_progress(&Progress::AssetStarted {
                    idx: i + 1,
                    total,
                    path: jobs[i].rel.clone(),
                    plugin,
                }),
                WorkerMsg::Done(_, Outcome::Interrupted) => {}
                WorkerMsg::Done(i, outcome) => {
                    let rel = &jobs[i].rel;
                    let stored = store_outcome(&mut app.store, report, rel, outcome)?;
                    unapplied += stored.chunks;
                    if unapplied >= kebab_store::LEXICAL_APPLY_EVERY {
                        apply_lexical(app, report, true);
                        unapplied = 0;
                    }
                    on_progress(&Progress::AssetFinished {
                        idx: i + 1,
                        total,
                        path: rel.clone(),
                        result: stored.result,
                        chunks: stored.chunks,
                    });
                    if let Some(ahead) = &mut ahead {
                        // A file stored again with the same bytes may keep
                        // chunk ids that have rows: the vector pass sorts
                        // those out.
                        if let Some(prepared) = stored.prepared.filter(|p| !p.reindex) {
                            ahead.offer(&prepared.doc);
                        }
                        ahead.pump(&mut app.store, &mut report.timings, on_progress)?;
                    }
                }
            }
        }
        // Parsing is over: the wall clock so far less this thread's
        // writes. Waiting for the model thread below is embedding time.
        let on_main = on_main(&report.timings) - on_main_before;
        report.timings.parse_ms += (derived::elapsed_ms(started) - on_main).max(0.0);
        if let Some(ahead) = ahead {
            report.vectors =
                Some(ahead.finish(&mut app.store, &mut report.timings, on_progress)?);
        }
        Ok::<(), IngestError>(())
    })?;
    Ok(cancel.load(Ordering::Relaxed))
}

/// What [`store_outcome`] did with one file.
struct Stored {
    /// The result label of the file's progress event.
    result: &'static str,
    /// Chunks stored.
    chunks: usize,
    /// The document, when it was written.
    prepared: Option<Box<Prepared>>,
}

/// Write a parsed document to the index (one transaction) and record in
/// the report what happened to the file. A write that fails for this
/// document alone is the file's error and the run goes on.
fn store_outcome(
    store: &mut Store,
    report: &mut Report,
    rel: &str,
    outcome: Outcome,
) -> Result<Stored, IngestError> {
    let not_written = |result| {
        Ok(Stored {
            result,
            chunks: 0,
            prepared: None,
        })
    };
    let prepared = match outcome {
        Outcome::Skipped(reason, detail) => {
            report.skip(rel, reason, &detail);
            return not_written("skipped");
        }
        Outcome::Failed(message) => {
            report.error(rel, message);
            return not_written("error");
        }
        Outcome::Interrupted => return not_written("interrupted"),
        Outcome::Parsed(prepared) => prepared,
    };
    let started = Instant::now();
    let written = store.replace_document(&prepared.doc);
    report.timings.store_ms += derived::elapsed_ms(started);
    match written {
        Ok(outcome) => {
            let (result, chunks) = report.stored(rel, &prepared, outcome);
            Ok(Stored {
                result,
                chunks,
                prepared: Some(prepared),
            })
        }
        Err(e) if e.is_per_document() => {
            report.error(rel, format!("not stored: {e}"));
            not_written("error")
        }
        Err(e) => Err(e.into()),
    }
}

/// The settings and policy hash of every registered plugin, by name.
fn plugin_runs(config: &crate::config::Config, plugins: &Plugins) -> HashMap<String, PluginRun> {
    plugins
        .registry
        .plugins()
        .iter()
        .map(|p| {
            let run = PluginRun {
                settings: Arc::new(config.plugins.settings_for(p.name())),
                policy_hash: config.policy_hash_for(p.name()),
            };
            (p.name().to_string(), run)
        })
        .collect()
}

/// One worker: take the next job until none is left, Ctrl-C, or the
/// receiver is gone; report each start and outcome.
fn work(jobs: &[Job], next: &AtomicUsize, shared: &Shared<'_>, tx: &mpsc::SyncSender<WorkerMsg>) {
    while !shared.cancel.load(Ordering::Relaxed) {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = jobs.get(i) else { break };
        let plugin = shared.plugins.registry.route(&job.rel);
        let plugin = plugin.map(|p| (p, false)).or_else(|| {
            shared
                .unknown_text
                .then(|| (shared.plugins.registry.fallback(), true))
        });
        let name = plugin.map_or("-", |(p, _)| p.name()).to_string();
        if tx.send(WorkerMsg::Started(i, name)).is_err() {
            break;
        }
        let outcome = process(job, plugin, shared);
        if tx.send(WorkerMsg::Done(i, outcome)).is_err() {
            break;
        }
    }
}

/// Whether `source_uri` lies at or under `start`.
fn within(source_uri: &str, start: &Path) -> bool {
    let uri = paths::unescape_path(source_uri);
    uri == start || uri.starts_with(start)
}

/// Everything that happens to one file off the main thread. `plugin` is
/// the one the file routes to, with whether it was taken for want of any
/// (the text plugin for an unclaimed file type).
fn process(job: &Job, plugin: Option<(&RegisteredPlugin, bool)>, shared: &Shared<'_>) -> Outcome {
    let Some((plugin, unclaimed)) = plugin else {
        return Outcome::Skipped(
            SkipReason::Unsupported,
            "no plugin handles this file type".into(),
        );
    };
    let bytes = match read(job, shared) {
        Ok(bytes) => bytes,
        Err(outcome) => return outcome,
    };
    if bytes.is_empty() {
        return Outcome::Skipped(SkipReason::Empty, "0 bytes".into());
    }
    let binary = binary_kind(&bytes);
    if shared.plugins.registry.skips_generated(plugin) && has_generated_marker(&bytes) {
        return Outcome::Skipped(SkipReason::Generated, "marked as generated".into());
    }
    if let Some(kind) = binary.filter(|_| !plugin.plugin.info.accepts_binary) {
        return Outcome::Skipped(SkipReason::Binary, format!("binary content ({kind})"));
    }
    if is_blank(&bytes) {
        return Outcome::Skipped(
            SkipReason::Blank,
            "only whitespace: 0 chunks, nothing to index".into(),
        );
    }
    let binary = binary.is_some();
    let checksum = ids::checksum(&bytes);
    let source_uri = paths::escape_path(&job.abs);
    let info = &plugin.plugin.info;
    let version = plugin.plugin.version.to_string();
    let existing = shared.indexed.get(&job.rel);
    let same_bytes = existing.is_some_and(|e| e.checksum == checksum && e.source_uri == source_uri);
    if let Some(existing) = existing
        && !shared.force
        && same_bytes
        && !reparses(
            existing,
            &info.name,
            &version,
            &shared.run_for(&info.name).policy_hash,
        )
    {
        return Outcome::Skipped(SkipReason::Unchanged, String::new());
    }

    let mut warnings = Vec::new();
    let (producer, output, fallback) =
        match parse_with_fallback(plugin, job, &bytes, binary, shared) {
            Ok(parsed) => parsed,
            Err(outcome) => return outcome,
        };
    if let Some(reason) = &fallback {
        warnings.push(format!("{reason}; indexed by the text plugin"));
    }
    warnings.extend(output.logs.iter().map(|l| format!("plugin log: {l}")));
    warnings.extend(output.attachments_refused.iter().cloned());
    if output.logs_dropped > 0 {
        warnings.push(format!(
            "{} more plugin log lines dropped",
            output.logs_dropped
        ));
    }
    let block_count = output.document.blocks.len();
    let ocr = output.ocr;
    let (doc, doc_warnings) = build_document(
        job,
        plugin,
        producer,
        output,
        checksum,
        bytes.len() as u64,
        fallback,
        shared,
    );
    warnings.extend(doc_warnings);
    Outcome::Parsed(Box::new(Prepared {
        reindex: same_bytes,
        unclaimed,
        block_count,
        doc,
        ocr,
        warnings,
    }))
}

/// The file's bytes, or the outcome that says why they are not read (it
/// changed since the walk, or cannot be read).
fn read(job: &Job, shared: &Shared<'_>) -> Result<Vec<u8>, Outcome> {
    match paths::read_regular_file_within(&job.real, &shared.root.path, shared.max_file_bytes) {
        Ok(b) => Ok(b),
        Err(ReadRefusal::NotRegular(now)) => Err(Outcome::Skipped(
            SkipReason::NotRegularFile,
            format!("became a {now} after the walk"),
        )),
        Err(ReadRefusal::TooLarge(size)) => Err(Outcome::Skipped(
            SkipReason::SizeExceeded,
            format!(
                "grew to {} after the walk, over the {} cap",
                walk::human_bytes(size),
                walk::human_bytes(shared.max_file_bytes)
            ),
        )),
        Err(ReadRefusal::Io(e)) => Err(Outcome::Failed(format!("cannot read: {e}"))),
        Err(ReadRefusal::Outside(to)) => Err(Outcome::Skipped(
            SkipReason::SymlinkOutsideRoot,
            format!("a directory on its path became a link to {to}, outside the root"),
        )),
    }
}

/// Run the routed plugin, and the text plugin when it fails (not for
/// binary files, nor when the routed plugin is the text plugin): the
/// plugin that produced the output, the output, and why the fallback was
/// needed. A binary file its plugin cannot read at all (`unsupported`: an
/// encrypted or legacy format) is skipped with the plugin's reason, not
/// counted as bad input.
fn parse_with_fallback<'p>(
    plugin: &'p RegisteredPlugin,
    job: &Job,
    bytes: &[u8],
    binary: bool,
    shared: &Shared<'p>,
) -> Result<(&'p RegisteredPlugin, CallOutput, Option<String>), Outcome> {
    let interrupted = || shared.cancel.load(Ordering::Relaxed);
    match run_plugin(plugin, &job.rel, bytes, shared, 0) {
        Ok(out) => Ok((plugin, out, None)),
        Err(_) if interrupted() => Err(Outcome::Interrupted),
        Err(failure) => {
            let text = shared.plugins.registry.fallback();
            let reason = format!("{} plugin {}", plugin.name(), failure.message);
            if binary && failure.unsupported {
                return Err(Outcome::Skipped(SkipReason::Unsupported, reason));
            }
            if std::ptr::eq(text, plugin) || binary {
                return Err(Outcome::Failed(reason));
            }
            match run_plugin(text, &job.rel, bytes, shared, 0) {
                Ok(out) => Ok((text, out, Some(reason))),
                Err(_) if interrupted() => Err(Outcome::Interrupted),
                Err(fallback_err) => Err(Outcome::Failed(format!(
                    "{reason}; text fallback {}",
                    fallback_err.message
                ))),
            }
        }
    }
}

/// Why `bytes` are binary, when they are: a NUL byte among the first
/// [`BINARY_SNIFF`], or a format that carries binary data behind a text
/// header the NUL sniff can miss (an Adobe Illustrator `.ai` file opens
/// with tens of kilobytes of XML metadata): PDF (modern `.ai` files are
/// PDF), a DOS EPS preview header, or PostScript (`%!`: older `.ai`,
/// `.eps`, `.ps`) that is not UTF-8 text. PostScript that is plain text
/// stays text.
pub fn binary_kind(bytes: &[u8]) -> Option<&'static str> {
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        Some("NUL bytes")
    } else if bytes.starts_with(b"%PDF-") {
        Some("PDF data")
    } else if bytes.starts_with(&[0xC5, 0xD0, 0xD3, 0xC6]) {
        Some("EPS preview")
    } else if bytes.starts_with(b"%!") && std::str::from_utf8(bytes).is_err() {
        Some("PostScript with binary data")
    } else {
        None
    }
}

/// Whether `bytes` are UTF-8 text of nothing but whitespace (byte-order
/// marks included): a file without a chunk to make.
pub fn is_blank(bytes: &[u8]) -> bool {
    // A visible ASCII character settles it without decoding the file.
    !bytes.iter().any(|b| b.is_ascii_graphic())
        && std::str::from_utf8(bytes)
            .is_ok_and(|text| text.chars().all(|c| c.is_whitespace() || c == '\u{FEFF}'))
}

/// Whether the head of a source file carries an established marker that a
/// machine wrote it: `@generated` (Facebook/Rust tooling) or `DO NOT EDIT`
/// (Go's `Code generated by … DO NOT EDIT.`, protoc, bindgen). A comment
/// that merely mentions generation ("autogenerated by sphinx-quickstart")
/// is a file people edit.
pub fn has_generated_marker(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]);
    ["@generated", "DO NOT EDIT"]
        .iter()
        .any(|m| head.contains(m))
}

/// Why a plugin's output for a file was not taken.
struct RunFailure {
    /// The plugin said it cannot read such a file (`unsupported`).
    unsupported: bool,
    message: String,
}

impl RunFailure {
    fn new(message: impl Into<String>) -> RunFailure {
        RunFailure {
            unsupported: false,
            message: message.into(),
        }
    }
}

/// How deeply attachments are read: an e-mail attached to an e-mail
/// attached to an e-mail is as far as it goes.
const MAX_ATTACHMENT_DEPTH: usize = 3;

/// Run one plugin on the file `path`'s `bytes` and validate what it
/// returns, with the attachments it handed over read by their own plugins
/// and placed into its document ([`kebab_plugin_host::attach`]); zero
/// chunks count as failure. `depth`: how many files hold this one.
fn run_plugin(
    plugin: &RegisteredPlugin,
    path: &str,
    bytes: &[u8],
    shared: &Shared<'_>,
    depth: usize,
) -> Result<CallOutput, RunFailure> {
    let mut output = shared
        .plugins
        .runtime
        .parse_and_chunk(
            &plugin.plugin,
            &shared.limits.limits_for(plugin.name()),
            &shared.run_for(plugin.name()).settings,
            path,
            bytes,
            shared.policy,
        )
        .map_err(|e| RunFailure {
            unsupported: matches!(
                e,
                kebab_plugin_host::runtime::CallError::Plugin(
                    kebab_plugin_host::PluginError::Unsupported(_)
                )
            ),
            message: e.to_string(),
        })?;
    let limits = shared.limits.output_limits_for(plugin.name());
    let shape = SourceShape::of(bytes);
    validate(&output.document, &output.chunks, shape, &limits)
        .map_err(|e| RunFailure::new(e.to_string()))?;
    read_attachments(&mut output, shape, shared, depth, &limits);
    if output.chunks.is_empty() {
        return Err(RunFailure::new("produced no chunks"));
    }
    Ok(output)
}

/// Read each attachment `output`'s plugin handed over with the plugin that
/// claims its name (the text plugin for unclaimed text, as for files), and
/// place what it gives into `output`'s document (of a file of `shape`);
/// one that cannot be read, or that takes the document past `limits`, is
/// named among `attachments_refused` and left out.
fn read_attachments(
    output: &mut CallOutput,
    shape: SourceShape,
    shared: &Shared<'_>,
    depth: usize,
    limits: &kebab_plugin_host::validate::OutputLimits,
) {
    for attachment in std::mem::take(&mut output.attachments) {
        let name = kebab_core::sanitize::escape_control(&attachment.name).into_owned();
        if depth + 1 >= MAX_ATTACHMENT_DEPTH {
            output.attachments_refused.push(format!(
                "attachment {name} not read: attachments nest deeper than {MAX_ATTACHMENT_DEPTH}"
            ));
            continue;
        }
        let read = read_attachment(&attachment, shared, depth + 1).and_then(|child| {
            let mut document = output.document.clone();
            let mut chunks = output.chunks.clone();
            kebab_plugin_host::attach::merge(
                &mut document,
                &mut chunks,
                &attachment,
                child.document,
                child.chunks,
            );
            // The attachment's spans were checked against its own bytes;
            // this checks the whole against the holder's bounds.
            validate(&document, &chunks, shape, limits)
                .map_err(|e| RunFailure::new(e.to_string()))?;
            output.attachments_refused.extend(child.attachments_refused);
            output.ocr += child.ocr;
            Ok((document, chunks))
        });
        match read {
            Ok((document, chunks)) => {
                output.document = document;
                output.chunks = chunks;
            }
            Err(failure) => output.attachments_refused.push(format!(
                "attachment {name} not indexed: {}",
                failure.message
            )),
        }
    }
}

/// The document and chunks of one attachment, read by the plugin that
/// claims its name.
fn read_attachment(
    attachment: &kebab_plugin_host::attach::Attachment,
    shared: &Shared<'_>,
    depth: usize,
) -> Result<CallOutput, RunFailure> {
    let bytes = &attachment.bytes;
    if is_blank(bytes) {
        return Err(RunFailure::new("it is empty"));
    }
    let binary = binary_kind(bytes);
    let routed = shared.plugins.registry.route(&attachment.name);
    let plugin = match routed {
        Some(p) => p,
        None if shared.unknown_text && binary.is_none() => shared.plugins.registry.fallback(),
        None => return Err(RunFailure::new("no plugin reads files of its kind")),
    };
    if let Some(kind) = binary.filter(|_| !plugin.plugin.info.accepts_binary) {
        return Err(RunFailure::new(format!("binary content ({kind})")));
    }
    match run_plugin(plugin, &attachment.name, bytes, shared, depth) {
        Ok(out) => Ok(out),
        Err(failure) if binary.is_some() || routed.is_none() => Err(failure),
        Err(_) => run_plugin(
            shared.plugins.registry.fallback(),
            &attachment.name,
            bytes,
            shared,
            depth,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_matches_the_start_and_below_only() {
        let start = Path::new("/kb/notes");
        assert!(within("/kb/notes/a.md", start));
        assert!(within("/kb/notes", start));
        assert!(!within("/kb/notes2/a.md", start));
    }

    #[test]
    fn binary_formats_behind_a_text_header_are_binary() {
        let mut ai = b"%PDF-1.6\n%\xe2\xe3\xcf\xd3\n".to_vec();
        ai.extend(b"<x:xmpmeta>".repeat(2000));
        assert_eq!(binary_kind(&ai), Some("PDF data"));
        let mut ps = b"%!PS-Adobe-3.0\n%%Creator: Adobe Illustrator(R) 8.0\n".to_vec();
        ps.extend(b"%%BeginData\n".repeat(1000));
        ps.extend([0xff, 0xd8, 0x80, 0x81]);
        assert_eq!(binary_kind(&ps), Some("PostScript with binary data"));
        assert_eq!(
            binary_kind(&[0xC5, 0xD0, 0xD3, 0xC6, 30, 0, 0, 0]),
            Some("NUL bytes")
        );
        assert_eq!(
            binary_kind(&[0xC5, 0xD0, 0xD3, 0xC6, 30, 1, 1, 1]),
            Some("EPS preview")
        );
        assert_eq!(binary_kind(b"a\0b"), Some("NUL bytes"));
        for text in [
            &b"%!PS-Adobe-3.0\n/Times findfont 12 scalefont setfont\n"[..],
            b"# Caf\xc3\xa9\n",
            b"Caf\xe9 latin-1 text",
            b"100% done\n",
        ] {
            assert_eq!(binary_kind(text), None, "{text:?}");
        }
    }

    #[test]
    fn only_whitespace_is_blank() {
        for blank in [
            &b" "[..],
            b"\n\n\t \r\n",
            b"\xef\xbb\xbf\n",
            "\u{3000}\n".as_bytes(),
        ] {
            assert!(is_blank(blank), "{blank:?}");
        }
        for not in [&b"x"[..], b"  .\n", b"\xa0\xa0"] {
            assert!(!is_blank(not), "{not:?}");
        }
    }

    #[test]
    fn only_established_markers_mean_generated() {
        for marked in [
            "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n",
            "// @generated by build.rs\nfn f() {}\n",
        ] {
            assert!(has_generated_marker(marked.as_bytes()), "{marked}");
        }
        for edited in [
            "# Configuration file, autogenerated by sphinx-quickstart\nproject = 'x'\n",
            "# Code generated by hand, then edited\nx = 1\n",
        ] {
            assert!(!has_generated_marker(edited.as_bytes()), "{edited}");
        }
    }
}
