//! The ingest report (`ingest_report.v1`) and progress events (`ingest_progress.v1`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{Prepared, Timings, VectorReport};
use crate::walk::SkipReason;
use kebab_store::WriteOutcome;

/// Examples kept per skip reason in the report.
const SKIP_EXAMPLES: usize = 5;

/// `ingest_progress.v1` events.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Progress {
    /// Another process holds the index's writer lock; this run waits.
    WaitingForWriter {
        holder: String,
        pid: Option<u32>,
    },
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
    /// A batch of chunks goes to the embedding model (cached texts are
    /// not sent again).
    EmbedBatchStarted {
        n_chunks: usize,
    },
    /// The batch's vectors are stored; `done` of `total` chunks have one
    /// now. While files are still being parsed (embedding runs beside
    /// parsing) `total` counts the new chunks stored so far and grows; in
    /// the vector pass after it, every chunk this run gives a vector. It
    /// never shrinks within a run.
    EmbedBatchFinished {
        n_chunks: usize,
        ms: u64,
        done: usize,
        total: usize,
    },
    Completed {
        counts: Counts,
    },
    Aborted {
        counts: Counts,
    },
}

/// Running totals.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
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
    /// Files no plugin claims that the text plugin indexed
    /// (`[indexing] index_unknown_text`).
    pub unknown_as_text: usize,
    pub chunks_indexed: usize,
    /// Chunks that got a vector in this run (embedded or from the cache).
    pub embeddings_indexed: usize,
}

/// One `ingest_progress.v1` line: the event's fields flat beside
/// `schema_version`, `kind` and `ts`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProgressLine<'a> {
    pub schema_version: &'static str,
    pub ts: String,
    #[serde(flatten)]
    pub event: &'a Progress,
}

impl<'a> ProgressLine<'a> {
    /// The line for `event`, stamped now.
    pub fn new(event: &'a Progress) -> ProgressLine<'a> {
        ProgressLine {
            schema_version: "ingest_progress.v1",
            ts: kebab_core::clock::now_rfc3339(),
            event,
        }
    }
}

/// One file's line in the report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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
    /// Images of the file whose text was read by OCR (scanned pages,
    /// photos), when any were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ocr_images: Option<u32>,
}

impl IngestItem {
    pub(super) fn bare(kind: &'static str, doc_path: &str) -> IngestItem {
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
            ocr_images: None,
        }
    }
}

/// `ingest_report.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct IngestReport {
    pub schema_version: &'static str,
    pub scope: Value,
    /// Totals, flattened into the report (`scanned`, `new`, `updated`, …).
    #[serde(flatten)]
    pub counts: Counts,
    pub duration_ms: u128,
    pub aborted: bool,
    pub skipped_gitignore: usize,
    pub skipped_kebabignore: usize,
    pub skipped_builtin_blacklist: usize,
    pub skipped_size_exceeded: usize,
    pub skipped_empty: usize,
    /// Files of nothing but whitespace: 0 chunks, a warning, not bad input.
    pub skipped_blank: usize,
    pub skipped_binary: usize,
    pub skipped_unsupported: usize,
    pub skipped_unchanged: usize,
    pub skipped_orphaned: usize,
    pub skipped_generated: usize,
    pub skipped_symlink_outside_root: usize,
    pub skipped_symlink_loop: usize,
    pub skipped_symlink_duplicate: usize,
    pub skipped_not_regular_file: usize,
    pub skip_examples: BTreeMap<&'static str, Vec<String>>,
    /// Chunks analysed for Korean, Japanese and Chinese words in this run
    /// (text without any counted too; the name is from when only Korean
    /// was analysed).
    pub korean_analyzed: usize,
    /// Images whose text was read by OCR in this run, and how many of those
    /// came from the OCR cache (an unchanged image is never read twice).
    pub ocr_images: u32,
    pub ocr_cached: u32,
    /// The vector index pass; null when no embedding model is in use.
    pub vectors: Option<VectorReport>,
    /// Time per stage.
    pub timings: Timings,
    /// Run-level warnings (an index that is off, and why).
    pub warnings: Vec<String>,
    pub items: Vec<IngestItem>,
}

impl IngestReport {
    /// Whether anything points at bad input (errors, binary/empty/oversized
    /// files; a file of only whitespace is not): what `--strict` turns into
    /// a failure.
    pub fn has_bad_input(&self) -> bool {
        self.counts.errors > 0
            || self.skipped_size_exceeded + self.skipped_empty + self.skipped_binary > 0
    }
}

