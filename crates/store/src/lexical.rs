//! The lexical index: BM25 over every chunk's Korean morphemes and text,
//! answered with block-max WAND pruning (tantivy) so that a query's cost
//! follows the best hits, not every chunk that shares a word with it.
//!
//! It is derived data, like the vectors in LanceDB: SQLite holds the
//! chunks, and `<data_dir>/lexical/` is brought up to date from them by
//! the writer (holding the writer lock) at the end of every ingest run and
//! watcher batch ([`Store::sync_lexical`]):
//! - every change to a chunk's indexed text is logged in `lexical_log` by
//!   triggers, in the transaction that makes it (V005); the writer deletes
//!   each logged rowid from the index, adds the chunk that has that rowid
//!   now (if any), commits, then deletes the log rows it applied. A kill at
//!   any point leaves either the log or an index that already has it, and
//!   applying it again changes nothing;
//! - an index that is missing, unreadable, of another format or analyser,
//!   or whose document count is not the chunk count, is rebuilt from the
//!   chunks beside it (`lexical.new/`) and swapped in, so readers never
//!   see a half-built one.
//!
//! Chunks of the same indexed text are searched once
//! ([`crate::lexical_groups`]): a query's cost follows the distinct texts.
//!
//! Readers use it with the changes it does not have yet (the log's rows)
//! held beside it in memory and ranked alike ([`crate::lexical_pending`]),
//! so that search stays on the index while a writer runs. For an index
//! they cannot open (a read-only data directory, a half-finished upgrade),
//! one out of step, or more changes than a reader holds, search answers
//! from the FTS5 table the migrations keep beside it. Filters are applied
//! while the matches are collected, before the top `k` are taken, without
//! giving up pruning: a chunk outside the filter simply never raises the
//! threshold.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use kebab_core::analysis;
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, META_LOCK, MmapDirectory, WatchCallback,
    WatchHandle, WritePtr,
};
use tantivy::index::SegmentId;
use tantivy::query::{
    Bm25StatisticsProvider, Bm25Weight, BooleanQuery, BoostQuery, ConstScoreQuery, EnableScoring,
    Occur, Query, TermQuery, TermSetQuery, Weight,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{
    Index, IndexReader, ReloadPolicy, Score, Searcher, SegmentReader, TantivyDocument, Term,
};

use crate::lexical_groups::{CountedGroups, EntrySink, GroupedWrite, IndexedEntries, group_of};
use crate::lexical_pending::PendingChunks;
pub use crate::lexical_schema::ANALYZER;
use crate::lexical_schema::{BODY, COPY, Fields, GROUP, ROLE, ROWID, Role, SEARCHED, schema};

/// The index layout; another value in an index's commit means a rebuild
/// (3: chunks of one text searched once).
const FORMAT: u32 = 3;
/// A filter admitting fewer than 1/SELECTIVE of the chunks is applied by
/// intersection rather than while pruning ([`LexicalReader::search`]): at
/// 1M chunks, a filter keeping 1/190 of them took ~110 ms a query while
/// pruning (the threshold rises only with admitted chunks).
const SELECTIVE: u64 = 20;
/// Memory tantivy may buffer per indexing thread before it writes a segment.
const WRITER_BUDGET_PER_THREAD: usize = 48 << 20;

/// Failures of the lexical index.
#[derive(Debug, thiserror::Error)]
pub enum LexicalError {
    #[error("lexical index: {0}")]
    Engine(#[from] tantivy::TantivyError),
    #[error("lexical index: {0}")]
    Io(#[from] std::io::Error),
    #[error("lexical index: {0}")]
    Directory(#[from] tantivy::directory::error::OpenDirectoryError),
    /// An index written for another layout or analyser.
    #[error("lexical index of another kind ({0})")]
    Foreign(String),
}

/// What a commit records about the index it makes: its layout, and the
/// last `lexical_log` sequence number whose change it holds (the index
/// holds exactly SQLite's chunks when that is SQLite's last number and the
/// log is empty).
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Payload {
    format: u32,
    analyzer: String,
    seq: i64,
}

impl Payload {
    fn at(seq: i64) -> Payload {
        Payload {
            format: FORMAT,
            analyzer: ANALYZER.to_string(),
            seq,
        }
    }

    /// Whether an index of this layout can be read by this kebab.
    fn is_readable(&self) -> bool {
        self.format == FORMAT && self.analyzer == ANALYZER
    }
}

/// [`kebab_core::analysis::words`] as a tantivy tokenizer.
#[derive(Clone, Default)]
struct Analyzer;

// tantivy keeps every word the analyser gives (folding lengthens a word by
// a few bytes per character at most), so a chunk's length in the index is
// its number of words ([`crate::lexical_pending`] counts them so).
const _: () = assert!(analysis::MAX_WORD_BYTES * 32 <= tantivy::tokenizer::MAX_TOKEN_LEN);

/// The words of one text, handed out one by one.
struct Words {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for Words {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for Analyzer {
    type TokenStream<'a> = Words;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Words {
        let tokens = analysis::words(text)
            .enumerate()
            .map(|(position, w)| Token {
                offset_from: w.from,
                offset_to: w.to,
                position,
                text: w.term,
                position_length: 1,
            })
            .collect();
        Words { tokens, next: 0 }
    }
}

/// The text the index holds of a chunk: its Korean morphemes (when it has
/// any) in front of its text, as the FTS5 triggers write it.
pub(crate) fn indexed_text(korean: Option<&str>, text: &str) -> String {
    match korean {
        Some(k) if !k.is_empty() => format!("{k} {text}"),
        _ => text.to_string(),
    }
}

/// The index directory: tantivy's memory-mapped one, except that a reader
/// in a directory it may not write (a read-only data directory) goes
/// without the lock that keeps a writer's clean-up from deleting segments
/// while they are opened, rather than failing: should a writer elsewhere
/// clean up at that moment, opening fails and search answers from FTS5.
///
/// It remembers every file it mapped and the length it had: reading a
/// mapped file that was since cut short (truncated in place) kills the
/// process with SIGBUS, so a reader checks the lengths ([`Mapped::intact`])
/// before each search and goes without the index when one shrank.
#[derive(Debug, Clone)]
struct IndexDir {
    inner: MmapDirectory,
    root: PathBuf,
    mapped: Mapped,
}

/// The files an [`IndexDir`] mapped: path, length and inode then.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mapped(Arc<Mutex<Vec<(PathBuf, u64, u64)>>>);

impl Mapped {
    fn note(&self, path: PathBuf, len: u64) {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(&path) else {
            return;
        };
        if let Ok(mut files) = self.0.lock()
            && !files.iter().any(|(p, _, _)| *p == path)
        {
            files.push((path, len, meta.ino()));
        }
    }

    /// Why reading the mapped files could crash the process — one was cut
    /// shorter than it was mapped, in place — if one was. A file removed,
    /// or replaced by another, leaves the mapped one intact.
    pub(crate) fn damage(&self) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        let files = self.0.lock().ok()?;
        files
            .iter()
            .find_map(|(path, len, ino)| match std::fs::metadata(path) {
                Ok(meta) if meta.ino() == *ino && meta.len() < *len => Some(format!(
                    "{} was cut from {len} to {} bytes under the open index",
                    path.display(),
                    meta.len()
                )),
                _ => None,
            })
    }
}

impl Directory for IndexDir {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        let handle = self.inner.get_file_handle(path)?;
        self.mapped.note(self.root.join(path), handle.len() as u64);
        Ok(handle)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.inner.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> std::io::Result<()> {
        self.inner.atomic_write(path, data)
    }

    fn sync_directory(&self) -> std::io::Result<()> {
        self.inner.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
        match self.inner.acquire_lock(lock) {
            Err(LockError::IoError(e))
                if lock.filepath == META_LOCK.filepath
                    && matches!(e.kind(), PermissionDenied | ReadOnlyFilesystem) =>
            {
                Ok(DirectoryLock::from(Box::new(())))
            }
            acquired => acquired,
        }
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(callback)
    }
}

/// Open the index in `dir` with kebab's analyser registered, refusing one
/// of another layout; the `lexical_log` sequence number it holds.
fn open_index(dir: &Path) -> Result<(Index, Fields, i64, Mapped), LexicalError> {
    let mapped = Mapped::default();
    let index = Index::open(IndexDir {
        inner: MmapDirectory::open(dir)?,
        root: dir.to_path_buf(),
        mapped: mapped.clone(),
    })?;
    let seq = payload_seq(&index)?;
    let fields = fields_of(&index)?;
    index.tokenizers().register(ANALYZER, Analyzer);
    Ok((index, fields, seq, mapped))
}

fn payload_seq(index: &Index) -> Result<i64, LexicalError> {
    let payload = index.load_metas()?.payload;
    match payload
        .as_deref()
        .and_then(|p| serde_json::from_str::<Payload>(p).ok())
    {
        Some(found) if found.is_readable() => Ok(found.seq),
        _ => Err(LexicalError::Foreign(format!(
            "commit says {}, this kebab writes format {FORMAT} with analyser {ANALYZER}",
            payload.as_deref().unwrap_or("nothing"),
        ))),
    }
}

fn fields_of(index: &Index) -> Result<Fields, LexicalError> {
    let schema = index.schema();
    let field = |name: &str| {
        schema
            .get_field(name)
            .map_err(|_| LexicalError::Foreign(format!("no field {name}")))
    };
    Ok(Fields {
        rowid: field(ROWID)?,
        group: field(GROUP)?,
        role: field(ROLE)?,
        searched: field(SEARCHED)?,
        body: field(BODY)?,
        copy: field(COPY)?,
    })
}

/// When and how `meta.json` (rewritten by every commit) last changed: a
/// reader whose stamp differs reopens the index.
type MetaStamp = Option<(SystemTime, u64, u64)>;

fn meta_stamp(dir: &Path) -> MetaStamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir.join("meta.json")).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

/// An open view of the lexical index for searching, with the chunks
/// changed since its commit that the reader has caught up with.
pub struct LexicalReader {
    reader: IndexReader,
    fields: Fields,
    stamp: MetaStamp,
    seq: i64,
    pending: PendingChunks,
    /// The files its segments are mapped from.
    mapped: Mapped,
}

impl std::fmt::Debug for LexicalReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalReader")
            .field("docs", &self.reader.searcher().num_docs())
            .finish()
    }
}

impl LexicalReader {
    /// Open the index in `dir`; `None` when there is none.
    pub fn open(dir: &Path) -> Result<Option<LexicalReader>, LexicalError> {
        let stamp = meta_stamp(dir);
        if stamp.is_none() {
            return Ok(None);
        }
        let (index, fields, seq, mapped) = open_index(dir)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Some(LexicalReader {
            reader,
            fields,
            stamp,
            seq,
            pending: PendingChunks::default(),
            mapped,
        }))
    }

    /// Why this view can no longer be read safely (a mapped file was cut
    /// short under it), if so: see [`IndexDir`].
    pub(crate) fn damage(&self) -> Option<String> {
        self.mapped.damage()
    }

    /// The last `lexical_log` sequence number whose change this view holds.
    pub fn seq(&self) -> i64 {
        self.seq
    }

    /// Whether the index in `dir` is still the commit this reader opened.
    pub fn is_current(&self, dir: &Path) -> bool {
        meta_stamp(dir) == self.stamp
    }

    /// Chunks in the index.
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The changed chunks searched beside the index, for catching up.
    pub(crate) fn pending_mut(&mut self) -> &mut PendingChunks {
        &mut self.pending
    }

    /// The best `k` chunks (rowid, BM25 score) for any of `terms`, best
    /// first (equal scores: lower rowid first), among `allowed` rowids
    /// when given, the changed chunks held beside the index counted in
    /// place of its entries for them. Each term is analysed as the index's
    /// words are, and weighted by [`fts5_idf_boost`], so scores are
    /// FTS5's `bm25()`.
    pub fn search(
        &self,
        terms: &[String],
        k: usize,
        allowed: Option<HashSet<i64>>,
    ) -> Result<Vec<(i64, f32)>, LexicalError> {
        let selective = allowed
            .as_ref()
            .is_some_and(|a| (a.len() as u64).saturating_mul(SELECTIVE) < self.num_docs());
        self.search_by(terms, k, allowed, selective)
    }

    /// [`LexicalReader::search`], `selective` saying how a filter is
    /// applied: by intersecting the terms' postings with the allowed
    /// rowids (a few chunks: only they are scored, each by its own entry,
    /// searched or copy), or by skipping the others as block-max WAND
    /// offers the groups' searched entries (many: the threshold rises).
    fn search_by(
        &self,
        terms: &[String],
        k: usize,
        allowed: Option<HashSet<i64>>,
        selective: bool,
    ) -> Result<Vec<(i64, f32)>, LexicalError> {
        let searcher = self.reader.searcher();
        let stats = Statistics::new(&searcher, self.fields, &self.pending)?;
        let docs = stats.total_num_docs()?;
        let mut seen = HashSet::new();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut weighted = Vec::new();
        for word in terms.iter().flat_map(|t| analysis::words(t)) {
            if !seen.insert(word.term.clone()) {
                continue;
            }
            let term = Term::from_field_text(self.fields.body, &word.term);
            let with = stats.doc_freq(&term)?;
            if with == 0 {
                continue;
            }
            let boost = fts5_idf_boost(with, docs);
            let copy = Term::from_field_text(self.fields.copy, &word.term);
            if self.pending.doc_freq(&word.term) > 0 {
                let weight = Bm25Weight::for_terms(&stats, std::slice::from_ref(&term))?;
                weighted.push((word.term, weight.boost_by(boost)));
            }
            // A selective filter scores the chunks it admits, copies too.
            let searched = if selective && stats.copies {
                vec![term, copy]
            } else {
                vec![term]
            };
            for term in searched {
                let query = TermQuery::new(term, IndexRecordOption::WithFreqs);
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(query), boost)),
                ));
            }
        }
        if clauses.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let any: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        let query: Box<dyn Query> = match (&allowed, selective) {
            (Some(allowed), true) => {
                let rowids = TermSetQuery::new(
                    allowed
                        .iter()
                        .map(|rowid| Term::from_field_i64(self.fields.rowid, *rowid)),
                );
                Box::new(BooleanQuery::new(vec![
                    (
                        Occur::Must,
                        Box::new(ConstScoreQuery::new(Box::new(rowids), 0.0)),
                    ),
                    (Occur::Must, any),
                ]))
            }
            _ => any,
        };
        let weight = query.weight(EnableScoring::enabled_from_statistics_provider(
            &stats, &searcher,
        ))?;
        let mut best = Best::new(k);
        for (rowid, score) in self.pending.scored(&weighted, allowed.as_ref()) {
            best.push(Ranked(score, rowid));
        }
        // Without copies, no searched entry stands for others.
        let groups = (!selective && stats.copies).then_some(self.fields);
        top_rowids(
            &searcher,
            &*weight,
            &mut best,
            groups,
            allowed.as_ref(),
            &self.pending,
        )?;
        Ok(best.into_sorted())
    }
}

