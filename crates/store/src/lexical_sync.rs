//! Keeping the lexical index ([`crate::lexical`]) in step with the chunks:
//! the writer applies `lexical_log` or rebuilds, readers open (and reopen)
//! the index and ask whether it holds exactly what SQLite holds.
//!
//! The rule both sides go by: every commit of the index records the last
//! `lexical_log` sequence number whose change it holds. SQLite's own last
//! number for the table (`sqlite_sequence`) only grows. The index is in
//! step when the log is empty and the two numbers are equal; an index
//! whose number is ahead of SQLite's (SQLite lost a transaction the index
//! had, e.g. at a power cut) or behind the log's first row (changes were
//! dropped unapplied) is rebuilt.
//!
//! On PostgreSQL (team mode) every machine keeps an index of its own and
//! follows the one log, whose rows are not deleted by applying them; the
//! last number is the log's sequence's. Write transactions commit one at
//! a time under the database's writer lock ([`crate::db::Db::write_tx`]),
//! so log rows become visible in the order of their numbers and applying
//! "up to the highest row seen" never skips a row committed later.

use std::path::Path;
use std::time::Instant;

use crate::db::{Db, params};

use crate::lexical::{
    LexicalError, LexicalReader, LexicalWriter, building_dir, clear_leftovers, indexed_text,
    merge_added, segment_ids, swap_in,
};
use crate::lexical_groups::CountedGroups;
use crate::lexical_pending::chunks_logged_after;
use crate::{Store, StoreError};

/// Whether the lexical index answers searches ([`Store::lexical_state`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexicalState {
    /// It holds exactly the chunks (this many).
    InStep { chunks: u64 },
    /// There is none yet: the next ingest builds it.
    NotBuilt,
    /// Chunks changed that it does not have yet (this many): a writer is
    /// mid-run, or stopped before applying them; the next run does.
    Pending(u64),
    /// It is not what SQLite holds (why): the next ingest rebuilds it.
    OutOfStep(String),
    /// It cannot be opened (why): the next ingest rebuilds it.
    Unreadable(String),
}

/// What [`Store::sync_lexical`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexicalSync {
    /// Why the index was rebuilt from the chunks, when it was.
    pub rebuilt: Option<String>,
    /// Logged chunk changes applied.
    pub applied: usize,
    /// Chunks in the index afterwards.
    pub chunks: u64,
    /// Time taken, in milliseconds.
    pub ms: f64,
}

/// Logged changes above which they are applied on several threads.
const MANY_CHANGES: usize = 10_000;

/// Chunks a writer stores between two applications of the log to the
/// index ([`Store::sync_lexical`]) on a long run, so that the changes
/// readers hold beside the index stay below
/// [`crate::LEXICAL_MAX_PENDING`].
pub const LEXICAL_APPLY_EVERY: usize = 5_000;

