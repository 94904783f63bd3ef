//! Chunks and documents by id, for `kebab fetch`.

use crate::db::{DbError, Optional, Row, params};
use kebab_core::spans::SourceSpan;

use crate::{Store, StoreError, parse_json};

/// A stored chunk with its position in its document.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub chunk_id: String,
    pub doc_id: String,
    pub ordinal: u32,
    pub text: String,
    pub heading_path: Vec<String>,
    pub spans: Vec<SourceSpan>,
    pub block_ids: Vec<String>,
    pub token_estimate: u32,
    pub chunker_version: String,
}

/// What fetching needs to know about a document.
#[derive(Debug, Clone)]
pub struct DocRef {
    pub doc_id: String,
    /// The name of its root.
    pub root: String,
    pub workspace_path: String,
    pub source_uri: String,
    pub checksum: String,
    pub updated_at: String,
}

const CHUNK_COLUMNS: &str = "chunk_id, doc_id, ordinal, text, heading_path_json, source_spans_json,
                             block_ids_json, token_estimate, chunker_version";

fn chunk_row(r: &Row<'_>) -> Result<ChunkRow, DbError> {
    Ok(ChunkRow {
        chunk_id: r.get(0)?,
        doc_id: r.get(1)?,
        ordinal: r.get::<i64>(2)? as u32,
        text: r.get(3)?,
        heading_path: parse_json(&r.get::<String>(4)?),
        spans: SourceSpan::parse_list(&r.get::<String>(5)?),
        block_ids: parse_json(&r.get::<String>(6)?),
        token_estimate: r.get::<i64>(7)? as u32,
        chunker_version: r.get(8)?,
    })
}

impl Store {
    /// One chunk by id.
    pub fn chunk(&self, chunk_id: &str) -> Result<Option<ChunkRow>, StoreError> {
        let sql = format!("SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_id = ?1");
        Ok(self
            .conn
            .query_row(&sql, params![chunk_id], chunk_row)
            .optional()?)
    }

    /// All chunks of a document in order.
    pub fn doc_chunks(&self, doc_id: &str) -> Result<Vec<ChunkRow>, StoreError> {
        let sql = format!("SELECT {CHUNK_COLUMNS} FROM chunks WHERE doc_id = ?1 ORDER BY ordinal");
        let stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(params![doc_id], chunk_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A document by id.
    pub fn doc_ref(&self, doc_id: &str) -> Result<Option<DocRef>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT d.doc_id, d.workspace_path, d.source_uri, a.checksum, d.updated_at,
                        (SELECT r.name FROM roots r WHERE r.root_id = d.root_id)
                 FROM documents d JOIN assets a ON a.asset_id = d.asset_id WHERE d.doc_id = ?1",
                params![doc_id],
                |r| {
                    Ok(DocRef {
                        doc_id: r.get(0)?,
                        root: r.get::<Option<String>>(5)?.unwrap_or_default(),
                        workspace_path: r.get(1)?,
                        source_uri: r.get(2)?,
                        checksum: r.get(3)?,
                        updated_at: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// `(span, text)` of every block of a document, in order.
    pub fn doc_blocks(
        &self,
        doc_id: &str,
    ) -> Result<Vec<(Option<SourceSpan>, String)>, StoreError> {
        let stmt = self.conn.prepare(
            "SELECT source_span_json, json_extract(payload_json, '$.text') FROM blocks
             WHERE doc_id = ?1 ORDER BY ordinal",
        )?;
        let rows = stmt.query_map(params![doc_id], |r| {
            Ok((
                SourceSpan::parse(&r.get::<String>(0)?),
                r.get::<Option<String>>(1)?.unwrap_or_default(),
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
