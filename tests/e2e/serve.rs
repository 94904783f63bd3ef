//! `kebab serve` driven over real HTTP on loopback: the official MCP Python
//! SDK's Streamable HTTP client (tests/mcp/client.py with a `url`) for
//! every tool, sessions ended with DELETE, two clients at once, a slow
//! `ask` beside searches and the `overloaded` bound; the read-only `/v1`
//! JSON API and `/healthz`; `--watch`; the Host/Origin guard and the bearer
//! token (raw requests, so every header is the test's); the refusals at
//! start (a network address without a token, a second server on one data
//! directory); path-escape attempts through `fetch`, filters and URLs;
//! `kebab mcp` forwarding to a running server and falling back when it
//! stops; SIGTERM with a call in flight, Ctrl-C's exit code; requests
//! whose headers or body never arrive.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::mcp::{
    assert_same_results, call, client, error_code, every_tool_matches_the_cli, ok, report,
    spawn_client,
};
use crate::support::{Kb, NO_EMBEDDINGS, hit_paths, sample_corpus};

/// Quick watcher batches.
const FAST_WATCH: &str = "[watch]\nquiet_ms = 100\nmax_delay_ms = 500\nrescan_secs = 1\n";

/// A running `kebab serve`; SIGTERMed, then killed, when dropped.
pub(crate) struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
    stderr: Arc<Mutex<String>>,
    log_dir: PathBuf,
}

