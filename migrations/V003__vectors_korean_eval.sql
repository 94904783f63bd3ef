-- Korean morphemes for FTS5 (seed §5.5): lindera ko-dic output, space
-- separated, indexed in front of the chunk text. Chunks are written with
-- NULL (not analysed yet) and analysed after each ingest run, as soon as a
-- dictionary is installed; '' = analysed, no Hangul.
ALTER TABLE chunks ADD COLUMN tokenized_korean_text TEXT;

DROP TRIGGER chunks_ai;
DROP TRIGGER chunks_au;

CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, chunk_id, doc_id, heading_path, text)
    VALUES (new.rowid, new.chunk_id, new.doc_id, new.heading_path_json,
            CASE WHEN new.tokenized_korean_text IS NOT NULL AND new.tokenized_korean_text != ''
                 THEN new.tokenized_korean_text || ' ' || new.text
                 ELSE new.text END);
END;

-- Analysing a chunk without Hangul (NULL → '') leaves its FTS row alone.
CREATE TRIGGER chunks_au AFTER UPDATE ON chunks
WHEN NOT (old.text IS new.text
          AND old.heading_path_json IS new.heading_path_json
          AND coalesce(old.tokenized_korean_text, '') IS coalesce(new.tokenized_korean_text, ''))
BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
    INSERT INTO chunks_fts(rowid, chunk_id, doc_id, heading_path, text)
    VALUES (new.rowid, new.chunk_id, new.doc_id, new.heading_path_json,
            CASE WHEN new.tokenized_korean_text IS NOT NULL AND new.tokenized_korean_text != ''
                 THEN new.tokenized_korean_text || ' ' || new.text
                 ELSE new.text END);
END;

-- Which chunks have a vector in which LanceDB table (seed §5.6). Rows go
-- with their chunk, so SQLite always says which vectors should exist.
CREATE TABLE embedding_records (
    embedding_id  TEXT PRIMARY KEY,
    chunk_id      TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    model_id      TEXT NOT NULL,
    model_version TEXT NOT NULL,
    dimensions    INTEGER NOT NULL,
    lance_table   TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    UNIQUE(chunk_id, model_id, model_version, dimensions)
);
CREATE INDEX idx_embed_chunk ON embedding_records(chunk_id);
CREATE INDEX idx_embed_model ON embedding_records(model_id, model_version, dimensions);

-- Vectors by the exact text embedded, so re-ingest, renames and plugin
-- upgrades never embed unchanged text twice. Little-endian f32 bytes.
CREATE TABLE embedding_cache (
    model_id      TEXT NOT NULL,
    model_version TEXT NOT NULL,
    text_hash     TEXT NOT NULL,
    dimensions    INTEGER NOT NULL,
    vector        BLOB NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (model_id, model_version, text_hash)
);

-- `kebab eval run` history (seed §5.7).
CREATE TABLE eval_runs (
    run_id               TEXT PRIMARY KEY,
    suite                TEXT NOT NULL,
    config_snapshot_json TEXT NOT NULL,
    aggregate_json       TEXT NOT NULL,
    commit_hash          TEXT,
    created_at           TEXT NOT NULL
);
CREATE TABLE eval_query_results (
    run_id      TEXT NOT NULL REFERENCES eval_runs(run_id) ON DELETE CASCADE,
    query_id    TEXT NOT NULL,
    result_json TEXT NOT NULL,
    PRIMARY KEY (run_id, query_id)
);
