//! Chunks changed since the lexical index's last commit, held in memory
//! beside it so that a reader ranks them as the index will once the
//! writer applies them: while a writer is mid-run (or stopped before its
//! changes were applied), search still answers from the index rather than
//! from FTS5, whose cost grows with every chunk.
//!
//! The changes are the rows of `lexical_log` ([`crate::lexical_sync`])
//! after the last one the index's commit holds. A reader catches up with
//! the rows logged since it last looked, reads the chunks they name as
//! they are now (or finds them gone), and analyses them as the index's
//! tokenizer does. A search then skips the index's entries for every chunk
//! those rows name (stale or deleted) and scores the chunks held here with
//! the same BM25 weights, the statistics being the index's plus these
//! chunks'. A tantivy index counts replaced entries until it drops them
//! (a merge, or a segment left with none alive), so the scores are the
//! ones the index gives after the writer's commit unless that commit drops
//! some, or rewrites the entries of unchanged chunks whose group gained
//! its first copy or lost its searched entry ([`crate::lexical_groups`]);
//! then they differ by those entries' share of the statistics.

use std::collections::{HashMap, HashSet};

use crate::db::{Db, params};
use tantivy::Score;
use tantivy::fieldnorm::FieldNormReader;
use tantivy::query::Bm25Weight;

use kebab_core::analysis;

use crate::StoreError;
use crate::lexical::indexed_text;

/// The most changed chunks a reader holds (a few MB); beyond them (a
/// writer replacing a large part of the index) search answers from FTS5
/// until the writer applies them. Writers apply their changes every
/// [`crate::LEXICAL_APPLY_EVERY`] chunks, so a run stays below this.
pub const LEXICAL_MAX_PENDING: usize = 20_000;

/// How many distinct chunks the log's rows after `seq` name (0: all rows).
pub(crate) fn chunks_logged_after(conn: &Db, seq: i64) -> Result<usize, StoreError> {
    Ok(conn
        .prepare("SELECT count(DISTINCT chunk_rowid) FROM lexical_log WHERE seq > ?1")?
        .query_row(params![seq], |r| r.get::<i64>(0))? as usize)
}

/// One changed chunk as the index would hold it.
#[derive(Debug)]
struct Analysed {
    /// Its words (ids into [`PendingChunks::words`]) with their counts,
    /// by id.
    counts: Vec<(u32, u32)>,
    /// Its length in words, as the index's field norm.
    fieldnorm_id: u8,
    /// Its length in words.
    len: u32,
}

/// The chunks the log names, as of its rows up to [`PendingChunks::upto`].
#[derive(Debug, Default)]
pub struct PendingChunks {
    /// The first log row held (none: the log was empty).
    first: Option<i64>,
    /// The last log row held.
    upto: i64,
    /// Every chunk rowid the log names: the index's entries for them are
    /// stale or deleted.
    rowids: HashSet<i64>,
    /// Those of them that exist now, analysed.
    chunks: HashMap<i64, Analysed>,
    /// Every word seen, by id.
    words: HashMap<String, u32>,
    /// In how many of [`PendingChunks::chunks`] each word id occurs.
    doc_freq: HashMap<u32, u64>,
    /// Their words in all.
    tokens: u64,
}

