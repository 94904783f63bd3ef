//! `kebab sessions list|show|delete` over conversations `kebab ask
//! --session` kept, and follow-ups retrieved with the previous answer
//! (design §5.7a, §3.8).

use std::path::Path;

use serde_json::Value;

use crate::ask::ask;
use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::mcp::{call, error_code, mcp, ok};
use crate::support::{Kb, NO_EMBEDDINGS};
use crate::wire_schema::assert_conforms;

/// Three notes whose words barely overlap.
fn write_corpus(root: &Path) {
    for (rel, text) in [
        (
            "quagga.md",
            "# Quagga\n\nThe quagga was a plains zebra with stripes only on the front half.\n",
        ),
        (
            "okapi.md",
            "# Okapi\n\nOkapis browse rainforest understory. Their diet is leaves, buds and fungi.\n",
        ),
        (
            "heron.md",
            "# Heron\n\nA grey heron waits motionless by reeds to spear fish.\n",
        ),
    ] {
        std::fs::create_dir_all(root).unwrap();
        std::fs::write(root.join(rel), text).unwrap();
    }
}

/// A kebab over the corpus whose model always answers `answer`.
fn scripted(answer: &str) -> (LlmServer, Kb) {
    let server = LlmServer::start(Wire::OpenAi, Script::Answer(tokens(answer)));
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{}", server.config(10)));
    let corpus = kb.dir.path().join("corpus");
    write_corpus(&corpus);
    kb.ingest(&corpus);
    (server, kb)
}

/// The document paths in the evidence of the model's `n`th request.
fn evidence_docs(server: &LlmServer, n: usize) -> Vec<String> {
    let body = &server.bodies()[n];
    let last = body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    ["quagga.md", "okapi.md", "heron.md"]
        .into_iter()
        .filter(|doc| last.contains(&format!("doc=\"{doc}\"")))
        .map(String::from)
        .collect()
}

#[test]
fn a_follow_up_is_retrieved_with_the_previous_answer_not_question() {
    let (server, kb) = scripted("Okapis browse rainforest understory [#1].");
    let (first, code, _) = ask(&kb, "Tell me about the quagga", &["--session", "zoo"]);
    assert_eq!(code, 0, "{first}");
    assert_eq!(evidence_docs(&server, 0), vec!["quagga.md"]);
    // "and its diet?" alone matches only the okapi note by "diet"; with the
    // previous question ("quagga") it would also bring the quagga note;
    // with the previous answer ("Okapis browse rainforest understory") it
    // brings the okapi note only.
    let (second, code, _) = ask(&kb, "And its diet?", &["--session", "zoo"]);
    assert_eq!(code, 0, "{second}");
    assert_eq!(second["turn_index"], 1);
    assert_eq!(evidence_docs(&server, 1), vec!["okapi.md"]);
}

/// `kebab --json sessions ARGS`: the output and exit code.
fn sessions(kb: &Kb, args: &[&str]) -> (Value, i32, String) {
    let mut all = vec!["--json", "sessions"];
    all.extend_from_slice(args);
    let out = kb.run(&all);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (value, out.status.code().unwrap(), stderr)
}

