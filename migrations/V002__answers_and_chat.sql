-- Answers of `kebab ask` (every path, refusals included) and multi-turn chat
-- sessions (seed 001 §5.7, §5.7a).

CREATE TABLE answers (
    trace_id                TEXT PRIMARY KEY,
    query                   TEXT NOT NULL,
    answer                  TEXT NOT NULL,
    grounded                INTEGER NOT NULL,
    refusal_reason          TEXT,
    model_id                TEXT NOT NULL,
    model_provider          TEXT NOT NULL,
    embedding_model_id      TEXT,
    embedding_dimensions    INTEGER,
    prompt_template_version TEXT NOT NULL,
    retrieval_mode          TEXT NOT NULL,
    retrieval_k             INTEGER NOT NULL,
    score_gate              REAL NOT NULL,
    top_score               REAL NOT NULL,
    chunks_returned         INTEGER NOT NULL,
    chunks_used             INTEGER NOT NULL,
    citations_json          TEXT NOT NULL,
    packed_chunks_json      TEXT,
    prompt_tokens           INTEGER,
    completion_tokens       INTEGER,
    latency_ms              INTEGER,
    created_at              TEXT NOT NULL,
    conversation_id         TEXT,
    turn_index              INTEGER
);
CREATE INDEX idx_answers_created_at ON answers(created_at);
CREATE INDEX idx_answers_grounded ON answers(grounded);

CREATE TABLE chat_sessions (
    session_id           TEXT PRIMARY KEY NOT NULL,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL,
    title                TEXT,
    config_snapshot_json TEXT NOT NULL
) STRICT;

CREATE TABLE chat_turns (
    turn_id        TEXT PRIMARY KEY NOT NULL,
    session_id     TEXT NOT NULL REFERENCES chat_sessions(session_id) ON DELETE CASCADE,
    turn_index     INTEGER NOT NULL,
    question       TEXT NOT NULL,
    answer         TEXT NOT NULL,
    citations_json TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    UNIQUE(session_id, turn_index)
) STRICT;
CREATE INDEX idx_chat_turns_session ON chat_turns(session_id, turn_index);
