-- The full-text table stems English words, as the lexical index's analysis
-- does (kebab_core::analysis), so that search falling back on it matches
-- the same forms of a word: SQLite's porter tokenizer (Porter's original
-- algorithm) over the same unicode61 words. The table is made again; the
-- store fills it from the chunks as the chunks_ai trigger (V003) writes a
-- row (heal.rs, FTS_ROWS). The triggers on chunks name it and stay.
DROP TABLE chunks_fts;

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    chunk_id UNINDEXED,
    doc_id UNINDEXED,
    heading_path,
    text,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
