//! What the index holds, counted: the `stats` of `schema.v1`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{Store, StoreError};

/// Counts over the whole index.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct IndexStats {
    pub documents: u64,
    pub chunks: u64,
    pub assets: u64,
    /// Rows of `embedding_records` (chunks with a stored vector).
    pub embeddings: u64,
    /// When the last ingest run finished (RFC 3339), if any.
    pub last_ingest_at: Option<String>,
    /// Documents per language label of their chunks (`rust`, `shell`,
    /// `yaml`, …); prose without a label is not counted.
    pub code_lang_breakdown: BTreeMap<String, u64>,
    /// Documents per plugin that produced them.
    pub docs_per_plugin: BTreeMap<String, u64>,
}

impl Store {
    /// A number that changes whenever another connection commits to the
    /// database, so a long-lived reader can tell cheaply whether anything
    /// was written since it last looked: SQLite's `data_version`; on
    /// PostgreSQL the snapshot's next transaction id, which any write
    /// anywhere in the cluster moves — noticed more often than needed,
    /// but a commit that finishes after a later one can go unnoticed
    /// until the next write (readers of the vectors refresh every second
    /// regardless).
    pub fn data_version(&self) -> Result<i64, StoreError> {
        let sql = match self.conn.is_postgres() {
            false => "PRAGMA data_version",
            true => "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint",
        };
        Ok(self.conn.query_row(sql, [], |r| r.get(0))?)
    }

    /// Count what the index holds.
    pub fn index_stats(&self) -> Result<IndexStats, StoreError> {
        let count = |sql: &str| -> Result<u64, StoreError> {
            Ok(self.conn.query_row(sql, [], |r| r.get::<i64>(0))? as u64)
        };
        let grouped = |sql: &str| -> Result<BTreeMap<String, u64>, StoreError> {
            let stmt = self.conn.prepare(sql)?;
            let rows =
                stmt.query_map([], |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)? as u64)))?;
            Ok(rows.collect::<Result<_, _>>()?)
        };
        Ok(IndexStats {
            documents: count("SELECT count(*) FROM documents")?,
            chunks: count("SELECT count(*) FROM chunks")?,
            assets: count("SELECT count(*) FROM assets")?,
            embeddings: count("SELECT count(*) FROM embedding_records")?,
            last_ingest_at: self.conn.query_row(
                "SELECT max(finished_at) FROM ingest_runs",
                [],
                |r| r.get(0),
            )?,
            code_lang_breakdown: grouped(
                "SELECT lang, count(DISTINCT doc_id) FROM
                   (SELECT doc_id, json_extract(source_spans_json, '$[0].lang') AS lang FROM chunks) AS c
                 WHERE lang IS NOT NULL GROUP BY lang",
            )?,
            docs_per_plugin: grouped(
                "SELECT plugin_name, count(*) FROM documents GROUP BY plugin_name",
            )?,
        })
    }
}
