//! kebab-store: everything kebab keeps on disk — the SQLite index (schema
//! migrations, one-transaction document writes, lexical (FTS5) lookups,
//! answers and chat sessions, the roots an index holds side by side), the LanceDB vector tables ([`vector`]) and
//! the one-writer lock of an index ([`writer_lock`]).
//!
//! All SQL and all LanceDB calls live in this crate. It may import
//! `kebab-core` only; it must never know plugins, embedding models, search
//! ranking, config files or any front end.
//!
//! An index this process may not write (a read-only data directory) is
//! opened read-only, so it can still be searched; a file that is not a
//! database or whose pages are corrupt is [`StoreError::Damaged`], said
//! plainly. The full-text table, derived from the chunks, is rebuilt by
//! ingest when it was dropped or fell out of step (`heal.rs`).

mod analysis;
mod answers;
mod db;
mod documents;
mod embeddings;
mod evals;
mod heal;
pub mod lexical;
mod lexical_groups;
mod lexical_pending;
mod lexical_schema;
mod lexical_sync;
mod lookup;
mod postgres;
mod retrieval;
mod roots;
mod sql_value;
mod stats;
pub mod vector;
pub mod writer_lock;

pub use analysis::PendingAnalysis;
pub use answers::{AnswerRow, SessionDeleted, SessionRow, StoredTurn, TurnRow};
pub use documents::{DocRow, IndexedDoc, NewBlock, NewChunk, NewDocument, WriteOutcome};
pub use embeddings::{CachedVector, EmbeddingRecord, MissingVector, ModelKey, text_hash};
pub use lexical_pending::LEXICAL_MAX_PENDING;
pub use lexical_sync::{LEXICAL_APPLY_EVERY, LexicalState, LexicalSync};
pub use lookup::{ChunkRow, DocRef};
pub use retrieval::{ChunkFilter, HitRow};
pub use roots::{
    MAX_ROOT_NAME, Root, WatchState, check_root_name, check_user_root_name, is_reserved_root_name,
    root_name_for,
};
pub use stats::IndexStats;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use db::{Db, Optional, params};
use kebab_core::clock::now_rfc3339;
use serde_json::Value;
pub use sql_value::DbError;

/// Numbered migrations, applied in order at open. Files are never edited
/// after landing; a change is a new file.
const MIGRATIONS: &[(u32, &str, &str)] = &[
    (
        1,
        "V001__init.sql",
        include_str!("../../../migrations/V001__init.sql"),
    ),
    (
        2,
        "V002__answers_and_chat.sql",
        include_str!("../../../migrations/V002__answers_and_chat.sql"),
    ),
    (
        3,
        "V003__vectors_korean_eval.sql",
        include_str!("../../../migrations/V003__vectors_korean_eval.sql"),
    ),
    (
        4,
        "V004__roots.sql",
        include_str!("../../../migrations/V004__roots.sql"),
    ),
    (
        5,
        "V005__lexical_log.sql",
        include_str!("../../../migrations/V005__lexical_log.sql"),
    ),
    (
        6,
        "V006__answer_hops.sql",
        include_str!("../../../migrations/V006__answer_hops.sql"),
    ),
    (
        7,
        "V007__full_text_stems.sql",
        include_str!("../../../migrations/V007__full_text_stems.sql"),
    ),
];

/// The PostgreSQL schema's migrations (`migrations-postgres/`), numbered
/// on their own; the same rules.
const POSTGRES_MIGRATIONS: &[(u32, &str, &str)] = &[(
    1,
    "V001__init.sql",
    include_str!("../../../migrations-postgres/V001__init.sql"),
)];

/// Storage failures.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("sqlite: {0}")]
    Sqlite(#[source] rusqlite::Error),
    /// The database answered with something the store did not expect (a
    /// missing row, a column of another type).
    #[error("database: {0}")]
    Db(DbError),
    /// The data directory's writer lock could not be taken.
    #[error(transparent)]
    Lock(#[from] writer_lock::LockError),
    /// The lexical index failed ([`lexical`]).
    #[error(transparent)]
    Lexical(#[from] lexical::LexicalError),
    /// The index file is not a database, or its pages are corrupt: what
    /// it held is lost (the indexed files are not).
    #[error(
        "the index file is damaged ({0}); move it aside and re-ingest — your files are untouched"
    )]
    Damaged(rusqlite::Error),
    /// A migration could not be applied.
    #[error("migration {name} failed: {source}")]
    Migration { name: &'static str, source: DbError },
    /// The database was written by a newer kebab.
    #[error("database schema v{found} is newer than this kebab (v{supported}); upgrade kebab")]
    TooNew { found: u32, supported: u32 },
    /// A read-only index written by an older kebab: it cannot be migrated.
    #[error(
        "the index (schema v{found}) needs migrating to v{supported}, and this process cannot \
         write it"
    )]
    ReadOnlyOutdated { found: u32, supported: u32 },
    /// Another file of the same root already owns this workspace path.
    #[error("workspace path `{workspace_path}` of this root is already indexed from {existing}")]
    PathConflict {
        workspace_path: String,
        existing: String,
    },
    /// A root name that cannot be one.
    #[error(
        "`{0}` cannot name a root: use 1-64 letters, digits, `-`, `_` or `.`, not starting \
         with `.` or `-`"
    )]
    BadRootName(String),
    /// A root name kept for kebab's own roots.
    #[error("`{0}` is reserved: names starting with `_` belong to kebab's own roots (`_external`)")]
    ReservedRootName(String),
    /// A root of that name, or for that directory, exists.
    #[error("the index already has a root `{0}` (for that name or that directory)")]
    RootExists(String),
    /// Team mode has no full-text table to fall back on: the lexical index
    /// this process derives from PostgreSQL's change log must answer.
    #[error(
        "the lexical index in {} is not built or not in step with PostgreSQL; run `kebab \
         ingest` here to bring it up to date",
        .0.display()
    )]
    LexicalBehind(PathBuf),
    /// No root has that name.
    #[error("the index has no root `{0}`")]
    UnknownRoot(String),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match e.sqlite_error_code() {
            Some(DatabaseCorrupt | NotADatabase) => StoreError::Damaged(e),
            _ => StoreError::Sqlite(e),
        }
    }
}