impl Server {
    /// `kebab serve --listen 127.0.0.1:0 ARGS…` on `kb`, with `env`, once
    /// it says where it listens.
    pub(crate) fn start(kb: &Kb, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut all = vec!["serve", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Server::start_raw(kb, &all, env)
    }

    /// `kebab ARGS…` that is expected to start a server.
    fn start_raw(kb: &Kb, args: &[&str], env: &[(&str, &str)]) -> Server {
        let log_dir = tempfile::tempdir().unwrap().keep();
        let mut cmd = kb.cmd(args);
        cmd.env("KEBAB_LOG_DIR", &log_dir)
            .env_remove("KEBAB_SERVE_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start kebab serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        let addr = loop {
            let text = stderr.lock().unwrap().clone();
            if let Some(rest) = text.split("listening on http://").nth(1) {
                break rest.split_whitespace().next().unwrap().to_string();
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("kebab serve exited ({status}) before listening: {text}");
            }
            assert!(
                Instant::now() < deadline,
                "kebab serve never listened: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Server {
            child,
            addr,
            stderr,
            log_dir,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn port(&self) -> &str {
        self.addr.rsplit(':').next().unwrap()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// SIGTERM, then the exit code (within a minute).
    fn terminate(&mut self) -> i32 {
        self.stop_by(libc::SIGTERM)
    }

    /// `signal`, then the exit code (within a minute).
    fn stop_by(&mut self, signal: libc::c_int) -> i32 {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "kebab serve ignored SIGTERM: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The tool-call lines the server logged.
    fn calls(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for entry in std::fs::read_dir(&self.log_dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
            lines.extend(
                text.lines()
                    .filter(|l| l.contains("tool call"))
                    .map(String::from),
            );
        }
        lines
    }

    /// Tool calls the server logged, by tool name.
    fn calls_logged(&self, tool: &str) -> usize {
        let tool = format!("tool=\"{tool}\"");
        self.calls().iter().filter(|l| l.contains(&tool)).count()
    }

    /// Wait (up to 10 s: the log is written by a background thread) until
    /// `n` calls of `tool` are logged, and check no more are.
    fn assert_logged(&self, tool: &str, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.calls_logged(tool) < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            self.calls_logged(tool),
            n,
            "`{tool}` calls the server logged: {:#?}",
            self.calls()
        );
    }

    /// An MCP client (Python SDK, Streamable HTTP) running `steps`, with
    /// `headers` on every request.
    fn client(&self, headers: Value, steps: &Value) -> Child {
        spawn_client(&json!({
            "url": format!("{}/mcp", self.url()),
            "headers": headers,
            "steps": steps,
        }))
    }

    /// `GET path` with the right Host and `headers`.
    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        let mut all = vec![("Host", self.addr.as_str())];
        all.extend_from_slice(headers);
        http(&self.addr, "GET", path, &all, None)
    }

    /// `GET path` answered 200 with JSON.
    pub(crate) fn get_json(&self, path: &str) -> Value {
        let a = self.get(path, &[]);
        assert_eq!(a.status, 200, "GET {path}: {a:?}");
        a.json()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                let _ = std::fs::remove_dir_all(&self.log_dir);
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.log_dir);
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    /// Header lines, lowercased names.
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request with exactly these headers (and a body), on a
/// connection of its own.
pub(crate) fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("Connection: close\r\n\r\n");
    request.push_str(body.unwrap_or(""));
    stream.write_all(request.as_bytes()).unwrap();
    answer(stream)
}

/// Everything the server sends on `stream` until it closes, as an answer.
fn answer(mut stream: TcpStream) -> Answer {
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Answer {
        status,
        headers,
        body,
    }
}

/// A chunked body's content.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        body.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    body
}

/// Wait for `what` until `timeout`.
fn until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "no {what} within {timeout:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A client's report and stderr, the client having succeeded.
fn report_and_log(child: Child) -> (Value, String) {
    let out = child.wait_with_output().expect("client ran");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "MCP client failed: {stderr}");
    let r = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("client output not JSON ({e}); stderr: {stderr}"));
    (r, stderr)
}

/// A model server that writes `answer` a piece every `every`, and a
/// `kebab serve ARGS` over the sample notes (lexical) asking it.
fn drip_server(answer: &str, every: Duration, args: &[&str]) -> (LlmServer, Kb, Server) {
    let llm = LlmServer::start(Wire::Ollama, Script::Drip(tokens(answer), every));
    let kb = lexical_kb(&llm.config(60));
    let server = Server::start(&kb, args, &[]);
    (llm, kb, server)
}

/// An index of the sample corpus without embeddings, plus `config`.
fn lexical_kb(config: &str) -> Kb {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{config}"));
    kb.ingest(&sample_corpus());
    kb
}

#[test]
fn every_tool_over_streamable_http_returns_what_the_cli_prints_and_delete_ends_the_session() {
    every_tool_matches_the_cli(|kb, steps| {
        let server = Server::start(kb, &[], &[]);
        let r = report(server.client(json!({}), &steps));
        // initialize opened a session; leaving the client ended it.
        let sid = r["http"]["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no Mcp-Session-Id: {r:#}"))
            .to_string();
        let requests = r["http"]["requests"].as_array().unwrap();
        let last = requests.last().unwrap();
        assert_eq!(last, &json!(["DELETE", 204]), "{requests:?}");
        // The ended session is unknown to the server.
        let list = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#;
        let again = mcp_post(&server.addr, list, &[("Mcp-Session-Id", &sid)]);
        assert_eq!(again.status, 404, "{again:?}");
        // Every call was answered by the server, in order (its log says so).
        let planned: Vec<String> = steps
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["call"].as_str().unwrap().to_string())
            .collect();
        until("every call logged", Duration::from_secs(10), || {
            server.calls().len() >= planned.len()
        });
        let logged: Vec<String> = server
            .calls()
            .iter()
            .map(|l| {
                l.split("tool=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(logged, planned);
        r
    });
}

#[test]
fn the_json_api_returns_what_the_cli_prints() {
    let kb = lexical_kb("");
    let (cli_search, code) = kb.json(&["search", "raft leader", "--k", "3", "--mode", "lexical"]);
    assert_eq!(code, 0);
    let doc_id = cli_search["hits"][0]["doc_id"]
        .as_str()
        .unwrap()
        .to_string();
    let chunk_id = cli_search["hits"][0]["chunk_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (cli_doc, _) = kb.json(&["fetch", "doc", &doc_id]);
    let (cli_chunk, _) = kb.json(&["fetch", "chunk", &chunk_id, "--context", "1"]);
    let (cli_span, _) = kb.json(&["fetch", "span", &doc_id, "1", "3"]);
    let (cli_docs, _) = kb.json(&["list", "docs"]);
    let (cli_schema, _) = kb.json(&["schema"]);
    let (cli_filtered, _) = kb.json(&[
        "search", "memory", "--path", "tech/*", "--k", "2", "--mode", "lexical",
    ]);

    let server = Server::start(&kb, &[], &[]);
    assert_same_results(
        &server.get_json("/v1/search?q=raft+leader&k=3&mode=lexical"),
        &cli_search,
    );
    assert_same_results(
        &server.get_json("/v1/search?q=memory&path=tech%2F*&k=2&mode=lexical"),
        &cli_filtered,
    );
    assert_eq!(
        server.get_json(&format!("/v1/fetch?kind=doc&doc_id={doc_id}")),
        cli_doc
    );
    assert_eq!(
        server.get_json(&format!(
            "/v1/fetch?kind=chunk&chunk_id={chunk_id}&context=1"
        )),
        cli_chunk
    );
    assert_eq!(
        server.get_json(&format!(
            "/v1/fetch?kind=span&doc_id={doc_id}&line_start=1&line_end=3"
        )),
        cli_span
    );
    assert_eq!(server.get_json("/v1/list_docs")["docs"], cli_docs);
    assert_eq!(server.get_json("/v1/schema"), cli_schema);
    let bulk = http(
        &server.addr,
        "POST",
        "/v1/bulk_search",
        &[("Host", &server.addr), ("Content-Type", "application/json")],
        Some(r#"{"queries":[{"query":"raft leader","k":3,"mode":"lexical"},{"query":""}]}"#),
    );
    assert_eq!(bulk.status, 200, "{bulk:?}");
    let bulk = bulk.json();
    assert_same_results(&bulk["items"][0]["response"], &cli_search);
    assert_eq!(bulk["items"][1]["error"]["code"], "invalid_input");

    let health = server.get_json("/healthz");
    assert_eq!(health["schema_version"], "health.v1");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["pid"], server.child.id());
    assert_eq!(health["watching"], false);

    // Errors are error.v1 with the status their code calls for.
    let missing = server.get("/v1/search", &[]);
    assert_eq!(missing.status, 400, "{missing:?}");
    assert_eq!(missing.json()["code"], "invalid_input");
    let gone = server.get("/v1/fetch?kind=doc&doc_id=doc_nothing", &[]);
    assert_eq!(gone.status, 404, "{gone:?}");
    assert_eq!(gone.json()["schema_version"], "error.v1");
    // ask writes to the index: POST only.
    let ask = server.get("/v1/ask?question=why", &[]);
    assert_eq!(ask.status, 405, "{ask:?}");
    assert!(ask.json()["message"].as_str().unwrap().contains("POST"));
    let unknown = server.get("/v1/nothing", &[]);
    assert_eq!(unknown.status, 404, "{unknown:?}");
}

#[test]
fn two_clients_search_and_fetch_at_once_on_one_server() {
    let kb = lexical_kb("");
    let queries = [
        "raft leader",
        "memory limits",
        "log replication",
        "election timeout",
    ];
    let expected: Vec<Value> = queries
        .iter()
        .map(|q| kb.json(&["search", q, "--k", "3", "--mode", "lexical"]).0)
        .collect();
    let doc_id = expected[0]["hits"][0]["doc_id"].as_str().unwrap();
    let (doc, _) = kb.json(&["fetch", "doc", doc_id]);
    let server = Server::start(&kb, &["--readers", "2"], &[]);
    let mut calls = Vec::new();
    for round in 0..3 {
        let after = f64::from(round) * 0.05;
        for q in queries {
            let arguments = json!({ "query": q, "k": 3, "mode": "lexical" });
            calls.push(json!({ "call": "search", "arguments": arguments, "after": after }));
        }
        let arguments = json!({ "kind": "doc", "doc_id": doc_id });
        calls.push(json!({ "call": "fetch", "arguments": arguments, "after": after }));
    }
    let steps = json!([{ "concurrently": calls }]);
    let a = server.client(json!({}), &steps);
    let b = server.client(json!({}), &steps);
    for r in [report(a), report(b)] {
        let results = r["results"][0].as_array().unwrap();
        assert_eq!(results.len(), 15);
        for (i, result) in results.iter().enumerate() {
            let (round_pos, is_fetch) = (i % 5, i % 5 == 4);
            if is_fetch {
                assert_eq!(ok(result), &doc);
            } else {
                assert_same_results(ok(result), &expected[round_pos]);
                assert!(!ok(result)["hits"].as_array().unwrap().is_empty());
            }
        }
    }
    server.assert_logged("search", 24);
}

#[test]
fn a_slow_ask_holds_up_no_search_and_a_full_queue_answers_overloaded() {
    // 25 tokens, one every 200 ms: each ask streams for 5 s.
    let answer = "Raft replicates entries from the leader with AppendEntries and the leader \
                  commits once a majority stored them, as the notes say [#1].";
    // One model call runs and one waits; a third is refused.
    let (_llm, _kb, server) = drip_server(answer, Duration::from_millis(200), &["--queue", "1"]);
    let question = json!({ "question": "How does the Raft leader replicate log entries?" });
    let steps = json!([{ "concurrently": [
        call("ask", question.clone()),
        { "call": "ask", "arguments": question.clone(), "after": 0.5 },
        { "call": "ask", "arguments": question.clone(), "after": 1.0 },
        { "call": "search", "arguments": { "query": "raft leader", "mode": "lexical" }, "after": 1.5 },
        { "call": "fetch", "arguments": { "kind": "doc", "doc_id": "doc_none" }, "after": 1.6 },
    ]}]);
    let r = report(server.client(json!({}), &steps));
    let res = r["results"][0].as_array().unwrap();
    let first = ok(&res[0]);
    assert!(
        first["answer"].as_str().unwrap().contains("AppendEntries"),
        "{first:#}"
    );
    assert!(
        ok(&res[1])["answer"]
            .as_str()
            .unwrap()
            .contains("AppendEntries")
    );
    assert_eq!(error_code(&res[2]), "overloaded", "{:#}", res[2]);
    assert!(
        res[2]["ended"].as_f64().unwrap() - res[2]["started"].as_f64().unwrap() < 1.0,
        "the refusal waited: {:#}",
        res[2]
    );
    // The search and the fetch were answered while the first ask streamed.
    let search = ok(&res[3]);
    assert!(!search["hits"].as_array().unwrap().is_empty());
    assert_eq!(error_code(&res[4]), "doc_not_found");
    let ask_ended = res[0]["ended"].as_f64().unwrap();
    for quick in &res[3..] {
        let ended = quick["ended"].as_f64().unwrap();
        assert!(
            ended < ask_ended - 1.0 && ended - quick["started"].as_f64().unwrap() < 2.0,
            "a read waited for the ask ({quick:#}; the ask ended at {ask_ended} s)"
        );
    }
}

/// A root `notes` holding `a.md` with `note`, indexed, and a `kebab serve
/// --watch` over it with quick watcher batches.
fn watched_notes(note: &str) -> (Kb, PathBuf, Server) {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST_WATCH}"));
    let root = kb.dir.path().join("notes");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.md"), format!("# A\n\n{note}\n")).unwrap();
    kb.ingest(&root);
    let server = Server::start(&kb, &["--watch"], &[]);
    (kb, root, server)
}

#[test]
fn a_file_changed_under_watch_is_found_through_the_server() {
    let (_kb, root, server) = watched_notes("the first version of a note");
    assert_eq!(server.get_json("/healthz")["watching"], true);
    let hits = |word: &str| -> Vec<String> {
        hit_paths(&server.get_json(&format!("/v1/search?q={word}&mode=lexical")))
    };
    assert!(hits("quokkaword").is_empty());
    std::fs::write(root.join("b.md"), "# B\n\nquokkaword lives here now\n").unwrap();
    std::fs::write(root.join("a.md"), "# A\n\nwombatword replaced it\n").unwrap();
    until(
        "the new file through the server",
        Duration::from_secs(30),
        || hits("quokkaword") == ["b.md"] && hits("wombatword") == ["a.md"],
    );
    // The MCP endpoint sees it too, and the old text is gone.
    let r = report(server.client(
        json!({}),
        &json!([
            call(
                "search",
                json!({ "query": "quokkaword", "mode": "lexical" })
            ),
            call(
                "search",
                json!({ "query": "first version", "mode": "lexical" })
            ),
        ]),
    ));
    assert_eq!(ok(&r["results"][0])["hits"][0]["doc_path"], "b.md");
    assert!(
        ok(&r["results"][1])["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["doc_path"] != "a.md"),
        "{:#}",
        r["results"][1]
    );
}

#[test]
fn host_origin_and_token_are_checked_on_every_route() {
    let kb = lexical_kb("");
    let server = Server::start(&kb, &[], &[("KEBAB_SERVE_TOKEN", "s3cret-token")]);
    let host = server.addr.clone();
    let right = ("Authorization", "Bearer s3cret-token");
    let own_origin = format!("http://127.0.0.1:{}", server.port());
    let rebound = format!("evil.example:{}", server.port());
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mcp_headers = |extra: &[(&'static str, &str)]| {
        let mut h = vec![
            ("Accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json"),
        ];
        h.extend_from_slice(extra);
        h.into_iter()
            .map(|(a, b)| (a, b.to_string()))
            .collect::<Vec<_>>()
    };
    let send = |method: &str, path: &str, headers: Vec<(&str, String)>, body: Option<&str>| {
        let h: Vec<(&str, &str)> = headers.iter().map(|(a, b)| (*a, b.as_str())).collect();
        http(&server.addr, method, path, &h, body)
    };
    for (method, path, body) in [
        ("GET", "/healthz", None),
        ("GET", "/v1/search?q=raft", None),
        ("POST", "/mcp", Some(init)),
    ] {
        let base = if method == "POST" {
            mcp_headers(&[])
        } else {
            Vec::new()
        };
        let with = |extra: &[(&'static str, String)]| {
            let mut h = base.clone();
            h.extend(extra.iter().cloned());
            h
        };
        let what = format!("{method} {path}");
        // A rebinding page: its own name in Host, or its origin.
        let a = send(
            method,
            path,
            with(&[("Host", rebound.clone()), (right.0, right.1.into())]),
            body,
        );
        assert_eq!(a.status, 403, "{what}: {a:?}");
        assert_eq!(a.json()["code"], "forbidden");
        let a = send(method, path, with(&[(right.0, right.1.into())]), body);
        assert_eq!(a.status, 403, "{what} without Host: {a:?}");
        let a = send(
            method,
            path,
            with(&[
                ("Host", host.clone()),
                ("Origin", "http://evil.example".into()),
                (right.0, right.1.into()),
            ]),
            body,
        );
        assert_eq!(a.status, 403, "{what} from another origin: {a:?}");
        assert!(!a.body.contains("schema.v1") && !a.body.contains("hits"));
        // No token, a wrong one, one in the wrong scheme.
        for auth in [
            None,
            Some("Bearer wrong"),
            Some("Bearer s3cret-token2"),
            Some("s3cret-token"),
        ] {
            let mut extra = vec![("Host", host.clone())];
            if let Some(auth) = auth {
                extra.push(("Authorization", auth.into()));
            }
            let a = send(method, path, with(&extra), body);
            assert_eq!(a.status, 401, "{what} with {auth:?}: {a:?}");
            assert_eq!(a.header("www-authenticate"), Some("Bearer"));
            assert_eq!(a.json()["code"], "unauthorized");
        }
        // The right token, with or without the server's own origin.
        for origin in [None, Some(own_origin.clone())] {
            let mut extra = vec![("Host", host.clone()), (right.0, right.1.into())];
            if let Some(o) = origin {
                extra.push(("Origin", o));
            }
            let a = send(method, path, with(&extra), body);
            assert_eq!(a.status, 200, "{what}: {a:?}");
        }
    }

    // The SDK's client: refused without the token, served with it.
    let steps = json!([call(
        "search",
        json!({ "query": "raft leader", "mode": "lexical" })
    )]);
    let out = server.client(json!({}), &steps).wait_with_output().unwrap();
    assert!(
        !out.status.success(),
        "a client without the token was served"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("initialize") && stderr.contains("MCPError"),
        "{stderr}"
    );
    let r = report(server.client(json!({ "Authorization": "Bearer s3cret-token" }), &steps));
    assert!(!ok(&r["results"][0])["hits"].as_array().unwrap().is_empty());
}

#[test]
fn a_network_address_without_a_token_and_a_second_server_are_refused_at_start() {
    let kb = lexical_kb("");
    let out = kb
        .cmd(&["serve", "--listen", "0.0.0.0:0"])
        .env_remove("KEBAB_SERVE_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("without a bearer token"), "{stderr}");
    assert!(stderr.contains("KEBAB_SERVE_TOKEN"), "{stderr}");
    // Nothing was bound or locked: the same data directory serves.
    let token = kb.dir.path().join("token");
    std::fs::write(&token, "file-token\n").unwrap();
    let server = Server::start_raw(
        &kb,
        &[
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--token-file",
            token.to_str().unwrap(),
        ],
        &[],
    );
    assert!(server.addr.starts_with("127.0.0.1:"), "{}", server.addr);
    let a = server.get("/healthz", &[("Authorization", "Bearer file-token")]);
    assert_eq!(a.status, 200, "{a:?}");

    let out = kb
        .cmd(&["--json", "serve", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let err: Value = serde_json::from_str(stderr.trim().lines().last().unwrap()).unwrap();
    assert_eq!(err["code"], "already_serving", "{err:#}");
    assert_eq!(err["details"]["pid"], server.child.id());
    assert_eq!(err["details"]["url"], server.url());
}

/// Text that must never come out of the server: a file beside the index,
/// and the system's password file.
fn assert_no_leak(what: &str, text: &str) {
    assert!(
        !text.contains("TOPSECRETWORD") && !text.contains("root:x:0:0"),
        "{what} leaked a file outside the index: {text}"
    );
}

#[test]
fn no_argument_reads_a_path_outside_the_index() {
    let kb = lexical_kb("");
    let outside = kb.dir.path().join("secret.md");
    std::fs::write(
        &outside,
        "# Secret\n\nTOPSECRETWORD lives outside the index\n",
    )
    .unwrap();
    let outside = outside.to_str().unwrap().to_string();
    let server = Server::start(&kb, &[], &[]);
    let ids = [
        "../secret.md".to_string(),
        "../../../../../../etc/passwd".into(),
        "/etc/passwd".into(),
        outside.clone(),
        "..%2Fsecret.md".into(),
        "%2e%2e/%2e%2e/etc/passwd".into(),
        "secret.md\u{0}.md".into(),
        "/etc/passwd\u{0}".into(),
        "file:///etc/passwd".into(),
    ];
    let mut steps = Vec::new();
    for id in &ids {
        steps.push(call("fetch", json!({ "kind": "doc", "doc_id": id })));
        steps.push(call("fetch", json!({ "kind": "chunk", "chunk_id": id })));
        steps.push(call(
            "fetch",
            json!({ "kind": "span", "doc_id": id, "line_start": 1, "line_end": 3 }),
        ));
    }
    let filters = [
        "../*",
        "../**",
        "/etc/*",
        "/**",
        "%2e%2e/*",
        "..\u{0}/*",
        &format!("{}/*", kb.dir.path().display()),
    ];
    for f in filters {
        steps.push(call(
            "search",
            json!({ "query": "lives outside the index", "path": f }),
        ));
        steps.push(call(
            "search",
            json!({ "query": "lives outside the index", "roots": [f] }),
        ));
        steps.push(call("list_docs", json!({ "roots": [f] })));
        steps.push(call(
            "fetch",
            json!({ "kind": "doc", "doc_id": "x", "roots": [f] }),
        ));
    }
    let n = steps.len();
    let r = report(server.client(json!({}), &Value::Array(steps)));
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), n);
    for (i, result) in results.iter().enumerate() {
        assert_no_leak(&format!("call {i}"), &result.to_string());
        if i < ids.len() * 3 {
            // No such document or chunk: refused, never read from disk.
            let code = error_code(result);
            assert!(
                ["doc_not_found", "chunk_not_found", "invalid_input"].contains(&code),
                "call {i}: {result:#}"
            );
        } else if !result["is_error"].as_bool().unwrap() {
            let v = ok(result);
            for hit in v["hits"].as_array().into_iter().flatten() {
                assert!(!hit["doc_path"].as_str().unwrap().contains(".."), "{hit:#}");
            }
        }
    }
    // The same through the JSON API and in URL paths.
    for path in [
        "/v1/fetch?kind=doc&doc_id=..%2Fsecret.md",
        "/v1/fetch?kind=doc&doc_id=%2Fetc%2Fpasswd",
        "/v1/fetch?kind=doc&doc_id=%2Fetc%2Fpasswd%00",
        "/v1/fetch?kind=span&doc_id=..%2F..%2F..%2Fetc%2Fpasswd&line_start=1&line_end=2",
        "/v1/search?q=outside+index&path=..%2F*",
        "/v1/search?q=outside+index&root=%2F",
        "/v1/list_docs?root=..%2F",
        "/v1/../../../etc/passwd",
        "/v1/%2e%2e/%2e%2e/etc/passwd",
        "/../secret.md",
        "/mcp/../../etc/passwd",
    ] {
        let a = server.get(path, &[]);
        assert_no_leak(path, &a.body);
        assert_ne!(a.status, 500, "{path}: {a:?}");
        if path.contains("fetch") {
            assert!(matches!(a.status, 400 | 404), "{path}: {a:?}");
        }
    }
    // A search for the file's words finds nothing: it was never indexed.
    let found = server.get_json("/v1/search?q=lives+outside+the+index&mode=lexical");
    assert_no_leak("a search", &found.to_string());
}

#[test]
fn kebab_mcp_forwards_to_a_running_server_falls_back_when_it_stops_and_finds_the_next() {
    let kb = lexical_kb("");
    let dir = tempfile::tempdir().unwrap();
    let (ready, go) = (dir.path().join("ready"), dir.path().join("go"));
    let (fallen_back, again) = (dir.path().join("fallen-back"), dir.path().join("again"));
    let search = call(
        "search",
        json!({ "query": "raft leader", "k": 3, "mode": "lexical" }),
    );
    let (expected, _) = kb.json(&["search", "raft leader", "--k", "3", "--mode", "lexical"]);
    let mut server = Server::start(&kb, &[], &[]);
    let child = client(
        &kb,
        &json!([
            search.clone(),
            call("list_docs", json!({})),
            { "signal": ready, "wait_for": go },
            search.clone(),
            search.clone(),
            { "signal": fallen_back, "wait_for": again },
            search.clone(),
        ]),
    );
    until("the forwarded calls", Duration::from_secs(120), || {
        ready.exists()
    });
    // The calls before the signal reached the server.
    server.assert_logged("search", 1);
    server.assert_logged("list_docs", 1);
    assert_eq!(server.terminate(), 0, "{}", server.stderr());
    std::fs::write(&go, "go").unwrap();
    // Served in process; then a server starts again, and once `kebab mcp`
    // has had time to look for it, the next call goes to it.
    until(
        "the calls served in process",
        Duration::from_secs(120),
        || fallen_back.exists(),
    );
    let mut second = Server::start(&kb, &[], &[]);
    std::thread::sleep(Duration::from_secs(3));
    std::fs::write(&again, "again").unwrap();
    let (r, log) = report_and_log(child);
    second.assert_logged("search", 1);
    assert!(
        log.contains(&format!("forwarding to kebab serve at {}", second.url())),
        "{log}"
    );
    assert_eq!(second.terminate(), 0, "{}", second.stderr());
    let res = r["results"].as_array().unwrap();
    for i in [0, 3, 4, 6] {
        assert_same_results(ok(&res[i]), &expected);
    }
    assert!(!ok(&res[1])["docs"].as_array().unwrap().is_empty());
    assert!(
        log.contains(&format!("forwarding to kebab serve at {}", server.url())),
        "{log}"
    );
    assert!(log.contains("stopped answering"), "{log}");
    assert!(log.contains("serving in-process"), "{log}");

    // With no server at all, it says so and serves.
    let (r, log) = report_and_log(client(&kb, &json!([search])));
    assert_same_results(ok(&r["results"][0]), &expected);
    assert!(log.contains("no kebab serve runs"), "{log}");
}

#[test]
fn sigterm_lets_the_call_in_flight_finish_then_exits_zero() {
    let answer = "Raft replicates entries from the leader with AppendEntries [#1].";
    let (llm, _kb, mut server) = drip_server(answer, Duration::from_millis(400), &[]);
    let asking = server.client(
        json!({}),
        &json!([call(
            "ask",
            json!({ "question": "How does the Raft leader replicate log entries?" })
        )]),
    );
    until("the ask streaming", Duration::from_secs(120), || {
        llm.streaming() > 0
    });
    let signalled = Instant::now();
    assert_eq!(server.terminate(), 0, "{}", server.stderr());
    let stopped_after = signalled.elapsed();
    let (r, _) = report_and_log(asking);
    let got = ok(&r["results"][0]);
    // The whole answer, to its last token: the signal did not cut it.
    assert!(
        got["answer"]
            .as_str()
            .unwrap()
            .contains("with AppendEntries [#1]"),
        "{got:#}"
    );
    assert_eq!(got["refusal_reason"], Value::Null, "{got:#}");
    // It waited for the answer (~3 s of tokens), not for a deadline.
    assert!(
        stopped_after > Duration::from_millis(800) && stopped_after < Duration::from_secs(30),
        "stopped after {stopped_after:?}"
    );
    assert!(
        server
            .stderr()
            .contains("answering the calls in flight first")
    );
    assert!(
        TcpStream::connect(&server.addr).is_err(),
        "still accepting after exit"
    );
}

#[test]
fn kebab_mcp_forwards_to_a_server_that_wants_a_token_only_with_the_token() {
    let kb = lexical_kb("");
    let server = Server::start(&kb, &[], &[("KEBAB_SERVE_TOKEN", "fwd-token")]);
    let search = call(
        "search",
        json!({ "query": "raft leader", "k": 3, "mode": "lexical" }),
    );
    let (expected, _) = kb.json(&["search", "raft leader", "--k", "3", "--mode", "lexical"]);
    let plan = |token: Option<&str>| {
        let mut env = json!({
            "KEBAB_CONFIG": kb.dir.path().join("config.toml"),
            "KEBAB_DATA_DIR": kb.data_dir(),
            "KEBAB_CACHE_DIR": crate::support::cache_dir(),
        });
        if let Some(token) = token {
            env["KEBAB_SERVE_TOKEN"] = json!(token);
        }
        json!({ "command": kb.binary, "args": ["mcp"], "env": env, "steps": [search.clone()] })
    };
    // Without the token the server refuses it: it serves in process.
    let (r, log) = report_and_log(spawn_client(&plan(None)));
    assert_same_results(ok(&r["results"][0]), &expected);
    assert!(log.contains("did not accept this client"), "{log}");
    assert!(log.contains("serving in-process"), "{log}");
    server.assert_logged("search", 0);
    // With it, the call goes to the server.
    let (r, log) = report_and_log(spawn_client(&plan(Some("fwd-token"))));
    assert_same_results(ok(&r["results"][0]), &expected);
    assert!(
        log.contains(&format!("forwarding to kebab serve at {}", server.url())),
        "{log}"
    );
    server.assert_logged("search", 1);
}

#[test]
fn ctrl_c_stops_the_server_with_the_interrupted_exit_code() {
    let kb = lexical_kb("");
    let mut server = Server::start(&kb, &[], &[]);
    assert_eq!(
        http(
            &server.addr,
            "GET",
            "/healthz",
            &[("Host", &server.addr)],
            None
        )
        .status,
        200
    );
    assert_eq!(server.stop_by(libc::SIGINT), 130, "{}", server.stderr());
    assert!(server.stderr().contains("kebab serve: stopped"));
}

/// Send `head` (and no more) on a new connection; how long until the
/// server answered or closed it, and what it sent.
fn stall(addr: &str, head: &str) -> (Duration, String) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(40)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    (started.elapsed(), String::from_utf8_lossy(&raw).to_string())
}

#[test]
fn slow_requests_are_cut_off_and_others_are_still_answered() {
    let kb = lexical_kb("");
    let mut server = Server::start(&kb, &[], &[]);
    let addr = server.addr.clone();
    let host = [
        ("Host", addr.as_str()),
        ("Content-Type", "application/json"),
    ];
    // Headers that never end, and a body announced but never sent, each
    // hold their connection no longer than the server's read timeouts
    // (10 s each), while other clients are answered meanwhile.
    let slow_head = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            stall(
                &addr,
                &format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Slow: "),
            )
        })
    };
    let slow_body = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            stall(
                &addr,
                &format!(
                    "POST /v1/search HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                     Content-Length: 1000\r\n\r\n{{\"query\": "
                ),
            )
        })
    };
    std::thread::sleep(Duration::from_secs(1));
    let fine = http(&addr, "GET", "/v1/search?q=raft", &host, None);
    assert_eq!(fine.status, 200, "{fine:?}");
    let (waited, sent) = slow_head.join().unwrap();
    assert!(
        waited >= Duration::from_secs(8) && waited < Duration::from_secs(30),
        "headers: closed after {waited:?}: {sent:?}"
    );
    let (waited, sent) = slow_body.join().unwrap();
    assert!(
        waited >= Duration::from_secs(8) && waited < Duration::from_secs(30),
        "body: answered after {waited:?}: {sent:?}"
    );
    assert!(
        sent.is_empty() || sent.starts_with("HTTP/1.1 4"),
        "a stalled body is refused: {sent:?}"
    );
    assert_eq!(server.terminate(), 0, "{}", server.stderr());
}

