//! `kebab sessions list|show|delete`: renders
//! [`kebab::api::Session::sessions`] (`session_list.v1`),
//! [`kebab::api::Session::session_view`] (`session.v1`) and
//! [`kebab::api::Session::delete_session`] (`session_delete.v1`).

use super::prelude::*;
use kebab::api::Scope;
use kebab::api::sessions::{SessionDeleteReport, SessionList, SessionView};
use kebab::sanitize::{escape_control, escape_control_keep_lines};

pub(crate) fn sessions_cmd(session: &Session, what: Option<SessionsCmd>, json: bool) -> Result<u8> {
    match what.unwrap_or(SessionsCmd::List) {
        SessionsCmd::List => render(json, &session.sessions(&Scope::Everything)?, print_sessions),
        SessionsCmd::Show { id } => render(
            json,
            &session.session_view(&Scope::Everything, &id)?,
            print_session,
        ),
        SessionsCmd::Delete { id } => render(
            json,
            &session.delete_session(&Scope::Everything, &id)?,
            print_deleted,
        ),
    }
}

fn print_sessions(list: &SessionList) {
    if list.sessions.is_empty() {
        outln!("no sessions yet");
        outln!("hint: `kebab ask --session ID \"…\"` starts one");
        return;
    }
    for s in &list.sessions {
        outln!(
            "{}  {} turns  last {}  {}",
            escape_control(&s.session_id),
            s.turns,
            s.updated_at,
            escape_control(s.title.as_deref().unwrap_or("")),
        );
    }
}

fn print_session(view: &SessionView) {
    let s = &view.session;
    outln!(
        "session {}  {} turns  started {}  {} {}",
        escape_control(&s.session_id),
        s.turns,
        s.created_at,
        escape_control(s.model.as_deref().unwrap_or("-")),
        escape_control(s.prompt_template_version.as_deref().unwrap_or("-")),
    );
    for t in &view.turns {
        outln!("");
        outln!("[{}] Q: {}", t.turn_index, escape_control(&t.question));
        outln!(
            "    A: {}",
            escape_control_keep_lines(&t.answer).replace('\n', "\n       ")
        );
        let uris: Vec<String> = t
            .citations
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["citation"]["uri"].as_str())
            .map(|uri| escape_control(uri).into_owned())
            .collect();
        if !uris.is_empty() {
            outln!("    cites: {}", uris.join(", "));
        }
    }
}

fn print_deleted(report: &SessionDeleteReport) {
    outln!(
        "deleted session {}: {} turns, {} stored answers",
        escape_control(&report.session_id),
        report.turns_deleted,
        report.answers_deleted
    );
}