/// BM25's statistics over every chunk's entry, searched or copy (a copy
/// counts as its own chunk), and the changed chunks held beside the
/// index: what the index will count once they are applied (it counts the
/// entries they replace until it merges them away). Asked about either
/// text field, they answer for both; each word is looked up once a search.
struct Statistics<'a> {
    searcher: &'a Searcher,
    fields: Fields,
    pending: &'a PendingChunks,
    docs: u64,
    tokens: u64,
    /// Whether any entry is a copy (else no word is looked up there).
    copies: bool,
    doc_freqs: std::cell::RefCell<std::collections::HashMap<String, u64>>,
}

impl<'a> Statistics<'a> {
    fn new(
        searcher: &'a Searcher,
        fields: Fields,
        pending: &'a PendingChunks,
    ) -> tantivy::Result<Statistics<'a>> {
        let copied = searcher.total_num_tokens(fields.copy)?;
        Ok(Statistics {
            searcher,
            fields,
            pending,
            docs: Bm25StatisticsProvider::total_num_docs(searcher)? + pending.docs(),
            tokens: searcher.total_num_tokens(fields.body)? + copied + pending.tokens(),
            copies: copied > 0,
            doc_freqs: Default::default(),
        })
    }
}

impl Bm25StatisticsProvider for Statistics<'_> {
    fn total_num_tokens(&self, _field: Field) -> tantivy::Result<u64> {
        Ok(self.tokens)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let value = term.value();
        let Some(word) = value.as_str() else {
            return self.searcher.doc_freq(term);
        };
        if let Some(known) = self.doc_freqs.borrow().get(word) {
            return Ok(*known);
        }
        let in_field = |field| self.searcher.doc_freq(&Term::from_field_text(field, word));
        let copied = if self.copies {
            in_field(self.fields.copy)?
        } else {
            0
        };
        let with = in_field(self.fields.body)? + copied + self.pending.doc_freq(word);
        self.doc_freqs.borrow_mut().insert(word.to_string(), with);
        Ok(with)
    }
}