/// POST a JSON body of `len` bytes (a `query` of `a`s) to `path`, with a
/// Content-Length or chunked; the answer, however early it came (a write
/// the server no longer reads is not an error).
fn post_large(addr: &str, path: &str, len: usize, chunked: bool) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let (open, close) = ("{\"query\": \"", "\"}");
    let filler = len - open.len() - close.len();
    let body = format!("{open}{}{close}", "a".repeat(filler));
    let length = match chunked {
        true => "Transfer-Encoding: chunked".to_string(),
        false => format!("Content-Length: {len}"),
    };
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{length}\r\nConnection: close\r\n\r\n"
    );
    let mut sent = stream.write_all(head.as_bytes());
    for piece in body.as_bytes().chunks(64 << 10) {
        if sent.is_err() {
            break;
        }
        sent = match chunked {
            true => stream
                .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                .and_then(|()| stream.write_all(piece))
                .and_then(|()| stream.write_all(b"\r\n")),
            false => stream.write_all(piece),
        };
    }
    if chunked && sent.is_ok() {
        let _ = stream.write_all(b"0\r\n\r\n");
    }
    answer(stream)
}

#[test]
fn a_request_body_over_4_mib_is_refused_with_413_on_every_route() {
    let kb = lexical_kb("");
    let mut server = Server::start(&kb, &[], &[]);
    let addr = server.addr.clone();
    let limit = 4 << 20;
    // Just under the bound the body is read, and refused for what it says
    // (a query over the query bound), not for its size.
    let under = post_large(&addr, "/v1/search", limit - 1, false);
    assert_eq!(under.status, 400, "{under:?}");
    let error: Value = serde_json::from_str(&under.body).expect("error.v1");
    assert_eq!(error["code"], "invalid_input", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("query"),
        "{error}"
    );
    // Over it: 413, whether the length is announced or the body chunked,
    // on the JSON API (with an error.v1) and on /mcp.
    for chunked in [false, true] {
        let over = post_large(&addr, "/v1/search", limit + 1, chunked);
        assert_eq!(over.status, 413, "chunked {chunked}: {over:?}");
        let error: Value = serde_json::from_str(&over.body).expect("error.v1");
        assert_eq!(error["schema_version"], "error.v1", "{error}");
        assert_eq!(error["code"], "invalid_input", "{error}");
        assert!(
            error["message"].as_str().unwrap().contains("4194304 bytes"),
            "{error}"
        );
        let mcp = post_large(&addr, "/mcp", limit + 1, chunked);
        assert_eq!(mcp.status, 413, "/mcp, chunked {chunked}: {mcp:?}");
    }
    // The server goes on.
    let host = [("Host", addr.as_str())];
    let fine = http(&addr, "GET", "/v1/search?q=raft", &host, None);
    assert_eq!(fine.status, 200, "{fine:?}");
    assert_eq!(server.terminate(), 0, "{}", server.stderr());
}

