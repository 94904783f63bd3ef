//! Answers of `kebab ask` and chat sessions.

use rusqlite::params;
use serde_json::Value;

use crate::{Store, StoreError};

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
    /// The embedding model, when the vector channel took part.
    pub embedding_model_id: Option<String>,
    pub embedding_dimensions: Option<u32>,
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
                                  completion_tokens, latency_ms, created_at, conversation_id, turn_index,
                                  embedding_model_id, embedding_dimensions)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
                     ?23, ?24)",
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
                a.turn_index,
                a.embedding_model_id,
                a.embedding_dimensions
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
        let now = kebab_core::clock::now_unix_secs();
        let tx = self.write_tx()?;
        let title: String = turn.question.chars().take(60).collect();
        tx.execute(
            "INSERT INTO chat_sessions (session_id, created_at, updated_at, title, config_snapshot_json)
             VALUES (?1, ?2, ?2, ?3, ?4)
             ON CONFLICT(session_id) DO UPDATE SET updated_at = excluded.updated_at",
            params![session_id, now, title, config_snapshot.to_string()],
        )?;
        let turn_id = kebab_core::ids::id_from(&serde_json::json!({
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
