//! One call cannot stop kebab: sizes from outside (CLI flags, MCP
//! arguments, config settings) are refused by name against their bound
//! instead of overflowing; over MCP a call that used to panic the engine
//! leaves it answering, an `ask` streaming from a slow model holds up no
//! search or fetch (nor, from a model that never finishes, another MCP
//! server's or the CLI's on the same index until `timeout_secs` ends it),
//! and the requests rmcp used to leave unanswered (a line
//! over the size limit, a lone surrogate, an id already in flight) get a
//! JSON-RPC error addressed to them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::llm_server::{LlmServer, Script, Wire, dead_endpoint, tokens};
use crate::mcp::{call, client, error_code, ok};
use crate::support::{Kb, NO_EMBEDDINGS, embedding_config, sample_corpus};

/// `u64::MAX`: the `k` that used to overflow the vector pool.
const U64_MAX: &str = "18446744073709551615";
/// `i64::MAX`: the largest integer TOML holds.
const I64_MAX: &str = "9223372036854775807";
const QUESTION: &str = "How does the Raft leader replicate log entries with AppendEntries?";

/// `kebab --json ARGS` expected to fail: its exit code and `error.v1`.
fn failure(kb: &Kb, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = kb.run(&all);
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let error = stderr
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .unwrap_or_else(|| panic!("kebab {args:?} exited {code} without error.v1: {stderr}"));
    (code, error)
}

/// An `invalid_input` error naming `field` and a bound, with the bound in
/// its message; the bound.
fn refused_by_bound(error: &Value, field: &str) -> u64 {
    assert_eq!(error["code"], "invalid_input", "{error:#}");
    assert_eq!(error["details"]["field"], field, "{error:#}");
    let max = error["details"]["max"].as_u64().expect("the bound");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&format!("bound of {max}")), "{message}");
    max
}

#[test]
fn sizes_from_flags_are_refused_against_their_bound() {
    let kb = Kb::with_config(&embedding_config());
    kb.ingest(&sample_corpus());
    let query = "raft leader election";
    for (args, field) in [
        // These two panicked on an overflow before they were bounded.
        (
            vec!["search", query, "--k", U64_MAX, "--mode", "vector"],
            "k",
        ),
        (
            vec![
                "search", query, "--k", I64_MAX, "--mode", "vector", "--path", "tech/*",
            ],
            "k",
        ),
        (vec!["search", query, "--k", U64_MAX], "k"),
        (
            vec!["search", query, "--k", "1001", "--mode", "lexical"],
            "k",
        ),
        (vec!["eval", "ann", "--query", query, "--k", U64_MAX], "k"),
        (
            vec!["eval", "ann", "--query", query, "--refine", "4294967295"],
            "ann_refine_factor",
        ),
    ] {
        let (code, error) = failure(&kb, &args);
        assert_eq!(code, 2, "{args:?}: {error:#}");
        refused_by_bound(&error, field);
    }
    // The bound itself is served, filter and all.
    let (response, code) = kb.json(&[
        "search", query, "--k", "1000", "--mode", "vector", "--path", "tech/*",
    ]);
    assert_eq!(code, 0, "{response:#}");
    assert!(!response["hits"].as_array().unwrap().is_empty());

    // A bulk line longer than any input is that line's error; the lines
    // around it are served.
    let long = format!("{{\"query\": \"{}\"}}", "x".repeat(1 << 20));
    let input = format!("{{\"query\": \"{query}\"}}\n{long}\n{{\"query\": \"{query}\"}}\n");
    let out =
        crate::support::run_with_stdin(kb.cmd(&["--json", "search", "--bulk"]), input.as_bytes());
    let bulk: Value = serde_json::from_slice(&out.stdout).expect("bulk_search_response.v1");
    assert_eq!(
        (bulk["succeeded"].as_u64(), bulk["failed"].as_u64()),
        (Some(2), Some(1))
    );
    let error = &bulk["items"][1]["error"];
    assert_eq!(error["details"]["field"], "line", "{error:#}");
    assert!(
        error["message"].as_str().unwrap().contains("bound"),
        "{error:#}"
    );
}

