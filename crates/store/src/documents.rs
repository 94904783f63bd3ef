//! Documents: writing one in a transaction, removing, listing.

use std::collections::HashMap;

use crate::db::{Db, Optional, params};
use serde_json::Value;

use crate::{Store, StoreError, json_text, parse_json};
use kebab_core::clock::now_rfc3339;
use kebab_core::spans::SourceSpan;
use kebab_core::wire::DocSummary;

/// One document ready to be written, IDs already derived.
#[derive(Debug, Clone)]
pub struct NewDocument {
    pub asset_id: String,
    pub checksum: String,
    pub byte_len: u64,
    pub media_type: String,
    pub doc_id: String,
    /// The root it belongs to; `workspace_path` is relative to it.
    pub root_id: i64,
    pub workspace_path: String,
    pub source_uri: String,
    pub title: Option<String>,
    pub lang: Option<String>,
    pub source_type: String,
    /// `primary`, `secondary` or `generated` (kebab_core::trust).
    pub trust_level: String,
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
    pub span: SourceSpan,
    pub payload: Value,
}

/// A chunk row.
#[derive(Debug, Clone)]
pub struct NewChunk {
    pub chunk_id: String,
    pub text: String,
    pub heading_path: Vec<String>,
    pub section_label: Option<String>,
    pub spans: Vec<SourceSpan>,
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

/// A listed document.
#[derive(Debug, Clone)]
pub struct DocRow {
    pub doc_id: String,
    /// The name of its root.
    pub root: String,
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

impl Store {
    /// Every document of the root `root_id`, keyed by workspace path.
    pub fn indexed_docs(&self, root_id: i64) -> Result<HashMap<String, IndexedDoc>, StoreError> {
        Ok(self.indexed(Some(root_id))?.into_iter().collect())
    }

    /// Every document of every root, with its workspace path (a path may
    /// appear once per root).
    pub fn all_indexed_docs(&self) -> Result<Vec<(String, IndexedDoc)>, StoreError> {
        self.indexed(None)
    }

