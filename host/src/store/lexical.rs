//! Lexical search over the FTS5 index.

use rusqlite::params;
use serde_json::Value;

use super::{Store, StoreError, parse_json};

/// One FTS5 match joined with its chunk and document.
#[derive(Debug, Clone)]
pub struct LexicalRow {
    pub chunk_id: String,
    pub doc_id: String,
    pub workspace_path: String,
    pub heading_path: Vec<String>,
    pub section_label: Option<String>,
    pub text: String,
    pub spans: Value,
    pub chunker_version: String,
    /// BM25 relevance, larger is better.
    pub bm25: f64,
    /// Git work tree the document belongs to.
    pub repo: Option<String>,
}

/// Restrictions on which chunks a search may return.
#[derive(Debug, Clone, Default)]
pub struct ChunkFilter {
    /// Only resources of this Kubernetes kind (symbol `Kind/…`).
    pub kind: Option<String>,
    /// Only code chunks of this language label (`rust`, `yaml`, …).
    pub code_lang: Option<String>,
    /// Only documents from the git work tree with this name.
    pub repo: Option<String>,
}

impl Store {
    /// FTS5 matches for an FTS5 query expression, best first, narrowed by
    /// `filter`.
    pub fn lexical_search(
        &self,
        fts_query: &str,
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Vec<LexicalRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.chunk_id, c.doc_id, d.workspace_path, c.heading_path_json, c.section_label, c.text,
                    c.source_spans_json, c.chunker_version, bm25(chunks_fts, 0.0, 0.0, 2.0, 1.0) AS rank,
                    json_extract(d.metadata_json, '$.repo')
             FROM chunks_fts
             JOIN chunks c ON c.rowid = chunks_fts.rowid
             JOIN documents d ON d.doc_id = c.doc_id
             WHERE chunks_fts MATCH ?1
               AND (?3 IS NULL OR json_extract(c.source_spans_json, '$[0].symbol') LIKE ?3 || '/%')
               AND (?4 IS NULL OR json_extract(c.source_spans_json, '$[0].lang') = ?4)
               AND (?5 IS NULL OR json_extract(d.metadata_json, '$.repo') = ?5)
             ORDER BY rank, c.chunk_id
             LIMIT ?2",
        )?;
        let rows = stmt.query_map(
            params![
                fts_query,
                k as i64,
                filter.kind,
                filter.code_lang,
                filter.repo
            ],
            |r| {
                Ok(LexicalRow {
                    chunk_id: r.get(0)?,
                    doc_id: r.get(1)?,
                    workspace_path: r.get(2)?,
                    heading_path: parse_json(&r.get::<_, String>(3)?),
                    section_label: r.get(4)?,
                    text: r.get(5)?,
                    spans: serde_json::from_str(&r.get::<_, String>(6)?).unwrap_or(Value::Null),
                    chunker_version: r.get(7)?,
                    bm25: -r.get::<_, f64>(8)?,
                    repo: r.get(9)?,
                })
            },
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
