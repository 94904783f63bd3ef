//! Answers of `kebab ask` and chat sessions.

use crate::db::{DbError, Optional, Row, params};
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
    /// A multi-hop ask's steps (`answer.v1.hops`).
    pub hops: Option<Value>,
    /// The verification model's verdict (`answer.v1.verification`).
    pub verification: Option<Value>,
}

/// One stored turn of a chat session.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRow {
    pub turn_index: u32,
    pub question: String,
    pub answer: String,
}

/// A turn as `kebab sessions show` reads it: the turn, the citations its
/// answer carried (as `answer.v1` wrote them) and when it was asked.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTurn {
    pub turn: TurnRow,
    pub citations: Value,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
}

/// A `chat_sessions` row with its number of turns.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub session_id: String,
    /// The first question, cut to 60 characters.
    pub title: Option<String>,
    /// What the session was started with (`prompt_template_version`,
    /// `model`).
    pub config_snapshot: Value,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
    pub turns: u32,
}

/// What deleting a session removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionDeleted {
    pub turns: u32,
    /// Stored answers of the conversation (`answers.conversation_id`).
    pub answers: u32,
}

const SESSION_COLUMNS: &str =
    "s.session_id, s.title, s.config_snapshot_json, s.created_at, s.updated_at,
    (SELECT count(*) FROM chat_turns t WHERE t.session_id = s.session_id)";

fn session_row(r: &Row<'_>) -> Result<SessionRow, DbError> {
    Ok(SessionRow {
        session_id: r.get(0)?,
        title: r.get(1)?,
        config_snapshot: crate::parse_json(&r.get::<String>(2)?),
        created_at: r.get(3)?,
        updated_at: r.get(4)?,
        turns: r.get::<i64>(5)? as u32,
    })
}

