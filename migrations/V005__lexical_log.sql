-- The lexical index (tantivy, `<data_dir>/lexical/`) is derived from the
-- chunks like the vectors in LanceDB: SQLite stays the source of truth.
-- Every change to what the lexical index holds of a chunk (its text, its
-- Korean morphemes) is logged here in the same transaction as the change,
-- by chunk rowid; the writer that holds the writer lock applies the log to
-- the index, commits it, then deletes what it applied. A crash before the
-- index commit leaves the log to be applied again (applying is idempotent:
-- delete the rowid, add the chunk that has it now, if any).
CREATE TABLE lexical_log (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_rowid INTEGER NOT NULL
);

CREATE TRIGGER chunks_lexical_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO lexical_log(chunk_rowid) VALUES (new.rowid);
END;

CREATE TRIGGER chunks_lexical_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO lexical_log(chunk_rowid) VALUES (old.rowid);
END;

CREATE TRIGGER chunks_lexical_au AFTER UPDATE ON chunks
WHEN NOT (old.text IS new.text
          AND coalesce(old.tokenized_korean_text, '') IS coalesce(new.tokenized_korean_text, ''))
BEGIN
    INSERT INTO lexical_log(chunk_rowid) VALUES (old.rowid);
END;

-- The chunks of an index made before this migration: logged, so that the
-- first run after the upgrade builds the lexical index as a first build.
INSERT INTO lexical_log(chunk_rowid) SELECT rowid FROM chunks;
