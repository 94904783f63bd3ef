//! `kebab mcp` driven by a real MCP client (the official Python SDK, over
//! stdio), and `kebab search --bulk` / `kebab schema`: every tool returns
//! what the CLI's `--json` prints for the same call.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::support::{Kb, NO_EMBEDDINGS, embedding_config, run_with_stdin, sample_corpus};

/// The Python client script (tests/mcp/client.py).
fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/client.py")
}

/// The client's command with `steps` as its plan, for `kb`'s index.
pub(crate) fn client(kb: &Kb, steps: &Value) -> std::process::Child {
    spawn_client(&json!({
        "command": kb.binary,
        "args": ["mcp"],
        "env": {
            "KEBAB_CONFIG": kb.dir.path().join("config.toml"),
            "KEBAB_DATA_DIR": kb.data_dir(),
            "KEBAB_CACHE_DIR": crate::support::cache_dir(),
        },
        "steps": steps,
    }))
}

/// The client running `plan` (see tests/mcp/client.py).
pub(crate) fn spawn_client(plan: &Value) -> std::process::Child {
    let mut child = Command::new("python3")
        .arg(client_script())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (scripts/test.sh installs the MCP SDK)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(plan.to_string().as_bytes())
        .expect("write plan");
    child
}

/// The client's report once it is done.
pub(crate) fn report(child: std::process::Child) -> Value {
    let out = child.wait_with_output().expect("client ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "MCP client failed (is the `mcp` package installed? scripts/test.sh installs it): {stderr}"
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("client output not JSON ({e}); stderr: {stderr}"))
}

/// Run `steps` against `kebab mcp` on `kb`'s index.
pub(crate) fn mcp(kb: &Kb, steps: Value) -> Value {
    report(client(kb, &steps))
}

pub(crate) fn call(tool: &str, arguments: Value) -> Value {
    json!({ "call": tool, "arguments": arguments })
}

/// A successful result's structured content, checked against its text.
/// `a` and `b` equal, numbers up to a relative 1e-5 (floating-point
/// noise between two ways of running the same model), everything else
/// exactly.
pub(crate) fn assert_same_results(a: &Value, b: &Value) {
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                let (x, y) = (
                    x.as_f64().unwrap_or(f64::NAN),
                    y.as_f64().unwrap_or(f64::NAN),
                );
                (x - y).abs() <= 1e-5 * x.abs().max(1.0)
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            _ => a == b,
        }
    }
    assert!(same(a, b), "results differ:\n{a:#}\n{b:#}");
}