/// The factor that turns tantivy's BM25 idf of a term found in `with` of
/// `docs` chunks, `ln(1 + (N − n + ½)/(n + ½))`, into FTS5's,
/// `ln((N − n + ½)/(n + ½))` floored at 10⁻⁶, the rest of the two
/// formulas being the same (k1 1.2, b 0.75). FTS5's idf all but ignores a
/// word in more than half the chunks, where tantivy's still counts it:
/// kept, so that ranking stays what it was (a boost keeps block-max WAND).
fn fts5_idf_boost(with: u64, docs: u64) -> Score {
    let ratio = (docs.saturating_sub(with) as f64 + 0.5) / (with as f64 + 0.5);
    (ratio.ln().max(1e-6) / ratio.ln_1p()) as Score
}

/// A score and a rowid ordered best first: higher score, then lower rowid.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ranked(Score, i64);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// The best `k` seen so far, worst on top.
struct Best {
    k: usize,
    heap: BinaryHeap<Reverse<Ranked>>,
}

impl Best {
    fn new(k: usize) -> Best {
        Best {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    fn push(&mut self, ranked: Ranked) {
        if self.heap.len() < self.k {
            self.heap.push(Reverse(ranked));
        } else if self.heap.peek().is_some_and(|worst| ranked > worst.0) {
            self.heap.pop();
            self.heap.push(Reverse(ranked));
        }
    }

    /// The score below which a document cannot enter: just under the
    /// worst kept once `k` are kept, so that a document scoring the same
    /// (tantivy offers only scores above the threshold) is still offered
    /// and ties go to the lower rowid whatever the segment layout.
    fn threshold(&self) -> Score {
        match self.heap.peek() {
            Some(worst) if self.heap.len() >= self.k => worst.0.0.next_down(),
            _ => Score::MIN,
        }
    }

    fn into_sorted(self) -> Vec<(i64, f32)> {
        let mut out: Vec<Ranked> = self.heap.into_iter().map(|r| r.0).collect();
        out.sort_by(|a, b| b.cmp(a));
        out.into_iter().map(|r| (r.1, r.0)).collect()
    }
}

/// Offer `best` the rowids among `allowed` (every chunk when `None`) that
/// `weight` matches, keeping tantivy's block-max WAND: one heap across
/// the segments, largest segment first, so that each segment starts from
/// the threshold the earlier ones reached instead of from nothing (with
/// a heap per segment, every segment scored its own best `k` again and
/// the cost grew with their number). With `groups`, `weight` matches
/// searched entries, and a shared one stands for every entry of its group
/// ([`crate::lexical_groups`]). A chunk outside `allowed`, deleted, or
/// one `pending` names is skipped (a document with none left hands back
/// the unchanged threshold).
fn top_rowids(
    searcher: &Searcher,
    weight: &dyn Weight,
    best: &mut Best,
    groups: Option<Fields>,
    allowed: Option<&HashSet<i64>>,
    pending: &PendingChunks,
) -> Result<(), LexicalError> {
    let mut segments: Vec<&SegmentReader> = searcher.segment_readers().iter().collect();
    segments.sort_by_key(|reader| Reverse(reader.num_docs()));
    let mut entries: Option<IndexedEntries> = None;
    let mut expanded = HashSet::new();
    let mut members: Vec<i64> = Vec::new();
    let mut failed = None;
    let admitted =
        |rowid: &i64| allowed.is_none_or(|a| a.contains(rowid)) && !pending.names(*rowid);
    for reader in segments {
        let fast = reader.fast_fields();
        let rowids = fast.i64(ROWID)?;
        let grouped = match groups {
            Some(_) => Some((fast.u64(GROUP)?, fast.u64(ROLE)?)),
            None => None,
        };
        let alive = reader.alive_bitset();
        weight.for_each_pruning(best.threshold(), reader, &mut |doc, score| {
            if !alive.is_none_or(|a| a.is_alive(doc)) {
                return best.threshold();
            }
            let shared = grouped.as_ref().and_then(|(group_of, role_of)| {
                (role_of.first(doc).map(Role::from_column) == Some(Role::Shared))
                    .then(|| group_of.first(doc).unwrap_or_default())
            });
            let Some(group) = shared else {
                if let Some(rowid) = rowids.first(doc).filter(admitted) {
                    best.push(Ranked(score, rowid));
                }
                return best.threshold();
            };
            if !expanded.insert(group) {
                return best.threshold();
            }
            let fields = groups.expect("shared");
            match lowest_of_group(
                &mut entries,
                searcher,
                fields,
                group,
                best.k,
                admitted,
                &mut members,
            ) {
                Ok(()) => members
                    .iter()
                    .for_each(|&rowid| best.push(Ranked(score, rowid))),
                Err(e) => failed = Some(e),
            }
            best.threshold()
        })?;
        if let Some(e) = failed.take() {
            return Err(e.into());
        }
    }
    Ok(())
}

/// Into `lowest`, the `k` lowest rowids of the entries of `group` that
/// are `admitted` (one score for all: only they can be kept), opening
/// `entries` over `searcher` on first use.
fn lowest_of_group(
    entries: &mut Option<IndexedEntries>,
    searcher: &Searcher,
    fields: Fields,
    group: u64,
    k: usize,
    admitted: impl Fn(&i64) -> bool,
    lowest: &mut Vec<i64>,
) -> tantivy::Result<()> {
    let entries = match entries {
        Some(entries) => entries,
        None => entries.insert(IndexedEntries::of(searcher, fields)?),
    };
    lowest.clear();
    entries.each_of_group(group, |rowid, _| {
        if admitted(&rowid) {
            lowest.push(rowid);
        }
    })?;
    if lowest.len() > k {
        lowest.select_nth_unstable(k);
        lowest.truncate(k);
    }
    Ok(())
}

/// Indexing threads for a large write: the cores, at most four.
fn indexing_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// The segments of an index, to tell apart those a writer's run added
/// ([`merge_added`]).
pub(crate) type SegmentIds = HashSet<SegmentId>;

/// The segments of the index in `dir` (none when there is no index).
pub(crate) fn segment_ids(dir: &Path) -> Result<SegmentIds, LexicalError> {
    if meta_stamp(dir).is_none() {
        return Ok(SegmentIds::new());
    }
    let (index, _, _, _) = open_index(dir)?;
    Ok(index.searchable_segment_ids()?.into_iter().collect())
}

/// The tantivy writer of one index, adding and removing entries.
struct Entries {
    writer: tantivy::IndexWriter<TantivyDocument>,
    fields: Fields,
}

impl EntrySink for Entries {
    fn remove(&self, rowid: i64) {
        self.writer
            .delete_term(Term::from_field_i64(self.fields.rowid, rowid));
    }

    fn put(&self, rowid: i64, group: u64, role: Role, text: &str) -> tantivy::Result<()> {
        let mut doc = TantivyDocument::new();
        doc.add_i64(self.fields.rowid, rowid);
        doc.add_u64(self.fields.group, group);
        doc.add_u64(self.fields.role, role as u64);
        let words = match role {
            Role::Copy => self.fields.copy,
            Role::Alone | Role::Shared => {
                doc.add_u64(self.fields.searched, group);
                self.fields.body
            }
        };
        doc.add_text(words, text);
        self.writer.add_document(doc)?;
        Ok(())
    }
}

/// How a write keeps one searched entry per group.
enum Groups {
    /// A build from nothing, its groups counted first.
    Counted(CountedGroups),
    /// A change to an index.
    Changed(GroupedWrite),
}

/// Writes to the lexical index of one data directory: chunks removed
/// (first) and added, then a commit.
pub(crate) struct LexicalWriter {
    index: Index,
    entries: Entries,
    groups: Groups,
}

impl LexicalWriter {
    /// Open the index in `dir` to change it, with one indexing thread, or
    /// up to four when `many` chunks are to be written.
    pub(crate) fn open(dir: &Path, many: bool) -> Result<LexicalWriter, LexicalError> {
        let (index, fields, _, _) = open_index(dir)?;
        let committed: IndexReader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let indexed = IndexedEntries::of(&committed.searcher(), fields)?;
        let threads = if many { indexing_threads() } else { 1 };
        LexicalWriter::with(
            index,
            fields,
            threads,
            Groups::Changed(GroupedWrite::new(indexed)),
        )
    }

    /// Create an empty index in `dir` (which must not exist) for the
    /// chunks `counted`, to be added.
    pub(crate) fn create(
        dir: &Path,
        counted: CountedGroups,
    ) -> Result<LexicalWriter, LexicalError> {
        std::fs::create_dir_all(dir)?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(dir, schema)?;
        index.tokenizers().register(ANALYZER, Analyzer);
        LexicalWriter::with(index, fields, indexing_threads(), Groups::Counted(counted))
    }

    fn with(
        index: Index,
        fields: Fields,
        threads: usize,
        groups: Groups,
    ) -> Result<LexicalWriter, LexicalError> {
        let writer = index.writer_with_num_threads(threads, threads * WRITER_BUDGET_PER_THREAD)?;
        Ok(LexicalWriter {
            index,
            entries: Entries { writer, fields },
            groups,
        })
    }

    /// Remove the chunk with `rowid`, if the index has it (before adding).
    pub(crate) fn delete(&mut self, rowid: i64) -> Result<(), LexicalError> {
        match &mut self.groups {
            Groups::Changed(groups) => Ok(groups.remove(&self.entries, rowid)?),
            Groups::Counted(_) => Ok(()),
        }
    }

    /// Add a chunk with its indexed text.
    pub(crate) fn add(&mut self, rowid: i64, text: &str) -> Result<(), LexicalError> {
        match &mut self.groups {
            Groups::Changed(groups) => Ok(groups.add(&self.entries, rowid, text)?),
            Groups::Counted(groups) => Ok(groups.add(&self.entries, rowid, text)?),
        }
    }

    /// Commit what was written, as holding every change up to `seq` in
    /// `lexical_log`, and wait for segment merges; the number of chunks
    /// the index then holds. A group that lost its searched entry gets one
    /// of its kept copies in that place first, its indexed text read with
    /// `text_of` (the write did not change that chunk).
    pub(crate) fn commit<E: From<LexicalError>>(
        self,
        seq: i64,
        mut text_of: impl FnMut(i64) -> Result<String, E>,
    ) -> Result<u64, E> {
        let LexicalWriter {
            index,
            mut entries,
            groups,
        } = self;
        if let Groups::Changed(groups) = groups {
            for (rowid, group, role) in groups.settle().map_err(LexicalError::from)? {
                let text = text_of(rowid)?;
                if group_of(&text) != group {
                    // A chunk changed without a log row: the index is not
                    // what SQLite holds (the caller rebuilds it).
                    return Err(LexicalError::Foreign(format!(
                        "chunk {rowid} changed without being logged"
                    ))
                    .into());
                }
                entries
                    .rewrite(rowid, group, role, &text)
                    .map_err(LexicalError::from)?;
            }
        }
        let commit = move || -> Result<u64, LexicalError> {
            let mut prepared = entries.writer.prepare_commit()?;
            prepared.set_payload(&serde_json::to_string(&Payload::at(seq)).expect("serialises"));
            prepared.commit()?;
            entries.writer.wait_merging_threads()?;
            let metas = index.load_metas()?;
            Ok(metas.segments.iter().map(|s| u64::from(s.num_docs())).sum())
        };
        Ok(commit()?)
    }
}

/// Merge the segments of the index in `dir` not in `before` into one
/// (when there are several): those a long run added while it brought the
/// index up to date every so often, a segment each time (tantivy's merge
/// policy leaves up to seven of each size; at 245k chunks, nine segments
/// answered a query in 1.6× the time four did). The cost follows what the
/// run wrote (with any older segment tantivy merged into those
/// meanwhile), not the index's size.
pub(crate) fn merge_added(dir: &Path, before: &SegmentIds) -> Result<(), LexicalError> {
    let (index, _, _, _) = open_index(dir)?;
    let mut writer: tantivy::IndexWriter<TantivyDocument> =
        index.writer_with_num_threads(1, WRITER_BUDGET_PER_THREAD)?;
    let added: Vec<SegmentId> = index
        .searchable_segment_ids()?
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    if added.len() > 1 {
        writer.merge(&added).wait()?;
    }
    writer.wait_merging_threads()?;
    Ok(())
}

/// The directory a rebuild is written in before it replaces `dir`.
pub(crate) fn building_dir(dir: &Path) -> PathBuf {
    dir.with_file_name(format!(
        "{}.new",
        dir.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("lexical")
    ))
}

/// Remove what a rebuild killed midway left beside `dir`: its unfinished
/// `.new` directory and replaced `.old-*` ones.
pub(crate) fn clear_leftovers(dir: &Path) -> Result<(), LexicalError> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name().and_then(|n| n.to_str()))
    else {
        return Ok(());
    };
    for entry in std::fs::read_dir(parent)? {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(other) = file_name.to_str() else {
            continue;
        };
        if other == format!("{name}.new") || other.starts_with(&format!("{name}.old-")) {
            std::fs::remove_dir_all(entry.path())?;
        }
    }
    Ok(())
}

