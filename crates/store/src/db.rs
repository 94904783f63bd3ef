//! The index's database connection and the few calls the store makes on
//! it: execute, one row, every row (collected or streamed), a batch, and
//! transactions. Parameters and columns pass as [`Value`]s
//! ([`crate::sql_value`]), so a statement's text and its row-mapping closure do not
//! name the driver. Statements are prepared once per connection and
//! cached.

use std::cell::Cell;
use std::path::Path;

use crate::postgres::Pg;
use crate::sql_value::FromValue;
pub(crate) use crate::sql_value::{DbError, Optional, Params, ToValue, Value, params};

/// How many prepared statements a connection keeps (the store runs
/// about a hundred distinct ones; the few a search or a write repeats stay
/// prepared).
const STATEMENT_CACHE: usize = 64;

/// The PostgreSQL advisory lock every write transaction takes ("kebab" in
/// ASCII: a number no other user of the database is likely to pick).
const WRITER_LOCK: i64 = 0x6b_6562_6162;

/// One result row.
pub(crate) enum Row<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Values(&'r [Value]),
}

impl Row<'_> {
    /// Column `column` (from 0) as `T`.
    pub(crate) fn get<T: FromValue>(&self, column: usize) -> Result<T, DbError> {
        use rusqlite::types::ValueRef;
        let value = match self {
            Row::Sqlite(row) => match row.get_ref(column)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Int(i),
                ValueRef::Real(f) => Value::Real(f),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            },
            Row::Values(values) => values
                .get(column)
                .cloned()
                .ok_or(rusqlite::Error::InvalidColumnIndex(column))?,
        };
        T::from_value(value).map_err(|found| DbError::Type {
            column,
            expected: T::NAME,
            found: format!("{found:?}"),
        })
    }
}

/// The connection under a [`Db`].
enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<Pg>),
}

/// An open database.
pub(crate) struct Db {
    conn: Conn,
    /// Whether a transaction is open on it (begun by [`Db::write_tx`] or
    /// [`Db::read_tx`]).
    in_tx: Cell<bool>,
}