#[test]
fn sizes_in_the_config_are_refused_against_their_bound() {
    let corpus = sample_corpus();
    for (setting, key, args) in [
        // Panicked on an overflow at the first vector search.
        (
            format!("[search]\ndefault_k = {I64_MAX}\n"),
            "[search] default_k",
            vec!["search", "raft", "--mode", "vector"],
        ),
        (
            format!("[search]\ncandidates = {I64_MAX}\n"),
            "[search] candidates",
            vec!["search", "raft"],
        ),
        (
            format!("[rag]\nk = {I64_MAX}\n"),
            "[rag] k",
            vec!["ask", "raft?"],
        ),
        // Wrapped to a cap no plugin would ever reach.
        (
            format!("[plugins]\nmemory_mb = {I64_MAX}\n"),
            "[plugins] memory_mb",
            vec!["ingest", corpus.to_str().unwrap()],
        ),
        (
            format!("[plugins.limits.markdown]\nmax_output_mb = {I64_MAX}\n"),
            "[plugins.limits.markdown] max_output_mb",
            vec!["ingest", corpus.to_str().unwrap()],
        ),
        (
            format!("[models.llm]\ntimeout_secs = {I64_MAX}\n"),
            "[models.llm] timeout_secs",
            vec!["ask", "raft?"],
        ),
        (
            "[search]\nann_refine_factor = 4294967295\n".to_string(),
            "[search] ann_refine_factor",
            vec!["search", "raft"],
        ),
    ] {
        let kb = Kb::with_config(&format!("{}{setting}", embedding_config()));
        let (code, error) = failure(&kb, &args);
        assert_eq!(code, 2, "{setting}: {error:#}");
        assert_eq!(error["code"], "config_invalid", "{setting}: {error:#}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("{key} = ")) && message.contains("is over its bound of"),
            "{setting}: {message}"
        );
    }
}

/// The client's report, waiting at most `limit` for it (killed after).
fn report_within(mut child: Child, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("poll the client").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the MCP client did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("client output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "MCP client failed: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("client output not JSON ({e}); stderr: {stderr}"))
}

