//! The SQLite index: schema migrations, one-transaction document writes,
//! lexical (FTS5) lookups and listings.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde_json::Value;

/// Numbered migrations, applied in order at open. Files are never edited
/// after landing; a change is a new file.
const MIGRATIONS: &[(u32, &str, &str)] = &[
    (
        1,
        "V001__init.sql",
        include_str!("../../migrations/V001__init.sql"),
    ),
    (
        2,
        "V002__answers_and_chat.sql",
        include_str!("../../migrations/V002__answers_and_chat.sql"),
    ),
];

/// Storage failures.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A migration could not be applied.
    #[error("migration {name} failed: {source}")]
    Migration {
        name: &'static str,
        source: rusqlite::Error,
    },
    /// The database was written by a newer kebab.
    #[error("database schema v{found} is newer than this kebab (v{supported}); upgrade kebab")]
    TooNew { found: u32, supported: u32 },
    /// Another document already owns this workspace path.
    #[error(
        "workspace path `{workspace_path}` is already indexed from {existing}; \
         set [workspace] root in the config so both trees get distinct paths"
    )]
    PathConflict {
        workspace_path: String,
        existing: String,
    },
}

/// One document ready to be written, IDs already derived.
#[derive(Debug, Clone)]
pub struct NewDocument {
    pub asset_id: String,
    pub checksum: String,
    pub byte_len: u64,
    pub media_type: String,
    pub doc_id: String,
    pub workspace_path: String,
    pub source_uri: String,
    pub title: Option<String>,
    pub lang: Option<String>,
    pub source_type: String,
    pub parser_version: String,
    pub chunker_version: String,
    pub plugin_name: String,
    pub plugin_version: String,
    pub policy_hash: String,
    pub fallback_reason: Option<String>,
    pub metadata: Value,
    pub provenance: Value,
    pub tags: Vec<String>,
    pub blocks: Vec<NewBlock>,
    pub chunks: Vec<NewChunk>,
}

/// A block row.
#[derive(Debug, Clone)]
pub struct NewBlock {
    pub block_id: String,
    pub kind: String,
    pub heading_path: Vec<String>,
    pub span: Value,
    pub payload: Value,
}

/// A chunk row.
#[derive(Debug, Clone)]
pub struct NewChunk {
    pub chunk_id: String,
    pub text: String,
    pub heading_path: Vec<String>,
    pub section_label: Option<String>,
    pub spans: Value,
    pub token_estimate: u32,
    pub block_ids: Vec<String>,
}

/// What the index already knows about a path, for skip decisions.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedDoc {
    pub source_uri: String,
    pub checksum: String,
    pub plugin_name: String,
    pub plugin_version: String,
    pub policy_hash: String,
}

/// Whether a write created or replaced a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    New,
    Updated,
}

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

/// A listed document.
#[derive(Debug, Clone)]
pub struct DocRow {
    pub doc_id: String,
    pub workspace_path: String,
    pub title: Option<String>,
    pub lang: Option<String>,
    pub tags: Vec<String>,
    pub trust_level: String,
    pub source_type: String,
    pub byte_len: u64,
    pub chunk_count: u64,
    pub created_at: String,
    pub updated_at: String,
    pub parser_version: String,
    pub chunker_version: String,
    pub plugin_name: String,
    pub plugin_version: String,
    pub fallback_reason: Option<String>,
    /// Git work tree, branch and commit, when the file is in one.
    pub repo: Option<String>,
    pub git_branch: Option<String>,
    pub git_commit: Option<String>,
}

/// An open index.
pub struct Store {
    conn: Connection,
}

/// Current UTC time, RFC 3339.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .expect("UTC timestamps format")
}

fn json_text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).expect("plain data serialises")
}

fn parse_json<T: serde::de::DeserializeOwned + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}