pub(crate) fn ok(result: &Value) -> &Value {
    assert_eq!(result["is_error"], false, "{result:#}");
    let text: Value = serde_json::from_str(result["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        text, result["structured"],
        "text and structured content differ"
    );
    &result["structured"]
}

/// A failed result's `error.v1` code.
pub(crate) fn error_code(result: &Value) -> &str {
    assert_eq!(result["is_error"], true, "{result:#}");
    assert_eq!(result["structured"]["schema_version"], "error.v1");
    result["structured"]["code"].as_str().unwrap()
}

/// An answer without what differs between two runs (ids, clocks).
fn stable_answer(a: &Value) -> Value {
    let mut a = a.clone();
    for key in ["created_at", "usage"] {
        a.as_object_mut().unwrap().remove(key);
    }
    a["retrieval"].as_object_mut().unwrap().remove("trace_id");
    a
}

#[test]
fn every_tool_returns_what_the_cli_prints() {
    every_tool_matches_the_cli(mcp);
}

/// Every tool, over the MCP client `run` starts with the steps it is given
/// on an index it is given, returns what the CLI's `--json` prints for the
/// same call (`kebab mcp` over stdio and `kebab serve` over HTTP alike).
pub(crate) fn every_tool_matches_the_cli(run: impl FnOnce(&Kb, Value) -> Value) {
    let server = LlmServer::start(
        Wire::Ollama,
        Script::Answer(tokens(
            "Raft replicates entries from the leader with AppendEntries [#1].",
        )),
    );
    let kb = Kb::with_config(&format!("{}{}", embedding_config(), server.config(10)));
    kb.ingest(&sample_corpus());

    let query = "leader election log replication";
    let (hybrid, code) = kb.json(&["search", query, "--k", "3"]);
    assert_eq!(code, 0, "{hybrid}");
    let (lexical, _) = kb.json(&["search", query, "--k", "3", "--mode", "lexical"]);
    let (filtered, _) = kb.json(&["search", "memory limits", "--path", "tech/*", "--k", "2"]);
    let chunk_id = hybrid["hits"][0]["chunk_id"].as_str().unwrap().to_string();
    let doc_id = hybrid["hits"][0]["doc_id"].as_str().unwrap().to_string();
    let (chunk, _) = kb.json(&["fetch", "chunk", &chunk_id, "--context", "1"]);
    let (doc, _) = kb.json(&["fetch", "doc", &doc_id]);
    let (span, _) = kb.json(&["fetch", "span", &doc_id, "1", "3"]);
    let (docs, _) = kb.json(&["list", "docs"]);
    let (schema, code) = kb.json(&["schema"]);
    assert_eq!(code, 0);
    let (doctor, _) = kb.json(&["doctor"]);
    let question = "How does the Raft leader replicate log entries with AppendEntries?";
    let (answer, code) = kb.json(&["ask", question]);
    assert_eq!(code, 0, "{answer}");

    let r = run(
        &kb,
        json!([
            call("search", json!({ "query": query, "k": 3 })),
            call(
                "search",
                json!({ "query": query, "k": 3, "mode": "lexical" })
            ),
            call(
                "search",
                json!({ "query": "memory limits", "path": "tech/*", "k": 2 })
            ),
            call(
                "fetch",
                json!({ "kind": "chunk", "chunk_id": chunk_id, "context": 1 })
            ),
            call("fetch", json!({ "kind": "doc", "doc_id": doc_id })),
            call(
                "fetch",
                json!({ "kind": "span", "doc_id": doc_id, "line_start": 1, "line_end": 3 })
            ),
            call("list_docs", json!({})),
            call("schema", json!({})),
            call("doctor", json!({})),
            call("ask", json!({ "question": question })),
            call(
                "bulk_search",
                json!({ "queries": [
                    { "query": query, "k": 3 },
                    { "query": "x", "mode": "sideways" },
                    { "query": query, "k": 3, "mode": "lexical" },
                ]})
            ),
            // Error paths.
            call("fetch", json!({ "kind": "chunk" })),
            call(
                "fetch",
                json!({ "kind": "chunk", "chunk_id": "no-such-chunk" })
            ),
            call("search", json!({ "query": "" })),
            call("search", json!({ "query": "x", "colour": "blue" })),
            call(
                "fetch",
                json!({ "kind": "span", "doc_id": doc_id, "line_start": 1 })
            ),
        ]),
    );

    assert_eq!(r["server"]["name"], "kebab");
    let names: Vec<&str> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for tool in [
        "search",
        "bulk_search",
        "fetch",
        "ask",
        "list_docs",
        "schema",
        "doctor",
    ] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
    let search_schema = &r["tools"][0]["inputSchema"];
    assert_eq!(
        search_schema["required"],
        json!(["query"]),
        "{search_schema}"
    );

    let res = &r["results"];
    // The CLI's one-query process runs the model without graph
    // optimisation, the server with it: vector scores agree to ~1e-7.
    assert_same_results(ok(&res[0]), &hybrid);
    assert_eq!(ok(&res[0])["mode"], "hybrid");
    assert_same_results(ok(&res[1]), &lexical);
    assert_same_results(ok(&res[2]), &filtered);
    assert_eq!(ok(&res[3]), &chunk);
    assert_eq!(ok(&res[4]), &doc);
    assert_eq!(ok(&res[5]), &span);
    assert_eq!(ok(&res[6])["docs"], docs);
    assert_eq!(ok(&res[7]), &schema);
    assert_eq!(ok(&res[8]), &doctor);
    assert_eq!(stable_answer(ok(&res[9])), stable_answer(&answer));
    assert_eq!(ok(&res[9])["grounded"], true);

    let bulk = ok(&res[10]);
    assert_eq!(bulk["schema_version"], "bulk_search_response.v1");
    assert_eq!(
        (bulk["succeeded"].as_u64(), bulk["failed"].as_u64()),
        (Some(2), Some(1))
    );
    assert_same_results(&bulk["items"][0]["response"], &hybrid);
    assert_eq!(bulk["items"][1]["error"]["code"], "invalid_input");
    assert_eq!(bulk["items"][1]["error"]["details"]["field"], "mode");
    assert_same_results(&bulk["items"][2]["response"], &lexical);

    assert_eq!(error_code(&res[11]), "invalid_input");
    assert_eq!(res[11]["structured"]["details"]["field"], "chunk_id");
    assert_eq!(error_code(&res[12]), "chunk_not_found");
    assert_eq!(error_code(&res[13]), "invalid_input");
    assert_eq!(error_code(&res[14]), "invalid_input");
    assert!(
        res[14]["structured"]["message"]
            .as_str()
            .unwrap()
            .contains("colour")
    );
    assert_eq!(res[15]["structured"]["details"]["field"], "line_end");
}

#[test]
fn an_empty_index_is_not_indexed_not_no_hits() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let r = mcp(
        &kb,
        json!([
            call("search", json!({ "query": "anything" })),
            call("ask", json!({ "question": "anything at all?" })),
            call("list_docs", json!({})),
        ]),
    );
    let res = &r["results"];
    assert_eq!(error_code(&res[0]), "not_indexed");
    assert!(
        res[0]["structured"]["hint"]
            .as_str()
            .unwrap()
            .contains("kebab ingest")
    );
    assert_eq!(error_code(&res[1]), "not_indexed");
    assert_eq!(ok(&res[2])["docs"], json!([]));

    let out = kb.run(&["--json", "search", "anything"]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_str(String::from_utf8_lossy(&out.stderr).trim()).unwrap();
    assert_eq!(err["code"], "not_indexed");
    assert_eq!(err["details"]["data_dir"], json!(kb.data_dir()));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_running_server_sees_documents_ingested_after_it_started() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = tempfile::tempdir().unwrap();
    std::fs::write(
        corpus.path().join("first.md"),
        "# Bread\n\nKnead the dough and let it rise overnight.\n",
    )
    .unwrap();
    kb.ingest(corpus.path());
    let ready = corpus.path().join("ready");
    let go = corpus.path().join("go");
    let late = json!({ "query": "axolotl husbandry tank temperature", "k": 3 });
    let child = client(
        &kb,
        &json!([
            call("search", late.clone()),
            { "signal": ready, "wait_for": go },
            call("search", late.clone()),
            call(
                "search",
                json!({ "query": "caring for a salamander pet", "k": 3, "mode": "vector" })
            ),
        ]),
    );
    let started = Instant::now();
    while !ready.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "server never got ready"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::write(
        corpus.path().join("axolotl.md"),
        "# Axolotl husbandry\n\nKeep the tank temperature below 18 °C and the water clean; \
         axolotls are salamanders that stay aquatic.\n",
    )
    .unwrap();
    kb.ingest(corpus.path());
    std::fs::write(&go, "go").unwrap();
    let r = report(child);
    let res = &r["results"];
    let before = ok(&res[0]);
    assert!(
        before["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["doc_path"] != "axolotl.md"),
        "{before}"
    );
    assert_eq!(
        ok(&res[2])["hits"][0]["doc_path"],
        "axolotl.md",
        "{}",
        res[2]
    );
    let vector = ok(&res[3]);
    assert_eq!(vector["mode"], "vector");
    assert_eq!(vector["hits"][0]["doc_path"], "axolotl.md", "{vector}");
}

#[test]
fn bulk_search_answers_every_line_in_order() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(&sample_corpus());
    let mut lines = Vec::new();
    for i in 0..100 {
        lines.push(match i {
            37 => "{\"query\": \"raft\", \"mode\": \"nonsense\"}".to_string(),
            58 => "not json at all".to_string(),
            _ if i % 2 == 0 => json!({ "query": "raft leader election", "k": 2 }).to_string(),
            _ => json!({ "query": format!("zzqx{i} qqvvjj"), "k": 2 }).to_string(),
        });
    }
    let out = run_with_stdin(kb.cmd(&["search", "--bulk"]), lines.join("\n").as_bytes());
    assert_eq!(
        out.status.code(),
        Some(2),
        "a failed query makes the run exit 2"
    );
    let items: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(items.len(), 100);
    let (single, _) = kb.json(&["search", "raft leader election", "--k", "2"]);
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item["schema_version"], "bulk_search_item.v1");
        assert_eq!(item["index"], i);
        match i {
            37 => assert_eq!(item["error"]["code"], "invalid_input", "{item}"),
            58 => {
                assert_eq!(item["error"]["code"], "invalid_input", "{item}");
                assert_eq!(item["query"], Value::Null);
            }
            _ if i % 2 == 0 => assert_eq!(item["response"], single, "{i}"),
            _ => assert_eq!(item["response"]["hits"], json!([]), "{i}"),
        }
    }

    // Over the cap: the whole call is refused, nothing half-answered.
    let too_many = vec![json!({ "query": "raft" }).to_string(); 101].join("\n");
    let out = run_with_stdin(kb.cmd(&["--json", "search", "--bulk"]), too_many.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err: Value = serde_json::from_str(String::from_utf8_lossy(&out.stderr).trim()).unwrap();
    assert_eq!(err["code"], "invalid_input");
}

