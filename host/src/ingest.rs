//! The ingest pipeline: walk → route → skip unchanged → sandboxed parse and
//! chunk (in parallel) → validate (text-plugin fallback on any failure) →
//! IDs → one SQLite transaction per document → remove vanished files →
//! report.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::app::{App, Plugins};
use crate::ids;
use crate::plugin::registry::RegisteredPlugin;
use crate::plugin::runtime::CallOutput;
use crate::plugin::validate::{SourceShape, validate};
use crate::plugin::{ChunkPolicy, block_kind_name, span_json};
use crate::store::{IndexedDoc, NewBlock, NewChunk, NewDocument, StoreError, WriteOutcome};
use crate::walk::{self, SkipReason, WalkItem, WalkOptions};

/// Document metadata key by which a plugin names the chunker it used when
/// it has several (the code plugin: one per language).
pub const CHUNKER_KEY: &str = "kebab:chunker-version";

/// Bytes inspected for NUL when deciding a file is binary.
const BINARY_SNIFF: usize = 8192;
/// Examples kept per skip reason in the report.
const SKIP_EXAMPLES: usize = 5;

/// Ingest failures that stop the whole run (per-file problems never do).
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("cannot ingest {path}: {source}")]
    Path {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// `ingest_progress.v1` events.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Progress {
    ScanStarted {
        root: String,
    },
    ScanCompleted {
        total: usize,
    },
    AssetStarted {
        idx: usize,
        total: usize,
        path: String,
        plugin: String,
    },
    AssetFinished {
        idx: usize,
        total: usize,
        path: String,
        result: &'static str,
        chunks: usize,
    },
    Completed {
        counts: Counts,
    },
    Aborted {
        counts: Counts,
    },
}

/// Running totals.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    pub scanned: usize,
    pub new: usize,
    pub updated: usize,
    /// Unchanged files re-parsed (plugin upgrade, policy change, reindex).
    pub reindexed: usize,
    pub skipped: usize,
    pub errors: usize,
    pub removed: usize,
    pub fallbacks: usize,
    pub chunks_indexed: usize,
}

/// One file's line in the report.
#[derive(Debug, Clone, Serialize)]
pub struct IngestItem {
    /// `new`, `updated`, `reindexed`, `skipped`, `error` or `removed`.
    pub kind: &'static str,
    pub doc_path: String,
    pub doc_id: Option<String>,
    pub asset_id: Option<String>,
    pub byte_len: Option<u64>,
    pub block_count: Option<usize>,
    pub chunk_count: Option<usize>,
    pub plugin: Option<String>,
    pub plugin_version: Option<String>,
    pub parser_version: Option<String>,
    pub chunker_version: Option<String>,
    /// Skip reason (`unchanged`, `binary`, …).
    pub reason: Option<&'static str>,
    /// Why the text plugin stood in, when it did.
    pub fallback: Option<String>,
    pub warnings: Vec<String>,
    pub error: Option<String>,
}

impl IngestItem {
    fn bare(kind: &'static str, doc_path: &str) -> IngestItem {
        IngestItem {
            kind,
            doc_path: doc_path.to_string(),
            doc_id: None,
            asset_id: None,
            byte_len: None,
            block_count: None,
            chunk_count: None,
            plugin: None,
            plugin_version: None,
            parser_version: None,
            chunker_version: None,
            reason: None,
            fallback: None,
            warnings: Vec::new(),
            error: None,
        }
    }
}

/// `ingest_report.v1`.
#[derive(Debug, Clone, Serialize)]
pub struct IngestReport {
    pub schema_version: &'static str,
    pub scope: Value,
    pub scanned: usize,
    pub new: usize,
    pub updated: usize,
    pub reindexed: usize,
    pub skipped: usize,
    pub errors: usize,
    pub removed: usize,
    pub fallbacks: usize,
    pub duration_ms: u128,
    pub aborted: bool,
    pub skipped_builtin_blacklist: usize,
    pub skipped_size_exceeded: usize,
    pub skipped_empty: usize,
    pub skipped_binary: usize,
    pub skipped_unsupported: usize,
    pub skipped_unchanged: usize,
    pub skipped_orphaned: usize,
    pub skipped_generated: usize,
    pub skip_examples: BTreeMap<&'static str, Vec<String>>,
    pub items: Vec<IngestItem>,
}