/// Send `head` (request line and headers, no body) and read the answer.
fn headers_only(addr: &str, head: &str) -> (Answer, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let answer = answer(stream);
    (answer, started.elapsed())
}

#[test]
fn an_oversized_body_is_refused_with_413_as_soon_as_its_length_is_announced() {
    let kb = lexical_kb("");
    let server = Server::start(&kb, &[], &[]);
    let addr = server.addr.clone();
    for path in ["/v1/search", "/v1/bulk_search", "/mcp"] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 104857600\r\n\
             Connection: close\r\n\r\n"
        );
        let (a, took) = headers_only(&addr, &head);
        assert_eq!(a.status, 413, "{path}: {a:?}");
        assert!(
            took < Duration::from_secs(3),
            "{path}: answered after {took:?}"
        );
        let error = a.json();
        assert_eq!(error["schema_version"], "error.v1", "{path}: {error}");
    }
}

#[test]
fn unknown_and_oversized_session_ids_are_refused_plainly() {
    let kb = lexical_kb("");
    let server = Server::start(&kb, &[], &[]);
    let a = server.get("/v1/show_session?session_id=no-such-session", &[]);
    assert_eq!(a.status, 404, "{a:?}");
    assert_eq!(a.json()["code"], "session_not_found", "{a:?}");
    let long = "x".repeat(10_000);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let a = mcp_post(&server.addr, ping, &[("Mcp-Session-Id", long.as_str())]);
    assert_eq!(a.status, 400, "{a:?}");
    assert_eq!(a.json()["code"], "invalid_input", "{a:?}");
    let a = server.get("/healthz", &[]);
    assert_eq!(a.status, 200, "the server goes on: {a:?}");
}

