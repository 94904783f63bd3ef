//! Reading chunks for search: lexical matches (the lexical index, or FTS5)
//! and chunks by id, both narrowed
//! by the same [`ChunkFilter`] SQL so lexical and vector hits obey the same
//! restrictions.

use kebab_core::spans::SourceSpan;
use kebab_core::trust::TrustLevel;
use std::collections::{HashMap, HashSet};

use crate::db::{DbError, Row, ToValue, Value, params};

use crate::{Store, StoreError, parse_json};

/// A chunk joined with its document: everything a search hit shows.
#[derive(Debug, Clone)]
pub struct HitRow {
    pub chunk_id: String,
    pub doc_id: String,
    /// The name of the document's root.
    pub root: String,
    pub workspace_path: String,
    pub heading_path: Vec<String>,
    pub section_label: Option<String>,
    pub text: String,
    pub spans: Vec<SourceSpan>,
    pub chunker_version: String,
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
    /// Only documents whose workspace path matches this glob (`*` crosses
    /// directories: `notes/*`).
    pub path_glob: Option<String>,
    /// Only documents carrying this tag.
    pub tag: Option<String>,
    /// Only documents of these roots (by name); every root when empty.
    pub roots: Vec<String>,
    /// Only documents in this language (`en`, `ko`, as their plugin
    /// detected it).
    pub lang: Option<String>,
    /// Only documents trusted at least this much.
    pub trust_min: Option<TrustLevel>,
}

impl ChunkFilter {
    /// Whether any restriction is set.
    pub fn is_empty(&self) -> bool {
        self.kind.is_none()
            && self.code_lang.is_none()
            && self.repo.is_none()
            && self.path_glob.is_none()
            && self.tag.is_none()
            && self.roots.is_empty()
            && self.lang.is_none()
            && self.trust_min.is_none()
    }

    /// The trust restriction as `FILTER_SQL` takes it: a JSON list of the
    /// levels admitted, or NULL for any.
    fn trust_param(&self) -> Option<String> {
        self.trust_min
            .map(|min| serde_json::to_string(&min.at_least()).expect("names serialise"))
    }

    /// The parameters of a statement using `FILTER_SQL`: the statement's
    /// own `?1` and `?2`, then the filter's `?3`–`?10`.
    fn with_params(&self, first: impl ToValue, second: impl ToValue) -> Vec<Value> {
        vec![
            first.to_value(),
            second.to_value(),
            self.kind.to_value(),
            self.code_lang.to_value(),
            self.repo.to_value(),
            self.path_glob.to_value(),
            self.tag.to_value(),
            self.roots_param().to_value(),
            self.lang.to_value(),
            self.trust_param().to_value(),
        ]
    }

    /// The roots restriction as the SQL parameter `FILTER_SQL` takes: a
    /// JSON list of names, or NULL for every root.
    fn roots_param(&self) -> Option<String> {
        (!self.roots.is_empty())
            .then(|| serde_json::to_string(&self.roots).expect("names serialise"))
    }
}

const HIT_COLUMNS: &str = "c.chunk_id, c.doc_id, d.workspace_path, c.heading_path_json,
    c.section_label, c.text, c.source_spans_json, c.chunker_version,
    json_extract(d.metadata_json, '$.repo'),
    (SELECT r.name FROM roots r WHERE r.root_id = d.root_id)";

/// The filter as SQL over `c` (chunks) and `d` (documents), parameters
/// ?3–?10; ?1 and ?2 belong to the query using it. Each parameter is
/// typed where it first appears (PostgreSQL cannot infer a type from
/// `IS NULL` or `||`).
const FILTER_SQL: &str = "
    AND (CAST(?3 AS TEXT) IS NULL OR json_extract(c.source_spans_json, '$[0].symbol') LIKE ?3 || '/%')
    AND (CAST(?4 AS TEXT) IS NULL OR json_extract(c.source_spans_json, '$[0].lang') = ?4)
    AND (CAST(?5 AS TEXT) IS NULL OR json_extract(d.metadata_json, '$.repo') = ?5)
    AND (CAST(?6 AS TEXT) IS NULL OR glob(?6, d.workspace_path))
    AND (CAST(?7 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM document_tags t
                               WHERE t.doc_id = d.doc_id AND t.tag = ?7))
    AND (CAST(?8 AS TEXT) IS NULL OR d.root_id IN (SELECT r.root_id FROM roots r
                                     WHERE r.name IN (SELECT value FROM json_each(?8))))
    AND (CAST(?9 AS TEXT) IS NULL OR d.lang = ?9)
    AND (CAST(?10 AS TEXT) IS NULL OR d.trust_level IN (SELECT value FROM json_each(?10)))";

