//! The full-text index rebuilt from the chunks. `chunks_fts` and the
//! triggers on `chunks` that keep it in step are derived data: when the
//! table or a trigger is missing or differs from what the migrations
//! create, or the table does not hold one row per chunk (or cannot be
//! read), ingest drops them, creates them again exactly as the migrations
//! define them (applied to an empty in-memory database, so their SQL is
//! written once, in the migrations) and fills the table from the chunks.
//! Readers (search, `kebab doctor`) ask the same question
//! ([`Store::full_text_damage`]) and say what is wrong until an ingest
//! rebuilds it.
//!
//! The lexical index's change log (`lexical_log`) is derived data too: a
//! table dropped or altered, or a sequence number past [`MAX_LOG_SEQ`]
//! (where the next change would overflow), is made again empty, every
//! chunk logged anew and the lexical index set aside to be rebuilt
//! ([`Store::heal_lexical_log`]); readers meanwhile search FTS5.
//!
//! On PostgreSQL (team mode) there is no full-text table, and the log's
//! table is the migrations' own: nothing here applies there.

use std::collections::HashMap;

use crate::db::{Db, DbError};

use crate::{MIGRATIONS, Store, StoreError};

/// The FTS row of every chunk, as the `chunks_ai` trigger (V003) writes
/// it: Korean morphemes, when the chunk has any, in front of its text. A
/// test checks a rebuilt table against the rows the triggers wrote.
const FTS_ROWS: &str = "INSERT INTO chunks_fts(rowid, chunk_id, doc_id, heading_path, text)
     SELECT rowid, chunk_id, doc_id, heading_path_json,
            CASE WHEN tokenized_korean_text IS NOT NULL AND tokenized_korean_text != ''
                 THEN tokenized_korean_text || ' ' || text
                 ELSE text END
     FROM chunks";

/// Every chunk logged for the lexical index to take again ([`crate::lexical`]).
const RELOG_EVERY_CHUNK: &str = "INSERT INTO lexical_log(chunk_rowid) SELECT rowid FROM chunks";

/// The full-text table's row count. FTS5 keeps one `chunks_fts_docsize`
/// row per indexed row (rowid and column sizes), so counting them walks a
/// small b-tree (~1 ms at 100k chunks) where `count(*)` on the table itself
/// reads every row's text (~80 ms): search asks on every new index version.
const FTS_ROW_COUNT: &str = "SELECT count(*) FROM chunks_fts_docsize";

/// The highest `lexical_log` sequence number a sound index reaches: far
/// past any real number of changes, and far enough from `i64::MAX` that
/// nothing computed from it overflows.
pub const MAX_LOG_SEQ: i64 = 1 << 62;

/// `(type, name, sql)` of one object of the full-text index.
type FtsObject = (String, String, String);

/// The objects the full-text index is made of, by name: `chunks_fts` and
/// every trigger on `chunks`, with the SQL the migrations create them with.
fn defined_objects() -> Result<Vec<FtsObject>, StoreError> {
    let reference = Db::open_sqlite_in_memory()?;
    for (_, _, sql) in MIGRATIONS {
        reference.execute_batch(sql)?;
    }
    objects(&reference)
}