impl Store {
    /// Record an answer (grounded or not).
    pub fn insert_answer(&self, a: &AnswerRow) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO answers (trace_id, query, answer, grounded, refusal_reason, model_id, model_provider,
                                  prompt_template_version, retrieval_mode, retrieval_k, score_gate, top_score,
                                  chunks_returned, chunks_used, citations_json, packed_chunks_json, prompt_tokens,
                                  completion_tokens, latency_ms, created_at, conversation_id, turn_index,
                                  embedding_model_id, embedding_dimensions, hops_json, verification_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
                     ?23, ?24, ?25, ?26)",
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
                a.embedding_dimensions,
                a.hops.as_ref().map(Value::to_string),
                a.verification.as_ref().map(Value::to_string)
            ],
        )?;
        Ok(())
    }

    /// Turns of a chat session, oldest first (empty for a new session).
    pub fn session_turns(&self, session_id: &str) -> Result<Vec<TurnRow>, StoreError> {
        Ok(self
            .stored_turns(session_id)?
            .into_iter()
            .map(|t| t.turn)
            .collect())
    }

    /// Turns of a chat session with their citations and times, oldest
    /// first.
    pub fn stored_turns(&self, session_id: &str) -> Result<Vec<StoredTurn>, StoreError> {
        let stmt = self.conn.prepare(
            "SELECT turn_index, question, answer, citations_json, created_at FROM chat_turns
             WHERE session_id = ?1 ORDER BY turn_index",
        )?;
        let rows = stmt.query_map(params![session_id], |r| {
            Ok(StoredTurn {
                turn: TurnRow {
                    turn_index: r.get::<i64>(0)? as u32,
                    question: r.get(1)?,
                    answer: r.get(2)?,
                },
                citations: crate::parse_json(&r.get::<String>(3)?),
                created_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every chat session, most recently used first.
    pub fn sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
        let stmt = self.conn.prepare(&format!(
            "SELECT {SESSION_COLUMNS} FROM chat_sessions s
             ORDER BY s.updated_at DESC, s.rowid DESC"
        ))?;
        let rows = stmt.query_map([], session_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One chat session, if there is one with this id.
    pub fn session(&self, session_id: &str) -> Result<Option<SessionRow>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM chat_sessions s WHERE s.session_id = ?1"),
                params![session_id],
                session_row,
            )
            .optional()?)
    }

    /// Delete a chat session: its turns and the stored answers of the
    /// conversation, in one transaction. `None` when there is no such
    /// session and no answer of it.
    pub fn delete_session(
        &mut self,
        session_id: &str,
    ) -> Result<Option<SessionDeleted>, StoreError> {
        let tx = self.write_tx()?;
        let turns: i64 = tx.query_row(
            "SELECT count(*) FROM chat_turns WHERE session_id = ?1",
            params![session_id],
            |r| r.get(0),
        )?;
        let answers = tx.execute(
            "DELETE FROM answers WHERE conversation_id = ?1",
            params![session_id],
        )?;
        // The turns go with their session (ON DELETE CASCADE). A session
        // whose every ask failed has answers but no session row.
        let sessions = tx.execute(
            "DELETE FROM chat_sessions WHERE session_id = ?1",
            params![session_id],
        )?;
        if sessions == 0 && answers == 0 {
            return Ok(None);
        }
        tx.commit()?;
        Ok(Some(SessionDeleted {
            turns: turns as u32,
            answers: answers as u32,
        }))
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
        let json = |text: Option<String>| {
            text.and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null)
        };
        let rows = self.conn.query_map(
            "SELECT trace_id, query, answer, grounded, refusal_reason, citations_json, chunks_used,
                    top_score, conversation_id, turn_index, prompt_template_version, hops_json,
                    verification_json
             FROM answers ORDER BY created_at DESC, rowid DESC LIMIT ?1",
            params![limit as i64],
            |r| {
                Ok(serde_json::json!({
                    "trace_id": r.get::<String>(0)?,
                    "query": r.get::<String>(1)?,
                    "answer": r.get::<String>(2)?,
                    "grounded": r.get::<i64>(3)?,
                    "refusal_reason": r.get::<Option<String>>(4)?,
                    "citations": json(r.get(5)?),
                    "chunks_used": r.get::<i64>(6)?,
                    "top_score": r.get::<f64>(7)?,
                    "conversation_id": r.get::<Option<String>>(8)?,
                    "turn_index": r.get::<Option<i64>>(9)?,
                    "prompt_template_version": r.get::<String>(10)?,
                    "hops": json(r.get(11)?),
                    "verification": json(r.get(12)?),
                }))
            },
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(i: u32, q: &str) -> TurnRow {
        TurnRow {
            turn_index: i,
            question: q.into(),
            answer: format!("answer to {q}"),
        }
    }

    crate::tests::on_both_backends! {
        fn sessions_are_listed_shown_and_deleted_with_their_answers(store) {
            let snapshot = json!({ "prompt_template_version": "rag-v3" });
            let cites = json!([{ "marker": "[#1]" }]);
            store
                .append_turn("a", &turn(0, "first?"), &cites, &snapshot)
                .unwrap();
            store
                .append_turn("a", &turn(1, "second?"), &json!([]), &snapshot)
                .unwrap();
            store
                .append_turn("b", &turn(0, "other?"), &json!([]), &snapshot)
                .unwrap();
            store
                .conn
                .execute(
                    "INSERT INTO answers (trace_id, query, answer, grounded, model_id, model_provider,
                        prompt_template_version, retrieval_mode, retrieval_k, score_gate, top_score,
                        chunks_returned, chunks_used, citations_json, latency_ms, created_at, conversation_id)
                     VALUES ('t1', 'q', 'a', 1, 'm', 'p', 'rag-v3', 'lexical', 8, 0.3, 0.9, 1, 1, '[]', 1, 'now', 'a')",
                    [],
                )
                .unwrap();

            let listed = store.sessions().unwrap();
            let ids: Vec<(&str, u32)> = listed
                .iter()
                .map(|s| (s.session_id.as_str(), s.turns))
                .collect();
            assert!(
                ids.contains(&("a", 2)) && ids.contains(&("b", 1)),
                "{ids:?}"
            );
            let a = store.session("a").unwrap().unwrap();
            assert_eq!(a.title.as_deref(), Some("first?"));
            assert_eq!(a.config_snapshot["prompt_template_version"], "rag-v3");
            let turns = store.stored_turns("a").unwrap();
            assert_eq!(turns.len(), 2);
            assert_eq!(turns[0].citations, cites);
            assert_eq!(turns[1].turn.question, "second?");
            assert_eq!(store.session_turns("a").unwrap()[1], turn(1, "second?"));

            assert_eq!(
                store.delete_session("a").unwrap(),
                Some(SessionDeleted {
                    turns: 2,
                    answers: 1
                })
            );
            assert_eq!(store.session("a").unwrap(), None);
            assert!(store.stored_turns("a").unwrap().is_empty());
            assert_eq!(store.delete_session("a").unwrap(), None);
            assert_eq!(store.sessions().unwrap().len(), 1, "b stays");
        }
    }
}