/// A statement selecting `columns` of the chunks whose ids are the JSON
/// list ?1 and that pass the filter (`?2` unused, NULL).
fn among_ids(columns: &str) -> String {
    format!(
        "SELECT {columns}
         FROM chunks c JOIN documents d ON d.doc_id = c.doc_id
         WHERE c.chunk_id IN (SELECT value FROM json_each(?1)) AND CAST(?2 AS TEXT) IS NULL
         {FILTER_SQL}"
    )
}

fn hit_row(r: &Row<'_>) -> Result<HitRow, DbError> {
    Ok(HitRow {
        chunk_id: r.get(0)?,
        doc_id: r.get(1)?,
        root: r.get::<Option<String>>(9)?.unwrap_or_default(),
        workspace_path: r.get(2)?,
        heading_path: parse_json(&r.get::<String>(3)?),
        section_label: r.get(4)?,
        text: r.get(5)?,
        spans: SourceSpan::parse_list(&r.get::<String>(6)?),
        chunker_version: r.get(7)?,
        repo: r.get(8)?,
    })
}

/// An FTS5 MATCH expression: any of the terms, each quoted so that no user
/// input is read as FTS5 syntax, restricted to the chunk text so that every
/// hit's cited lines hold what matched (a parent heading alone is not a
/// match).
pub(crate) fn fts_expression(terms: &[String]) -> String {
    let any = terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ");
    format!("text : ({any})")
}

impl Store {
    /// The chunks holding any of `terms`, best first, as chunk ids with
    /// their BM25 relevance (larger is better), narrowed by `filter`
    /// before the best `k` are taken. Answered by the lexical index (with
    /// the chunks changed since its commit held beside it) when it can
    /// hold what SQLite holds, else by the FTS5 table (see
    /// [`crate::lexical`]). Only ids: a search reads the rows of the few
    /// it shows ([`Store::hit_rows`]), not of every candidate.
    pub fn lexical_search(
        &self,
        terms: &[String],
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(hits) = self.indexed_lexical_search(terms, k, filter)? {
            return Ok(hits);
        }
        if !self.has_full_text_table() {
            if self.derive_lexical_here()?
                && let Some(hits) = self.indexed_lexical_search(terms, k, filter)?
            {
                return Ok(hits);
            }
            return Err(StoreError::LexicalBehind(
                self.lexical_dir.clone().unwrap_or_default(),
            ));
        }
        self.fts5_search(&fts_expression(terms), k, filter)
    }

