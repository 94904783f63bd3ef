//! `kebab ask --multi-hop` against the scripted model server, one scripted
//! reply per model call (decompose, each decision, the answer), over a
//! corpus where the answer is a chain across two documents: the question
//! names a person, one note says which project she leads, another gives
//! that project's budget in words the question does not use.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::ask::{ask, interrupt, spawn_ask, stored};
use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::support::{Kb, NO_EMBEDDINGS};

const QUESTION: &str = "How much money was approved for the work Alice Moreau leads?";
const CHAIN_ANSWER: &str = "Alice Moreau leads the Falcon project [#1]. Its budget is \"42 thousand euros\", approved in March [#2].";

fn write_corpus(root: &Path) {
    let notes = [
        (
            "people/alice.md",
            "# Alice Moreau\n\nAlice Moreau leads the Falcon project at the company.\n",
        ),
        (
            "projects/falcon.md",
            "# Falcon\n\nThe Falcon project's budget is 42 thousand euros, approved in March.\n",
        ),
        (
            "garden/tomatoes.md",
            "# Tomatoes\n\nWater the plants at the roots and pinch the suckers.\n",
        ),
    ];
    for (name, text) in notes {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// One scripted reply.
fn says(text: &str) -> Script {
    Script::Answer(tokens(text))
}

/// A lexical index of the corpus whose model server follows `steps`.
fn kb_with(steps: Vec<Script>, rag: &str) -> (tempfile::TempDir, LlmServer, Kb) {
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let server = LlmServer::start(Wire::Ollama, Script::Sequence(steps));
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{}[rag]\n{rag}", server.config(10)));
    kb.ingest(corpus.path());
    (corpus, server, kb)
}

fn kinds(a: &Value) -> Vec<&str> {
    a["hops"]
        .as_array()
        .unwrap_or_else(|| panic!("no hops: {a:#}"))
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect()
}

fn cited_paths(a: &Value) -> Vec<&str> {
    let mut paths: Vec<&str> = a["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["citation"]["path"].as_str().unwrap())
        .collect();
    paths.sort();
    paths
}

/// The user message of the `n`-th model call.
fn user_message(server: &LlmServer, n: usize) -> String {
    let body = &server.bodies()[n];
    let messages = body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_chain_across_two_documents_is_gathered_hop_by_hop_and_both_are_cited() {
    let (_corpus, server, kb) = kb_with(
        vec![
            says(r#"{"compound": true, "sub_queries": ["Alice Moreau role"]}"#),
            says(
                r#"Sure. {"kind": "continue", "sub_queries": ["Falcon project budget", "Alice Moreau role"]}"#,
            ),
            says(
                r#"```json
{"kind": "stop"}
```"#,
            ),
            says(CHAIN_ANSWER),
            // The single-pass ask below.
            says("Alice Moreau leads the Falcon project [#1]."),
        ],
        "",
    );
    let (a, code, stderr) = ask(&kb, QUESTION, &["--multi-hop"]);
    assert_eq!(code, 0, "{a:#}\n{stderr}");
    assert_eq!(a["grounded"], true);
    assert_eq!(a["prompt_template_version"], "rag-multi-hop-v1");
    assert_eq!(kinds(&a), ["decompose", "continue", "stop", "synthesize"]);
    let hops = a["hops"].as_array().unwrap();
    assert_eq!(hops[0]["sub_queries"], json!(["Alice Moreau role"]));
    assert_eq!(hops[0]["iter"], 0);
    // The question already asked is not asked again.
    assert_eq!(hops[1]["sub_queries"], json!(["Falcon project budget"]));
    assert_eq!(hops[1]["iter"], 1);
    assert_eq!(hops[1]["context_chunks_added"], 1, "{:#}", hops[1]);
    assert!(hops.iter().all(|h| h["forced_stop"] == false));
    assert_eq!(
        cited_paths(&a),
        ["people/alice.md", "projects/falcon.md"],
        "{a:#}"
    );
    assert_eq!(server.chat_requests(), 4);
    // The first decision saw only the person's note; the second, the
    // project's too; the answer was written from both.
    let first_decision = user_message(&server, 1);
    assert!(first_decision.contains("leads the Falcon project"));
    assert!(!first_decision.contains("42 thousand"), "{first_decision}");
    assert!(user_message(&server, 2).contains("42 thousand"));
    assert!(user_message(&server, 3).contains("42 thousand"));
    assert!(
        server.bodies()[3]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Self-check"),
        "the answer is written with rag-multi-hop-v1's rules"
    );
    let row = stored(&kb);
    assert_eq!(row["prompt_template_version"], "rag-multi-hop-v1");
    // One pass over the same index: one call, no hops.
    let (single, code, _) = ask(&kb, QUESTION, &["--single-pass", "--explain"]);
    assert_eq!(code, 0, "{single:#}");
    assert_eq!(single["prompt_template_version"], "rag-v3");
    assert!(single.get("hops").is_none(), "{single:#}");
    assert_eq!(server.chat_requests(), 5);
}

#[test]
fn an_unreadable_decomposition_is_refused_or_in_auto_mode_answered_in_one_pass() {
    let (_corpus, server, kb) = kb_with(
        vec![says("I would search for Alice first."), says(CHAIN_ANSWER)],
        "",
    );
    let (a, code, _) = ask(&kb, QUESTION, &["--multi-hop"]);
    assert_eq!(code, 1, "{a:#}");
    assert_eq!(a["refusal_reason"], "multi_hop_decompose_failed");
    assert_eq!(a["grounded"], false);
    assert_eq!(kinds(&a), ["decompose"]);
    assert_eq!(server.chat_requests(), 1, "no answer is asked for");
    assert_eq!(stored(&kb)["refusal_reason"], "multi_hop_decompose_failed");

    // `auto`: the same reply falls back to one pass, with a note.
    let (_corpus, server, kb) = kb_with(
        vec![says("I would search for Alice first."), says(CHAIN_ANSWER)],
        "multi_hop = \"auto\"\n",
    );
    let (a, code, _) = ask(&kb, QUESTION, &[]);
    assert_eq!(code, 0, "{a:#}");
    assert_eq!(a["prompt_template_version"], "rag-v3");
    assert_eq!(kinds(&a), ["decompose"]);
    assert!(
        a["notes"][0]
            .as_str()
            .unwrap()
            .contains("answered in one pass"),
        "{a:#}"
    );
    assert_eq!(server.chat_requests(), 2);
}

#[test]
fn auto_mode_answers_a_simple_question_in_one_pass_and_a_compound_one_hop_by_hop() {
    let (_corpus, server, kb) = kb_with(
        vec![
            says(r#"{"compound": false, "sub_queries": ["Falcon budget"]}"#),
            says("The Falcon budget is \"42 thousand euros\" [#1]."),
        ],
        "multi_hop = \"auto\"\n",
    );
    let (a, code, _) = ask(&kb, "What is the Falcon project's budget?", &[]);
    assert_eq!(code, 0, "{a:#}");
    assert_eq!(a["prompt_template_version"], "rag-v3");
    assert_eq!(server.chat_requests(), 2);

    let (_corpus, server, kb) = kb_with(
        vec![
            says(
                r#"{"compound": true, "sub_queries": ["Alice Moreau role", "Falcon project budget"]}"#,
            ),
            says(r#"{"kind": "stop"}"#),
            says(CHAIN_ANSWER),
        ],
        "multi_hop = \"auto\"\n",
    );
    let (a, code, _) = ask(&kb, QUESTION, &[]);
    assert_eq!(code, 0, "{a:#}");
    assert_eq!(a["prompt_template_version"], "rag-multi-hop-v1");
    assert_eq!(kinds(&a), ["decompose", "stop", "synthesize"]);
    assert_eq!(server.chat_requests(), 3);
    assert_eq!(cited_paths(&a), ["people/alice.md", "projects/falcon.md"]);
}

#[test]
fn the_loop_is_forced_to_stop_at_max_depth() {
    // At the bound no decision is asked for: decompose, one decision, the
    // answer.
    let script = || {
        vec![
            says(r#"{"compound": true, "sub_queries": ["Alice Moreau role"]}"#),
            says(r#"{"kind": "continue", "sub_queries": ["Falcon project budget"]}"#),
            says(CHAIN_ANSWER),
        ]
    };
    let (_corpus, server, kb) = kb_with([script(), script()].concat(), "max_depth = 2\n");
    let (a, code, _) = ask(&kb, QUESTION, &["--multi-hop"]);
    assert_eq!(code, 0, "{a:#}");
    assert_eq!(kinds(&a), ["decompose", "continue", "stop", "synthesize"]);
    let stop = &a["hops"][2];
    assert_eq!(stop["forced_stop"], true, "{stop:#}");
    assert_eq!(stop["iter"], 2);
    assert_eq!(stop["llm_call_ms"], 0, "no model call at the bound");
    assert_eq!(stop["context_chunks_added"], 0);
    assert!(
        a["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("max_depth = 2")),
        "{a:#}"
    );
    assert_eq!(server.chat_requests(), 3);
    assert_eq!(cited_paths(&a), ["people/alice.md", "projects/falcon.md"]);
    // --explain shows every hop.
    let out = kb.run(&["ask", QUESTION, "--multi-hop", "--explain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("hop 0 decompose") && text.contains("(forced stop)"),
        "{text}"
    );
    assert_eq!(server.chat_requests(), 6);
}

#[test]
fn ctrl_c_during_the_answer_keeps_the_hops_and_the_partial_text() {
    let (_corpus, server, kb) = kb_with(
        vec![
            says(r#"{"compound": true, "sub_queries": ["Falcon project budget"]}"#),
            says(r#"{"kind": "stop"}"#),
            Script::Drip(
                tokens("Alice leads Falcon and its budget is large [#1]."),
                Duration::from_millis(300),
            ),
        ],
        "",
    );
    let child = spawn_ask(&kb, QUESTION, &["--multi-hop"]);
    // Interrupt once the answer streams (its first tokens are out).
    let waited = std::time::Instant::now();
    while server.chat_requests() < 3 {
        assert!(waited.elapsed() < Duration::from_secs(60), "no answer call");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(700));
    let a = interrupt(child);
    assert_eq!(a["refusal_reason"], "llm_stream_aborted");
    assert_eq!(kinds(&a), ["decompose", "stop", "synthesize"]);
    let partial = a["answer"].as_str().unwrap();
    assert!(
        partial.starts_with("Alice ") && !partial.contains("[#1]"),
        "{partial:?}"
    );
    let row = stored(&kb);
    assert_eq!(row["answer"], partial);
    assert_eq!(row["hops"][0]["kind"], "decompose", "{row:#}");
}