impl PendingChunks {
    /// Catch up with the log, whose (first, last) rows are `span` (none:
    /// it is empty), for an index that holds the changes up to `applied`
    /// (a writer killed between its commit and deleting the log leaves
    /// rows the index has), reading chunks through `conn` (the reader's
    /// snapshot). False when the rows after `applied` name more than `max`
    /// chunks (readers hold [`LEXICAL_MAX_PENDING`]): what was held is
    /// dropped, and search answers from FTS5.
    pub(crate) fn catch_up(
        &mut self,
        conn: &Db,
        span: Option<(i64, i64)>,
        applied: i64,
        max: usize,
    ) -> Result<bool, StoreError> {
        let Some((first, last)) = span else {
            *self = PendingChunks::default();
            return Ok(true);
        };
        if self.first != Some(first) {
            *self = PendingChunks {
                first: Some(first),
                upto: first.saturating_sub(1).max(applied),
                ..PendingChunks::default()
            };
        }
        if last <= self.upto {
            return Ok(true);
        }
        // `last` is the log's last row in this snapshot: every row after
        // `upto` is one to read.
        let new = chunks_logged_after(conn, self.upto)?;
        if new > max {
            *self = PendingChunks::default();
            return Ok(false);
        }
        let started = std::time::Instant::now();
        let upto = self.upto;
        conn.query_each(
            "SELECT l.chunk_rowid, c.tokenized_korean_text, c.text
             FROM (SELECT DISTINCT chunk_rowid FROM lexical_log WHERE seq > ?1 AND seq <= ?2) l
             LEFT JOIN chunks c ON c.rowid = l.chunk_rowid",
            params![upto, last],
            |row| {
                let rowid: i64 = row.get(0)?;
                let korean: Option<String> = row.get(1)?;
                let text: Option<String> = row.get(2)?;
                self.forget(rowid);
                self.rowids.insert(rowid);
                if let Some(text) = text {
                    let analysed = self.analyse(&indexed_text(korean.as_deref(), &text));
                    self.chunks.insert(rowid, analysed);
                }
                Ok::<_, StoreError>(())
            },
        )?;
        if self.rowids.len() > max {
            *self = PendingChunks::default();
            return Ok(false);
        }
        self.upto = last;
        tracing::debug!(
            changed = new,
            held = self.chunks.len(),
            ms = started.elapsed().as_secs_f64() * 1000.0,
            "lexical index: caught up with the changed chunks"
        );
        Ok(true)
    }

    /// Drop what is held of the chunk `rowid`, if anything.
    fn forget(&mut self, rowid: i64) {
        let Some(old) = self.chunks.remove(&rowid) else {
            return;
        };
        self.tokens -= u64::from(old.len);
        for (word, _) in old.counts {
            if let Some(n) = self.doc_freq.get_mut(&word) {
                *n -= 1;
            }
        }
    }

    /// A chunk's indexed text as the index's tokenizer splits it (its
    /// words are short enough for tantivy to keep every one).
    fn analyse(&mut self, text: &str) -> Analysed {
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let mut len = 0u32;
        for word in analysis::words(text) {
            let next = self.words.len() as u32;
            let id = *self.words.entry(word.term).or_insert(next);
            *counts.entry(id).or_default() += 1;
            len += 1;
        }
        let mut counts: Vec<(u32, u32)> = counts.into_iter().collect();
        counts.sort_unstable();
        for (word, _) in &counts {
            *self.doc_freq.entry(*word).or_default() += 1;
        }
        self.tokens += u64::from(len);
        Analysed {
            counts,
            fieldnorm_id: FieldNormReader::fieldnorm_to_id(len),
            len,
        }
    }

    /// Whether the index's entry for `rowid` is stale or deleted.
    pub(crate) fn names(&self, rowid: i64) -> bool {
        self.rowids.contains(&rowid)
    }

    /// Chunks held (that exist).
    pub(crate) fn docs(&self) -> u64 {
        self.chunks.len() as u64
    }

    /// Their words in all.
    pub(crate) fn tokens(&self) -> u64 {
        self.tokens
    }

    /// In how many held chunks the index term `word` occurs.
    pub(crate) fn doc_freq(&self, word: &str) -> u64 {
        self.words
            .get(word)
            .and_then(|id| self.doc_freq.get(id))
            .copied()
            .unwrap_or(0)
    }

    /// The held chunks (among `allowed`, when given) that hold any of
    /// `weighted` words, with their BM25 score: each word's weight
    /// applied to its count and the chunk's length, summed.
    pub(crate) fn scored(
        &self,
        weighted: &[(String, Bm25Weight)],
        allowed: Option<&HashSet<i64>>,
    ) -> Vec<(i64, Score)> {
        let weights: Vec<(u32, &Bm25Weight)> = weighted
            .iter()
            .filter_map(|(word, weight)| Some((*self.words.get(word)?, weight)))
            .collect();
        if weights.is_empty() {
            return Vec::new();
        }
        self.chunks
            .iter()
            .filter(|(rowid, _)| allowed.is_none_or(|a| a.contains(rowid)))
            .filter_map(|(rowid, chunk)| {
                let mut score = None;
                for (id, weight) in &weights {
                    if let Ok(i) = chunk.counts.binary_search_by_key(id, |(w, _)| *w) {
                        let tf = chunk.counts[i].1;
                        *score.get_or_insert(0.0) += weight.score(chunk.fieldnorm_id, tf);
                    }
                }
                Some((*rowid, score?))
            })
            .collect()
    }
}