#[test]
fn a_blank_token_is_an_error_not_an_open_server() {
    let kb = lexical_kb("");
    for blank in ["", "   ", "\t"] {
        let out = kb
            .cmd(&["--json", "serve", "--listen", "127.0.0.1:0"])
            .env("KEBAB_SERVE_TOKEN", blank)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{blank:?}: {stderr}");
        let err: Value = serde_json::from_str(stderr.trim().lines().last().unwrap()).unwrap();
        assert_eq!(err["code"], "invalid_input", "{err}");
        assert!(err["message"].as_str().unwrap().contains("blank"), "{err}");
    }
}

/// The server's resident memory, in MiB.
fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap();
    kib >> 10
}

/// One JSON-RPC message POSTed to `/mcp` as an MCP client sends it, with
/// `extra` headers.
fn mcp_post(addr: &str, body: &str, extra: &[(&str, &str)]) -> Answer {
    let mut headers = vec![
        ("Host", addr),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    headers.extend_from_slice(extra);
    http(addr, "POST", "/mcp", &headers, Some(body))
}

/// One MCP `initialize` over raw HTTP: the status and `Retry-After`.
fn initialize(addr: &str) -> (u16, Option<String>) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}"#;
    let a = mcp_post(addr, body, &[]);
    (a.status, a.header("retry-after").map(String::from))
}

#[test]
fn a_flood_of_mcp_sessions_is_bounded_and_idle_sessions_make_room() {
    let kb = lexical_kb("");
    let server = Server::start(&kb, &[], &[]);
    let addr = server.addr.clone();
    let before = rss_mib(server.child.id());
    // Past the bound (1 024 sessions) within seconds: new sessions are
    // refused with 503 and Retry-After, never by growing without end.
    let mut refused = 0;
    for _ in 0..1_300 {
        let (status, retry) = initialize(&addr);
        match status {
            200 => {}
            503 => {
                assert!(retry.is_some(), "503 without Retry-After");
                refused += 1;
            }
            other => panic!("initialize answered {other}"),
        }
    }
    assert!(refused >= 200, "only {refused} of 1 300 refused");
    let grown = rss_mib(server.child.id()).saturating_sub(before);
    assert!(
        grown < 300,
        "the server grew by {grown} MiB for bounded sessions"
    );
    // A working client still gets through once sessions sit idle.
    std::thread::sleep(Duration::from_secs(11));
    let (status, _) = initialize(&addr);
    assert_eq!(status, 200, "an idle session should have made room");
    let steps = json!([call("search", json!({"query": "raft"}))]);
    let r = report(server.client(json!({}), &steps));
    assert!(r.to_string().contains("raft"), "{r}");
}

#[test]
fn a_lexical_index_cut_short_under_a_running_server_is_served_around_and_rebuilt() {
    let kb = lexical_kb("");
    let server = Server::start(&kb, &[], &[]);
    let before = server.get_json("/v1/search?q=sourdough");
    assert!(!before["hits"].as_array().unwrap().is_empty(), "{before}");
    // Every segment file cut to a third under the open, mapped index.
    let lexical = kb.data_dir().join("lexical");
    let mut cut = 0;
    for entry in std::fs::read_dir(&lexical).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".json") || name.ends_with(".lock") {
            continue;
        }
        let len = std::fs::metadata(&path).unwrap().len();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(len / 3).unwrap();
        cut += 1;
    }
    assert!(cut > 0, "no segment files in {}", lexical.display());
    for q in ["sourdough", "raft", "kubernetes"] {
        let a = server.get(&format!("/v1/search?q={q}"), &[]);
        assert_eq!(a.status, 200, "{q}: {a:?}\n{}", server.stderr());
    }
    // FTS5 finds the same chunks in the same order (with its own BM25
    // statistics, so the scores differ in the third decimal).
    let ids = |resp: &Value| -> Vec<Value> {
        let hits = resp["hits"].as_array().unwrap();
        hits.iter().map(|h| h["chunk_id"].clone()).collect()
    };
    let after = server.get_json("/v1/search?q=sourdough");
    assert_eq!(ids(&after), ids(&before), "FTS5 answers alike: {after}");
    let health = server.get("/healthz", &[]);
    assert_eq!(health.status, 200, "alive: {}", server.stderr());
    let (doctor, code) = kb.json(&["doctor"]);
    assert_eq!(code, 3, "{doctor:#}");
    assert_eq!(
        crate::support::doctor_check(&doctor, "lexical_index")["ok"],
        false
    );
    kb.ingest(&sample_corpus());
    let (doctor, _) = kb.json(&["doctor"]);
    assert_eq!(
        crate::support::doctor_check(&doctor, "lexical_index")["ok"],
        true,
        "rebuilt: {doctor:#}"
    );
    let again = server.get_json("/v1/search?q=sourdough");
    assert_eq!(again["hits"], before["hits"]);
}

/// `python3 tests/page/SCRIPT URL ARGS…`: a browser script driving the
/// page of `server`.
fn page_script(script: &str, server: &Server, args: &[&str]) -> Command {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/page")
        .join(script);
    let mut cmd = Command::new("python3");
    cmd.arg(path).arg(server.url()).args(args);
    cmd
}

/// What a browser script printed, it having succeeded (else its stderr and
/// the server's).
fn page_run(script: &str, server: &Server, args: &[&str]) -> String {
    let out = page_script(script, server, args)
        .output()
        .expect("run the browser driver");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        server.stderr()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the page printed: its hits, its status line, and what its reader
/// showed for the first hit (after the browser's console errors are
/// checked).
fn page_search(server: &Server, query: &str, token: Option<&str>) -> (Vec<Value>, Value, Value) {
    let mut args = vec![query];
    args.extend(token);
    let out = page_run("search.py", server, &args);
    let mut lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let console = lines.pop().expect("console errors");
    let index = lines.pop().expect("index view")["index"].clone();
    let reader = lines.pop().expect("reader")["reader"].clone();
    let status = lines.pop().expect("status line");
    // The browser logs the 401 that makes the page ask for the token.
    let errors: Vec<&Value> = console["console_errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| token.is_none() || !e.to_string().contains("401 (Unauthorized)"))
        .collect();
    assert!(errors.is_empty(), "{console}");
    assert_eq!(
        console["pwned"],
        Value::Null,
        "a document's text ran: {console}"
    );
    // The index at a glance names the root, its documents and the plugins.
    let roots = index["roots"].to_string();
    assert!(roots.contains("notes") || roots.contains("tmp"), "{index}");
    assert!(
        index["stats"].as_str().unwrap().contains("documents"),
        "{index}"
    );
    assert!(
        index["plugins"].as_str().unwrap().contains("markdown"),
        "{index}"
    );
    let doctor = index["doctor"].to_string();
    assert!(doctor.contains("✓ config_loaded"), "{index}");
    assert!(doctor.contains("lexical_index"), "{index}");
    (lines, status, reader)
}

#[test]
fn the_web_page_searches_as_a_person_types_in_a_real_browser() {
    let kb = lexical_kb("");
    let server = Server::start(&kb, &[], &[]);
    // The page's files, under a strict policy.
    let page = server.get("/", &[]);
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.body.contains("<input id=\"q\""), "{page:?}");
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert_eq!(server.get("/page/app.js", &[]).status, 200);
    // A foreign Host is refused for the page as for the API.
    let rebound = http(
        &server.addr,
        "GET",
        "/",
        &[("Host", "evil.example:80")],
        None,
    );
    assert_eq!(rebound.status, 403, "{rebound:?}");

    let (hits, status, reader) = page_search(&server, "sourdough starter", None);
    let first = hits.first().unwrap_or_else(|| panic!("no hits: {status}"));
    let citation = first["citation"].as_str().unwrap();
    assert!(citation.contains("kitchen/sourdough.md#L"), "{first}");
    assert!(first["meta"].as_str().unwrap().contains("bm25"), "{first}");
    let marked: Vec<String> = first["marked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_lowercase())
        .collect();
    assert!(
        marked.iter().any(|m| m == "starter" || m == "sourdough"),
        "{first}"
    );
    // The same hits as the API gives.
    let api = server.get_json("/v1/search?q=sourdough+starter&k=10");
    assert_eq!(
        hits.len(),
        api["hits"].as_array().unwrap().len(),
        "{status}"
    );

    // The down arrow reached the first hit, and Enter opened the cited
    // text, verbatim as indexed.
    assert_eq!(reader["focused"], first["citation"], "{reader}");
    assert_eq!(reader["title"], first["citation"], "{reader}");
    assert!(
        reader["text"]
            .as_str()
            .unwrap()
            .contains("Feed the starter the night before"),
        "{reader}"
    );
    assert!(
        reader["meta"].as_str().unwrap().contains("Sourdough bread"),
        "{reader}"
    );

    let (none, status, _) = page_search(&server, "zyzzogeton quux", None);
    assert!(
        none.is_empty() && status["status"] == "No hits.",
        "{status}"
    );
}

#[test]
fn the_web_page_asks_for_the_token_of_a_server_that_has_one() {
    let kb = lexical_kb("");
    let token = "page-token-123";
    let server = Server::start(&kb, &[], &[("KEBAB_SERVE_TOKEN", token)]);
    // The page's files hold no data: served without the token; the API
    // still wants it.
    assert_eq!(server.get("/", &[]).status, 200);
    assert_eq!(server.get("/v1/search?q=raft", &[]).status, 401);
    let (hits, status, reader) = page_search(&server, "raft leader", Some(token));
    assert!(
        reader["text"].as_str().unwrap().contains("Raft"),
        "{reader}"
    );
    assert!(!hits.is_empty(), "{status}");
    assert!(
        hits[0]["citation"].as_str().unwrap().contains("raft"),
        "{hits:?}"
    );
}

/// `POST path` with a JSON body and these extra headers.
fn post_json(server: &Server, path: &str, body: &Value, headers: &[(&str, &str)]) -> Answer {
    let mut all = vec![
        ("Host", server.addr.as_str()),
        ("Content-Type", "application/json"),
    ];
    all.extend_from_slice(headers);
    http(&server.addr, "POST", path, &all, Some(&body.to_string()))
}

/// A server-sent event stream's events: (name, data).
fn events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap_or_else(|| panic!("no event name in {block:?}"));
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or_else(|| panic!("no data in {block:?}"));
            (
                name.to_string(),
                serde_json::from_str(data).expect("JSON data"),
            )
        })
        .collect()
}