impl From<DbError> for StoreError {
    fn from(e: DbError) -> StoreError {
        match e {
            DbError::Sqlite(e) => StoreError::from(e),
            other => StoreError::Db(other),
        }
    }
}

impl StoreError {
    /// SQLite's code for the failure, if SQLite reported it.
    pub fn sqlite_code(&self) -> Option<rusqlite::ErrorCode> {
        match self {
            StoreError::Sqlite(e)
            | StoreError::Damaged(e)
            | StoreError::Migration {
                source: DbError::Sqlite(e),
                ..
            } => e.sqlite_error_code(),
            _ => None,
        }
    }

    /// Whether the failure is that this process may not write the index
    /// (a read-only file or directory).
    pub fn is_unwritable(&self) -> bool {
        use rusqlite::ErrorCode::{CannotOpen, PermissionDenied, ReadOnly};
        matches!(self, StoreError::ReadOnlyOutdated { .. })
            || matches!(
                self.sqlite_code(),
                Some(ReadOnly | CannotOpen | PermissionDenied)
            )
    }

    /// Whether the failure concerns only the rows being written (a
    /// constraint, a value too big for SQLite): that document's error, not
    /// a reason to stop the run. Anything else — disk full, I/O, a corrupt
    /// or read-only database — stops it.
    pub fn is_per_document(&self) -> bool {
        use rusqlite::ErrorCode::{ConstraintViolation, TooBig, TypeMismatch};
        match self {
            StoreError::PathConflict { .. } => true,
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                matches!(e.code, ConstraintViolation | TooBig | TypeMismatch)
            }
            StoreError::Sqlite(rusqlite::Error::ToSqlConversionFailure(_)) => true,
            // PostgreSQL: an integrity constraint (class 23) or a value it
            // cannot take (class 22, data exception).
            StoreError::Db(DbError::Postgres(e)) => e
                .code()
                .is_some_and(|c| c.code().starts_with("23") || c.code().starts_with("22")),
            _ => false,
        }
    }
}

/// An open index.
pub struct Store {
    conn: Db,
    /// Where the lexical index of this database lives (`lexical/` beside
    /// the database file).
    lexical_dir: Option<PathBuf>,
    /// The lexical index as last opened for searching.
    lexical: std::cell::RefCell<Option<lexical::LexicalReader>>,
    /// The lexical index's segments before a writer's run first brought
    /// it up to date mid-run ([`Store::sync_lexical_mid_run`]).
    lexical_before_run: Option<lexical::SegmentIds>,
    /// Counts this connection in [`OPEN_HERE`] (dropped after `conn`).
    _open_here: Option<OpenHere>,
}

/// Index files this process has open through [`Store::open`], by the path
/// they were opened by, with how many stores hold each. SQLite's locks
/// are POSIX record locks, which belong to the process: closing any
/// descriptor of a file drops all of them, those of every connection in
/// the process. Another process closing its last connection then takes
/// the lock that tells it nobody else uses the index, checkpoints and
/// deletes the write-ahead log under this process's connections, whose
/// next commits are lost. So [`check_length`], which opens and closes the
/// file, runs only while no store of this process has it open.
static OPEN_HERE: Mutex<BTreeMap<PathBuf, usize>> = Mutex::new(BTreeMap::new());

/// One store's count in [`OPEN_HERE`], given back when it drops.
struct OpenHere(PathBuf);

impl OpenHere {
    /// Count one more store of `path`. The first in this process has the
    /// file's length checked first ([`check_length`]), under the same lock
    /// as the count, so no other thread's store is opening it meanwhile.
    fn count(path: &Path) -> Result<OpenHere, StoreError> {
        let mut open = OPEN_HERE.lock().unwrap_or_else(PoisonError::into_inner);
        if !open.contains_key(path) {
            check_length(path)?;
        }
        *open.entry(path.to_path_buf()).or_insert(0) += 1;
        Ok(OpenHere(path.to_path_buf()))
    }
}

impl Drop for OpenHere {
    fn drop(&mut self) {
        let mut open = OPEN_HERE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.0) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.0);
            }
        }
    }
}

fn json_text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).expect("plain data serialises")
}

fn parse_json<T: serde::de::DeserializeOwned + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}

/// A file shorter than its header says (cut short by a crash of the disk
/// or a copy, say) is [`StoreError::Damaged`]: SQLite would only notice
/// when a query reaches a missing page, and might first answer from the
/// pages left. Skipped while a write-ahead log is in use: the header is
/// then written back before the pages after it. Never called while this
/// process has the file open in SQLite (see [`OPEN_HERE`]).
fn check_length(path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let wal = path.with_file_name(format!(
        "{}-wal",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        return Ok(());
    }
    let mut header = [0u8; 100];
    let Ok(len) = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header).and_then(|_| f.metadata()))
        .map(|m| m.len())
    else {
        // Missing (created by the open) or too short for a header: SQLite
        // itself says what is wrong.
        return Ok(());
    };
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    // The page count is valid when the change counter matches the
    // "version valid for" field (SQLite 3.7.0 and later write both).
    let pages = u64::from(be32(28));
    let counted = be32(24) == be32(92) && pages > 0;
    if header.starts_with(b"SQLite format 3\0") && counted && len < pages * page_size {
        return Err(StoreError::Damaged(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some(format!(
                "{len} bytes where its header counts {pages} pages of {page_size}: cut short"
            )),
        )));
    }
    Ok(())
}