#[test]
fn over_mcp_a_call_that_used_to_panic_leaves_the_engine_serving() {
    let kb = Kb::with_config(&format!(
        "{}{}",
        embedding_config(),
        crate::llm_server::config_for(Wire::Ollama, &dead_endpoint(), 5)
    ));
    kb.ingest(&sample_corpus());
    let query = "raft leader election";
    let (hits, _) = kb.search(query, 1);
    let chunk_id = hits[0]["chunk_id"].as_str().unwrap();
    let doc_id = hits[0]["doc_id"].as_str().unwrap();
    let huge = json!(u64::MAX);
    let steps = json!([
        call(
            "search",
            json!({ "query": query, "k": huge, "mode": "vector" })
        ),
        call(
            "search",
            json!({ "query": query, "k": i64::MAX, "mode": "vector", "path": "tech/*" })
        ),
        call("ask", json!({ "question": QUESTION, "k": huge })),
        call(
            "bulk_search",
            json!({ "queries": [{ "query": query, "k": huge }, { "query": query }] })
        ),
        call(
            "fetch",
            json!({ "kind": "chunk", "chunk_id": chunk_id, "context": u32::MAX })
        ),
        call(
            "fetch",
            json!({ "kind": "doc", "doc_id": doc_id, "max_tokens": huge })
        ),
        call("search", json!({ "query": query, "k": 3 })),
    ]);
    let r = report_within(client(&kb, &steps), Duration::from_secs(120));
    let res = r["results"].as_array().unwrap();
    for (i, field) in [(0, "k"), (1, "k"), (2, "k")] {
        assert_eq!(error_code(&res[i]), "invalid_input", "{:#}", res[i]);
        refused_by_bound(&res[i]["structured"], field);
    }
    let bulk = ok(&res[3]);
    refused_by_bound(&bulk["items"][0]["error"], "k");
    assert!(
        !bulk["items"][1]["response"]["hits"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // Sizes that cannot overflow are served whole.
    assert_eq!(ok(&res[4])["chunk"]["chunk_id"], chunk_id);
    assert_eq!(ok(&res[5])["truncated"], false);
    assert_eq!(ok(&res[6])["hits"].as_array().unwrap().len(), 3);
}

#[test]
fn an_ask_streaming_from_a_slow_model_holds_up_no_search_or_fetch() {
    // Sixteen tokens, one every 300 ms: the answer takes about 5 s.
    let answer = "Raft replicates entries from the leader with AppendEntries to a majority of followers [#1].";
    let server = LlmServer::start(
        Wire::Ollama,
        Script::Drip(tokens(answer), Duration::from_millis(300)),
    );
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{}", server.config(60)));
    kb.ingest(&sample_corpus());
    let (hits, _) = kb.search("raft leader", 1);
    let doc_id = hits[0]["doc_id"].as_str().unwrap();
    let later = |after: f64, step: Value| {
        let mut step = step;
        step["after"] = json!(after);
        step
    };
    let steps = json!([{ "concurrently": [
        call("ask", json!({ "question": QUESTION })),
        later(1.5, call("search", json!({ "query": "raft leader", "k": 2 }))),
        later(1.5, call("fetch", json!({ "kind": "doc", "doc_id": doc_id }))),
        later(1.5, call("list_docs", json!({}))),
    ]}]);
    let r = report_within(client(&kb, &steps), Duration::from_secs(120));
    let calls = r["results"][0].as_array().unwrap();
    let ask = &calls[0];
    assert_eq!(ok(ask)["schema_version"], "answer.v1");
    let ask_ended = ask["ended"].as_f64().unwrap();
    assert!(ask_ended > 3.0, "the answer streamed for {ask_ended} s");
    for other in &calls[1..] {
        ok(other);
        let ended = other["ended"].as_f64().unwrap();
        assert!(
            ended < ask_ended - 1.0,
            "a call issued while the answer streamed ended at {ended} s, the answer at {ask_ended} s"
        );
    }
}

#[test]
fn an_endless_ask_holds_up_neither_its_own_client_nor_another_until_its_timeout() {
    // A token every 100 ms, never finished: only `timeout_secs` ends it.
    const TIMEOUT: u64 = 20;
    let server = LlmServer::start(
        Wire::Ollama,
        Script::Endless("tick ".into(), Duration::from_millis(100)),
    );
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{}", server.config(TIMEOUT)));
    kb.ingest(&sample_corpus());
    let (hits, _) = kb.search("raft leader", 1);
    let doc_id = hits[0]["doc_id"].as_str().unwrap();
    let search = call("search", json!({ "query": "raft leader", "k": 2 }));
    let fetch = call("fetch", json!({ "kind": "doc", "doc_id": doc_id }));
    let later = |after: f64, step: &Value| {
        let mut step = step.clone();
        step["after"] = json!(after);
        step
    };
    let steps = json!([{ "concurrently": [
        call("ask", json!({ "question": QUESTION })),
        later(2.0, &search),
        later(2.5, &fetch),
    ]}]);
    let mut asking = client(&kb, &steps);

    // Once the ask streams, a second MCP server and the CLI on the same
    // data directory are answered while it still does.
    let waited = Instant::now();
    while server.streaming() == 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the ask never reached the model"
        );
        assert!(
            asking.try_wait().expect("poll the client").is_none(),
            "the client ended before its ask streamed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let streaming_since = Instant::now();
    let other = report_within(
        client(&kb, &json!([search.clone(), fetch.clone()])),
        Duration::from_secs(60),
    );
    for result in other["results"].as_array().unwrap() {
        ok(result);
    }
    assert_eq!(
        ok(&other["results"][0])["hits"].as_array().unwrap().len(),
        2,
        "{other:#}"
    );
    assert_eq!(ok(&other["results"][1])["doc_id"], doc_id, "{other:#}");
    let (out, _) = crate::support::output_within(
        kb.cmd(&["--json", "search", "raft leader", "--k", "2"]),
        Duration::from_secs(60),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: Value = serde_json::from_slice(&out.stdout).expect("search_response.v1");
    assert_eq!(cli["hits"].as_array().unwrap().len(), 2, "{cli:#}");
    let others_took = streaming_since.elapsed();
    assert_eq!(
        server.streaming(),
        1,
        "the ask still streams after the other clients were answered ({others_took:?})"
    );
    assert!(
        asking.try_wait().expect("poll the client").is_none(),
        "the ask's client is still waiting"
    );
    // The other processes closing the index left the server's write-ahead
    // log alone: they saw that the server still holds it open.
    assert!(
        kb.data_dir().join("kebab.sqlite-wal").is_file(),
        "another process deleted the write-ahead log under the running server"
    );

    // The ask's own search and fetch were answered at once; the ask ends
    // at the timeout as the bounded refusal, and the stream is closed.
    let r = report_within(asking, Duration::from_secs(120));
    let calls = r["results"][0].as_array().unwrap();
    let ask = &calls[0];
    assert_eq!(error_code(ask), "timeout", "{ask:#}");
    let ask_ended = ask["ended"].as_f64().unwrap();
    assert!(
        (TIMEOUT as f64 - 1.0..TIMEOUT as f64 + 15.0).contains(&ask_ended),
        "the ask ended at {ask_ended} s, its timeout is {TIMEOUT} s"
    );
    for own in &calls[1..] {
        ok(own);
        let (started, ended) = (
            own["started"].as_f64().unwrap(),
            own["ended"].as_f64().unwrap(),
        );
        assert!(
            ended - started < 5.0 && ended < ask_ended - 10.0,
            "a call issued while the ask streamed took {started}..{ended} s, the ask ended at {ask_ended} s"
        );
    }
    let stored = crate::ask::stored(&kb);
    assert_eq!(stored["refusal_reason"], "timeout", "{stored:#}");
    assert!(
        stored["answer"].as_str().unwrap().starts_with("tick tick "),
        "the partial answer is kept: {stored:#}"
    );
    let closed = Instant::now();
    while server.streaming() > 0 {
        assert!(
            closed.elapsed() < Duration::from_secs(10),
            "kebab still reads the endless stream after its ask ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `kebab mcp` spoken to line by line, as a client that does not check
/// what it sends.
struct RawMcp {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Messages read while waiting for another id.
    unclaimed: Vec<Value>,
}

impl RawMcp {
    /// Start the server and complete the MCP handshake.
    fn start(kb: &Kb) -> RawMcp {
        let mut child = kb
            .cmd(&["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kebab mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let message = serde_json::from_str(&line)
                    .unwrap_or_else(|e| json!({ "not_json": line, "error": e.to_string() }));
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        let mut mcp = RawMcp {
            child,
            stdin,
            messages,
            unclaimed: Vec::new(),
        };
        mcp.send(
            &json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "0" }
                }
            })
            .to_string(),
        );
        assert!(mcp.reply(json!(0), Duration::from_secs(30))["result"].is_object());
        mcp.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        mcp
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).expect("write a line");
        self.stdin.write_all(b"\n").expect("write a newline");
        self.stdin.flush().expect("flush");
    }

    /// The next message addressed to `id` (`null`: an error without one),
    /// waiting at most `limit`.
    fn reply(&mut self, id: Value, limit: Duration) -> Value {
        if let Some(at) = self.unclaimed.iter().position(|m| m["id"] == id) {
            return self.unclaimed.remove(at);
        }
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(m) if m["id"] == id => return m,
                Ok(m) => self.unclaimed.push(m),
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "no reply to id {id} within {limit:?}; other messages: {:?}",
                        self.unclaimed
                    )
                }
                Err(RecvTimeoutError::Disconnected) => panic!("kebab mcp exited"),
            }
        }
    }

    /// A `tools/call` request line.
    fn tool_call(id: Value, tool: &str, arguments: Value) -> String {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": tool, "arguments": arguments }
        })
        .to_string()
    }

    /// Search with request `id` and expect a tool result with hits.
    fn search_answers(&mut self, id: i64) {
        let line = RawMcp::tool_call(json!(id), "search", json!({ "query": "raft leader" }));
        self.send(&line);
        let reply = self.reply(json!(id), Duration::from_secs(30));
        let hits = &reply["result"]["structuredContent"]["hits"];
        assert!(!hits.as_array().unwrap().is_empty(), "{reply:#}");
    }
}