#[test]
fn ask_over_http_answers_json_or_streams_events_and_only_to_a_same_origin_json_post() {
    let answer = "Raft replicates entries from the leader with AppendEntries [#1].";
    let (llm, _kb, server) = drip_server(answer, Duration::from_millis(20), &[]);
    let question = json!({ "question": "How does the Raft leader replicate log entries?" });

    // Plain JSON: answer.v1, its citations carrying the chunk they cite.
    let plain = post_json(&server, "/v1/ask", &question, &[]);
    assert_eq!(plain.status, 200, "{plain:?}");
    let a = plain.json();
    assert_eq!(a["schema_version"], "answer.v1", "{a:#}");
    assert_eq!(a["grounded"], true, "{a:#}");
    let cited = &a["citations"][0];
    assert_eq!(cited["marker"], "[#1]", "{a:#}");
    let chunk_id = cited["chunk_id"].as_str().expect("chunk_id");
    let relevance = cited["relevance"].as_f64().expect("relevance");
    assert!((0.0..=1.0).contains(&relevance), "{cited}");
    let chunk = server.get_json(&format!("/v1/fetch?kind=chunk&chunk_id={chunk_id}"));
    assert!(
        chunk["chunk"]["text"].as_str().unwrap().contains("Raft"),
        "{chunk:#}"
    );

    // An event stream: the pieces as written, then the answer.
    let streamed = post_json(
        &server,
        "/v1/ask",
        &question,
        &[("Accept", "text/event-stream")],
    );
    assert_eq!(streamed.status, 200, "{streamed:?}");
    assert_eq!(
        streamed.header("content-type"),
        Some("text/event-stream"),
        "{streamed:?}"
    );
    let events = events(&streamed.body);
    let (last, pieces) = events.split_last().expect("events");
    assert_eq!(last.0, "answer", "{events:?}");
    assert!(pieces.len() >= 5, "{events:?}");
    assert!(pieces.iter().all(|(name, _)| name == "token"), "{events:?}");
    let text: String = pieces
        .iter()
        .map(|(_, d)| d["text"].as_str().unwrap())
        .collect();
    assert_eq!(text.trim(), answer, "{events:?}");
    assert_eq!(last.1["answer"].as_str().unwrap().trim(), answer);
    // A refusal streams as an answer event too (no evidence, no model call).
    let calls = llm.bodies().len();
    let refused = post_json(
        &server,
        "/v1/ask",
        &json!({ "question": "zyzzogeton quux frobnicate?" }),
        &[("Accept", "text/event-stream")],
    );
    let events = self::events(&refused.body);
    let (name, refusal) = events.last().expect("an event");
    assert_eq!(name, "answer", "{events:?}");
    assert_eq!(refusal["grounded"], false, "{refusal:#}");
    assert!(refusal["refusal_reason"].is_string(), "{refusal:#}");
    assert_eq!(llm.bodies().len(), calls, "the model was asked");
    // A bad request is an error event's status before any stream.
    let empty = post_json(&server, "/v1/ask", &json!({ "question": " " }), &[]);
    assert_eq!(empty.status, 400, "{empty:?}");

    // No cross-site request reaches it: a form's content type is refused,
    // a foreign Origin too.
    let form = http(
        &server.addr,
        "POST",
        "/v1/ask",
        &[
            ("Host", server.addr.as_str()),
            ("Content-Type", "text/plain"),
        ],
        Some(&question.to_string()),
    );
    assert_eq!(form.status, 415, "{form:?}");
    let foreign = post_json(
        &server,
        "/v1/ask",
        &question,
        &[("Origin", "http://evil.example")],
    );
    assert_eq!(foreign.status, 403, "{foreign:?}");

    // The conversation kept, then deleted by POST.
    let kept = post_json(
        &server,
        "/v1/ask",
        &json!({ "question": "How does the Raft leader replicate log entries?", "session": "page-1" }),
        &[],
    );
    assert_eq!(kept.status, 200, "{kept:?}");
    let listed = server.get_json("/v1/list_sessions");
    assert!(listed.to_string().contains("page-1"), "{listed}");
    let deleted = post_json(
        &server,
        "/v1/delete_session",
        &json!({ "session_id": "page-1" }),
        &[],
    );
    assert_eq!(deleted.status, 200, "{deleted:?}");
    assert_eq!(deleted.json()["schema_version"], "session_delete.v1");
    let gone = server.get("/v1/show_session?session_id=page-1", &[]);
    assert_eq!(gone.status, 404, "{gone:?}");
}

#[test]
fn a_client_that_leaves_a_streamed_ask_stops_it() {
    let llm = LlmServer::start(
        Wire::Ollama,
        Script::Endless("Raft ".into(), Duration::from_millis(50)),
    );
    let kb = lexical_kb(&llm.config(60));
    let server = Server::start(&kb, &[], &[]);
    let body = json!({ "question": "How does the Raft leader replicate log entries?" }).to_string();
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    let head = format!(
        "POST /v1/ask HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr,
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    let started = Instant::now();
    while !line.contains("event: token") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "closed early");
        assert!(started.elapsed() < Duration::from_secs(60), "no token");
    }
    drop(reader);
    stream.shutdown(std::net::Shutdown::Both).unwrap();
    drop(stream);
    // The ask stopped: its model stream ended and the lane is free again.
    until("the model stream to end", Duration::from_secs(30), || {
        llm.streaming() == 0
    });
    until("the engine to go idle", Duration::from_secs(30), || {
        server.get_json("/healthz")["running"] == 0
    });
}

#[test]
fn the_page_cookie_lets_the_page_in_and_no_other_credential_does() {
    let kb = lexical_kb("");
    let token = "cookie-token-456";
    let server = Server::start(&kb, &[], &[("KEBAB_SERVE_TOKEN", token)]);
    let wrong = post_json(&server, "/page/token", &json!({ "token": "guess" }), &[]);
    assert_eq!(wrong.status, 401, "{wrong:?}");
    assert_eq!(wrong.header("set-cookie"), None, "{wrong:?}");
    let right = post_json(&server, "/page/token", &json!({ "token": token }), &[]);
    assert_eq!(right.status, 204, "{right:?}");
    let cookie = right.header("set-cookie").expect("a cookie").to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(!cookie.contains(token), "the token itself is in {cookie}");
    let pair = cookie.split(';').next().unwrap();
    let with_cookie = server.get("/v1/search?q=raft", &[("Cookie", pair)]);
    assert_eq!(with_cookie.status, 200, "{with_cookie:?}");
    let forged = server.get("/v1/search?q=raft", &[("Cookie", "kebab_token=00")]);
    assert_eq!(forged.status, 401, "{forged:?}");
    // From another site's page the cookie does not help.
    let cross = server.get(
        "/v1/search?q=raft",
        &[("Cookie", pair), ("Origin", "http://evil.example")],
    );
    assert_eq!(cross.status, 403, "{cross:?}");
}