impl IngestReport {
    /// Whether anything points at bad input (errors, binary/empty/oversized
    /// files): what `--strict` turns into a failure.
    pub fn has_bad_input(&self) -> bool {
        self.errors > 0 || self.skipped_size_exceeded + self.skipped_empty + self.skipped_binary > 0
    }
}

/// What a worker made of one file.
enum Outcome {
    Skipped(SkipReason, String),
    Failed(String),
    Parsed(Box<Prepared>),
}

struct Prepared {
    doc: NewDocument,
    block_count: usize,
    warnings: Vec<String>,
    /// Same bytes as indexed: re-parsed for a new plugin version, policy or
    /// on request.
    reindex: bool,
}

struct Job {
    abs: PathBuf,
    rel: String,
}

enum WorkerMsg {
    Started(usize, String),
    Done(usize, Outcome),
}

/// Everything a worker needs, shared read-only across threads.
struct Shared<'a> {
    plugins: &'a Plugins,
    limits: &'a crate::config::PluginsConfig,
    policy: ChunkPolicy,
    policy_hash: String,
    indexed: &'a HashMap<String, IndexedDoc>,
    /// Re-parse even unchanged files.
    force: bool,
    git: crate::git::GitCache,
}

/// Ingest `path` (directory or file). Per-file problems are recorded in the
/// report; only storage failures abort. `cancel` stops the run between files.
pub fn ingest(
    app: &mut App,
    plugins: &Plugins,
    path: &Path,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<IngestReport, IngestError> {
    let started = Instant::now();
    let start = path.canonicalize().map_err(|source| IngestError::Path {
        path: path.to_path_buf(),
        source,
    })?;
    let root = app.workspace_root(&start);
    on_progress(&Progress::ScanStarted {
        root: start.display().to_string(),
    });
    let opts = WalkOptions {
        max_file_bytes: app.config.indexing.max_file_mb * 1_000_000,
        exclude: app.config.workspace.exclude.clone(),
    };
    let walked = walk::walk(&start, &root, &opts);
    on_progress(&Progress::ScanCompleted {
        total: walked.len(),
    });

    let mut report = Report::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut jobs = Vec::new();
    for item in walked {
        match item {
            WalkItem::File { abs, rel, .. } => {
                seen.insert(rel.clone());
                jobs.push(Job { abs, rel });
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
    let indexed = app.store.indexed_docs()?;
    let aborted = run_jobs(
        app,
        plugins,
        &jobs,
        &indexed,
        false,
        &mut report,
        cancel,
        on_progress,
    )?;
    if !aborted {
        let vanished: Vec<String> = indexed
            .iter()
            .filter(|(rel, doc)| !seen.contains(*rel) && within(&doc.source_uri, &start))
            .map(|(rel, _)| rel.clone())
            .collect();
        app.store.remove_documents(&vanished)?;
        for rel in vanished {
            report.counts.removed += 1;
            report.items.push(IngestItem::bare("removed", &rel));
        }
    }
    let scope = json!({
        "root": root.display().to_string(),
        "path": start.display().to_string(),
        "exclude": app.config.workspace.exclude,
    });
    conclude(app, report, scope, started, aborted, on_progress)
}

/// Re-parse every document the plugin `name` is responsible for, whether or
/// not anything changed (`kebab reindex --plugin NAME`).
pub fn reindex(
    app: &mut App,
    plugins: &Plugins,
    name: &str,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<IngestReport, IngestError> {
    let started = Instant::now();
    let indexed = app.store.indexed_docs()?;
    let mut jobs: Vec<Job> = indexed
        .iter()
        .filter(|(_, doc)| doc.plugin_name == name)
        .map(|(rel, doc)| Job {
            abs: PathBuf::from(&doc.source_uri),
            rel: rel.clone(),
        })
        .collect();
    jobs.sort_by(|a, b| a.rel.cmp(&b.rel));
    on_progress(&Progress::ScanStarted {
        root: format!("plugin:{name}"),
    });
    on_progress(&Progress::ScanCompleted { total: jobs.len() });
    let mut report = Report::default();
    let aborted = run_jobs(
        app,
        plugins,
        &jobs,
        &indexed,
        true,
        &mut report,
        cancel,
        on_progress,
    )?;
    conclude(
        app,
        report,
        json!({ "plugin": name }),
        started,
        aborted,
        on_progress,
    )
}

/// Final progress event, the report, and its `ingest_runs` row.
fn conclude(
    app: &mut App,
    report: Report,
    scope: Value,
    started: Instant,
    aborted: bool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<IngestReport, IngestError> {
    let counts = report.counts.clone();
    on_progress(&if aborted {
        Progress::Aborted { counts }
    } else {
        Progress::Completed { counts }
    });
    let final_report = report.finish(scope, started.elapsed().as_millis(), aborted);
    let run_id = ids::id_from(
        &json!({ "kind": "ingest_run", "at": crate::store::now_rfc3339(), "scope": final_report.scope }),
    );
    let as_json = serde_json::to_value(&final_report).unwrap_or(Value::Null);
    app.store
        .record_ingest_run(&run_id, &as_json, &crate::store::now_rfc3339())?;
    Ok(final_report)
}

/// Parse `jobs` on worker threads and store the results on this one, one
/// transaction per document. `force` re-parses unchanged files. Returns
/// whether the run was cancelled.
#[allow(clippy::too_many_arguments)]
fn run_jobs(
    app: &mut App,
    plugins: &Plugins,
    jobs: &[Job],
    indexed: &HashMap<String, IndexedDoc>,
    force: bool,
    report: &mut Report,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<bool, IngestError> {
    let policy = ChunkPolicy {
        target_tokens: app.config.chunking.target_tokens,
        overlap_tokens: app.config.chunking.overlap_tokens,
    };
    let plugin_config = app.config.plugins.clone();
    let shared = Shared {
        plugins,
        limits: &plugin_config,
        policy,
        policy_hash: ids::policy_hash(policy.target_tokens, policy.overlap_tokens),
        indexed,
        force,
        git: Default::default(),
    };
    let total = jobs.len();
    let workers = app
        .config
        .indexing
        .max_parallel_extractors
        .clamp(1, 64)
        .min(total.max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<WorkerMsg>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, shared) = (&next, &shared);
            scope.spawn(move || {
                loop {
                    if cancel.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let plugin = shared.plugins.registry.route(&job.rel);
                    let name = plugin.map_or("-", |p| p.name()).to_string();
                    if tx.send(WorkerMsg::Started(i, name)).is_err() {
                        break;
                    }
                    let outcome = process(job, plugin, shared);
                    if tx.send(WorkerMsg::Done(i, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for msg in rx {
            match msg {
                WorkerMsg::Started(i, plugin) => on_progress(&Progress::AssetStarted {
                    idx: i + 1,
                    total,
                    path: jobs[i].rel.clone(),
                    plugin,
                }),
                WorkerMsg::Done(i, outcome) => {
                    let rel = &jobs[i].rel;
                    let (result, chunks) = report.record(app, rel, outcome)?;
                    on_progress(&Progress::AssetFinished {
                        idx: i + 1,
                        total,
                        path: rel.clone(),
                        result,
                        chunks,
                    });
                }
            }
        }
        Ok::<(), IngestError>(())
    })?;
    Ok(cancel.load(Ordering::Relaxed))
}

/// Whether `source_uri` lies at or under `start`.
fn within(source_uri: &str, start: &Path) -> bool {
    let uri = Path::new(source_uri);
    uri == start || uri.starts_with(start)
}

/// Report accumulator.
#[derive(Default)]
struct Report {
    counts: Counts,
    skips: BTreeMap<SkipReason, usize>,
    examples: BTreeMap<&'static str, Vec<String>>,
    items: Vec<IngestItem>,
}

impl Report {
    fn skip(&mut self, rel: &str, reason: SkipReason, detail: &str) {
        self.counts.scanned += usize::from(reason != SkipReason::BuiltinBlacklist);
        self.counts.skipped += 1;
        *self.skips.entry(reason).or_default() += 1;
        let examples = self.examples.entry(reason.as_str()).or_default();
        if examples.len() < SKIP_EXAMPLES && reason != SkipReason::Unchanged {
            examples.push(rel.to_string());
        }
        let mut item = IngestItem::bare("skipped", rel);
        item.reason = Some(reason.as_str());
        if reason != SkipReason::Unchanged {
            item.warnings.push(detail.to_string());
        }
        self.items.push(item);
    }

    fn error(&mut self, rel: &str, message: String) {
        self.counts.scanned += 1;
        self.counts.errors += 1;
        let mut item = IngestItem::bare("error", rel);
        item.error = Some(message);
        self.items.push(item);
    }

    /// Store a worker's outcome; returns the result label and chunk count.
    fn record(
        &mut self,
        app: &mut App,
        rel: &str,
        outcome: Outcome,
    ) -> Result<(&'static str, usize), IngestError> {
        match outcome {
            Outcome::Skipped(reason, detail) => {
                self.skip(rel, reason, &detail);
                Ok(("skipped", 0))
            }
            Outcome::Failed(message) => {
                self.error(rel, message);
                Ok(("error", 0))
            }
            Outcome::Parsed(prepared) => {
                let doc = &prepared.doc;
                let outcome = match app.store.replace_document(doc) {
                    Ok(o) => o,
                    Err(e @ StoreError::PathConflict { .. }) => {
                        self.error(rel, e.to_string());
                        return Ok(("error", 0));
                    }
                    Err(e) => return Err(e.into()),
                };
                self.counts.scanned += 1;
                let kind = match outcome {
                    WriteOutcome::New => {
                        self.counts.new += 1;
                        "new"
                    }
                    WriteOutcome::Updated if prepared.reindex => {
                        self.counts.reindexed += 1;
                        "reindexed"
                    }
                    WriteOutcome::Updated => {
                        self.counts.updated += 1;
                        "updated"
                    }
                };
                self.counts.fallbacks += usize::from(doc.fallback_reason.is_some());
                self.counts.chunks_indexed += doc.chunks.len();
                self.items.push(IngestItem {
                    kind,
                    doc_path: rel.to_string(),
                    doc_id: Some(doc.doc_id.clone()),
                    asset_id: Some(doc.asset_id.clone()),
                    byte_len: Some(doc.byte_len),
                    block_count: Some(prepared.block_count),
                    chunk_count: Some(doc.chunks.len()),
                    plugin: Some(doc.plugin_name.clone()),
                    plugin_version: Some(doc.plugin_version.clone()),
                    parser_version: Some(doc.parser_version.clone()),
                    chunker_version: Some(doc.chunker_version.clone()),
                    reason: None,
                    fallback: doc.fallback_reason.clone(),
                    warnings: prepared.warnings.clone(),
                    error: None,
                });
                Ok((kind, doc.chunks.len()))
            }
        }
    }

    fn finish(self, scope: Value, duration_ms: u128, aborted: bool) -> IngestReport {
        let n = |r: SkipReason| self.skips.get(&r).copied().unwrap_or(0);
        IngestReport {
            schema_version: "ingest_report.v1",
            scope,
            scanned: self.counts.scanned,
            new: self.counts.new,
            updated: self.counts.updated,
            reindexed: self.counts.reindexed,
            skipped: self.counts.skipped,
            errors: self.counts.errors,
            removed: self.counts.removed,
            fallbacks: self.counts.fallbacks,
            duration_ms,
            aborted,
            skipped_builtin_blacklist: n(SkipReason::BuiltinBlacklist),
            skipped_size_exceeded: n(SkipReason::SizeExceeded),
            skipped_empty: n(SkipReason::Empty),
            skipped_binary: n(SkipReason::Binary),
            skipped_unsupported: n(SkipReason::Unsupported),
            skipped_unchanged: n(SkipReason::Unchanged),
            skipped_orphaned: n(SkipReason::Orphaned),
            skipped_generated: n(SkipReason::Generated),
            skip_examples: self
                .examples
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .collect(),
            items: self.items,
        }
    }
}

/// Everything that happens to one file off the main thread.
fn process(job: &Job, plugin: Option<&RegisteredPlugin>, shared: &Shared<'_>) -> Outcome {
    let Some(plugin) = plugin else {
        return Outcome::Skipped(
            SkipReason::Unsupported,
            "no plugin handles this file type".into(),
        );
    };
    let bytes = match std::fs::read(&job.abs) {
        Ok(b) => b,
        Err(e) => return Outcome::Failed(format!("cannot read: {e}")),
    };
    if bytes.is_empty() {
        return Outcome::Skipped(SkipReason::Empty, "0 bytes".into());
    }
    let binary = bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0);
    if plugin.name() == "code" && has_generated_marker(&bytes) {
        return Outcome::Skipped(SkipReason::Generated, "marked as generated".into());
    }
    if binary && !plugin.plugin.info.accepts_binary {
        return Outcome::Skipped(SkipReason::Binary, "binary content (NUL bytes)".into());
    }
    let checksum = ids::checksum(&bytes);
    let source_uri = job.abs.display().to_string();
    let info = &plugin.plugin.info;
    let version = plugin.plugin.version.to_string();
    let existing = shared.indexed.get(&job.rel);
    let same_bytes = existing.is_some_and(|e| e.checksum == checksum && e.source_uri == source_uri);
    if let Some(existing) = existing
        && !shared.force
        && same_bytes
        && existing.plugin_name == info.name
        && existing.plugin_version == version
        && existing.policy_hash == shared.policy_hash
    {
        return Outcome::Skipped(SkipReason::Unchanged, String::new());
    }

    let shape = SourceShape::of(&bytes);
    let mut warnings = Vec::new();
    let (producer, output, fallback) = match run_plugin(plugin, job, &bytes, shape, shared) {
        Ok(out) => (plugin, out, None),
        Err(reason) => {
            let text = shared.plugins.registry.fallback();
            let reason = format!("{} plugin {reason}", info.name);
            // The text plugin cannot read binary files: no point falling back.
            if std::ptr::eq(text, plugin) || binary {
                return Outcome::Failed(reason);
            }
            match run_plugin(text, job, &bytes, shape, shared) {
                Ok(out) => (text, out, Some(reason)),
                Err(fallback_err) => {
                    return Outcome::Failed(format!("{reason}; text fallback {fallback_err}"));
                }
            }
        }
    };
    if let Some(reason) = &fallback {
        warnings.push(format!("{reason}; indexed by the text plugin"));
    }
    warnings.extend(output.logs.iter().map(|l| format!("plugin log: {l}")));
    if output.logs_dropped > 0 {
        warnings.push(format!(
            "{} more plugin log lines dropped",
            output.logs_dropped
        ));
    }
    Outcome::Parsed(Box::new(Prepared {
        reindex: same_bytes,
        block_count: output.document.blocks.len(),
        doc: build_document(
            job,
            plugin,
            producer,
            output,
            checksum,
            bytes.len() as u64,
            fallback,
            shared,
        ),
        warnings,
    }))
}

/// Whether the head of a source file says a machine wrote it.
fn has_generated_marker(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]);
    [
        "@generated",
        "DO NOT EDIT",
        "Code generated by",
        "autogenerated",
    ]
    .iter()
    .any(|m| head.contains(m))
}

/// Run one plugin and validate what it returns; zero chunks count as failure.
fn run_plugin(
    plugin: &RegisteredPlugin,
    job: &Job,
    bytes: &[u8],
    shape: SourceShape,
    shared: &Shared<'_>,
) -> Result<CallOutput, String> {
    let output = shared
        .plugins
        .runtime
        .parse_and_chunk(
            &plugin.plugin,
            &shared.limits.limits_for(plugin.name()),
            &job.rel,
            bytes,
            shared.policy,
        )
        .map_err(|e| e.to_string())?;
    validate(
        &output.document,
        &output.chunks,
        shape,
        &shared.limits.output_limits_for(plugin.name()),
    )
    .map_err(|e| e.to_string())?;
    if output.chunks.is_empty() {
        return Err("produced no chunks".into());
    }
    Ok(output)
}

/// Derive IDs and rows from plugin output. `routed` is the plugin
/// responsible for the file (recorded for re-index decisions); `producer`
/// made the output (the text plugin when it stood in).
#[allow(clippy::too_many_arguments)]
fn build_document(
    job: &Job,
    routed: &RegisteredPlugin,
    producer: &RegisteredPlugin,
    output: CallOutput,
    checksum: String,
    byte_len: u64,
    fallback: Option<String>,
    shared: &Shared<'_>,
) -> NewDocument {
    let info = &producer.plugin.info;
    let asset_id = ids::asset_id(&checksum);
    let doc_id = ids::doc_id(&job.rel, &asset_id, &info.parser_version);
    let document = output.document;
    // A plugin with several chunkers (one per language) names the one it used.
    let chunker_version = document
        .metadata
        .iter()
        .find(|(k, v)| k == CHUNKER_KEY && !v.is_empty() && v.len() <= 64)
        .map_or_else(|| info.chunker_version.clone(), |(_, v)| v.clone());
    let blocks: Vec<NewBlock> = document
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let span = span_json(&b.span);
            let kind = block_kind_name(b.kind);
            NewBlock {
                block_id: ids::block_id(&doc_id, kind, &b.heading_path, i, &span),
                kind: kind.to_string(),
                heading_path: b.heading_path.clone(),
                span,
                payload: json!({ "text": b.text, "level": b.level, "lang": b.lang }),
            }
        })
        .collect();
    let chunks = output
        .chunks
        .into_iter()
        .map(|c| {
            let block_ids: Vec<String> = c
                .blocks
                .iter()
                .map(|&b| blocks[b as usize].block_id.clone())
                .collect();
            let spans = Value::Array(c.spans.iter().map(span_json).collect());
            NewChunk {
                chunk_id: ids::chunk_id(
                    &doc_id,
                    &chunker_version,
                    &block_ids,
                    &shared.policy_hash,
                    &spans,
                ),
                token_estimate: kebab_plugin_sdk::text::estimate_tokens(&c.text),
                section_label: c.heading_path.last().cloned(),
                text: c.text,
                heading_path: c.heading_path,
                spans,
                block_ids,
            }
        })
        .collect();
    let (mut metadata, tags) = document_metadata(&document.metadata, &output.logs);
    if let Some(git) = shared.git.lookup(&job.abs) {
        metadata["repo"] = json!(git.repo);
        metadata["git_branch"] = json!(git.branch);
        metadata["git_commit"] = json!(git.commit);
    }
    let title = document.title.clone().or_else(|| {
        Path::new(&job.rel)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
    });
    let now = crate::store::now_rfc3339();
    let mut provenance = vec![json!({
        "at": now, "agent": format!("plugin:{}@{}", info.name, producer.plugin.version),
        "kind": "parsed", "note": null,
    })];
    if let Some(reason) = &fallback {
        provenance
            .push(json!({ "at": now, "agent": "kebab-ingest", "kind": "warning", "note": reason }));
    }
    NewDocument {
        asset_id,
        checksum,
        byte_len,
        media_type: routed.plugin.info.name.clone(),
        doc_id,
        workspace_path: job.rel.clone(),
        source_uri: job.abs.display().to_string(),
        title,
        lang: document.lang,
        source_type: routed.plugin.info.name.clone(),
        parser_version: info.parser_version.clone(),
        chunker_version,
        plugin_name: routed.plugin.info.name.clone(),
        plugin_version: routed.plugin.version.to_string(),
        policy_hash: shared.policy_hash.clone(),
        fallback_reason: fallback,
        metadata,
        provenance: Value::Array(provenance),
        tags,
        blocks,
        chunks,
    }
}

/// Split plugin metadata pairs into the stored metadata object and the tag
/// list. `tags` and `aliases` hold JSON arrays; everything else is kept under
/// `user`.
fn document_metadata(pairs: &[(String, String)], logs: &[String]) -> (Value, Vec<String>) {
    let list = |v: &str| -> Vec<String> {
        serde_json::from_str::<Vec<String>>(v).unwrap_or_else(|_| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
    };
    let mut tags = Vec::new();
    let mut aliases = Vec::new();
    let mut user = Map::new();
    for (k, v) in pairs {
        match k.as_str() {
            "tags" => tags = list(v),
            "aliases" => aliases = list(v),
            CHUNKER_KEY => {}
            _ => {
                user.insert(k.clone(), Value::String(v.clone()));
            }
        }
    }
    let metadata = json!({ "tags": tags, "aliases": aliases, "user": user, "plugin_logs": logs });
    (metadata, tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_splits_tags_aliases_and_user_keys() {
        let pairs = vec![
            ("tags".to_string(), r#"["rust","wasm"]"#.to_string()),
            ("aliases".to_string(), "a, b".to_string()),
            ("rating".to_string(), "5".to_string()),
        ];
        let (meta, tags) = document_metadata(&pairs, &[]);
        assert_eq!(tags, vec!["rust", "wasm"]);
        assert_eq!(meta["aliases"], json!(["a", "b"]));
        assert_eq!(meta["user"]["rating"], "5");
    }

    #[test]
    fn within_matches_the_start_and_below_only() {
        let start = Path::new("/kb/notes");
        assert!(within("/kb/notes/a.md", start));
        assert!(within("/kb/notes", start));
        assert!(!within("/kb/notes2/a.md", start));
    }
}
