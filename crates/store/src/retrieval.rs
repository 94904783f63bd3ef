//! Reading chunks for search: FTS5 matches and chunks by id, both narrowed
//! by the same [`ChunkFilter`] SQL so lexical and vector hits obey the same
//! restrictions.

use kebab_core::spans::SourceSpan;
use kebab_core::trust::TrustLevel;
use rusqlite::params;

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
/// ?3–?10; ?1 and ?2 belong to the query using it.
const FILTER_SQL: &str = "
    AND (?3 IS NULL OR json_extract(c.source_spans_json, '$[0].symbol') LIKE ?3 || '/%')
    AND (?4 IS NULL OR json_extract(c.source_spans_json, '$[0].lang') = ?4)
    AND (?5 IS NULL OR json_extract(d.metadata_json, '$.repo') = ?5)
    AND (?6 IS NULL OR d.workspace_path GLOB ?6)
    AND (?7 IS NULL OR EXISTS (SELECT 1 FROM document_tags t
                               WHERE t.doc_id = d.doc_id AND t.tag = ?7))
    AND (?8 IS NULL OR d.root_id IN (SELECT r.root_id FROM roots r
                                     WHERE r.name IN (SELECT value FROM json_each(?8))))
    AND (?9 IS NULL OR d.lang = ?9)
    AND (?10 IS NULL OR d.trust_level IN (SELECT value FROM json_each(?10)))";

fn hit_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HitRow> {
    Ok(HitRow {
        chunk_id: r.get(0)?,
        doc_id: r.get(1)?,
        root: r.get::<_, Option<String>>(9)?.unwrap_or_default(),
        workspace_path: r.get(2)?,
        heading_path: parse_json(&r.get::<_, String>(3)?),
        section_label: r.get(4)?,
        text: r.get(5)?,
        spans: SourceSpan::parse_list(&r.get::<_, String>(6)?),
        chunker_version: r.get(7)?,
        repo: r.get(8)?,
    })
}

impl Store {
    /// FTS5 matches for an FTS5 query expression, best first, with their
    /// BM25 relevance (larger is better), narrowed by `filter`.
    pub fn lexical_search(
        &self,
        fts_query: &str,
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Vec<(HitRow, f64)>, StoreError> {
        // Without a filter the best `k` are picked from the full-text index
        // alone and only they are joined with their chunk and document:
        // reading every matching chunk's text before the cut took as long
        // as ranking (a 15-term query matches most of a corpus).
        let row = |r: &rusqlite::Row<'_>| Ok((hit_row(r)?, -r.get::<_, f64>(10)?));
        if filter.is_empty() {
            let mut stmt = self.conn.prepare_cached(&format!(
                "WITH top AS (
                     SELECT rowid AS rid, bm25(chunks_fts, 0.0, 0.0, 2.0, 1.0) AS rank
                     FROM chunks_fts WHERE chunks_fts MATCH ?1
                     ORDER BY rank, rowid LIMIT ?2)
                 SELECT {HIT_COLUMNS}, top.rank
                 FROM top
                 JOIN chunks c ON c.rowid = top.rid
                 JOIN documents d ON d.doc_id = c.doc_id
                 ORDER BY top.rank, c.chunk_id"
            ))?;
            let rows = stmt.query_map(params![fts_query, k as i64], row)?;
            return Ok(rows.collect::<Result<_, _>>()?);
        }
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {HIT_COLUMNS}, bm25(chunks_fts, 0.0, 0.0, 2.0, 1.0) AS rank
             FROM chunks_fts
             JOIN chunks c ON c.rowid = chunks_fts.rowid
             JOIN documents d ON d.doc_id = c.doc_id
             WHERE chunks_fts MATCH ?1 {FILTER_SQL}
             ORDER BY rank, c.chunk_id
             LIMIT ?2"
        ))?;
        let rows = stmt.query_map(
            params![
                fts_query,
                k as i64,
                filter.kind,
                filter.code_lang,
                filter.repo,
                filter.path_glob,
                filter.tag,
                filter.roots_param(),
                filter.lang,
                filter.trust_param()
            ],
            row,
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The chunks among `chunk_ids` that pass `filter`, in no particular
    /// order (callers keep their own ranking).
    pub fn hit_rows(
        &self,
        chunk_ids: &[String],
        filter: &ChunkFilter,
    ) -> Result<Vec<HitRow>, StoreError> {
        let sql = format!(
            "SELECT {HIT_COLUMNS}
             FROM chunks c JOIN documents d ON d.doc_id = c.doc_id
             WHERE c.chunk_id IN (SELECT value FROM json_each(?1)) AND ?2 IS NULL {FILTER_SQL}"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let ids = serde_json::to_string(chunk_ids).expect("ids serialise");
        let rows = stmt.query_map(
            params![
                ids,
                Option::<i64>::None,
                filter.kind,
                filter.code_lang,
                filter.repo,
                filter.path_glob,
                filter.tag,
                filter.roots_param(),
                filter.lang,
                filter.trust_param()
            ],
            hit_row,
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