/// The schema version recorded in `conn` (0 for a new database).
fn schema_version_of(conn: &Db) -> Result<u32, StoreError> {
    if !conn.has_table("schema_meta")? {
        return Ok(0);
    }
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM schema_meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(v.and_then(|s| s.parse().ok()).unwrap_or(0))
}

impl Store {
    /// Open (creating if needed) the database at `path` and migrate it; an
    /// existing index this process may not write is opened read-only
    /// ([`Store::open_read_only`]) instead.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_here = OpenHere::count(path)?;
        let mut store = match Store::open_writable(path) {
            Err(e) if e.is_unwritable() && path.is_file() => {
                Store::open_read_only(path).map_err(|_| e)
            }
            opened => opened,
        }?;
        store._open_here = Some(open_here);
        Ok(store)
    }

    /// Open an index to read only, for a data directory this process may
    /// not write: shared with its writers (`mode=ro`) while one has it
    /// open, else as an unchanging file (`immutable=1`: SQLite cannot
    /// create the WAL's shared-memory file in a read-only directory). The
    /// schema must be current, as nothing can be migrated.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let escaped: String = path
            .to_string_lossy()
            .chars()
            .map(|c| match c {
                '%' => "%25".to_string(),
                '?' => "%3f".to_string(),
                '#' => "%23".to_string(),
                c => c.to_string(),
            })
            .collect();
        let supported = MIGRATIONS.last().map(|m| m.0).unwrap_or(0);
        let open = |mode: &str| -> Result<Store, StoreError> {
            let conn = Db::open_sqlite_read_only(&format!("file:{escaped}?{mode}"))?;
            let store = Store::over(conn, path);
            let found = store.schema_version()?;
            if found < supported {
                return Err(StoreError::ReadOnlyOutdated { found, supported });
            }
            store.check_not_newer(supported)?;
            Ok(store)
        };
        open("mode=ro").or_else(|_| open("immutable=1"))
    }

    /// Open (creating its tables if needed) the index in the PostgreSQL
    /// database at `url` (team mode), keeping what this process derives
    /// from it (the lexical index) under `cache_dir`.
    pub fn open_postgres(url: &str, cache_dir: &Path) -> Result<Store, StoreError> {
        let mut store = Store::over(Db::open_postgres(url)?, &cache_dir.join("index"));
        store.migrate()?;
        Ok(store)
    }

    /// A store over `conn`, the database at `path` (beside which its
    /// lexical index lives).
    fn over(conn: Db, path: &Path) -> Store {
        Store {
            conn,
            lexical_dir: path.parent().map(|dir| dir.join("lexical")),
            lexical: Default::default(),
            lexical_before_run: None,
            _open_here: None,
        }
    }

    /// This index's identity: made (random) the first time it is asked
    /// for and kept in `schema_meta`, so a shared place (object storage)
    /// can tell this index's data from another's.
    pub fn index_id(&self) -> Result<String, StoreError> {
        let fresh = blake3::hash(
            format!(
                "{}/{}/{:?}",
                now_rfc3339(),
                std::process::id(),
                std::time::SystemTime::now()
            )
            .as_bytes(),
        )
        .to_hex()[..32]
            .to_string();
        self.conn.execute(
            "INSERT INTO schema_meta (key, value) VALUES ('index_id', ?1)
             ON CONFLICT(key) DO NOTHING",
            params![fresh],
        )?;
        Ok(self.conn.query_row(
            "SELECT value FROM schema_meta WHERE key = 'index_id'",
            [],
            |r| r.get(0),
        )?)
    }

    /// Whether the index has SQLite's full-text table (FTS5), which
    /// search falls back on while the lexical index cannot answer: not on
    /// PostgreSQL.
    pub fn has_full_text_table(&self) -> bool {
        !self.conn.is_postgres()
    }

    /// Whether other machines write this index too (PostgreSQL, team
    /// mode): what it holds can change between two reads of one pass.
    pub fn is_shared(&self) -> bool {
        self.conn.is_postgres()
    }

    /// Whether this index was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.conn.is_read_only()
    }

    fn open_writable(path: &Path) -> Result<Store, StoreError> {
        let conn = Db::open_sqlite(path)?;
        let mut store = Store::over(conn, path);
        store.migrate()?;
        Ok(store)
    }

    /// The schema version in force.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        schema_version_of(&self.conn)
    }

    /// A write transaction ([`Db::write_tx`]).
    pub(crate) fn write_tx(&mut self) -> Result<db::Tx<'_>, StoreError> {
        Ok(self.conn.write_tx()?)
    }

    /// The migrations of this store's backend.
    fn migrations(&self) -> &'static [(u32, &'static str, &'static str)] {
        match self.conn.is_postgres() {
            true => POSTGRES_MIGRATIONS,
            false => MIGRATIONS,
        }
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let migrations = self.migrations();
        let supported = migrations.last().map(|m| m.0).unwrap_or(0);
        if self.schema_version()? >= supported {
            return self.check_not_newer(supported);
        }
        // Re-read the version under the write lock: two processes opening a
        // new index at once must not both apply the same migration.
        let tx = self.write_tx()?;
        let current = schema_version_of(&tx)?;
        for &(id, name, sql) in migrations.iter().filter(|m| m.0 > current) {
            let wrap = |source| StoreError::Migration { name, source };
            tx.execute_batch(sql).map_err(wrap)?;
            match (tx.is_postgres(), id) {
                (false, 4) => roots::backfill_roots(&tx).map_err(wrap)?,
                (false, 7) => heal::fill_full_text(&tx).map_err(wrap)?,
                _ => {}
            }
            tx.execute(
                "INSERT INTO migrations (id, applied_at, description) VALUES (?1, ?2, ?3)",
                params![id, now_rfc3339(), name],
            )
            .map_err(wrap)?;
            tx.execute(
                "INSERT INTO schema_meta (key, value) VALUES ('schema_version', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![id.to_string()],
            )
            .map_err(wrap)?;
        }
        tx.commit()?;
        Ok(())
    }

    fn check_not_newer(&self, supported: u32) -> Result<(), StoreError> {
        let found = self.schema_version()?;
        if found > supported {
            return Err(StoreError::TooNew { found, supported });
        }
        Ok(())
    }

    /// Whether the index holds any chunk. Constant time, unlike
    /// [`Store::counts`], whose counts read every page of the document and
    /// chunk tables: search calls this on every query.
    pub fn has_chunks(&self) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT EXISTS (SELECT 1 FROM chunks)", [], |r| r.get(0))?)
    }

    /// Row counts of the main tables (documents, chunks). Whether the
    /// full-text index holds a row per chunk is
    /// [`Store::full_text_damage`]'s question.
    pub fn counts(&self) -> Result<(u64, u64), StoreError> {
        let count = |sql: &str| -> Result<u64, StoreError> {
            Ok(self.conn.query_row(sql, [], |r| r.get::<i64>(0))? as u64)
        };
        Ok((
            count("SELECT count(*) FROM documents")?,
            count("SELECT count(*) FROM chunks")?,
        ))
    }

    /// Record a finished ingest run.
    pub fn record_ingest_run(
        &self,
        run_id: &str,
        report: &Value,
        started_at: &str,
    ) -> Result<(), StoreError> {
        let n = |k: &str| report.get(k).and_then(Value::as_i64).unwrap_or(0);
        self.conn.execute(
            "INSERT INTO ingest_runs (run_id, scope_json, scanned, new_count, updated_count, skipped_count,
                                      error_count, duration_ms, started_at, finished_at, items_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                run_id,
                report.get("scope").cloned().unwrap_or(Value::Null).to_string(),
                n("scanned"),
                n("new"),
                n("updated"),
                n("skipped"),
                n("errors"),
                n("duration_ms"),
                started_at,
                now_rfc3339(),
                report.get("items").cloned().unwrap_or(Value::Null).to_string()
            ],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The database a test runs on.
    #[derive(Debug, Clone, Copy)]
    pub(crate) enum Backend {
        Sqlite,
        Postgres,
    }

    /// A new index on a backend, holding the one root (`abs`, at `/abs`)
    /// the [`doc`]s belong to, in a directory (and a PostgreSQL cluster)
    /// of its own that goes with it.
    pub(crate) struct TestIndex {
        pub(crate) store: Store,
        _cluster: Option<kebab_test_postgres::Cluster>,
        _dir: tempfile::TempDir,
    }

    impl TestIndex {
        pub(crate) fn new(backend: Backend) -> TestIndex {
            let dir = tempfile::tempdir().unwrap();
            let (mut store, cluster) = match backend {
                Backend::Sqlite => (Store::open(&dir.path().join("k.sqlite")).unwrap(), None),
                Backend::Postgres => {
                    let cluster = kebab_test_postgres::Cluster::start();
                    let url = cluster.create_database("kebab");
                    (
                        Store::open_postgres(&url, dir.path()).unwrap(),
                        Some(cluster),
                    )
                }
            };
            store.add_root("abs", Path::new("/abs"), &[]).unwrap();
            TestIndex {
                store,
                _cluster: cluster,
                _dir: dir,
            }
        }
    }

    /// A test written once and run on each backend: `NAME::sqlite` and
    /// `NAME::postgres`, each handed a fresh [`TestIndex`]'s store.
    macro_rules! on_both_backends {
        ($(#[$doc:meta])* fn $name:ident($store:ident) $body:block) => {
            $(#[$doc])*
            mod $name {
                #[allow(unused_imports)]
                use super::*;
                use crate::tests::{Backend, TestIndex};

                fn body($store: &mut crate::Store) $body

                #[test]
                fn sqlite() {
                    body(&mut TestIndex::new(Backend::Sqlite).store)
                }

                #[test]
                fn postgres() {
                    body(&mut TestIndex::new(Backend::Postgres).store)
                }
            }
        };
    }
    pub(crate) use on_both_backends;

    /// A new index at `path` holding the one root (`abs`, at `/abs`) the
    /// [`doc`]s belong to.
    pub(super) fn open_with_root(path: &Path) -> Store {
        let mut store = Store::open(path).unwrap();
        store.add_root("abs", Path::new("/abs"), &[]).unwrap();
        store
    }

    /// [`Store::lexical_search`]'s hits with their rows, best first.
    pub(super) fn lexical_hits(
        store: &Store,
        terms: &[String],
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Vec<(crate::HitRow, f64)>, StoreError> {
        let ranked = store.lexical_search(terms, k, filter)?;
        let ids: Vec<String> = ranked.iter().map(|(id, _)| id.clone()).collect();
        let mut rows: std::collections::HashMap<String, crate::HitRow> = store
            .hit_rows(&ids, &ChunkFilter::default())?
            .into_iter()
            .map(|row| (row.chunk_id.clone(), row))
            .collect();
        Ok(ranked
            .into_iter()
            .map(|(id, score)| (rows.remove(&id).expect("a ranked chunk has a row"), score))
            .collect())
    }

    /// Query terms as search hands them to [`Store::lexical_search`].
    pub(super) fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    pub(super) fn doc(path: &str, text: &str) -> NewDocument {
        let checksum = kebab_core::ids::checksum(text.as_bytes());
        let asset_id = kebab_core::ids::asset_id(&checksum);
        let doc_id = kebab_core::ids::doc_id("abs", path, &asset_id, "p1");
        NewDocument {
            root_id: 1,
            asset_id,
            checksum,
            byte_len: text.len() as u64,
            media_type: "markdown".into(),
            doc_id: doc_id.clone(),
            workspace_path: path.into(),
            source_uri: format!("/abs/{path}"),
            title: Some("T".into()),
            lang: Some("en".into()),
            source_type: "markdown".into(),
            trust_level: "primary".into(),
            parser_version: "p1".into(),
            chunker_version: "c1".into(),
            plugin_name: "markdown".into(),
            plugin_version: "1.0.0".into(),
            policy_hash: "ph".into(),
            fallback_reason: None,
            metadata: json!({}),
            provenance: json!([]),
            tags: vec!["t".into()],
            blocks: vec![NewBlock {
                block_id: format!("b-{doc_id}"),
                kind: "paragraph".into(),
                heading_path: vec![],
                span: kebab_core::spans::SourceSpan::Line { start: 1, end: 1 },
                payload: json!({}),
            }],
            chunks: vec![NewChunk {
                chunk_id: format!("c-{doc_id}"),
                text: text.into(),
                heading_path: vec!["H".into()],
                section_label: Some("H".into()),
                spans: vec![kebab_core::spans::SourceSpan::Line { start: 1, end: 1 }],
                token_estimate: 3,
                block_ids: vec![format!("b-{doc_id}")],
            }],
        }
    }

    #[test]
    fn migrations_cover_every_file_in_order() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        files.sort();
        let listed: Vec<String> = MIGRATIONS.iter().map(|m| m.1.to_string()).collect();
        assert_eq!(files, listed);
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.0 as usize, i + 1);
            assert!(m.1.starts_with(&format!("V{:03}__", m.0)));
        }
    }

    crate::tests::on_both_backends! {
        fn replace_search_and_remove_keep_fts_in_step(store) {
            assert_eq!(store.schema_version().unwrap() as usize, store.migrations().len());
            assert!(!store.has_chunks().unwrap());
            assert_eq!(
                store
                    .replace_document(&doc("a.md", "zebra stripes"))
                    .unwrap(),
                WriteOutcome::New
            );
            assert_eq!(
                store
                    .replace_document(&doc("b.md", "zebra stripes"))
                    .unwrap(),
                WriteOutcome::New
            );
            assert_eq!(store.counts().unwrap(), (2, 2));
            assert_eq!(store.full_text_damage().unwrap(), None);
            assert_eq!(
                store.replace_document(&doc("a.md", "lion mane")).unwrap(),
                WriteOutcome::Updated
            );
            assert_eq!(store.counts().unwrap(), (2, 2));
            assert_eq!(store.full_text_damage().unwrap(), None);
            let hits =
                crate::tests::lexical_hits(store, &terms(&["zebra"]), 10, &ChunkFilter::default())
                    .unwrap();
            assert_eq!(hits.len(), 1);
            assert_eq!(hits[0].0.workspace_path, "b.md");
            assert!(hits[0].1 > 0.0);
            assert_eq!(store.remove_documents(1, &["b.md".into()]).unwrap(), 1);
            assert_eq!(store.counts().unwrap(), (1, 1));
            assert_eq!(store.full_text_damage().unwrap(), None);
            assert!(store.has_chunks().unwrap());
            assert!(
                crate::tests::lexical_hits(store, &terms(&["zebra"]), 10, &ChunkFilter::default())
                    .unwrap()
                    .is_empty()
            );
            let assets: i64 = store
                .conn
                .query_row("SELECT count(*) FROM assets", [], |r| r.get(0))
                .unwrap();
            assert_eq!(assets, 1, "orphaned assets are removed");
            let listed = store.list_docs(None).unwrap();
            assert_eq!(listed[0].tags, vec!["t"]);
        }
    }

    crate::tests::on_both_backends! {
        fn same_path_from_another_root_is_a_conflict(store) {
            store.replace_document(&doc("a.md", "x")).unwrap();
            let mut other = doc("a.md", "y");
            other.source_uri = "/elsewhere/a.md".into();
            assert!(matches!(
                store.replace_document(&other),
                Err(StoreError::PathConflict { .. })
            ));
            assert_eq!(
                crate::tests::lexical_hits(store, &terms(&["x"]), 5, &ChunkFilter::default())
                    .unwrap()
                    .len(),
                1,
                "original kept"
            );
        }
    }

    #[test]
    fn the_unfiltered_and_filtered_lexical_paths_rank_alike() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open_with_root(&dir.path().join("k.sqlite"));
        let texts = [
            "otter otter otter river",
            "otter river stones",
            "river stones moss",
            "otter",
            "moss moss otter stones river",
            "unrelated words only",
        ];
        for (i, text) in texts.iter().enumerate() {
            store
                .replace_document(&doc(&format!("n/{i}.md"), text))
                .unwrap();
        }
        let query = terms(&["otter", "river", "moss"]);
        let everything = ChunkFilter {
            path_glob: Some("n/*".into()),
            ..Default::default()
        };
        // First FTS5 (no lexical index yet), then the lexical index.
        let mut orders = Vec::new();
        for indexed in [false, true] {
            if indexed {
                let sync = store.sync_lexical().unwrap();
                assert_eq!((sync.rebuilt, sync.chunks), (None, 6));
            }
            assert_eq!(
                matches!(
                    store.lexical_state().unwrap(),
                    LexicalState::InStep { chunks: 6 }
                ),
                indexed
            );
            for k in [1, 3, 10] {
                let ranked = |filter: &ChunkFilter| -> Vec<(String, f64)> {
                    crate::tests::lexical_hits(&store, &query, k, filter)
                        .unwrap()
                        .into_iter()
                        .map(|(row, score)| (row.workspace_path, score))
                        .collect()
                };
                let fast = ranked(&ChunkFilter::default());
                assert_eq!(fast, ranked(&everything), "k = {k}");
                assert_eq!(fast.len(), k.min(5));
                assert!(fast.windows(2).all(|w| w[0].1 >= w[1].1), "{fast:?}");
                if k == 10 {
                    orders.push(fast.into_iter().map(|(p, _)| p).collect::<Vec<_>>());
                }
            }
        }
        // Both engines agree on the best chunk and on what matches.
        assert_eq!(orders[0][0], orders[1][0], "{orders:?}");
        let mut sets = orders.clone();
        sets.iter_mut().for_each(|o| o.sort());
        assert_eq!(sets[0], sets[1]);
    }

    #[test]
    fn changes_not_applied_yet_rank_as_the_index_will_rank_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open_with_root(&dir.path().join("k.sqlite"));
        // Texts long enough that the index's lengths are rounded (above
        // 40 words): FTS5's scores differ from the index's there.
        let words = ["otter", "river", "moss", "stone", "reed", "heron", "pike"];
        let text = |i: usize, extra: &str| -> String {
            let body: Vec<&str> = (0..40 + i * 7)
                .map(|j| words[(i * 3 + j * j) % words.len()])
                .collect();
            format!("{} filler{i} {extra}", body.join(" "))
        };
        for i in 0..24 {
            store
                .replace_document(&doc(&format!("n/{i}.md"), &text(i, "")))
                .unwrap();
        }
        // Chunks no query matches, so that the path filter below admits
        // fewer than a twentieth of them (applied by intersection).
        for i in 0..160 {
            store
                .replace_document(&doc(&format!("m/{i}.md"), "unrelated words only"))
                .unwrap();
        }
        store.sync_lexical().unwrap();
        // A writer mid-run: updates, new chunks (one with a word the index
        // has never seen) and removals, not applied to the index yet.
        for i in [2, 5, 11] {
            store
                .replace_document(&doc(&format!("n/{i}.md"), &text(i + 30, "kingfisher")))
                .unwrap();
        }
        for i in [24, 25] {
            store
                .replace_document(&doc(&format!("n/{i}.md"), &text(i, "kingfisher otter")))
                .unwrap();
        }
        store
            .remove_documents(1, &["n/7.md".into(), "n/8.md".into()])
            .unwrap();
        assert_eq!(store.lexical_state().unwrap(), LexicalState::Pending(10));
        assert!(store.with_lexical_index(|_| Ok(())).unwrap().is_some());
        let queries = [
            terms(&["otter", "kingfisher"]),
            terms(&["river", "heron", "pike", "filler7"]),
            terms(&["moss", "filler5"]),
        ];
        let filters = [
            ChunkFilter::default(),
            ChunkFilter {
                path_glob: Some("n/2*".into()),
                ..Default::default()
            },
        ];
        let ranked = |store: &Store| -> Vec<Vec<(String, f64)>> {
            let mut all = Vec::new();
            for query in &queries {
                for filter in &filters {
                    for k in [1, 4, 30] {
                        all.push(
                            crate::tests::lexical_hits(store, query, k, filter)
                                .unwrap()
                                .into_iter()
                                .map(|(row, score)| (row.workspace_path, score))
                                .collect(),
                        );
                    }
                }
            }
            all
        };
        let pending = ranked(&store);
        let flat: Vec<&String> = pending.iter().flatten().map(|(p, _)| p).collect();
        assert!(flat.iter().any(|p| *p == "n/24.md"), "new chunks are found");
        assert!(flat.iter().all(|p| *p != "n/7.md"), "removed ones are not");
        assert_eq!(
            store.sync_lexical().unwrap().applied,
            10,
            "nothing was applied meanwhile"
        );
        let applied = ranked(&store);
        for (before, after) in pending.iter().zip(&applied) {
            let paths =
                |hits: &[(String, f64)]| hits.iter().map(|h| h.0.clone()).collect::<Vec<_>>();
            assert_eq!(paths(before), paths(after));
            for ((_, a), (_, b)) in before.iter().zip(after) {
                assert!((a - b).abs() <= 1e-5 * a.abs(), "{before:?} {after:?}");
            }
        }
        // FTS5, which rounds no lengths, would have ranked otherwise.
        let fts5 = store
            .fts5_search(
                &crate::retrieval::fts_expression(&queries[1]),
                30,
                &ChunkFilter::default(),
            )
            .unwrap();
        let indexed = &applied[6 + 2]; // queries[1], unfiltered, k = 30
        assert_eq!(fts5.len(), indexed.len());
        assert!(
            fts5.iter()
                .zip(indexed)
                .any(|((_, a), (_, b))| (a - b).abs() > 1e-4 * a.abs()),
            "the index's scores are not FTS5's here, so equal scores above mean the index answered"
        );
    }

    #[test]
    fn a_reader_holds_changed_chunks_up_to_a_bound_and_follows_the_log() {
        use crate::lexical_pending::PendingChunks;
        let dir = tempfile::tempdir().unwrap();
        let mut store = open_with_root(&dir.path().join("k.sqlite"));
        store.replace_document(&doc("a.md", "heron pike")).unwrap();
        store.replace_document(&doc("b.md", "heron reed")).unwrap();
        let span = |store: &Store| -> Option<(i64, i64)> {
            store
                .conn
                .query_row("SELECT min(seq), max(seq) FROM lexical_log", [], |r| {
                    Ok(r.get::<Option<i64>>(0)?.zip(r.get(1)?))
                })
                .unwrap()
        };
        let mut held = PendingChunks::default();
        assert!(!held.catch_up(&store.conn, span(&store), 0, 1).unwrap());
        assert_eq!((held.docs(), held.doc_freq("heron")), (0, 0));
        assert!(held.catch_up(&store.conn, span(&store), 0, 2).unwrap());
        assert_eq!(
            (held.docs(), held.tokens(), held.doc_freq("heron")),
            (2, 4, 2)
        );
        // Caught up row by row: a replaced chunk's words no longer count.
        store.replace_document(&doc("b.md", "egret")).unwrap();
        assert!(held.catch_up(&store.conn, span(&store), 0, 4).unwrap());
        assert_eq!(
            (held.docs(), held.tokens(), held.doc_freq("heron")),
            (2, 3, 1)
        );
        assert_eq!(held.doc_freq("egret"), 1);
        // Rows an index already holds (its commit is at the last one) are
        // not held again.
        let (_, last) = span(&store).unwrap();
        let mut fresh = PendingChunks::default();
        assert!(fresh.catch_up(&store.conn, span(&store), last, 0).unwrap());
        assert_eq!(fresh.docs(), 0);
        // Applied by the writer: the log empties, nothing is held.
        store.sync_lexical().unwrap();
        assert!(held.catch_up(&store.conn, span(&store), 0, 4).unwrap());
        assert_eq!((held.docs(), held.doc_freq("egret")), (0, 0));
    }

    #[test]
    fn the_segments_a_long_run_adds_are_merged_into_one_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open_with_root(&dir.path().join("k.sqlite"));
        let lexical = dir.path().join("lexical");
        let segments = || crate::lexical::segment_ids(&lexical).unwrap().len();
        store.replace_document(&doc("a.md", "alder")).unwrap();
        store.sync_lexical().unwrap();
        assert_eq!(segments(), 1);
        for (i, word) in ["birch", "cedar", "elm", "fir"].iter().enumerate() {
            store
                .replace_document(&doc(&format!("{i}.md"), word))
                .unwrap();
            store.sync_lexical_mid_run().unwrap();
        }
        assert_eq!(segments(), 5, "a segment per application");
        let sync = store.sync_lexical().unwrap();
        assert_eq!(sync.chunks, 5);
        assert_eq!(segments(), 2, "what the run added, in one");
        for word in ["alder", "birch", "fir"] {
            let hits =
                crate::tests::lexical_hits(&store, &terms(&[word]), 10, &ChunkFilter::default())
                    .unwrap();
            assert_eq!(hits.len(), 1, "{word}");
        }
        // A run that applied nothing mid-run merges nothing.
        store.replace_document(&doc("g.md", "gum")).unwrap();
        store.sync_lexical().unwrap();
        assert_eq!(segments(), 3);
    }

    #[test]
    fn the_lexical_index_follows_every_change_and_survives_being_lost() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open_with_root(&dir.path().join("k.sqlite"));
        store
            .replace_document(&doc("a.md", "zebra stripes"))
            .unwrap();
        store.replace_document(&doc("b.md", "lion mane")).unwrap();
        assert_eq!(store.lexical_state().unwrap(), LexicalState::NotBuilt);
        let sync = store.sync_lexical().unwrap();
        assert_eq!(
            (sync.rebuilt, sync.applied, sync.chunks),
            (None, 2, 2),
            "a first build"
        );
        assert_eq!(
            store.lexical_state().unwrap(),
            LexicalState::InStep { chunks: 2 }
        );
        let found = |store: &Store, word: &str| -> Vec<String> {
            crate::tests::lexical_hits(store, &terms(&[word]), 10, &ChunkFilter::default())
                .unwrap()
                .into_iter()
                .map(|(row, _)| row.workspace_path)
                .collect()
        };
        assert_eq!(found(&store, "zebra"), ["a.md"]);
        assert!(store.with_lexical_index(|_| Ok(())).unwrap().is_some());
        // An update, a new document and a removal, applied from the log.
        store
            .replace_document(&doc("a.md", "tiger stripes"))
            .unwrap();
        store
            .replace_document(&doc("c.md", "zebra crossing"))
            .unwrap();
        store.remove_documents(1, &["b.md".into()]).unwrap();
        // Rowids: a.md's new chunk and c.md's are new ones, b.md's and
        // a.md's old one are gone: four changed.
        assert_eq!(store.lexical_state().unwrap(), LexicalState::Pending(4));
        let sync = store.sync_lexical().unwrap();
        assert_eq!((sync.rebuilt, sync.applied, sync.chunks), (None, 4, 2));
        assert_eq!(found(&store, "zebra"), ["c.md"]);
        assert_eq!(found(&store, "tiger"), ["a.md"]);
        assert!(found(&store, "lion").is_empty());
        // Applying the same changes twice (a kill after the index commit,
        // before the log rows were deleted) changes nothing.
        store
            .conn
            .execute_batch("INSERT INTO lexical_log(chunk_rowid) SELECT rowid FROM chunks")
            .unwrap();
        assert_eq!(store.sync_lexical().unwrap().chunks, 2);
        assert_eq!(found(&store, "zebra"), ["c.md"]);
        // An index ahead of SQLite (SQLite lost the last transaction at a
        // power cut) is not used, and is rebuilt.
        store
            .conn
            .execute_batch(
                "INSERT INTO lexical_log(chunk_rowid) VALUES (-1);
                 DELETE FROM lexical_log;
                 UPDATE sqlite_sequence SET seq = seq - 5 WHERE name = 'lexical_log';",
            )
            .unwrap();
        assert!(matches!(
            store.lexical_state().unwrap(),
            LexicalState::OutOfStep(_)
        ));
        assert!(store.with_lexical_index(|_| Ok(())).unwrap().is_none());
        assert_eq!(found(&store, "zebra"), ["c.md"], "FTS5 answers meanwhile");
        let sync = store.sync_lexical().unwrap();
        assert!(sync.rebuilt.unwrap().contains("the chunks only up to"));
        assert!(store.with_lexical_index(|_| Ok(())).unwrap().is_some());
        // A lost or garbled index is rebuilt from the chunks.
        let lexical = dir.path().join("lexical");
        std::fs::remove_dir_all(&lexical).unwrap();
        assert_eq!(
            store.sync_lexical().unwrap().rebuilt.as_deref(),
            Some("missing")
        );
        assert_eq!(found(&store, "tiger"), ["a.md"]);
        std::fs::write(lexical.join("meta.json"), "{garbled").unwrap();
        assert!(matches!(
            store.lexical_state().unwrap(),
            LexicalState::Unreadable(_)
        ));
        // Meanwhile search answers from FTS5.
        assert_eq!(found(&store, "zebra"), ["c.md"]);
        assert!(store.sync_lexical().unwrap().rebuilt.is_some());
        assert_eq!(found(&store, "zebra"), ["c.md"]);
        assert_eq!(
            store.lexical_state().unwrap(),
            LexicalState::InStep { chunks: 2 }
        );
    }

    crate::tests::on_both_backends! {
        fn language_and_trust_filters_narrow_before_the_cut(store) {
            for (path, lang, trust) in [
                ("p.md", "en", "primary"),
                ("s.md", "en", "secondary"),
                ("g.md", "ko", "generated"),
            ] {
                let mut d = doc(path, "walrus tusks");
                d.lang = Some(lang.into());
                d.trust_level = trust.into();
                store.replace_document(&d).unwrap();
            }
            let found = |filter: ChunkFilter| -> Vec<String> {
                let mut paths: Vec<String> =
                    crate::tests::lexical_hits(store, &terms(&["walrus"]), 1, &filter)
                        .unwrap()
                        .into_iter()
                        .map(|(row, _)| row.workspace_path)
                        .collect();
                let ids: Vec<String> = crate::tests::lexical_hits(
                    store,
                    &terms(&["walrus"]),
                    10,
                    &ChunkFilter::default(),
                )
                .unwrap()
                .into_iter()
                .map(|(row, _)| row.chunk_id)
                .collect();
                let mut by_id: Vec<String> = store
                    .hit_rows(&ids, &filter)
                    .unwrap()
                    .into_iter()
                    .map(|row| row.workspace_path)
                    .collect();
                by_id.sort();
                paths.extend(by_id.into_iter().map(|p| format!("ids:{p}")));
                paths
            };
            let trust = |min| ChunkFilter {
                trust_min: Some(min),
                ..Default::default()
            };
            assert_eq!(
                found(trust(kebab_core::trust::TrustLevel::Primary)),
                vec!["p.md", "ids:p.md"]
            );
            let secondary = found(trust(kebab_core::trust::TrustLevel::Secondary));
            assert_eq!(secondary[1..], ["ids:p.md", "ids:s.md"]);
            assert_eq!(
                found(trust(kebab_core::trust::TrustLevel::Generated)).len(),
                4
            );
            let ko = ChunkFilter {
                lang: Some("ko".into()),
                ..Default::default()
            };
            assert_eq!(found(ko), vec!["g.md", "ids:g.md"]);
        }
    }

    #[test]
    fn an_index_from_before_stemming_gets_a_full_text_table_that_stems() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.sqlite");
        let mut store = open_with_root(&path);
        store
            .replace_document(&doc("a.md", "the coffee tastes sour"))
            .unwrap();
        store
            .replace_document(&doc("b.md", "zebra stripes"))
            .unwrap();
        // The index as V006 left it: an unstemmed table, at version 6.
        store
            .conn
            .execute_batch(
                "DROP TABLE chunks_fts;
                 CREATE VIRTUAL TABLE chunks_fts USING fts5(
                     chunk_id UNINDEXED, doc_id UNINDEXED, heading_path, text,
                     tokenize = 'unicode61 remove_diacritics 2');
                 DELETE FROM migrations WHERE id = 7;
                 UPDATE schema_meta SET value = '6' WHERE key = 'schema_version';",
            )
            .unwrap();
        heal::fill_full_text(&store.conn).unwrap();
        let tasting = retrieval::fts_expression(&terms(&["tasting"]));
        let filter = ChunkFilter::default();
        assert!(store.fts5_search(&tasting, 10, &filter).unwrap().is_empty());
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), 7);
        assert_eq!(store.full_text_damage().unwrap(), None);
        let hits = store.fts5_search(&tasting, 10, &filter).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(
            hits[0].0,
            doc("a.md", "the coffee tastes sour").chunks[0].chunk_id
        );
        let stripe = retrieval::fts_expression(&terms(&["stripe"]));
        assert_eq!(store.fts5_search(&stripe, 10, &filter).unwrap().len(), 1);
    }

    #[test]
    fn reopening_does_not_reapply_migrations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.sqlite");
        drop(Store::open(&path).unwrap());
        let store = Store::open(&path).unwrap();
        let n: i64 = store
            .conn
            .query_row("SELECT count(*) FROM migrations", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n as usize, MIGRATIONS.len());
    }
}