impl Drop for RawMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON-RPC error code of `reply`.
fn rpc_error(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {reply:#}"))
}

#[test]
fn requests_rmcp_left_unanswered_get_a_json_rpc_error() {
    let server = LlmServer::start(
        Wire::Ollama,
        Script::Drip(
            tokens("Raft replicates entries from the leader with AppendEntries to followers [#1]."),
            Duration::from_millis(300),
        ),
    );
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{}", server.config(60)));
    kb.ingest(&sample_corpus());
    let mut mcp = RawMcp::start(&kb);
    let quick = Duration::from_secs(30);

    // Lines over the size limit, the id last (as the Python SDK writes
    // it) and first; 5 MiB is over kebab's limit, 17 MiB over rmcp's.
    for (id, size) in [(11, 5 << 20), (12, 17 << 20)] {
        let query = "x".repeat(size);
        let line = if id == 11 {
            format!(
                r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"search","arguments":{{"query":"{query}"}}}},"id":{id}}}"#
            )
        } else {
            RawMcp::tool_call(json!(id), "search", json!({ "query": query }))
        };
        mcp.send(&line);
        let reply = mcp.reply(json!(id), quick);
        assert_eq!(rpc_error(&reply), -32600, "{reply:#}");
        mcp.search_answers(100 + id);
    }

    // A lone surrogate makes the line invalid JSON: a parse error, still
    // addressed to the request.
    mcp.send(
        r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"search","arguments":{"query":"raft \ud800 leader"}}}"#,
    );
    let reply = mcp.reply(json!(13), quick);
    assert_eq!(rpc_error(&reply), -32700, "{reply:#}");
    mcp.search_answers(113);

    // A second request with the id of an ask still streaming (about 4 s)
    // is refused at once; the ask is then answered under its id.
    mcp.send(&RawMcp::tool_call(
        json!(14),
        "ask",
        json!({ "question": QUESTION }),
    ));
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    mcp.send(&RawMcp::tool_call(
        json!(14),
        "search",
        json!({ "query": "raft" }),
    ));
    let refused = mcp.reply(json!(14), quick);
    assert_eq!(rpc_error(&refused), -32600, "{refused:#}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the reused id was answered after {:?}",
        started.elapsed()
    );
    let answered = mcp.reply(json!(14), Duration::from_secs(60));
    assert_eq!(
        answered["result"]["structuredContent"]["schema_version"], "answer.v1",
        "{answered:#}"
    );
    // The id is free again once answered.
    mcp.search_answers(14);
}