/// How long a search waits for another process (or thread) of its
/// machine that holds the writer lock before answering that the lexical
/// index is behind ([`Store::derive_lexical_here`]).
const DERIVE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The last `lexical_log` sequence number handed out (0 before the first
/// row), whether or not its row is still there.
fn last_seq(conn: &Db) -> Result<i64, StoreError> {
    let sql = match conn.is_postgres() {
        false => "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'lexical_log'), 0)",
        true => {
            "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('lexical_log', 'seq')), 0)"
        }
    };
    Ok(conn.query_row(sql, [], |r| r.get(0))?)
}

/// The log's (first, last) sequence numbers, `None` when it is empty.
fn log_span(conn: &Db) -> Result<Option<(i64, i64)>, StoreError> {
    let (first, last): (Option<i64>, Option<i64>) = conn
        .prepare("SELECT min(seq), max(seq) FROM lexical_log")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(first.zip(last))
}

/// Why an index that holds the changes up to `seq` cannot be brought in
/// step by applying the log, whose (first, last) rows are `span`, if it
/// cannot: see the module doc.
fn out_of_step(
    conn: &Db,
    seq: i64,
    span: Option<(i64, i64)>,
) -> Result<Option<String>, StoreError> {
    let last = last_seq(conn)?;
    let first = span.map_or(last.saturating_add(1), |(first, _)| first);
    Ok(
        if last > crate::heal::MAX_LOG_SEQ || seq > crate::heal::MAX_LOG_SEQ {
            Some(format!(
                "the change log's sequence is at {}, past its bound",
                last.max(seq)
            ))
        } else if seq > last {
            Some(format!(
                "it holds changes up to {seq}, the chunks only up to {last}"
            ))
        } else if seq < first.saturating_sub(1) {
            Some(format!(
                "it holds changes up to {seq}, and those up to {} were dropped unapplied",
                first.saturating_sub(1)
            ))
        } else {
            None
        },
    )
}

impl Store {
    /// `f` applied to the lexical index as of its latest commit (reopened
    /// when a commit replaced the one open), with the chunks changed since
    /// held beside it, when together they hold what SQLite holds now;
    /// `None` when they cannot (no index, an index that cannot be opened
    /// or is out of step, more changes than a reader holds). `f` runs
    /// inside one read transaction, so whatever it reads from SQLite is
    /// the state the index and changes were read in.
    pub(crate) fn with_lexical_index<T>(
        &self,
        f: impl FnOnce(&LexicalReader) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let Some(dir) = self.lexical_dir.as_deref() else {
            return Ok(None);
        };
        let mut slot = self.lexical.borrow_mut();
        if slot.as_ref().is_none_or(|r| !r.is_current(dir)) {
            *slot = LexicalReader::open(dir).unwrap_or_else(|e| {
                tracing::debug!(error = %e, "lexical index not opened: searching FTS5");
                None
            });
        }
        if let Some(why) = slot.as_ref().and_then(|r| r.damage()) {
            // Reading on would crash the process (SIGBUS): drop the view;
            // the next open reads the files as they are now, and the next
            // ingest rebuilds an index that does not open.
            tracing::warn!(reason = %why, "lexical index damaged under a reader: searching FTS5");
            *slot = None;
            return Ok(None);
        }
        let Some(reader) = slot.as_mut() else {
            return Ok(None);
        };
        let snapshot = self.conn.read_tx()?;
        // A change log that cannot be read (dropped, say) is damage the
        // next ingest rebuilds; meanwhile FTS5 answers.
        let span = match log_span(&snapshot) {
            Ok(span) => span,
            Err(e) => {
                tracing::warn!(error = %e, "the lexical change log cannot be read: searching FTS5");
                return Ok(None);
            }
        };
        if let Some(why) = out_of_step(&snapshot, reader.seq(), span)? {
            tracing::debug!(reason = %why, "lexical index out of step: searching FTS5");
            return Ok(None);
        }
        let applied = reader.seq();
        if !reader
            .pending_mut()
            .catch_up(&snapshot, span, applied, crate::LEXICAL_MAX_PENDING)?
        {
            tracing::debug!("too many chunks changed since the lexical index: searching FTS5");
            return Ok(None);
        }
        // A damaged index can make tantivy panic (a file rewritten with
        // other bytes under the map): served around like any damage.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(reader)));
        drop(snapshot);
        match result {
            Ok(result) => Ok(Some(result?)),
            Err(_) => {
                tracing::warn!("the lexical index failed a search (damaged?): searching FTS5");
                *slot = None;
                Ok(None)
            }
        }
    }

    /// Whether the lexical index answers searches, and if not why
    /// (search then answers from FTS5). For `kebab doctor`.
    pub fn lexical_state(&self) -> Result<LexicalState, StoreError> {
        let Some(dir) = self.lexical_dir.as_deref() else {
            return Ok(LexicalState::NotBuilt);
        };
        if !dir.join("meta.json").exists() {
            return Ok(LexicalState::NotBuilt);
        }
        let reader = match LexicalReader::open(dir) {
            Ok(Some(reader)) => reader,
            Ok(None) => return Ok(LexicalState::NotBuilt),
            Err(e) => return Ok(LexicalState::Unreadable(e.to_string())),
        };
        let snapshot = self.conn.read_tx()?;
        let span = match log_span(&snapshot) {
            Ok(span) => span,
            Err(e) => {
                return Ok(LexicalState::OutOfStep(format!(
                    "its change log cannot be read ({e})"
                )));
            }
        };
        if let Some(why) = out_of_step(&snapshot, reader.seq(), span)? {
            return Ok(LexicalState::OutOfStep(why));
        }
        Ok(match chunks_logged_after(&snapshot, reader.seq())? {
            0 => LexicalState::InStep {
                chunks: reader.num_docs(),
            },
            n => LexicalState::Pending(n as u64),
        })
    }

    /// [`Store::sync_lexical`] in the middle of a writer's run (every
    /// [`LEXICAL_APPLY_EVERY`] chunks), so that readers keep few changes
    /// beside the index. The segments each such call adds are merged into
    /// one by the run's closing [`Store::sync_lexical`].
    pub fn sync_lexical_mid_run(&mut self) -> Result<LexicalSync, StoreError> {
        if self.lexical_before_run.is_none()
            && let Some(dir) = &self.lexical_dir
        {
            self.lexical_before_run = Some(segment_ids(dir).unwrap_or_default());
        }
        self.apply_lexical()
    }

    /// Bring the lexical index up to date with the chunks, at the end of a
    /// writer's run. Meant for a writer holding the writer lock, after its
    /// chunks are written and analysed: logged changes are applied and
    /// committed, then the log rows are deleted; an index that is missing,
    /// unreadable, of another layout, out of step (see the module doc) or
    /// not one entry per chunk afterwards is rebuilt. A first build (every
    /// chunk is in the log) is not a repair. The segments the run added
    /// mid-run ([`Store::sync_lexical_mid_run`]) are merged into one.
    pub fn sync_lexical(&mut self) -> Result<LexicalSync, StoreError> {
        let before = self.lexical_before_run.take();
        let sync = self.apply_lexical()?;
        if let (Some(before), Some(dir), None) = (before, &self.lexical_dir, &sync.rebuilt) {
            // The index is up to date either way: a merge that fails
            // leaves more segments, which tantivy's policy merges later.
            let started = Instant::now();
            if let Err(e) = merge_added(dir, &before) {
                tracing::warn!(error = %e, "the lexical index's new segments were not merged");
            }
            return Ok(LexicalSync {
                ms: sync.ms + started.elapsed().as_secs_f64() * 1000.0,
                ..sync
            });
        }
        Ok(sync)
    }

    /// On PostgreSQL, where no FTS5 table stands in for it: bring this
    /// machine's lexical index up to date from the log (building it when
    /// there is none), so a machine that never ingested — a query replica
    /// with an empty data directory — searches. Another search building it
    /// meanwhile is waited for (up to [`DERIVE_WAIT`]); skipped (false)
    /// when the lock stays held longer, by an ingest say, whose run ends
    /// by doing the same.
    pub(crate) fn derive_lexical_here(&self) -> Result<bool, StoreError> {
        let Some(data_dir) = self.lexical_dir.as_deref().and_then(Path::parent) else {
            return Ok(false);
        };
        let lock = crate::writer_lock::WriterLock::acquire_within(
            data_dir,
            "kebab (lexical index)",
            DERIVE_WAIT,
        )?;
        let Some(_lock) = lock else {
            return Ok(false);
        };
        let sync = self.apply_lexical()?;
        tracing::info!(
            applied = sync.applied,
            chunks = sync.chunks,
            "lexical index brought up to date from PostgreSQL"
        );
        Ok(true)
    }

    /// Apply the log to the lexical index, or rebuild it ([`Store::sync_lexical`]).
    fn apply_lexical(&self) -> Result<LexicalSync, StoreError> {
        let Some(dir) = self.lexical_dir.clone() else {
            return Ok(LexicalSync::default());
        };
        // On PostgreSQL other machines commit meanwhile: every read below
        // sees one snapshot (SQLite's writer holds the writer lock).
        let _snapshot = match self.conn.is_postgres() {
            true => Some(self.conn.read_tx()?),
            false => None,
        };
        let started = Instant::now();
        let span = log_span(&self.conn)?;
        let chunks: i64 = self
            .conn
            .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
        let mut sync = LexicalSync::default();
        let applied = match dir.join("meta.json").exists() {
            false if self.every_chunk_logged()? => {
                sync.applied = chunks_logged_after(&self.conn, 0)?;
                Err(None)
            }
            false => Err(Some("missing".to_string())),
            true => match self.apply_log(&dir, span.map(|(_, last)| last)) {
                Err(StoreError::Lexical(e)) => Err(Some(e.to_string())),
                other => Ok(other?),
            },
        };
        let rebuild = match applied {
            Ok((applied, entries)) => {
                sync.applied = applied;
                sync.chunks = entries;
                (entries != chunks as u64)
                    .then(|| Some(format!("{entries} entries for {chunks} chunks")))
            }
            Err(why) => Some(why),
        };
        if let Some(why) = rebuild {
            if let Some(why) = &why {
                tracing::warn!(reason = %why, "rebuilding the lexical index from the chunks");
            }
            // The changes the chunks read hold: SQLite's last number (its
            // writer lock keeps others out); on PostgreSQL the last row of
            // this snapshot, as a number drawn by another machine's
            // uncommitted write is not in the chunks read.
            let upto = match self.conn.is_postgres() {
                false => last_seq(&self.conn)?,
                true => span.map_or(0, |(_, last)| last),
            };
            sync.chunks = self.rebuild_lexical(&dir, upto)?;
            sync.rebuilt = why;
        }
        // On PostgreSQL every machine keeps a lexical index of its own,
        // each following the one log: rows another may not have applied
        // yet stay (trimming them is left to a maintainer, not built).
        if let Some((_, last)) = span.filter(|_| !self.conn.is_postgres()) {
            self.conn
                .execute("DELETE FROM lexical_log WHERE seq <= ?1", params![last])?;
        }
        sync.ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(sync)
    }

    /// Whether every chunk has a row in the log (an index never built).
    fn every_chunk_logged(&self) -> Result<bool, StoreError> {
        // An anti-join both engines plan as one (hashed or indexed) pass,
        // however long the log (on PostgreSQL it is never trimmed).
        Ok(self.conn.query_row(
            "SELECT NOT EXISTS (SELECT 1 FROM chunks c
                                LEFT JOIN lexical_log l ON l.chunk_rowid = c.rowid
                                WHERE l.chunk_rowid IS NULL)",
            [],
            |r| r.get(0),
        )?)
    }

    /// Apply the log rows up to `upto` (none: the log is empty) to the
    /// index in `dir` and commit: (changes applied, entries in the index).
    /// A failure of the index itself, or an index out of step, is
    /// [`StoreError::Lexical`].
    fn apply_log(&self, dir: &Path, upto: Option<i64>) -> Result<(usize, u64), StoreError> {
        let Some(reader) = LexicalReader::open(dir)? else {
            return Err(crate::lexical::LexicalError::Foreign("no commit".into()).into());
        };
        if let Some(why) = out_of_step(&self.conn, reader.seq(), log_span(&self.conn)?)? {
            return Err(crate::lexical::LexicalError::Foreign(why).into());
        }
        // Only the rows after the index's own commit: on PostgreSQL the
        // log keeps every row ever written.
        let from = reader.seq();
        let Some(upto) = upto.filter(|upto| *upto > from) else {
            return Ok((0, reader.num_docs()));
        };
        drop(reader);
        let rowids: Vec<i64> = self
            .conn
            .prepare("SELECT DISTINCT chunk_rowid FROM lexical_log WHERE seq > ?1 AND seq <= ?2")?
            .query_map(params![from, upto], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut writer = LexicalWriter::open(dir, rowids.len() > MANY_CHANGES)?;
        for rowid in &rowids {
            writer.delete(*rowid)?;
        }
        self.each_chunk(
            "WHERE rowid IN (SELECT chunk_rowid FROM lexical_log WHERE seq > ?1 AND seq <= ?2)",
            params![from, upto],
            |rowid, text| Ok(writer.add(rowid, text)?),
        )?;
        let entries = writer.commit(upto, |rowid| self.indexed_text_of(rowid))?;
        Ok((rowids.len(), entries))
    }

    /// `f` of the rowid and indexed text of each chunk `condition` selects.
    fn each_chunk(
        &self,
        condition: &str,
        params: impl crate::db::Params,
        mut f: impl FnMut(i64, &str) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.conn.query_each(
            &format!("SELECT rowid, tokenized_korean_text, text FROM chunks {condition}"),
            params,
            |row| {
                let korean: Option<String> = row.get(1)?;
                let text: String = row.get(2)?;
                f(row.get(0)?, &indexed_text(korean.as_deref(), &text))
            },
        )
    }

    /// The text the lexical index holds of the chunk `rowid`. A chunk the
    /// index holds that is gone (removed without a log row) is a lexical
    /// error: the index is rebuilt.
    fn indexed_text_of(&self, rowid: i64) -> Result<String, StoreError> {
        let mut found = None;
        self.each_chunk("WHERE rowid = ?1", params![rowid], |_, text| {
            found = Some(text.to_string());
            Ok(())
        })?;
        found.ok_or_else(|| {
            LexicalError::Foreign(format!("chunk {rowid} is gone without being logged")).into()
        })
    }

    /// Build the index afresh from every chunk beside `dir`, recording
    /// that it holds the log's changes up to `seq`, then put it in its
    /// place; the chunks it holds.
    fn rebuild_lexical(&self, dir: &Path, seq: i64) -> Result<u64, StoreError> {
        clear_leftovers(dir)?;
        let building = building_dir(dir);
        // Two passes over the chunks: their groups counted, then written.
        let mut counted = CountedGroups::default();
        self.each_chunk("", [], |_, text| {
            counted.count(text);
            Ok(())
        })?;
        let mut writer = LexicalWriter::create(&building, counted)?;
        self.each_chunk("", [], |rowid, text| Ok(writer.add(rowid, text)?))?;
        let entries = writer.commit(seq, |rowid| self.indexed_text_of(rowid))?;
        swap_in(&building, dir)?;
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChunkFilter;
    use crate::tests::{doc, lexical_hits, open_with_root, terms};

    #[test]
    fn log_rows_the_index_already_holds_are_not_counted_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open_with_root(&dir.path().join("k.sqlite"));
        for i in 0..6 {
            let text = format!("otter river {}", "moss ".repeat(i));
            store
                .replace_document(&doc(&format!("n/{i}.md"), &text))
                .unwrap();
        }
        store.sync_lexical().unwrap();
        store
            .replace_document(&doc("n/1.md", "otter otter heron"))
            .unwrap();
        store
            .replace_document(&doc("n/9.md", "river heron"))
            .unwrap();
        // A writer killed after the index's commit, before it deleted the
        // log rows that commit holds.
        let lexical = dir.path().join("lexical");
        let (_, last) = log_span(&store.conn).unwrap().unwrap();
        store.apply_log(&lexical, Some(last)).unwrap();
        let query = terms(&["otter", "heron", "moss"]);
        let scores: Vec<f64> = lexical_hits(&store, &query, 10, &ChunkFilter::default())
            .unwrap()
            .into_iter()
            .map(|(_, score)| score)
            .collect();
        let reader = LexicalReader::open(&lexical).unwrap().unwrap();
        let alone: Vec<f64> = reader
            .search(&query, 10, None)
            .unwrap()
            .into_iter()
            .map(|(_, score)| f64::from(score))
            .collect();
        assert_eq!(scores.len(), 7);
        assert_eq!(scores, alone, "the index's own statistics");
    }

    #[test]
    fn a_group_whose_copies_went_unlogged_is_rebuilt_not_stuck() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open_with_root(&dir.path().join("k.sqlite"));
        for path in ["n/a.md", "n/b.md", "n/c.md"] {
            store.replace_document(&doc(path, "otter river")).unwrap();
        }
        store.sync_lexical().unwrap();
        // b's and c's chunks (copies of a's text) vanish without a log row
        // (the logging trigger missing meanwhile), then a's document is
        // removed, logged: no copy is left to take the searched entry's
        // place.
        let trigger: String = store
            .conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'chunks_lexical_ad'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        store
            .conn
            .execute_batch(&format!(
                "DROP TRIGGER chunks_lexical_ad;
                 DELETE FROM chunks WHERE rowid IN (SELECT c.rowid FROM chunks c
                   JOIN documents d ON d.doc_id = c.doc_id
                   WHERE d.workspace_path IN ('n/b.md', 'n/c.md'));
                 {trigger};"
            ))
            .unwrap();
        store.remove_documents(1, &["n/a.md".into()]).unwrap();
        store.replace_document(&doc("n/d.md", "heron")).unwrap();
        let sync = store.sync_lexical().unwrap();
        assert!(sync.rebuilt.is_some(), "{sync:?}");
        assert_eq!(sync.chunks, 1);
        let found = lexical_hits(
            &store,
            &terms(&["otter", "heron"]),
            10,
            &ChunkFilter::default(),
        )
        .unwrap();
        assert_eq!(
            found
                .iter()
                .map(|(row, _)| row.workspace_path.as_str())
                .collect::<Vec<_>>(),
            ["n/d.md"]
        );
    }
}
