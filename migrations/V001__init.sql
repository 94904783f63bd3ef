-- kebab schema v1 (seed 001 §5). Applied once, never edited: later changes
-- go into V002__… and onwards.
--
-- Deviations from the seed DDL, on purpose:
-- * assets are content-addressed (asset_id = hash of the bytes), so two
--   files with the same bytes share one row: the workspace_path index is
--   not UNIQUE. The unique path lives on documents.
-- * documents record the plugin (name + semver) and chunk policy that
--   produced them, so a plugin upgrade or a policy change re-indexes exactly
--   the documents concerned, and `fallback_reason` says when the text
--   plugin stood in for a failing one.
-- * chunks_fts rows share the rowid of their chunk, so the triggers delete
--   by rowid (an index lookup) instead of scanning the UNINDEXED chunk_id.

CREATE TABLE schema_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE migrations (
    id          INTEGER PRIMARY KEY,
    applied_at  TEXT NOT NULL,
    description TEXT NOT NULL
);

CREATE TABLE assets (
    asset_id       TEXT PRIMARY KEY,
    source_uri     TEXT NOT NULL,
    workspace_path TEXT NOT NULL,
    media_type     TEXT NOT NULL,
    byte_len       INTEGER NOT NULL,
    checksum       TEXT NOT NULL,
    storage_kind   TEXT NOT NULL CHECK (storage_kind IN ('copied','reference')),
    storage_path   TEXT NOT NULL,
    discovered_at  TEXT NOT NULL
);
CREATE INDEX idx_assets_workspace_path ON assets(workspace_path);
CREATE INDEX idx_assets_media_type ON assets(media_type);

CREATE TABLE documents (
    doc_id          TEXT PRIMARY KEY,
    asset_id        TEXT NOT NULL REFERENCES assets(asset_id) ON DELETE RESTRICT,
    workspace_path  TEXT NOT NULL,
    source_uri      TEXT NOT NULL,
    title           TEXT,
    lang            TEXT,
    source_type     TEXT NOT NULL,
    trust_level     TEXT NOT NULL,
    parser_version  TEXT NOT NULL,
    chunker_version TEXT NOT NULL,
    plugin_name     TEXT NOT NULL,
    plugin_version  TEXT NOT NULL,
    policy_hash     TEXT NOT NULL,
    fallback_reason TEXT,
    doc_version     INTEGER NOT NULL,
    schema_version  INTEGER NOT NULL,
    metadata_json   TEXT NOT NULL,
    provenance_json TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_docs_workspace_path ON documents(workspace_path);
CREATE INDEX idx_docs_source_uri ON documents(source_uri);
CREATE INDEX idx_docs_asset_id ON documents(asset_id);
CREATE INDEX idx_docs_lang ON documents(lang);
CREATE INDEX idx_docs_source_type ON documents(source_type);
CREATE INDEX idx_docs_plugin ON documents(plugin_name, plugin_version);

CREATE TABLE document_tags (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    tag    TEXT NOT NULL,
    PRIMARY KEY (doc_id, tag)
);
CREATE INDEX idx_document_tags_tag ON document_tags(tag);

CREATE TABLE blocks (
    block_id          TEXT PRIMARY KEY,
    doc_id            TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    kind              TEXT NOT NULL,
    heading_path_json TEXT NOT NULL,
    ordinal           INTEGER NOT NULL,
    source_span_json  TEXT NOT NULL,
    payload_json      TEXT NOT NULL
);
CREATE INDEX idx_blocks_doc_id ON blocks(doc_id);

CREATE TABLE chunks (
    chunk_id          TEXT PRIMARY KEY,
    doc_id            TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal           INTEGER NOT NULL,
    text              TEXT NOT NULL,
    heading_path_json TEXT NOT NULL,
    section_label     TEXT,
    source_spans_json TEXT NOT NULL,
    token_estimate    INTEGER NOT NULL,
    chunker_version   TEXT NOT NULL,
    policy_hash       TEXT NOT NULL,
    block_ids_json    TEXT NOT NULL,
    created_at        TEXT NOT NULL
);
CREATE INDEX idx_chunks_doc_id ON chunks(doc_id);
CREATE INDEX idx_chunks_chunker_version ON chunks(chunker_version);

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    chunk_id UNINDEXED,
    doc_id UNINDEXED,
    heading_path,
    text,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, chunk_id, doc_id, heading_path, text)
    VALUES (new.rowid, new.chunk_id, new.doc_id, new.heading_path_json, new.text);
END;

CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
END;

CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
    INSERT INTO chunks_fts(rowid, chunk_id, doc_id, heading_path, text)
    VALUES (new.rowid, new.chunk_id, new.doc_id, new.heading_path_json, new.text);
END;

CREATE TABLE ingest_runs (
    run_id        TEXT PRIMARY KEY,
    scope_json    TEXT NOT NULL,
    scanned       INTEGER NOT NULL,
    new_count     INTEGER NOT NULL,
    updated_count INTEGER NOT NULL,
    skipped_count INTEGER NOT NULL,
    error_count   INTEGER NOT NULL,
    duration_ms   INTEGER NOT NULL,
    started_at    TEXT NOT NULL,
    finished_at   TEXT NOT NULL,
    items_json    TEXT
);
