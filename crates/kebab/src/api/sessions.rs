//! `sessions`: the conversations `kebab ask --session ID` keeps (design
//! §5.7a) — listing them (`session_list.v1`), showing one turn by turn
//! (`session.v1`) and deleting one with its stored answers
//! (`session_delete.v1`).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::{ApiError, Scope, Session};
use kebab_core::clock::unix_to_rfc3339;
use kebab_core::wire::AnswerCitation;
use kebab_store::{SessionRow, StoredTurn};

/// `session_list.v1`: every conversation, most recently used first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionList {
    pub schema_version: &'static str,
    pub sessions: Vec<SessionSummary>,
}

/// One conversation of `session_list.v1` (and the head of `session.v1`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionSummary {
    /// The id `kebab ask --session` takes.
    pub session_id: String,
    /// The first question, cut to 60 characters.
    pub title: Option<String>,
    /// Turns answered in it.
    pub turns: u32,
    /// The prompt template and chat model it was started with.
    pub prompt_template_version: Option<String>,
    pub model: Option<String>,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// When its last turn was added (RFC 3339, UTC).
    pub updated_at: String,
}

/// `session.v1`: one conversation with its turns, oldest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionView {
    pub schema_version: &'static str,
    pub session: SessionSummary,
    pub turns: Vec<SessionTurn>,
}

/// One turn of `session.v1`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionTurn {
    /// 0-based position in the conversation (`answer.v1.turn_index`).
    pub turn_index: u32,
    pub question: String,
    pub answer: String,
    /// The citations the answer carried, as `answer.v1` gave them.
    #[schemars(with = "Vec<AnswerCitation>")]
    pub citations: Value,
    /// RFC 3339, UTC.
    pub created_at: String,
}

/// `session_delete.v1`: what deleting a conversation removed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionDeleteReport {
    pub schema_version: &'static str,
    pub session_id: String,
    /// Its turns (the history later asks in it would have been given).
    pub turns_deleted: u32,
    /// Its stored answers (`kebab ask` keeps every answer).
    pub answers_deleted: u32,
}

impl From<SessionRow> for SessionSummary {
    fn from(row: SessionRow) -> Self {
        let text = |key: &str| row.config_snapshot[key].as_str().map(String::from);
        SessionSummary {
            prompt_template_version: text("prompt_template_version"),
            model: text("model"),
            session_id: row.session_id,
            title: row.title,
            turns: row.turns,
            created_at: unix_to_rfc3339(row.created_at),
            updated_at: unix_to_rfc3339(row.updated_at),
        }
    }
}

impl From<StoredTurn> for SessionTurn {
    fn from(t: StoredTurn) -> Self {
        SessionTurn {
            turn_index: t.turn.turn_index,
            question: t.turn.question,
            answer: t.turn.answer,
            citations: t.citations,
            created_at: unix_to_rfc3339(t.created_at),
        }
    }
}

impl Session {
    /// `kebab sessions list` (`session_list.v1`): the conversations of
    /// `scope`'s caller.
    pub fn sessions(&self, scope: &Scope) -> Result<SessionList, ApiError> {
        let rows = self.app()?.store.sessions()?;
        Ok(SessionList {
            schema_version: "session_list.v1",
            sessions: rows
                .into_iter()
                .filter_map(|row| {
                    let shown = scope.shown_session(&row.session_id)?;
                    let mut summary = SessionSummary::from(row);
                    summary.session_id = shown;
                    Some(summary)
                })
                .collect(),
        })
    }

    /// `kebab sessions show ID` (`session.v1`), of `scope`'s caller.
    pub fn session_view(&self, scope: &Scope, session_id: &str) -> Result<SessionView, ApiError> {
        let store = &self.app()?.store;
        let key = scope.session_key(session_id);
        let row = store
            .session(&key)?
            .ok_or_else(|| ApiError::SessionNotFound(session_id.to_string()))?;
        let turns = store.stored_turns(&key)?;
        let mut session = SessionSummary::from(row);
        session.session_id = session_id.to_string();
        Ok(SessionView {
            schema_version: "session.v1",
            session,
            turns: turns.into_iter().map(SessionTurn::from).collect(),
        })
    }

    /// `kebab sessions delete ID`: the conversation of `scope`'s caller,
    /// with its turns and stored answers (`session_delete.v1`).
    pub fn delete_session(
        &self,
        scope: &Scope,
        session_id: &str,
    ) -> Result<SessionDeleteReport, ApiError> {
        let mut store = crate::app::open_store(self.config(), self.paths())?;
        let deleted = store
            .delete_session(&scope.session_key(session_id))?
            .ok_or_else(|| ApiError::SessionNotFound(session_id.to_string()))?;
        Ok(SessionDeleteReport {
            schema_version: "session_delete.v1",
            session_id: session_id.to_string(),
            turns_deleted: deleted.turns,
            answers_deleted: deleted.answers,
        })
    }
}