/// What tests/page/ask.py printed, by the name of each line (its
/// screenshots checked).
fn page_ask(server: &Server, question: &str, refused: &str) -> Value {
    // A folder per test (they run at once), named by whether it refuses.
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("page-screenshots")
        .join(if refused == "-" {
            "one-question"
        } else {
            "ask"
        });
    let out = page_run(
        "ask.py",
        server,
        &[question, refused, shots.to_str().unwrap()],
    );
    let mut all = serde_json::Map::new();
    for line in out.lines() {
        let Value::Object(one) = serde_json::from_str(line).expect("a JSON line") else {
            panic!("not an object: {line}");
        };
        all.extend(one);
    }
    for shot in ["page-ask-desktop.png", "page-ask-phone.png"] {
        let png = std::fs::read(shots.join(shot)).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{shot}");
    }
    Value::Object(all)
}

#[test]
fn the_web_page_asks_streams_a_cited_answer_shows_a_refusal_and_keeps_the_conversation() {
    // 16 pieces, 120 ms apart: the page shows the answer growing.
    let answer = "The leader sends AppendEntries to every follower and commits an entry \
                  once a majority stored it [#1].";
    let (_llm, _kb, server) = drip_server(answer, Duration::from_millis(120), &[]);
    let question = "How does the Raft leader replicate log entries?";
    let r = page_ask(&server, question, "zyzzogeton quux frobnicate?");
    assert_eq!(r["console_errors"], json!([]), "{r:#}");

    // Streamed: the page showed partial answers before the whole one.
    let streamed = r["streamed"].as_array().unwrap();
    assert!(streamed.len() >= 3, "{r:#}");
    let first = streamed[0].as_str().unwrap();
    assert!(first.len() < answer.len() / 2, "{r:#}");

    // The whole answer, its [#1] a link to what it cites.
    let a = &r["answer"];
    assert!(
        a["text"].as_str().unwrap().contains("commits an entry"),
        "{r:#}"
    );
    assert_eq!(a["markers"], json!(["[#1]"]), "{r:#}");
    assert!(a["meta"].as_str().unwrap().contains("grounded"), "{r:#}");
    assert!(a["sources"][0].as_str().unwrap().contains("[#1]"), "{r:#}");
    let reader = &r["reader"];
    assert!(reader["text"].as_str().unwrap().contains("Raft"), "{r:#}");
    assert!(
        reader["file"]
            .as_str()
            .unwrap()
            .contains("samples/notes/tech/raft-consensus.md, lines 1–3"),
        "{r:#}"
    );

    // The refusal scene: why, and what was searched.
    let refusal = &r["refusal"];
    assert!(
        refusal["class"].as_str().unwrap().contains("refused"),
        "{r:#}"
    );
    assert!(
        refusal["meta"].as_str().unwrap().contains("not answered"),
        "{r:#}"
    );
    assert!(!refusal["text"].as_str().unwrap().is_empty(), "{r:#}");

    // The conversations: both listed, the first reopened, then deleted.
    let sessions = &r["sessions"];
    let listed = sessions["listed"].to_string();
    assert_eq!(sessions["listed"].as_array().unwrap().len(), 2, "{r:#}");
    assert!(
        listed.contains("Raft leader") && listed.contains("zyzzogeton"),
        "{r:#}"
    );
    assert_eq!(sessions["emptied"], 0, "{r:#}");
    assert_eq!(sessions["reopened"], json!([question]), "{r:#}");
    let left = sessions["after_delete"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{r:#}");
    assert!(left[0].as_str().unwrap().contains("zyzzogeton"), "{r:#}");
    let kept = server.get_json("/v1/list_sessions")["sessions"].clone();
    assert_eq!(kept.as_array().unwrap().len(), 1, "{kept}");
}

#[test]
fn the_web_page_shows_a_document_that_is_an_xss_payload_as_inert_text() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(
        notes.join("payload.md"),
        "# Payload\n\nThe marzipan payload <script>window.__kebab_pwned = 1</script> \
         and <img src=x onerror=\"window.__kebab_pwned = 2\"> and \
         [a link](javascript:window.__kebab_pwned=3) in marzipan text, \
         \u{1b}[31mred\u{1b}[0m on a terminal.\n",
    )
    .unwrap();
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(&notes);
    let server = Server::start(&kb, &[], &[]);
    let (hits, status, reader) = page_search(&server, "marzipan payload", None);
    let first = hits.first().unwrap_or_else(|| panic!("no hits: {status}"));
    let snippet = first["snippet"].as_str().unwrap();
    assert!(snippet.contains("<script>"), "{first}");
    let text = reader["text"].as_str().unwrap();
    assert!(
        text.contains("<img src=x onerror=") && text.contains("javascript:"),
        "{reader}"
    );
    // A terminal escape is shown as the CLI shows it, never passed raw.
    assert!(text.contains("\\e[31mred\\e[0m"), "{reader}");
    assert!(!text.contains('\u{1b}'), "{reader}");
}

#[test]
fn the_web_page_sends_no_half_composed_korean_query_and_nothing_leaves_the_machine() {
    let kb = lexical_kb("");
    let server = Server::start(&kb, &[], &[]);
    // 조선 as a Korean keyboard composes it, jamo by jamo (a word the
    // sample note has standing alone: no dictionary is installed here).
    let steps = ["ㅈ", "조", "좃", "조서", "조선"];
    let out = page_run("ime.py", &server, &steps);
    let r: Value = serde_json::from_str(&out).expect("a JSON object");
    // The composition reached the box, and no query went while it lasted.
    assert_eq!(r["composing"], "조서", "{r:#}");
    assert_eq!(r["searches_while_composing"], 0, "{r:#}");
    // The committed word was searched, once, and found its note.
    assert_eq!(r["box"], "조선", "{r:#}");
    assert_eq!(r["searches"], 1, "{r:#}");
    assert!(
        r["hits"][0]
            .as_str()
            .unwrap_or("")
            .contains("korean-notes.md"),
        "{r:#}"
    );
    assert_eq!(r["elsewhere"], json!([]), "{r:#}");
}

/// An index of two roots, `wiki` (the sample notes) and `hr` (one note
/// only HR may read), served with `[[serve.users]]`: ana reads wiki, hana
/// reads both, nobody reads nothing; the server's own token everything.
fn team_server(llm: &LlmServer) -> (Server, Kb, tempfile::TempDir) {
    let trees = tempfile::tempdir().unwrap();
    let wiki = trees.path().join("wiki");
    let hr = trees.path().join("hr");
    crate::support::copy_tree(&sample_corpus(), &wiki);
    std::fs::create_dir(&hr).unwrap();
    std::fs::write(
        hr.join("salaries.md"),
        "# Salary bands\n\nThe salary bands for 2026: engineers earn between band four and band \
         seven, reviewed each March by the compensation committee.\n",
    )
    .unwrap();
    let users = format!(
        "[[serve.users]]\nname = \"ana\"\ntoken_env = \"ANA_TOKEN\"\nroots = [\"wiki\"]\n\n\
         [[serve.users]]\nname = \"hana\"\ntoken_blake3 = \"{}\"\nroots = [\"wiki\", \"hr\"]\n\n\
         [[serve.users]]\nname = \"nobody\"\ntoken_env = \"NOBODY_TOKEN\"\n",
        blake3::hash(b"hana-token").to_hex()
    );
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{}{users}", llm.config(60)));
    kb.ingest(&wiki);
    kb.ingest(&hr);
    let server = Server::start(
        &kb,
        &[],
        &[
            ("KEBAB_SERVE_TOKEN", "admin-token"),
            ("ANA_TOKEN", "ana-token"),
            ("NOBODY_TOKEN", "nobody-token"),
        ],
    );
    (server, kb, trees)
}

#[test]
fn each_user_reads_only_their_roots_and_conversations_over_the_api_and_mcp() {
    let llm = LlmServer::start(
        Wire::Ollama,
        Script::Answer(tokens("Raft replicates the log from the leader [#1].")),
    );
    let (server, _kb, _trees) = team_server(&llm);
    let as_user = |token: &str, path: &str| {
        server.get(path, &[("Authorization", &format!("Bearer {token}"))])
    };
    let paths = |a: &Answer| -> Vec<String> { hit_paths(&a.json()) };
    // The server's token and hana find the HR note; ana does not.
    let admin = as_user("admin-token", "/v1/search?q=salary+bands&mode=lexical");
    assert_eq!(paths(&admin), ["salaries.md"], "{admin:?}");
    let hana = as_user("hana-token", "/v1/search?q=salary+bands&mode=lexical");
    assert_eq!(paths(&hana), ["salaries.md"], "{hana:?}");
    let ana = as_user("ana-token", "/v1/search?q=salary+bands&mode=lexical");
    assert_eq!(ana.status, 200, "{ana:?}");
    assert!(paths(&ana).iter().all(|p| p != "salaries.md"), "{ana:?}");
    let raft = as_user("ana-token", "/v1/search?q=raft+leader&mode=lexical");
    assert!(!paths(&raft).is_empty(), "{raft:?}");
    // Naming HR's root is naming a root the index does not have.
    let named = as_user("ana-token", "/v1/search?q=salary&root=hr");
    assert_eq!(named.status, 400, "{named:?}");
    let absent = as_user("ana-token", "/v1/search?q=salary&root=zz");
    assert_eq!(
        named.json()["message"]
            .as_str()
            .unwrap()
            .replace("`hr`", "`zz`"),
        absent.json()["message"].as_str().unwrap(),
        "{named:?} {absent:?}"
    );
    // A guessed (here: known) id of an HR chunk or document is not found.
    let hit = &admin.json()["hits"][0];
    let chunk = hit["chunk_id"].as_str().unwrap();
    let doc = hit["doc_id"].as_str().unwrap();
    let fetched = as_user(
        "ana-token",
        &format!("/v1/fetch?kind=chunk&chunk_id={chunk}"),
    );
    assert_eq!(fetched.status, 404, "{fetched:?}");
    assert_eq!(fetched.json()["code"], "chunk_not_found");
    let fetched = as_user("ana-token", &format!("/v1/fetch?kind=doc&doc_id={doc}"));
    assert_eq!(fetched.status, 404, "{fetched:?}");
    assert_eq!(
        as_user(
            "hana-token",
            &format!("/v1/fetch?kind=chunk&chunk_id={chunk}")
        )
        .status,
        200
    );
    // Listing: ana's documents are the wiki's only.
    let docs = as_user("ana-token", "/v1/list_docs").json();
    let listed = docs["docs"].to_string();
    assert!(
        listed.contains("raft") && !listed.contains("salaries"),
        "{docs}"
    );
    // The index at a glance names only the roots ana reads; doctor, which
    // names them all, is the operator's.
    let roots = as_user("ana-token", "/v1/schema").json()["roots"].to_string();
    assert!(roots.contains("wiki") && !roots.contains("hr"), "{roots}");
    let doctor = as_user("ana-token", "/v1/doctor");
    assert_eq!(doctor.status, 403, "{doctor:?}");
    assert_eq!(as_user("admin-token", "/v1/doctor").status, 200);
    // A user with no root sees nothing; a wrong token nothing at all.
    let nothing = as_user("nobody-token", "/v1/search?q=raft");
    assert_eq!(nothing.status, 403, "{nothing:?}");
    assert_eq!(nothing.json()["code"], "forbidden");
    assert_eq!(as_user("ana-token-x", "/v1/search?q=raft").status, 401);

    // Asking: ana's evidence comes from her roots, her conversation is hers.
    let ask = |token: &str, question: &str, session: &str| {
        post_json(
            &server,
            "/v1/ask",
            &json!({ "question": question, "session": session, "mode": "lexical" }),
            &[("Authorization", &format!("Bearer {token}"))],
        )
        .json()
    };
    let refused = ask(
        "ana-token",
        "What are the salary bands for engineers?",
        "pay",
    );
    assert_eq!(refused["grounded"], false, "{refused:#}");
    assert!(!refused.to_string().contains("salaries.md"), "{refused:#}");
    assert_eq!(refused["conversation_id"], "pay", "{refused:#}");
    let answered = ask(
        "ana-token",
        "How does the Raft leader replicate the log?",
        "raft",
    );
    assert_eq!(answered["grounded"], true, "{answered:#}");
    // The same id for hana is another conversation.
    ask(
        "hana-token",
        "How does the Raft leader replicate the log?",
        "raft",
    );
    let sessions = |token: &str| -> Vec<String> {
        as_user(token, "/v1/list_sessions").json()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut anas = sessions("ana-token");
    anas.sort();
    assert_eq!(anas, ["pay", "raft"]);
    assert_eq!(sessions("hana-token"), ["raft"]);
    let shown = as_user("ana-token", "/v1/show_session?session_id=raft").json();
    assert_eq!(shown["turns"].as_array().unwrap().len(), 1, "{shown:#}");
    let mut all = sessions("admin-token");
    all.sort();
    assert_eq!(all, ["@ana/pay", "@ana/raft", "@hana/raft"]);
    // hana cannot delete ana's conversation (it is not there for her).
    let gone = post_json(
        &server,
        "/v1/delete_session",
        &json!({ "session_id": "pay" }),
        &[("Authorization", "Bearer hana-token")],
    );
    assert_eq!(gone.status, 404, "{gone:?}");
    assert_eq!(sessions("ana-token").len(), 2);

    // Over MCP (the official SDK's client) the same rules hold.
    let steps = json!([
        call(
            "search",
            json!({ "query": "salary bands", "mode": "lexical" })
        ),
        call("fetch", json!({ "kind": "chunk", "chunk_id": chunk })),
        call("list_sessions", json!({})),
    ]);
    let r = report(server.client(json!({ "Authorization": "Bearer ana-token" }), &steps));
    let results = r["results"].as_array().unwrap();
    let hits = ok(&results[0])["hits"].to_string();
    assert!(!hits.contains("salaries.md"), "{hits}");
    assert_eq!(
        error_code(&results[1]),
        "chunk_not_found",
        "{:#}",
        results[1]
    );
    assert_eq!(ok(&results[2])["sessions"].as_array().unwrap().len(), 2);
}

#[test]
fn a_user_whose_token_variable_is_unset_stops_the_server_at_start() {
    let kb = Kb::with_config(&format!(
        "{NO_EMBEDDINGS}[[serve.users]]\nname = \"ana\"\ntoken_env = \"ANA_TOKEN_UNSET\"\nroots = [\"wiki\"]\n"
    ));
    let out = kb
        .cmd(&["serve", "--listen", "127.0.0.1:0"])
        .env_remove("ANA_TOKEN_UNSET")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("ANA_TOKEN_UNSET is unset"), "{stderr}");
}

#[test]
fn the_web_pages_index_view_stays_live_while_serve_watches() {
    let (_kb, root, server) = watched_notes("the first note");
    let mut browser = page_script("live.py", &server, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the browser driver");
    let mut lines = BufReader::new(browser.stdout.take().unwrap()).lines();
    let line = |lines: &mut std::io::Lines<_>| -> Value {
        let l: String = lines.next().expect("a line").expect("readable");
        serde_json::from_str(&l).expect("a JSON line")
    };
    let before = line(&mut lines);
    let stats = before["before"]["stats"].as_str().unwrap();
    assert!(stats.starts_with("1 documents"), "{before}");
    let roots = before["before"]["roots"].to_string();
    assert!(roots.contains("notes") && roots.contains("yes"), "{before}");
    // A note added on disk: the open page shows it without a reload.
    std::fs::write(root.join("b.md"), "# B\n\na second note\n").unwrap();
    writeln!(browser.stdin.as_mut().unwrap(), "go").unwrap();
    let after = line(&mut lines);
    assert!(browser.wait().unwrap().success(), "{after}");
    let stats = after["after"]["stats"].as_str().unwrap();
    assert!(stats.starts_with("2 documents"), "{after}");
    assert!(after["seconds"].as_f64().unwrap() < 30.0, "{after}");
}

#[test]
fn the_web_page_shows_a_multi_hop_asks_steps_and_its_cited_answer() {
    let says = |text: &str| Script::Answer(tokens(text));
    let llm = LlmServer::start(
        Wire::Ollama,
        Script::Sequence(vec![
            says(r#"{"compound": true, "sub_queries": ["raft leader election"]}"#),
            says(r#"{"kind": "stop"}"#),
            says("A follower that hears no heartbeat becomes a candidate and asks for votes [#1]."),
        ]),
    );
    let kb = lexical_kb(&format!(
        "{}[rag]\nmulti_hop = \"always\"\n",
        llm.config(60)
    ));
    let server = Server::start(&kb, &[], &[]);
    let r = page_ask(
        &server,
        "How does Raft elect a leader and replicate its log?",
        "-",
    );
    assert_eq!(r["console_errors"], json!([]), "{r:#}");
    let a = &r["answer"];
    assert_eq!(a["markers"], json!(["[#1]"]), "{r:#}");
    let hops = a["hops"].as_array().unwrap();
    assert!(hops.len() >= 2, "{r:#}");
    assert!(
        hops[0]
            .as_str()
            .unwrap()
            .starts_with("decompose 0: raft leader election"),
        "{r:#}"
    );
    assert!(
        hops.iter().any(|h| h.as_str().unwrap().starts_with("stop")),
        "{r:#}"
    );
}

#[test]
fn a_stateless_server_keeps_no_session_so_a_restarted_one_answers_the_same_client() {
    let kb = lexical_kb("");
    let mut server = Server::start(&kb, &["--stateless"], &[]);
    // The official SDK's client: no session was made, every call answered.
    let steps = json!([call(
        "search",
        json!({ "query": "raft leader", "mode": "lexical" })
    )]);
    let r = report(server.client(json!({}), &steps));
    assert_eq!(r["http"]["session_id"], Value::Null, "{r:#}");
    let first = ok(&r["results"][0])["hits"].clone();
    assert!(!first.as_array().unwrap().is_empty(), "{r:#}");
    // A call that carries no session: answered by this server, and by
    // another started on the same address after this one is killed.
    let addr = server.addr.clone();
    let search = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": "search", "arguments": { "query": "raft leader", "mode": "lexical" } }
    })
    .to_string();
    let call_alone = |addr: &str| {
        let a = mcp_post(addr, &search, &[("MCP-Protocol-Version", "2025-06-18")]);
        assert_eq!(a.status, 200, "{a:?}");
        assert_eq!(a.header("mcp-session-id"), None, "{a:?}");
        let structured = a.json()["result"]["structuredContent"].clone();
        structured["hits"].clone()
    };
    assert_eq!(call_alone(&addr), first);
    // SAFETY: killing our own child.
    unsafe { libc::kill(server.child.id() as libc::pid_t, libc::SIGKILL) };
    server.child.wait().unwrap();
    let again = Server::start_raw(&kb, &["serve", "--listen", &addr, "--stateless"], &[]);
    assert_eq!(again.addr, addr);
    assert_eq!(call_alone(&addr), first);
}