#[test]
fn schema_reports_capabilities_and_what_the_index_holds() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(&sample_corpus());
    let (s, code) = kb.json(&["schema"]);
    assert_eq!(code, 0, "{s}");
    assert_eq!(s["schema_version"], "schema.v1");
    assert_eq!(s["capabilities"]["search_modes"], json!(["lexical"]));
    assert_eq!(s["models"]["embedding"], Value::Null);
    let schemas = s["wire"]["schemas"].as_array().unwrap();
    for id in [
        "search_response.v1",
        "bulk_search_item.v1",
        "error.v1",
        "schema.v1",
    ] {
        assert!(schemas.contains(&json!(id)), "{id}");
    }
    let plugins: Vec<&str> = s["capabilities"]["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for p in ["markdown", "code", "yaml", "pdf", "text"] {
        assert!(plugins.contains(&p), "{p} in {plugins:?}");
    }
    // Counted the same way as the documents themselves.
    let (docs, _) = kb.json(&["list", "docs"]);
    let docs = docs.as_array().unwrap();
    assert_eq!(s["stats"]["documents"], docs.len());
    let per_plugin = |name: &str| docs.iter().filter(|d| d["plugin"] == name).count();
    assert_eq!(
        s["stats"]["docs_per_plugin"]["markdown"],
        per_plugin("markdown")
    );
    let shell_docs = docs
        .iter()
        .filter(|d| d["doc_path"].as_str().unwrap().ends_with(".sh"))
        .count();
    assert!(shell_docs > 0);
    assert_eq!(
        s["stats"]["code_lang_breakdown"]["shell"], shell_docs,
        "{s:#}"
    );
    assert!(s["stats"]["last_ingest_at"].is_string());
}
