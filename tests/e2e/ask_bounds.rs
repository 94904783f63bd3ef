//! A model server cannot exhaust `kebab ask`: the whole generation ends at
//! `timeout_secs` however the server streams (a token at a time forever,
//! a byte at a time), and the answer at `max_answer_tokens` whatever it
//! sends (tokens forever, one huge token, a line that never ends); the
//! partial answer is kept, bounded, in `answer.v1` and in the answers
//! table, with its reason (`timeout`, `answer_too_long`). Both wire
//! protocols, each ask under a bounded wait.

use std::time::Duration;

use serde_json::Value;

use crate::ask::stored;
use crate::llm_server::{LlmServer, Script, Wire};
use crate::support::{Kb, output_within, sample_corpus};

const WIRES: [Wire; 2] = [Wire::Ollama, Wire::OpenAi];
const QUESTION: &str = "How does the Raft leader replicate log entries with AppendEntries?";
/// Longest a test waits for one ask before killing it and failing.
const BOUND: Duration = Duration::from_secs(30);

/// A knowledge base over the sample corpus asking `server` with
/// `[models.llm]` `timeout_secs` and `max_answer_tokens`.
fn kb_for(server: &LlmServer, timeout_secs: u64, max_answer_tokens: u32) -> Kb {
    let kb = Kb::with_config(&format!(
        "{}max_answer_tokens = {max_answer_tokens}\n",
        server.config(timeout_secs)
    ));
    kb.ingest(&sample_corpus());
    kb
}

/// `kebab --json ask QUESTION` within [`BOUND`]: the answer, the error
/// report, and how long it took; asserts it failed (exit 2) with `reason`
/// and stored the same partial answer.
fn failed_ask(kb: &Kb, reason: &str) -> (Value, Value, Duration) {
    let (out, took) = output_within(kb.cmd(&["--json", "ask", QUESTION]), BOUND);
    let a: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no answer.v1 ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let err: Value = serde_json::from_slice(&out.stderr).expect("error.v1 on stderr");
    assert_eq!(out.status.code(), Some(2), "{a:#} {err}");
    assert_eq!(a["grounded"], false, "{a:#}");
    assert_eq!(a["refusal_reason"], reason, "{a:#}");
    assert_eq!(err["code"], reason, "{err}");
    let row = stored(kb);
    assert_eq!(row["refusal_reason"], reason);
    assert_eq!(row["answer"], a["answer"], "the partial answer is stored");
    (a, err, took)
}

#[test]
fn the_whole_generation_ends_at_timeout_secs_however_the_server_streams() {
    for wire in WIRES {
        let scripts = [
            // A token every 50 ms, forever: every read succeeds.
            Script::Endless("tick ".into(), Duration::from_millis(50)),
            // One byte of a line every 100 ms, forever.
            Script::Unterminated {
                bytes: 1,
                every: Duration::from_millis(100),
            },
        ];
        for script in scripts {
            let server = LlmServer::start(wire, script.clone());
            let kb = kb_for(&server, 2, 100_000);
            let (a, _, took) = failed_ask(&kb, "timeout");
            let latency = a["usage"]["latency_ms"].as_u64().unwrap();
            assert!(
                (2_000..5_000).contains(&latency),
                "{wire:?} {script:?}: ask took {latency} ms"
            );
            assert!(took < Duration::from_secs(15), "{took:?}");
            let partial = a["answer"].as_str().unwrap();
            if let Script::Endless(..) = script {
                assert!(
                    partial.starts_with("tick tick ") && partial.len() < 2_000,
                    "{partial:?}"
                );
            }
        }
    }
}

#[test]
fn the_answer_ends_at_max_answer_tokens_whatever_the_server_sends() {
    for wire in WIRES {
        // Tokens forever, as fast as it can.
        let server = LlmServer::start(
            wire,
            Script::Endless("word ".into(), Duration::from_millis(1)),
        );
        let kb = kb_for(&server, 60, 40);
        let (a, err, took) = failed_ask(&kb, "answer_too_long");
        assert_eq!(a["answer"], "word ".repeat(40), "{wire:?}");
        assert!(took < Duration::from_secs(20), "{took:?}");
        assert!(
            err["hint"].as_str().unwrap().contains("max_answer_tokens"),
            "{err}"
        );

        // One huge token, then a valid citation: the answer is cut at 16
        // bytes a token (a token's line longer than an answer can need is
        // not even read to its end).
        for (size, kept) in [(10_000, 64 * 16), (8 << 20, 0)] {
            let server = LlmServer::start(wire, Script::HugeToken(size));
            let kb = kb_for(&server, 60, 64);
            let (a, _, _) = failed_ask(&kb, "answer_too_long");
            assert_eq!(a["answer"], "x".repeat(kept), "{wire:?} {size}");
        }

        // A line that never ends, 64 KiB more every 5 ms.
        let server = LlmServer::start(
            wire,
            Script::Unterminated {
                bytes: 64 << 10,
                every: Duration::from_millis(5),
            },
        );
        let kb = kb_for(&server, 60, 1024);
        let (a, _, took) = failed_ask(&kb, "answer_too_long");
        assert_eq!(a["answer"], "", "{wire:?}");
        assert!(took < Duration::from_secs(20), "{took:?}");
    }
}