/// `(type, name, sql)` of `chunks_fts` and the triggers on `chunks` in `conn`.
fn objects(conn: &Db) -> Result<Vec<FtsObject>, StoreError> {
    let stmt = conn.prepare(
        "SELECT type, name, sql FROM sqlite_master
         WHERE name = 'chunks_fts' OR (type = 'trigger' AND tbl_name = 'chunks')
         ORDER BY type = 'trigger', name",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// What is wrong with the full-text index in `conn` (nothing: empty), and
/// how many chunks there are: an object of `defined` missing or differing
/// from it, or — when all are in place — a row count other than one per
/// chunk, or a table that cannot be read. The one rule both the rebuild
/// and the readers go by; `conn` should hold one snapshot (a transaction).
fn damage(conn: &Db, defined: &[FtsObject]) -> Result<(Vec<String>, i64), StoreError> {
    let present: HashMap<String, String> = objects(conn)?
        .into_iter()
        .map(|(_, name, sql)| (name, sql))
        .collect();
    let mut wrong: Vec<String> = defined
        .iter()
        .filter(|(_, name, sql)| present.get(name) != Some(sql))
        .map(|(kind, name, _)| match present.contains_key(name) {
            true => format!("{kind} {name} altered"),
            false => format!("{kind} {name} missing"),
        })
        .collect();
    let chunks: i64 = conn.query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
    if wrong.is_empty() {
        match conn.query_row(FTS_ROW_COUNT, [], |r| r.get::<i64>(0)) {
            Ok(rows) if rows == chunks => {}
            Ok(rows) => wrong.push(format!("{rows} rows for {chunks} chunks")),
            Err(e) => wrong.push(format!("unreadable ({e})")),
        }
    }
    Ok((wrong, chunks))
}

/// Fill an empty full-text table with the row of every chunk ([`FTS_ROWS`]):
/// when it is rebuilt, and by the migration that remade it (V007).
pub(crate) fn fill_full_text(conn: &Db) -> Result<(), DbError> {
    conn.execute_batch(FTS_ROWS)
}

/// The SQL the migrations create `lexical_log` with.
fn defined_log_table() -> Result<String, StoreError> {
    let reference = Db::open_sqlite_in_memory()?;
    for (_, _, sql) in MIGRATIONS {
        reference.execute_batch(sql)?;
    }
    Ok(log_table(&reference)?.unwrap_or_default())
}

/// The SQL `lexical_log` has in `conn`, if it exists.
fn log_table(conn: &Db) -> Result<Option<String>, StoreError> {
    use crate::db::Optional;
    Ok(conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'lexical_log'",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

/// What is wrong with the lexical change log in `conn` (compared with
/// `defined`, its SQL), if anything.
fn log_damage(conn: &Db, defined: &str) -> Result<Option<String>, StoreError> {
    match log_table(conn)? {
        None => return Ok(Some("table lexical_log missing".into())),
        Some(sql) if sql != defined => return Ok(Some("table lexical_log altered".into())),
        Some(_) => {}
    }
    let seq: i64 = conn.query_row(
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'lexical_log'), 0),
                    coalesce((SELECT max(seq) FROM lexical_log), 0))",
        [],
        |r| r.get(0),
    )?;
    Ok((seq > MAX_LOG_SEQ).then(|| format!("lexical_log sequence at {seq}, past {MAX_LOG_SEQ}")))
}

impl Store {
    /// Rebuild the lexical change log when it was dropped, altered or
    /// pushed past [`MAX_LOG_SEQ`] (see the module doc): made again, every
    /// chunk logged anew, and the lexical index's commit removed so the
    /// run's end builds it again from the chunks. Meant for a writer
    /// holding the writer lock. What was wrong, when anything was.
    pub fn heal_lexical_log(&mut self) -> Result<Option<String>, StoreError> {
        if self.conn.is_postgres() {
            return Ok(None);
        }
        let defined = defined_log_table()?;
        let tx = self.write_tx()?;
        let Some(wrong) = log_damage(&tx, &defined)? else {
            return Ok(None);
        };
        tracing::warn!(problem = %wrong, "rebuilding the lexical change log");
        tx.execute_batch("DROP TABLE IF EXISTS lexical_log")?;
        tx.execute_batch(&defined)?;
        tx.execute_batch(RELOG_EVERY_CHUNK)?;
        tx.commit()?;
        if let Some(dir) = &self.lexical_dir {
            match std::fs::remove_file(dir.join("meta.json")) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(crate::lexical::LexicalError::Io(e).into()),
            }
        }
        *self.lexical.borrow_mut() = None;
        Ok(Some(format!(
            "the lexical index's change log was damaged ({wrong}): made it again; the lexical \
             index is rebuilt from the chunks"
        )))
    }

    /// What is wrong with the full-text index, when anything is (see the
    /// module doc): read in one snapshot, so a concurrent ingest's commit
    /// never shows as rows out of step. For readers; the rebuild is
    /// [`Store::heal_full_text`]'s, by the same rule.
    pub fn full_text_damage(&self) -> Result<Option<String>, StoreError> {
        if !self.has_full_text_table() {
            return Ok(None);
        }
        let defined = defined_objects()?;
        let snapshot = self.conn.read_tx()?;
        let (wrong, _) = damage(&snapshot, &defined)?;
        drop(snapshot);
        Ok((!wrong.is_empty()).then(|| wrong.join(", ")))
    }

    /// Rebuild the full-text index when it is not what the migrations make
    /// of the chunks (see the module doc). Meant for a writer holding the
    /// writer lock; one transaction. What was wrong, when anything was.
    pub fn heal_full_text(&mut self) -> Result<Option<String>, StoreError> {
        if !self.has_full_text_table() {
            return Ok(None);
        }
        let defined = defined_objects()?;
        let tx = self.write_tx()?;
        let (wrong, chunks) = damage(&tx, &defined)?;
        if wrong.is_empty() {
            return Ok(None);
        }
        tracing::warn!(problems = ?wrong, "rebuilding the full-text index");
        for (kind, name, _) in &defined {
            if kind == "trigger" {
                tx.execute_batch(&format!("DROP TRIGGER IF EXISTS \"{name}\""))?;
            }
        }
        tx.execute_batch("DROP TABLE IF EXISTS chunks_fts")?;
        for (kind, _, sql) in &defined {
            if kind != "trigger" {
                tx.execute_batch(sql)?;
            }
        }
        fill_full_text(&tx)?;
        for (kind, _, sql) in &defined {
            if kind == "trigger" {
                tx.execute_batch(sql)?;
            }
        }
        // The lexical index's triggers are among those that were missing
        // or altered: what it missed meanwhile is unknown, so every chunk
        // is logged for the lexical index to take again.
        tx.execute_batch(RELOG_EVERY_CHUNK)?;
        tx.commit()?;
        Ok(Some(format!(
            "the full-text index was damaged ({}): rebuilt it from {chunks} chunks",
            wrong.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::doc;

    /// Every FTS row, in rowid order.
    fn fts_rows(store: &Store) -> Vec<(i64, String, String, String, String)> {
        let stmt = store
            .conn
            .prepare(
                "SELECT rowid, chunk_id, doc_id, heading_path, text FROM chunks_fts ORDER BY rowid",
            )
            .unwrap();
        stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    #[test]
    fn a_rebuilt_full_text_index_holds_what_the_triggers_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = crate::tests::open_with_root(&dir.path().join("k.sqlite"));
        for (i, text) in ["서울에서 만나요", "plain words", "more plain words"]
            .iter()
            .enumerate()
        {
            store
                .replace_document(&doc(&format!("{i}.md"), text))
                .unwrap();
        }
        let tokens: Vec<(String, String)> = store
            .chunks_missing_analysis(10)
            .unwrap()
            .into_iter()
            .map(|p| {
                let t = if p.text.starts_with('서') {
                    "서울 에서"
                } else {
                    ""
                };
                (p.chunk_id, t.to_string())
            })
            .collect();
        store.set_analysed_words(&tokens).unwrap();
        let written = fts_rows(&store);
        assert!(
            written.iter().any(|r| r.4 == "서울 에서 서울에서 만나요"),
            "{written:?}"
        );
        assert_eq!(
            store.heal_full_text().unwrap(),
            None,
            "a sound index is left alone"
        );

        let breakages = [
            "DROP TABLE chunks_fts",
            "DROP TRIGGER chunks_ai",
            "DELETE FROM chunks_fts WHERE rowid = (SELECT max(rowid) FROM chunks_fts)",
            "DROP TRIGGER chunks_au; CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN SELECT 1; END",
        ];
        assert_eq!(store.full_text_damage().unwrap(), None);
        for breakage in breakages {
            store.conn.execute_batch(breakage).unwrap();
            // Readers see what the rebuild sees.
            let seen = store.full_text_damage().unwrap();
            assert!(seen.is_some(), "{breakage}: not seen by readers");
            let healed = store.heal_full_text().unwrap();
            assert!(
                healed.is_some_and(|h| h.contains(&seen.unwrap())),
                "{breakage}: not noticed"
            );
            assert_eq!(fts_rows(&store), written, "{breakage}");
            assert_eq!(store.heal_full_text().unwrap(), None, "{breakage}: healed");
            assert_eq!(
                store.full_text_damage().unwrap(),
                None,
                "{breakage}: healed"
            );
        }
        // The triggers work again: a new document is searchable.
        store.replace_document(&doc("new.md", "zebra")).unwrap();
        let hits = crate::tests::lexical_hits(
            &store,
            &crate::tests::terms(&["zebra"]),
            5,
            &crate::ChunkFilter::default(),
        )
        .unwrap();
        assert_eq!(hits.len(), 1);
    }
}