    /// [`Store::lexical_search`] by the lexical index; `None` when it
    /// cannot answer exactly (none, unreadable, out of step, too many
    /// changes not applied yet, or its search failed: said in the log).
    fn indexed_lexical_search(
        &self,
        terms: &[String],
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Option<Vec<(String, f64)>>, StoreError> {
        let found = self.with_lexical_index(|reader| {
            let started = std::time::Instant::now();
            let allowed = match filter.is_empty() {
                true => None,
                false => Some(self.filtered_rowids(filter)?),
            };
            let filtered = started.elapsed();
            let ranked = reader.search(terms, k, allowed);
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
            tracing::debug!(
                filter_ms = ms(filtered),
                engine_ms = ms(started.elapsed() - filtered),
                "lexical index"
            );
            let ranked = match ranked {
                Ok(ranked) => ranked,
                Err(e) => {
                    tracing::warn!(error = %e, "the lexical index failed: searching FTS5");
                    return Ok(None);
                }
            };
            let rowids: Vec<i64> = ranked.iter().map(|(rowid, _)| *rowid).collect();
            let mut ids = self.chunk_ids_by_rowid(&rowids)?;
            Ok(Some(
                ranked
                    .into_iter()
                    .filter_map(|(rowid, score)| Some((ids.remove(&rowid)?, f64::from(score))))
                    .collect(),
            ))
        })?;
        Ok(found.flatten())
    }

    /// The rowids of every chunk `filter` admits. Documents first (`CROSS
    /// JOIN` keeps SQLite from scanning every chunk instead): most
    /// restrictions are a document's, and a document's chunks are one
    /// index lookup away (at 100k chunks, a path filter over 5k documents:
    /// 4 ms against 134 ms chunks first).
    fn filtered_rowids(&self, filter: &ChunkFilter) -> Result<HashSet<i64>, StoreError> {
        let stmt = self.conn.prepare(&format!(
            "SELECT c.rowid FROM documents d CROSS JOIN chunks c
             WHERE c.doc_id = d.doc_id AND CAST(?1 AS TEXT) IS NULL AND CAST(?2 AS TEXT) IS NULL
             {FILTER_SQL}"
        ))?;
        let rows = stmt.query_map(
            filter.with_params(Option::<i64>::None, Option::<i64>::None),
            |r| r.get(0),
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The chunk ids of these rowids, by rowid.
    fn chunk_ids_by_rowid(&self, rowids: &[i64]) -> Result<HashMap<i64, String>, StoreError> {
        let stmt = self.conn.prepare(
            "SELECT rowid, chunk_id FROM chunks
             WHERE rowid IN (SELECT CAST(value AS BIGINT) FROM json_each(?1))",
        )?;
        let ids = serde_json::to_string(rowids).expect("rowids serialise");
        let rows = stmt.query_map(params![ids], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// FTS5 matches for an FTS5 query expression, best first, as chunk
    /// ids with their BM25 relevance (larger is better), narrowed by
    /// `filter`.
    pub(crate) fn fts5_search(
        &self,
        fts_query: &str,
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        let row = |r: &Row<'_>| Ok((r.get(0)?, -r.get::<f64>(1)?));
        if filter.is_empty() {
            // The best `k` are picked from the full-text index alone and
            // only they are looked up in the chunks (a 15-term query
            // matches most of a corpus).
            let stmt = self.conn.prepare(
                "WITH top AS (
                     SELECT rowid AS rid, bm25(chunks_fts, 0.0, 0.0, 2.0, 1.0) AS rank
                     FROM chunks_fts WHERE chunks_fts MATCH ?1
                     ORDER BY rank, rowid LIMIT ?2)
                 SELECT c.chunk_id, top.rank
                 FROM top JOIN chunks c ON c.rowid = top.rid
                 ORDER BY top.rank, c.chunk_id",
            )?;
            let rows = stmt.query_map(params![fts_query, k as i64], row)?;
            return Ok(rows.collect::<Result<_, _>>()?);
        }
        let stmt = self.conn.prepare(&format!(
            "SELECT c.chunk_id, bm25(chunks_fts, 0.0, 0.0, 2.0, 1.0) AS rank
             FROM chunks_fts
             JOIN chunks c ON c.rowid = chunks_fts.rowid
             JOIN documents d ON d.doc_id = c.doc_id
             WHERE chunks_fts MATCH ?1 {FILTER_SQL}
             ORDER BY rank, c.chunk_id
             LIMIT ?2"
        ))?;
        let rows = stmt.query_map(filter.with_params(fts_query.to_string(), k as i64), row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The chunks among `chunk_ids` that pass `filter`, in no particular
    /// order (callers keep their own ranking).
    pub fn hit_rows(
        &self,
        chunk_ids: &[String],
        filter: &ChunkFilter,
    ) -> Result<Vec<HitRow>, StoreError> {
        let stmt = self.conn.prepare(&among_ids(HIT_COLUMNS))?;
        let ids = serde_json::to_string(chunk_ids).expect("ids serialise");
        let rows = stmt.query_map(filter.with_params(ids, Option::<i64>::None), hit_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The chunks among `chunk_ids` that exist and pass `filter`: the
    /// check of [`Store::hit_rows`] without reading the rows. Without a
    /// filter only the chunk-id index is read (at 100k chunks a hybrid
    /// query's 100 vector candidates took ~430 page reads with their
    /// documents joined).
    pub fn admitted(
        &self,
        chunk_ids: &[String],
        filter: &ChunkFilter,
    ) -> Result<HashSet<String>, StoreError> {
        let ids = serde_json::to_string(chunk_ids).expect("ids serialise");
        if filter.is_empty() {
            let stmt = self.conn.prepare(
                "SELECT chunk_id FROM chunks WHERE chunk_id IN (SELECT value FROM json_each(?1))",
            )?;
            let rows = stmt.query_map(params![ids], |r| r.get(0))?;
            return Ok(rows.collect::<Result<_, _>>()?);
        }
        let stmt = self.conn.prepare(&among_ids("c.chunk_id"))?;
        let rows = stmt.query_map(filter.with_params(ids, Option::<i64>::None), |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fts5_expression_quotes_every_term() {
        assert_eq!(
            super::fts_expression(&["near(a".into(), "b\"c*".into()]),
            "text : (\"near(a\" OR \"b\"\"c*\")"
        );
    }
}