    fn indexed(&self, root_id: Option<i64>) -> Result<Vec<(String, IndexedDoc)>, StoreError> {
        let stmt = self.conn.prepare(
            "SELECT d.workspace_path, d.source_uri, a.checksum, d.plugin_name, d.plugin_version, d.policy_hash
             FROM documents d JOIN assets a ON a.asset_id = d.asset_id
             WHERE CAST(?1 AS BIGINT) IS NULL OR d.root_id = ?1",
        )?;
        let rows = stmt.query_map(params![root_id], |r| {
            Ok((
                r.get::<String>(0)?,
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
    /// was stored for its workspace path in its root.
    pub fn replace_document(&mut self, doc: &NewDocument) -> Result<WriteOutcome, StoreError> {
        let tx = self.write_tx()?;
        let previous: Option<(String, String)> = tx
            .query_row(
                "SELECT source_uri, created_at FROM documents
                 WHERE root_id = ?1 AND workspace_path = ?2",
                params![doc.root_id, doc.workspace_path],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        // A file renamed to another Unicode form of its name (NFD to NFC)
        // is the same document; the walk passes one spelling per name.
        if let Some((uri, _)) = &previous
            && !same_up_to_normalization(uri, &doc.source_uri)
        {
            return Err(StoreError::PathConflict {
                workspace_path: doc.workspace_path.clone(),
                existing: uri.clone(),
            });
        }
        delete_by_path(&tx, doc.root_id, &doc.workspace_path)?;
        let now = now_rfc3339();
        let created_at = previous.as_ref().map_or(now.as_str(), |p| p.1.as_str());
        insert_document_row(&tx, doc, created_at, &now)?;
        insert_parts(&tx, doc, &now)?;
        tx.commit()?;
        Ok(if previous.is_some() {
            WriteOutcome::Updated
        } else {
            WriteOutcome::New
        })
    }

    /// Remove documents of the root `root_id` by workspace path, in one
    /// transaction. Returns how many existed.
    pub fn remove_documents(
        &mut self,
        root_id: i64,
        paths: &[String],
    ) -> Result<usize, StoreError> {
        let tx = self.write_tx()?;
        let mut removed = 0;
        for p in paths {
            removed += delete_by_path(&tx, root_id, p)?;
        }
        tx.commit()?;
        Ok(removed)
    }

    /// All documents of the roots `roots` names (every root when `None`),
    /// by root and path.
    pub fn list_docs(&self, roots: Option<&[String]>) -> Result<Vec<DocRow>, StoreError> {
        let stmt = self.conn.prepare(
            "SELECT d.doc_id, d.workspace_path, d.title, d.lang, d.trust_level, d.source_type, a.byte_len,
                    (SELECT count(*) FROM chunks c WHERE c.doc_id = d.doc_id),
                    d.created_at, d.updated_at, d.parser_version, d.chunker_version, d.plugin_name,
                    d.plugin_version, d.fallback_reason,
                    (SELECT json_group_array(tag) FROM (SELECT tag FROM document_tags t
                      WHERE t.doc_id = d.doc_id ORDER BY tag) AS tags),
                    json_extract(d.metadata_json, '$.repo'), json_extract(d.metadata_json, '$.git_branch'),
                    json_extract(d.metadata_json, '$.git_commit'), r.name
             FROM documents d JOIN assets a ON a.asset_id = d.asset_id
             JOIN roots r ON r.root_id = d.root_id
             WHERE CAST(?1 AS TEXT) IS NULL OR r.name IN (SELECT value FROM json_each(?1))
             ORDER BY r.name, d.workspace_path",
        )?;
        let roots = roots.map(|r| json_text(&r));
        let rows = stmt.query_map(params![roots], |r| {
            Ok(DocRow {
                doc_id: r.get(0)?,
                root: r.get(19)?,
                workspace_path: r.get(1)?,
                title: r.get(2)?,
                lang: r.get(3)?,
                trust_level: r.get(4)?,
                source_type: r.get(5)?,
                byte_len: r.get::<i64>(6)? as u64,
                chunk_count: r.get::<i64>(7)? as u64,
                created_at: r.get(8)?,
                updated_at: r.get(9)?,
                parser_version: r.get(10)?,
                chunker_version: r.get(11)?,
                plugin_name: r.get(12)?,
                plugin_version: r.get(13)?,
                fallback_reason: r.get(14)?,
                tags: parse_json(&r.get::<String>(15)?),
                repo: r.get(16)?,
                git_branch: r.get(17)?,
                git_commit: r.get(18)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Documents per responsible plugin name.
    pub fn docs_per_plugin(&self) -> Result<HashMap<String, u64>, StoreError> {
        let stmt = self
            .conn
            .prepare("SELECT plugin_name, count(*) FROM documents GROUP BY plugin_name")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)? as u64)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The asset and document rows of `doc` (the asset row is shared by
/// documents with the same bytes and location).
fn insert_document_row(
    tx: &Db,
    doc: &NewDocument,
    created_at: &str,
    now: &str,
) -> Result<(), StoreError> {
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
                                provenance_json, created_at, updated_at, root_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?19, ?8, ?9, ?10, ?11, ?12, ?13, 1, 1, ?14, ?15, ?16, ?17,
                 ?18)",
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
            now,
            doc.root_id,
            doc.trust_level
        ],
    )?;
    Ok(())
}

/// The tags, blocks and chunks of `doc`.
fn insert_parts(tx: &Db, doc: &NewDocument, now: &str) -> Result<(), StoreError> {
    let tag = tx.prepare(
        "INSERT INTO document_tags (doc_id, tag) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
    )?;
    for t in &doc.tags {
        tag.execute(params![doc.doc_id, t])?;
    }
    let block = tx.prepare(
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
            b.span.to_json().to_string(),
            b.payload.to_string()
        ])?;
    }
    let chunk = tx.prepare(
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
            serde_json::to_string(&c.spans).expect("spans serialise"),
            c.token_estimate,
            doc.chunker_version,
            doc.policy_hash,
            json_text(&c.block_ids),
            now
        ])?;
    }
    Ok(())
}

/// Whether two source locations name the same file once Unicode is
/// normalised (NFC), i.e. they differ only in how a name is composed.
fn same_up_to_normalization(a: &str, b: &str) -> bool {
    use unicode_normalization::UnicodeNormalization;
    a.nfc().eq(b.nfc())
}

/// Delete the document at `path` in the root `root_id` (cascading to its
/// blocks, chunks, FTS rows and tags) and its asset when no other document
/// shares it.
fn delete_by_path(tx: &Db, root_id: i64, path: &str) -> Result<usize, StoreError> {
    let asset: Option<String> = tx
        .query_row(
            "SELECT asset_id FROM documents WHERE root_id = ?1 AND workspace_path = ?2",
            params![root_id, path],
            |r| r.get(0),
        )
        .optional()?;
    let Some(asset) = asset else {
        return Ok(0);
    };
    tx.execute(
        "DELETE FROM documents WHERE root_id = ?1 AND workspace_path = ?2",
        params![root_id, path],
    )?;
    tx.execute(
        "DELETE FROM assets WHERE asset_id = ?1
           AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.asset_id = ?1)",
        params![asset],
    )?;
    Ok(1)
}
/// A stored document as `doc_summary.v1`.
impl From<DocRow> for DocSummary {
    fn from(d: DocRow) -> Self {
        DocSummary {
            schema_version: "doc_summary.v1",
            doc_id: d.doc_id,
            root: Some(d.root),
            doc_path: d.workspace_path,
            title: d.title,
            lang: d.lang,
            tags: d.tags,
            trust_level: d.trust_level,
            source_type: d.source_type,
            byte_len: d.byte_len,
            chunk_count: d.chunk_count,
            created_at: d.created_at,
            updated_at: d.updated_at,
            parser_version: d.parser_version,
            chunker_version: d.chunker_version,
            plugin: d.plugin_name,
            plugin_version: d.plugin_version,
            fallback_reason: d.fallback_reason,
            repo: d.repo,
            git_branch: d.git_branch,
            git_commit: d.git_commit,
        }
    }
}