impl Store {
    /// Open (creating if needed) the database at `path` and migrate it.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
        )?;
        let mut store = Store { conn };
        store.migrate()?;
        Ok(store)
    }

    /// The schema version in force.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let has_meta: bool = self.conn.query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_meta'",
            [],
            |r| r.get(0),
        )?;
        if !has_meta {
            return Ok(0);
        }
        let v: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM schema_meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        Ok(v.and_then(|s| s.parse().ok()).unwrap_or(0))
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let current = self.schema_version()?;
        let supported = MIGRATIONS.last().map(|m| m.0).unwrap_or(0);
        if current > supported {
            return Err(StoreError::TooNew {
                found: current,
                supported,
            });
        }
        for &(id, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
            let tx = self.conn.transaction()?;
            let wrap = |source| StoreError::Migration { name, source };
            tx.execute_batch(sql).map_err(wrap)?;
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
            tx.commit()?;
        }
        Ok(())
    }

    /// Every indexed document keyed by workspace path.
    pub fn indexed_docs(&self) -> Result<HashMap<String, IndexedDoc>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT d.workspace_path, d.source_uri, a.checksum, d.plugin_name, d.plugin_version, d.policy_hash
             FROM documents d JOIN assets a ON a.asset_id = d.asset_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                IndexedDoc {
                    source_uri: r.get(1)?,
                    checksum: r.get(2)?,
                    plugin_name: r.get(3)?,
                    plugin_version: r.get(4)?,
                    policy_hash: r.get(5)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Write one document — asset, document, tags, blocks, chunks (and through
    /// triggers its FTS rows) — in a single transaction, replacing whatever
    /// was stored for its workspace path.
    pub fn replace_document(&mut self, doc: &NewDocument) -> Result<WriteOutcome, StoreError> {
        let tx = self.conn.transaction()?;
        let previous: Option<(String, String)> = tx
            .query_row(
                "SELECT source_uri, created_at FROM documents WHERE workspace_path = ?1",
                params![doc.workspace_path],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((uri, _)) = &previous
            && uri != &doc.source_uri
        {
            return Err(StoreError::PathConflict {
                workspace_path: doc.workspace_path.clone(),
                existing: uri.clone(),
            });
        }
        delete_by_path(&tx, &doc.workspace_path)?;
        let now = now_rfc3339();
        let created_at = previous.as_ref().map_or(now.as_str(), |p| p.1.as_str());
        tx.execute(
            "INSERT INTO assets (asset_id, source_uri, workspace_path, media_type, byte_len, checksum,
                                 storage_kind, storage_path, discovered_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'reference', ?2, ?7)
             ON CONFLICT(asset_id) DO NOTHING",
            params![
                doc.asset_id,
                doc.source_uri,
                doc.workspace_path,
                doc.media_type,
                doc.byte_len as i64,
                doc.checksum,
                now
            ],
        )?;
        tx.execute(
            "INSERT INTO documents (doc_id, asset_id, workspace_path, source_uri, title, lang, source_type,
                                    trust_level, parser_version, chunker_version, plugin_name, plugin_version,
                                    policy_hash, fallback_reason, doc_version, schema_version, metadata_json,
                                    provenance_json, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'primary', ?8, ?9, ?10, ?11, ?12, ?13, 1, 1, ?14, ?15, ?16, ?17)",
            params![
                doc.doc_id,
                doc.asset_id,
                doc.workspace_path,
                doc.source_uri,
                doc.title,
                doc.lang,
                doc.source_type,
                doc.parser_version,
                doc.chunker_version,
                doc.plugin_name,
                doc.plugin_version,
                doc.policy_hash,
                doc.fallback_reason,
                doc.metadata.to_string(),
                doc.provenance.to_string(),
                created_at,
                now
            ],
        )?;
        {
            let mut tag =
                tx.prepare("INSERT OR IGNORE INTO document_tags (doc_id, tag) VALUES (?1, ?2)")?;
            for t in &doc.tags {
                tag.execute(params![doc.doc_id, t])?;
            }
            let mut block = tx.prepare(
                "INSERT INTO blocks (block_id, doc_id, kind, heading_path_json, ordinal, source_span_json, payload_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for (i, b) in doc.blocks.iter().enumerate() {
                block.execute(params![
                    b.block_id,
                    doc.doc_id,
                    b.kind,
                    json_text(&b.heading_path),
                    i as i64,
                    b.span.to_string(),
                    b.payload.to_string()
                ])?;
            }
            let mut chunk = tx.prepare(
                "INSERT INTO chunks (chunk_id, doc_id, ordinal, text, heading_path_json, section_label,
                                     source_spans_json, token_estimate, chunker_version, policy_hash,
                                     block_ids_json, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )?;
            for (i, c) in doc.chunks.iter().enumerate() {
                chunk.execute(params![
                    c.chunk_id,
                    doc.doc_id,
                    i as i64,
                    c.text,
                    json_text(&c.heading_path),
                    c.section_label,
                    c.spans.to_string(),
                    c.token_estimate,
                    doc.chunker_version,
                    doc.policy_hash,
                    json_text(&c.block_ids),
                    now
                ])?;
            }
        }
        tx.commit()?;
        Ok(if previous.is_some() {
            WriteOutcome::Updated
        } else {
            WriteOutcome::New
        })
    }

    /// Remove documents by workspace path, in one transaction. Returns how
    /// many existed.
    pub fn remove_documents(&mut self, paths: &[String]) -> Result<usize, StoreError> {
        let tx = self.conn.transaction()?;
        let mut removed = 0;
        for p in paths {
            removed += delete_by_path(&tx, p)?;
        }
        tx.commit()?;
        Ok(removed)
    }

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

    /// All documents, by path.
    pub fn list_docs(&self) -> Result<Vec<DocRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT d.doc_id, d.workspace_path, d.title, d.lang, d.trust_level, d.source_type, a.byte_len,
                    (SELECT count(*) FROM chunks c WHERE c.doc_id = d.doc_id),
                    d.created_at, d.updated_at, d.parser_version, d.chunker_version, d.plugin_name,
                    d.plugin_version, d.fallback_reason,
                    (SELECT json_group_array(tag) FROM (SELECT tag FROM document_tags t
                      WHERE t.doc_id = d.doc_id ORDER BY tag)),
                    json_extract(d.metadata_json, '$.repo'), json_extract(d.metadata_json, '$.git_branch'),
                    json_extract(d.metadata_json, '$.git_commit')
             FROM documents d JOIN assets a ON a.asset_id = d.asset_id
             ORDER BY d.workspace_path",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(DocRow {
                doc_id: r.get(0)?,
                workspace_path: r.get(1)?,
                title: r.get(2)?,
                lang: r.get(3)?,
                trust_level: r.get(4)?,
                source_type: r.get(5)?,
                byte_len: r.get::<_, i64>(6)? as u64,
                chunk_count: r.get::<_, i64>(7)? as u64,
                created_at: r.get(8)?,
                updated_at: r.get(9)?,
                parser_version: r.get(10)?,
                chunker_version: r.get(11)?,
                plugin_name: r.get(12)?,
                plugin_version: r.get(13)?,
                fallback_reason: r.get(14)?,
                tags: parse_json(&r.get::<_, String>(15)?),
                repo: r.get(16)?,
                git_branch: r.get(17)?,
                git_commit: r.get(18)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Documents per responsible plugin name.
    pub fn docs_per_plugin(&self) -> Result<HashMap<String, u64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT plugin_name, count(*) FROM documents GROUP BY plugin_name")?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Row counts of the main tables (documents, chunks, FTS rows).
    pub fn counts(&self) -> Result<(u64, u64, u64), StoreError> {
        let count = |sql: &str| -> Result<u64, StoreError> {
            Ok(self.conn.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64)
        };
        Ok((
            count("SELECT count(*) FROM documents")?,
            count("SELECT count(*) FROM chunks")?,
            count("SELECT count(*) FROM chunks_fts")?,
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

/// An `answers` row.
#[derive(Debug, Clone)]
pub struct AnswerRow {
    pub trace_id: String,
    pub query: String,
    pub answer: String,
    pub grounded: bool,
    pub refusal_reason: Option<String>,
    pub model_id: String,
    pub model_provider: String,
    pub prompt_template_version: String,
    pub retrieval_mode: String,
    pub retrieval_k: u32,
    pub score_gate: f64,
    pub top_score: f64,
    pub chunks_returned: u32,
    pub chunks_used: u32,
    pub citations: Value,
    pub packed_chunks: Option<Value>,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: u64,
    pub created_at: String,
    pub conversation_id: Option<String>,
    pub turn_index: Option<u32>,
}

/// One stored turn of a chat session.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRow {
    pub turn_index: u32,
    pub question: String,
    pub answer: String,
}

impl Store {
    /// Record an answer (grounded or not).
    pub fn insert_answer(&self, a: &AnswerRow) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO answers (trace_id, query, answer, grounded, refusal_reason, model_id, model_provider,
                                  prompt_template_version, retrieval_mode, retrieval_k, score_gate, top_score,
                                  chunks_returned, chunks_used, citations_json, packed_chunks_json, prompt_tokens,
                                  completion_tokens, latency_ms, created_at, conversation_id, turn_index)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
            params![
                a.trace_id,
                a.query,
                a.answer,
                a.grounded,
                a.refusal_reason,
                a.model_id,
                a.model_provider,
                a.prompt_template_version,
                a.retrieval_mode,
                a.retrieval_k,
                a.score_gate,
                a.top_score,
                a.chunks_returned,
                a.chunks_used,
                a.citations.to_string(),
                a.packed_chunks.as_ref().map(Value::to_string),
                a.prompt_tokens,
                a.completion_tokens,
                a.latency_ms as i64,
                a.created_at,
                a.conversation_id,
                a.turn_index
            ],
        )?;
        Ok(())
    }

    /// Turns of a chat session, oldest first (empty for a new session).
    pub fn session_turns(&self, session_id: &str) -> Result<Vec<TurnRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT turn_index, question, answer FROM chat_turns WHERE session_id = ?1 ORDER BY turn_index",
        )?;
        let rows = stmt.query_map(params![session_id], |r| {
            Ok(TurnRow {
                turn_index: r.get::<_, i64>(0)? as u32,
                question: r.get(1)?,
                answer: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Append a turn to a session, creating the session on its first turn.
    pub fn append_turn(
        &mut self,
        session_id: &str,
        turn: &TurnRow,
        citations: &Value,
        config_snapshot: &Value,
    ) -> Result<(), StoreError> {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let tx = self.conn.transaction()?;
        let title: String = turn.question.chars().take(60).collect();
        tx.execute(
            "INSERT INTO chat_sessions (session_id, created_at, updated_at, title, config_snapshot_json)
             VALUES (?1, ?2, ?2, ?3, ?4)
             ON CONFLICT(session_id) DO UPDATE SET updated_at = excluded.updated_at",
            params![session_id, now, title, config_snapshot.to_string()],
        )?;
        let turn_id = crate::ids::id_from(&serde_json::json!({
            "kind": "turn", "session_id": session_id, "turn_index": turn.turn_index,
        }));
        tx.execute(
            "INSERT INTO chat_turns (turn_id, session_id, turn_index, question, answer, citations_json, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                turn_id,
                session_id,
                turn.turn_index,
                turn.question,
                turn.answer,
                citations.to_string(),
                now
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Stored answers, newest first (for inspection and tests).
    pub fn recent_answers(&self, limit: usize) -> Result<Vec<Value>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT json_object('trace_id', trace_id, 'query', query, 'answer', answer, 'grounded', grounded,
                                'refusal_reason', refusal_reason, 'citations', json(citations_json),
                                'chunks_used', chunks_used, 'top_score', top_score,
                                'conversation_id', conversation_id, 'turn_index', turn_index)
             FROM answers ORDER BY created_at DESC, rowid DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |r| r.get::<_, String>(0))?;
        rows.map(|r| Ok(serde_json::from_str(&r?).unwrap_or(Value::Null)))
            .collect()
    }
}

/// A stored chunk with its position in its document.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub chunk_id: String,
    pub doc_id: String,
    pub ordinal: u32,
    pub text: String,
    pub heading_path: Vec<String>,
    pub spans: Value,
    pub block_ids: Vec<String>,
    pub token_estimate: u32,
    pub chunker_version: String,
}

/// What fetching needs to know about a document.
#[derive(Debug, Clone)]
pub struct DocRef {
    pub doc_id: String,
    pub workspace_path: String,
    pub source_uri: String,
    pub checksum: String,
    pub updated_at: String,
}

const CHUNK_COLUMNS: &str = "chunk_id, doc_id, ordinal, text, heading_path_json, source_spans_json,
                             block_ids_json, token_estimate, chunker_version";

fn chunk_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChunkRow> {
    Ok(ChunkRow {
        chunk_id: r.get(0)?,
        doc_id: r.get(1)?,
        ordinal: r.get::<_, i64>(2)? as u32,
        text: r.get(3)?,
        heading_path: parse_json(&r.get::<_, String>(4)?),
        spans: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or(Value::Null),
        block_ids: parse_json(&r.get::<_, String>(6)?),
        token_estimate: r.get::<_, i64>(7)? as u32,
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
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(params![doc_id], chunk_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A document by id.
    pub fn doc_ref(&self, doc_id: &str) -> Result<Option<DocRef>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT d.doc_id, d.workspace_path, d.source_uri, a.checksum, d.updated_at
                 FROM documents d JOIN assets a ON a.asset_id = d.asset_id WHERE d.doc_id = ?1",
                params![doc_id],
                |r| {
                    Ok(DocRef {
                        doc_id: r.get(0)?,
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
    pub fn doc_blocks(&self, doc_id: &str) -> Result<Vec<(Value, String)>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT source_span_json, json_extract(payload_json, '$.text') FROM blocks
             WHERE doc_id = ?1 ORDER BY ordinal",
        )?;
        let rows = stmt.query_map(params![doc_id], |r| {
            Ok((
                serde_json::from_str(&r.get::<_, String>(0)?).unwrap_or(Value::Null),
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Delete the document at `path` (cascading to its blocks, chunks, FTS rows
/// and tags) and its asset when no other document shares it.
fn delete_by_path(tx: &Transaction<'_>, path: &str) -> Result<usize, StoreError> {
    let asset: Option<String> = tx
        .query_row(
            "SELECT asset_id FROM documents WHERE workspace_path = ?1",
            params![path],
            |r| r.get(0),
        )
        .optional()?;
    let Some(asset) = asset else {
        return Ok(0);
    };
    tx.execute(
        "DELETE FROM documents WHERE workspace_path = ?1",
        params![path],
    )?;
    tx.execute(
        "DELETE FROM assets WHERE asset_id = ?1
           AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.asset_id = ?1)",
        params![asset],
    )?;
    Ok(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(path: &str, text: &str) -> NewDocument {
        let checksum = crate::ids::checksum(text.as_bytes());
        let asset_id = crate::ids::asset_id(&checksum);
        let doc_id = crate::ids::doc_id(path, &asset_id, "p1");
        NewDocument {
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
                span: json!({"kind":"line","start":1,"end":1}),
                payload: json!({}),
            }],
            chunks: vec![NewChunk {
                chunk_id: format!("c-{doc_id}"),
                text: text.into(),
                heading_path: vec!["H".into()],
                section_label: Some("H".into()),
                spans: json!([{"kind":"line","start":1,"end":1}]),
                token_estimate: 3,
                block_ids: vec![format!("b-{doc_id}")],
            }],
        }
    }

    #[test]
    fn migrations_cover_every_file_in_order() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
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

    #[test]
    fn replace_search_and_remove_keep_fts_in_step() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("k.sqlite")).unwrap();
        assert_eq!(store.schema_version().unwrap() as usize, MIGRATIONS.len());
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
        assert_eq!(store.counts().unwrap(), (2, 2, 2));
        assert_eq!(
            store.replace_document(&doc("a.md", "lion mane")).unwrap(),
            WriteOutcome::Updated
        );
        assert_eq!(store.counts().unwrap(), (2, 2, 2));
        let hits = store
            .lexical_search("\"zebra\"", 10, &ChunkFilter::default())
            .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].workspace_path, "b.md");
        assert!(hits[0].bm25 > 0.0);
        assert_eq!(store.remove_documents(&["b.md".into()]).unwrap(), 1);
        assert_eq!(store.counts().unwrap(), (1, 1, 1));
        assert!(
            store
                .lexical_search("\"zebra\"", 10, &ChunkFilter::default())
                .unwrap()
                .is_empty()
        );
        let assets: i64 = store
            .conn
            .query_row("SELECT count(*) FROM assets", [], |r| r.get(0))
            .unwrap();
        assert_eq!(assets, 1, "orphaned assets are removed");
        let listed = store.list_docs().unwrap();
        assert_eq!(listed[0].tags, vec!["t"]);
    }

    #[test]
    fn same_path_from_another_root_is_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("k.sqlite")).unwrap();
        store.replace_document(&doc("a.md", "x")).unwrap();
        let mut other = doc("a.md", "y");
        other.source_uri = "/elsewhere/a.md".into();
        assert!(matches!(
            store.replace_document(&other),
            Err(StoreError::PathConflict { .. })
        ));
        assert_eq!(
            store
                .lexical_search("\"x\"", 5, &ChunkFilter::default())
                .unwrap()
                .len(),
            1,
            "original kept"
        );
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