/// Report accumulator.
#[derive(Default)]
pub(super) struct Report {
    pub(super) counts: Counts,
    skips: BTreeMap<SkipReason, usize>,
    examples: BTreeMap<&'static str, Vec<String>>,
    pub(super) items: Vec<IngestItem>,
    pub(super) korean_analyzed: usize,
    pub(super) ocr_images: u32,
    pub(super) ocr_cached: u32,
    pub(super) vectors: Option<VectorReport>,
    pub(super) timings: Timings,
    pub(super) warnings: Vec<String>,
}

impl Report {
    pub(super) fn skip(&mut self, rel: &str, reason: SkipReason, detail: &str) {
        self.counts.scanned += usize::from(reason != SkipReason::BuiltinBlacklist);
        self.counts.skipped += 1;
        self.ignore(rel, reason);
        let mut item = IngestItem::bare("skipped", rel);
        item.reason = Some(reason.as_str());
        if reason != SkipReason::Unchanged {
            item.warnings.push(detail.to_string());
        }
        self.items.push(item);
    }

    /// Count a skip by reason and keep a few examples (unchanged files are
    /// not examples); alone, for files an ignore rule passed over, which get
    /// no report item since ignored trees can be large.
    pub(super) fn ignore(&mut self, rel: &str, reason: SkipReason) {
        *self.skips.entry(reason).or_default() += 1;
        let examples = self.examples.entry(reason.as_str()).or_default();
        if examples.len() < SKIP_EXAMPLES && reason != SkipReason::Unchanged {
            examples.push(rel.to_string());
        }
    }

    pub(super) fn error(&mut self, rel: &str, message: String) {
        self.counts.scanned += 1;
        self.counts.errors += 1;
        let mut item = IngestItem::bare("error", rel);
        item.error = Some(message);
        self.items.push(item);
    }

    /// Count a document the store has just written (`outcome` says how);
    /// returns the result label and chunk count.
    pub(super) fn stored(
        &mut self,
        rel: &str,
        prepared: &Prepared,
        outcome: WriteOutcome,
    ) -> (&'static str, usize) {
        let doc = &prepared.doc;
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
        self.counts.unknown_as_text += usize::from(prepared.unclaimed);
        self.counts.chunks_indexed += doc.chunks.len();
        self.ocr_images += prepared.ocr.images;
        self.ocr_cached += prepared.ocr.cached;
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
            ocr_images: (prepared.ocr.images > 0).then_some(prepared.ocr.images),
        });
        (kind, doc.chunks.len())
    }

    pub(super) fn finish(self, scope: Value, duration_ms: u128, aborted: bool) -> IngestReport {
        let n = |r: SkipReason| self.skips.get(&r).copied().unwrap_or(0);
        IngestReport {
            schema_version: "ingest_report.v1",
            scope,
            counts: self.counts,
            duration_ms,
            aborted,
            skipped_gitignore: n(SkipReason::Gitignore),
            skipped_kebabignore: n(SkipReason::Kebabignore),
            skipped_builtin_blacklist: n(SkipReason::BuiltinBlacklist),
            skipped_size_exceeded: n(SkipReason::SizeExceeded),
            skipped_empty: n(SkipReason::Empty),
            skipped_blank: n(SkipReason::Blank),
            skipped_binary: n(SkipReason::Binary),
            skipped_unsupported: n(SkipReason::Unsupported),
            skipped_unchanged: n(SkipReason::Unchanged),
            skipped_orphaned: n(SkipReason::Orphaned),
            skipped_generated: n(SkipReason::Generated),
            skipped_symlink_outside_root: n(SkipReason::SymlinkOutsideRoot),
            skipped_symlink_loop: n(SkipReason::SymlinkLoop),
            skipped_symlink_duplicate: n(SkipReason::SymlinkDuplicate),
            skipped_not_regular_file: n(SkipReason::NotRegularFile),
            skip_examples: self
                .examples
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .collect(),
            korean_analyzed: self.korean_analyzed,
            ocr_images: self.ocr_images,
            ocr_cached: self.ocr_cached,
            vectors: self.vectors,
            timings: self.timings,
            warnings: self.warnings,
            items: self.items,
        }
    }
}