#[test]
fn sessions_are_listed_shown_and_deleted() {
    let (_server, kb) = scripted("A grey heron waits motionless by reeds [#1].");
    let (empty, code, _) = sessions(&kb, &["list"]);
    assert_eq!((code, &empty["sessions"]), (0, &serde_json::json!([])));
    for (session, question) in [
        ("birds", "What does the heron do by the reeds?"),
        ("birds", "And how does it fish?"),
        ("other", "Where does the heron wait?"),
    ] {
        let (answer, code, _) = ask(&kb, question, &["--session", session]);
        assert_eq!(code, 0, "{answer}");
    }
    // An answer outside any session is not part of one.
    ask(&kb, "Where does the heron wait?", &[]);

    let (list, code, stderr) = sessions(&kb, &["list"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(list["schema_version"], "session_list.v1");
    assert_conforms("session_list.v1", &list);
    let listed: Vec<(&str, u64)> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["session_id"].as_str().unwrap(),
                s["turns"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed.len(), 2, "{list:#}");
    assert!(listed.contains(&("birds", 2)) && listed.contains(&("other", 1)));
    let birds = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_id"] == "birds")
        .unwrap();
    assert_eq!(birds["title"], "What does the heron do by the reeds?");
    assert_eq!(birds["prompt_template_version"], "rag-v3");
    assert_eq!(birds["model"], crate::llm_server::MODEL);

    let (view, code, _) = sessions(&kb, &["show", "birds"]);
    assert_eq!(code, 0);
    assert_eq!(view["schema_version"], "session.v1");
    assert_conforms("session.v1", &view);
    assert_eq!(view["session"]["turns"], 2);
    let turns = view["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["turn_index"], 0);
    assert_eq!(turns[1]["question"], "And how does it fish?");
    assert_eq!(
        turns[1]["answer"],
        "A grey heron waits motionless by reeds [#1]."
    );
    assert_eq!(turns[0]["citations"][0]["marker"], "[#1]");
    assert_eq!(turns[0]["citations"][0]["citation"]["path"], "heron.md");

    // Human output.
    let out = kb.run(&["sessions", "show", "birds"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[1] Q: And how does it fish?") && text.contains("cites: heron.md#L"),
        "{text}"
    );
    let out = kb.run(&["sessions"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("birds  2 turns"), "{text}");

    let (missing, code, stderr) = sessions(&kb, &["show", "nope"]);
    assert_eq!((code, missing), (2, Value::Null));
    let err: Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(err["code"], "session_not_found", "{err}");
    assert_eq!(err["details"]["session_id"], "nope");

    let (deleted, code, _) = sessions(&kb, &["delete", "birds"]);
    assert_eq!(code, 0, "{deleted}");
    assert_eq!(deleted["schema_version"], "session_delete.v1");
    assert_conforms("session_delete.v1", &deleted);
    assert_eq!(
        (&deleted["turns_deleted"], &deleted["answers_deleted"]),
        (&2.into(), &2.into())
    );
    let (list, _, _) = sessions(&kb, &["list"]);
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["sessions"][0]["session_id"], "other");
    let store = kebab::store::Store::open(&kb.data_dir().join("kebab.sqlite")).unwrap();
    let answers = store.recent_answers(10).unwrap();
    assert_eq!(
        answers.len(),
        2,
        "the other session's and the sessionless answer stay"
    );
    assert!(answers.iter().all(|a| a["conversation_id"] != "birds"));
    let (_, code, stderr) = sessions(&kb, &["delete", "birds"]);
    assert_eq!(code, 2, "already gone: {stderr}");

    // The id can be used again: a new conversation from turn 0.
    let (again, _, _) = ask(&kb, "What does the heron do?", &["--session", "birds"]);
    assert_eq!(again["turn_index"], 0);
}

#[test]
fn mcp_clients_list_show_and_delete_sessions_and_ask_multi_hop() {
    let (server, kb) = scripted("A grey heron waits motionless by reeds [#1].");
    let steps = serde_json::json!([
        call(
            "ask",
            serde_json::json!({ "question": "What does the heron do?", "session": "birds" })
        ),
        call(
            "ask",
            serde_json::json!({ "question": "And by the reeds?", "session": "birds" })
        ),
        call("list_sessions", serde_json::json!({})),
        call("show_session", serde_json::json!({ "session_id": "birds" })),
        call(
            "delete_session",
            serde_json::json!({ "session_id": "birds" })
        ),
        call("list_sessions", serde_json::json!({})),
        call("show_session", serde_json::json!({ "session_id": "birds" })),
        call("show_session", serde_json::json!({ "id": "birds" })),
        // The model's reply is no plan: a multi-hop ask is refused as such.
        call(
            "ask",
            serde_json::json!({ "question": "What does the heron do?", "multi_hop": "always" })
        ),
        call(
            "ask",
            serde_json::json!({ "question": "What does the heron do?", "multi_hop": "sometimes" })
        ),
    ]);
    let r = mcp(&kb, steps);
    let res = &r["results"];
    assert_eq!(ok(&res[1])["turn_index"], 1);
    let list = ok(&res[2]);
    assert_conforms("session_list.v1", list);
    assert_eq!(list["sessions"][0]["session_id"], "birds");
    assert_eq!(list["sessions"][0]["turns"], 2);
    let view = ok(&res[3]);
    assert_conforms("session.v1", view);
    assert_eq!(view["turns"][1]["question"], "And by the reeds?");
    let deleted = ok(&res[4]);
    assert_conforms("session_delete.v1", deleted);
    assert_eq!(deleted["turns_deleted"], 2);
    assert_eq!(ok(&res[5])["sessions"], serde_json::json!([]));
    assert_eq!(error_code(&res[6]), "session_not_found");
    assert_eq!(error_code(&res[7]), "invalid_input");
    let refused = ok(&res[8]);
    assert_eq!(refused["refusal_reason"], "multi_hop_decompose_failed");
    assert_eq!(refused["hops"][0]["kind"], "decompose");
    assert_eq!(error_code(&res[9]), "invalid_input");
    assert_eq!(res[9]["structured"]["details"]["field"], "multi_hop");
    assert_eq!(server.chat_requests(), 3);
    // The tools say what they do to the index.
    let tools = r["tools"].as_array().unwrap();
    let annotations =
        |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["annotations"].clone();
    assert_eq!(annotations("list_sessions")["readOnlyHint"], true);
    assert_eq!(annotations("delete_session")["destructiveHint"], true);
}