/// Put the finished rebuild in `building` in place of `dir`. Readers that
/// have the old one open keep reading it (its files stay mapped) until
/// they notice the new commit.
pub(crate) fn swap_in(building: &Path, dir: &Path) -> Result<(), LexicalError> {
    let old = dir.with_file_name(format!(
        "{}.old-{}",
        dir.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("lexical"),
        std::process::id()
    ));
    if dir.exists() {
        std::fs::rename(dir, &old)?;
    }
    std::fs::rename(building, dir)?;
    if old.exists() {
        std::fs::remove_dir_all(&old)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(dir: &Path, chunks: &[(i64, &str)]) {
        let mut counted = CountedGroups::default();
        chunks.iter().for_each(|(_, text)| counted.count(text));
        let mut writer = LexicalWriter::create(dir, counted).unwrap();
        for (rowid, text) in chunks {
            writer.add(*rowid, text).unwrap();
        }
        assert_eq!(writer.commit(7, unread).unwrap(), chunks.len() as u64);
    }

    /// For a write whose groups need no text read back.
    fn unread(rowid: i64) -> Result<String, LexicalError> {
        panic!("the text of chunk {rowid} was read")
    }

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_best_match_comes_first_and_filters_apply_before_the_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lexical");
        let mut chunks: Vec<(i64, String)> = (1..=200)
            .map(|i| (i, format!("walrus walrus walrus note number {i}")))
            .collect();
        chunks.push((500, "a single walrus among many other words here".into()));
        let borrowed: Vec<(i64, &str)> = chunks.iter().map(|(r, t)| (*r, t.as_str())).collect();
        index_of(&path, &borrowed);
        let reader = LexicalReader::open(&path).unwrap().unwrap();
        let hits = reader.search(&terms(&["Walrus"]), 3, None).unwrap();
        assert_eq!(hits.len(), 3);
        assert!(hits.iter().all(|(rowid, _)| *rowid <= 200), "{hits:?}");
        assert!(hits[0].1 >= hits[1].1 && hits[1].1 >= hits[2].1);
        // Every top hit lies outside the filter: the filtered answer is
        // still the one chunk inside it, not an empty cut.
        let only = HashSet::from([500]);
        let hits = reader.search(&terms(&["walrus"]), 3, Some(only)).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [500]);
        assert!(
            reader
                .search(&terms(&["narwhal"]), 3, None)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn the_boost_turns_tantivys_idf_into_fts5s() {
        let idf = |with: u64, docs: u64| {
            let lucene = (1.0 + (docs as f64 - with as f64 + 0.5) / (with as f64 + 0.5)).ln();
            f64::from(fts5_idf_boost(with, docs)) * lucene
        };
        // A rare word: FTS5's idf, ln((N − n + ½)/(n + ½)).
        assert!((idf(1, 1000) - (999.5f64 / 1.5).ln()).abs() < 1e-4);
        // A word in half the chunks or more counts for (almost) nothing.
        for with in [600, 900, 1000] {
            assert!(idf(with, 1000) < 2e-6, "{with}");
        }
    }

    #[test]
    fn equal_scores_go_to_the_lower_rowid_across_segments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lexical");
        // Two commits: two segments, the lower rowids in the second.
        index_of(&path, &[(10, "same words"), (11, "same words")]);
        let mut writer = LexicalWriter::open(&path, false).unwrap();
        writer.add(3, "same words").unwrap();
        writer.add(4, "same words").unwrap();
        writer.commit(8, unread).unwrap();
        let reader = LexicalReader::open(&path).unwrap().unwrap();
        let hits = reader.search(&terms(&["same"]), 2, None).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [3, 4]);
    }

    #[test]
    fn a_filter_applied_by_intersection_or_while_pruning_gives_the_same_hits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lexical");
        let texts: Vec<(i64, String)> = (1..=300)
            .map(|i| {
                (
                    i,
                    format!("otter {} river {}", "otter ".repeat(i as usize % 7), i % 11),
                )
            })
            .collect();
        let borrowed: Vec<(i64, &str)> = texts.iter().map(|(r, t)| (*r, t.as_str())).collect();
        index_of(&path, &borrowed);
        let reader = LexicalReader::open(&path).unwrap().unwrap();
        for allowed in [
            HashSet::from([7, 14, 150, 299]),
            (1..=300).filter(|i| i % 3 == 0).collect::<HashSet<i64>>(),
        ] {
            let q = terms(&["otter", "river", "3"]);
            let pruned = reader
                .search_by(&q, 5, Some(allowed.clone()), false)
                .unwrap();
            let intersected = reader
                .search_by(&q, 5, Some(allowed.clone()), true)
                .unwrap();
            // The same chunks in the same order; scores equal but for the
            // order their terms were summed in.
            let ids = |hits: &[(i64, f32)]| hits.iter().map(|h| h.0).collect::<Vec<_>>();
            assert_eq!(ids(&pruned), ids(&intersected));
            for (a, b) in pruned.iter().zip(&intersected) {
                assert!(
                    (a.1 - b.1).abs() <= 1e-5 * a.1.abs().max(1e-6),
                    "{a:?} {b:?}"
                );
            }
            assert_eq!(pruned.len(), 4.max(allowed.len().min(5)).min(allowed.len()));
            assert!(pruned.iter().all(|(rowid, _)| allowed.contains(rowid)));
        }
    }

    #[test]
    fn deleted_and_readded_chunks_are_found_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lexical");
        index_of(&path, &[(1, "café latte"), (2, "espresso")]);
        let mut writer = LexicalWriter::open(&path, false).unwrap();
        writer.delete(1).unwrap();
        writer.delete(2).unwrap();
        writer.add(1, "cafe au lait").unwrap();
        assert_eq!(writer.commit(9, unread).unwrap(), 1);
        let reader = LexicalReader::open(&path).unwrap().unwrap();
        assert_eq!(reader.seq(), 9);
        let hits = reader.search(&terms(&["CAFÉ"]), 10, None).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1]);
        assert!(
            reader
                .search(&terms(&["espresso"]), 10, None)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_reader_sees_when_a_commit_replaced_its_view() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lexical");
        assert!(LexicalReader::open(&path).unwrap().is_none());
        index_of(&path, &[(1, "alpha")]);
        let reader = LexicalReader::open(&path).unwrap().unwrap();
        assert!(reader.is_current(&path));
        let building = building_dir(&path);
        index_of(&building, &[(1, "alpha"), (2, "beta")]);
        swap_in(&building, &path).unwrap();
        assert!(!reader.is_current(&path));
        // The old view still answers from the files it has open.
        assert_eq!(reader.num_docs(), 1);
        let fresh = LexicalReader::open(&path).unwrap().unwrap();
        assert_eq!(fresh.num_docs(), 2);
    }

    #[test]
    fn an_index_of_another_layout_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (schema, _) = schema();
        Index::create_in_dir(dir.path(), schema).unwrap();
        assert!(matches!(
            LexicalReader::open(dir.path()),
            Err(LexicalError::Foreign(_))
        ));
    }
}