impl Db {
    /// Open (creating) the SQLite database at `path` for writing: WAL,
    /// foreign keys on, waiting up to 10 s for another writer.
    pub(crate) fn open_sqlite(path: &Path) -> Result<Db, DbError> {
        let conn = rusqlite::Connection::open(path)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
        )?;
        Ok(Db::over(conn))
    }

    /// Open the SQLite database at the URI `uri` read-only.
    pub(crate) fn open_sqlite_read_only(uri: &str) -> Result<Db, DbError> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = rusqlite::Connection::open_with_flags(uri, flags)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(Db::over(conn))
    }

    /// A new, empty SQLite database in memory.
    pub(crate) fn open_sqlite_in_memory() -> Result<Db, DbError> {
        Ok(Db::over(rusqlite::Connection::open_in_memory()?))
    }

    /// Connect to the PostgreSQL database at `url`.
    pub(crate) fn open_postgres(url: &str) -> Result<Db, DbError> {
        Ok(Db {
            conn: Conn::Postgres(Box::new(Pg::connect(url)?)),
            in_tx: Cell::new(false),
        })
    }

    fn over(conn: rusqlite::Connection) -> Db {
        Db {
            conn: Conn::Sqlite(conn),
            in_tx: Cell::new(false),
        }
    }

    /// Whether this is a PostgreSQL database (else SQLite).
    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self.conn, Conn::Postgres(_))
    }

    /// Whether the database was opened read-only.
    pub(crate) fn is_read_only(&self) -> bool {
        match &self.conn {
            Conn::Sqlite(conn) => conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false),
            Conn::Postgres(_) => false,
        }
    }

    /// Whether the table `name` exists.
    pub(crate) fn has_table(&self, name: &str) -> Result<bool, DbError> {
        let sql = match self.conn {
            Conn::Sqlite(_) => {
                "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1"
            }
            // Read from the catalog table (this statement's snapshot), not
            // through `to_regclass`, whose cache can still hold "missing"
            // from before another session's commit.
            Conn::Postgres(_) => {
                "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables
                                WHERE schemaname = current_schema() AND tablename = ?1)"
            }
        };
        self.query_row(sql, params![name], |r| r.get(0))
    }

    /// Run `sql` with `params`; the number of rows changed.
    pub(crate) fn execute(&self, sql: &str, params: impl Params) -> Result<usize, DbError> {
        match &self.conn {
            Conn::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                Ok(stmt.execute(rusqlite::params_from_iter(params.values()))?)
            }
            Conn::Postgres(pg) => pg.execute(sql, &params.values()),
        }
    }

    /// Run several statements without parameters.
    pub(crate) fn execute_batch(&self, sql: &str) -> Result<(), DbError> {
        match &self.conn {
            Conn::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Conn::Postgres(pg) => pg.batch(sql),
        }
    }

    /// The first row of `sql`'s result through `f`; [`DbError::NoRow`]
    /// when there is none.
    pub(crate) fn query_row<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl FnOnce(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        match &self.conn {
            Conn::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows = stmt.query(rusqlite::params_from_iter(params.values()))?;
                match rows.next()? {
                    Some(row) => f(&Row::Sqlite(row)),
                    None => Err(DbError::NoRow),
                }
            }
            Conn::Postgres(pg) => {
                let mut f = Some(f);
                let mut found = None;
                pg.query_each(sql, &params.values(), |values| {
                    if let Some(f) = f.take() {
                        found = Some(f(&Row::Values(values)));
                    }
                    Ok::<_, DbError>(())
                })?;
                found.unwrap_or(Err(DbError::NoRow))
            }
        }
    }

    /// Every row of `sql`'s result through `f`, read to the end before
    /// the first is handed out.
    pub(crate) fn query_map<T>(
        &self,
        sql: &str,
        params: impl Params,
        mut f: impl FnMut(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<std::vec::IntoIter<Result<T, DbError>>, DbError> {
        let mut out = Vec::new();
        self.query_each(sql, params, |row| {
            out.push(f(row));
            Ok::<_, DbError>(())
        })?;
        Ok(out.into_iter())
    }

    /// `sql` to run one or more times ([`Stmt`]).
    pub(crate) fn prepare(&self, sql: &str) -> Result<Stmt<'_>, DbError> {
        if let Conn::Sqlite(conn) = &self.conn {
            conn.prepare_cached(sql)?;
        }
        Ok(Stmt {
            db: self,
            sql: sql.to_string(),
        })
    }

    /// Every row of `sql`'s result handed to `f` as it is read (nothing
    /// collected); the first error stops it.
    pub(crate) fn query_each<E: From<DbError>>(
        &self,
        sql: &str,
        params: impl Params,
        mut f: impl FnMut(&Row<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let conn = match &self.conn {
            Conn::Sqlite(conn) => conn,
            Conn::Postgres(pg) => {
                return pg.query_each(sql, &params.values(), |values| f(&Row::Values(values)));
            }
        };
        let mut stmt = conn.prepare_cached(sql).map_err(DbError::from)?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.values()))
            .map_err(DbError::from)?;
        while let Some(row) = rows.next().map_err(DbError::from)? {
            f(&Row::Sqlite(row))?;
        }
        Ok(())
    }

    /// A write transaction holding the write lock from its first statement
    /// (SQLite's `BEGIN IMMEDIATE`), so waiting for another process's
    /// write goes through the busy timeout. A deferred transaction that
    /// reads and then writes fails at once with "database is locked" when
    /// another writer got in between: SQLite bypasses the busy handler
    /// there because waiting could deadlock.
    ///
    /// On PostgreSQL the same: the transaction first takes the database's
    /// one writer lock (transaction-scoped, advisory), so writes from every
    /// machine commit one at a time — in the order they drew their
    /// change-log numbers, so a reader that sees a log row has seen every
    /// lower one (see `lexical_sync`). Writes are short (one document);
    /// parsing and embedding run outside them, in parallel.
    pub(crate) fn write_tx(&self) -> Result<Tx<'_>, DbError> {
        match self.conn {
            Conn::Sqlite(_) => self.begin("BEGIN IMMEDIATE"),
            Conn::Postgres(_) => {
                let tx = self.begin("BEGIN")?;
                tx.execute_batch(&format!("SELECT pg_advisory_xact_lock({WRITER_LOCK})"))?;
                Ok(tx)
            }
        }
    }

    /// A read transaction: its statements see one snapshot.
    pub(crate) fn read_tx(&self) -> Result<Tx<'_>, DbError> {
        self.begin(match self.conn {
            Conn::Sqlite(_) => "BEGIN DEFERRED",
            Conn::Postgres(_) => "BEGIN ISOLATION LEVEL REPEATABLE READ",
        })
    }

    fn begin(&self, sql: &str) -> Result<Tx<'_>, DbError> {
        if self.in_tx.get() {
            return Err(DbError::NestedTransaction);
        }
        self.execute_batch(sql)?;
        self.in_tx.set(true);
        Ok(Tx { db: self })
    }
}

/// A statement of a [`Db`], prepared there (and cached by the
/// connection), run by [`Stmt::execute`] or [`Stmt::query_map`].
pub(crate) struct Stmt<'d> {
    db: &'d Db,
    sql: String,
}

impl Stmt<'_> {
    /// [`Db::execute`] of this statement.
    pub(crate) fn execute(&self, params: impl Params) -> Result<usize, DbError> {
        self.db.execute(&self.sql, params)
    }

    /// [`Db::query_row`] of this statement.
    pub(crate) fn query_row<T>(
        &self,
        params: impl Params,
        f: impl FnOnce(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        self.db.query_row(&self.sql, params, f)
    }

    /// [`Db::query_map`] of this statement.
    pub(crate) fn query_map<T>(
        &self,
        params: impl Params,
        f: impl FnMut(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<std::vec::IntoIter<Result<T, DbError>>, DbError> {
        self.db.query_map(&self.sql, params, f)
    }
}

/// An open transaction on a [`Db`], rolled back when dropped uncommitted.
/// Its statements are the [`Db`]'s (it derefs to it).
pub(crate) struct Tx<'d> {
    db: &'d Db,
}

impl Tx<'_> {
    /// Commit the transaction.
    pub(crate) fn commit(self) -> Result<(), DbError> {
        self.db.execute_batch("COMMIT")?;
        self.db.in_tx.set(false);
        Ok(())
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Db;
    fn deref(&self) -> &Db {
        self.db
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.db.in_tx.replace(false) {
            // Nothing to report to: a failed rollback leaves the
            // transaction to SQLite, which rolls it back at close.
            let _ = self.db.execute_batch("ROLLBACK");
        }
    }
}
