//! `[models.embedding] provider = "openai"`: vectors from an
//! OpenAI-compatible `/v1/embeddings` server (the loopback test server
//! speaks the real wire format over HTTP), with the same cache,
//! reconciliation, search and doctor checks as the local model.

use serde_json::Value;

use crate::llm_server::{EMBED_DIMS, LlmServer, Script, Wire, dead_endpoint, tokens};
use crate::support::{Kb, vector_counts};

const MODEL: &str = "test-embed";

/// `[models.embedding]` for a server at `endpoint` (base URL up to `/v1`).
fn remote_config(endpoint: &str, dimensions: usize) -> String {
    format!(
        "[models.embedding]\nprovider = \"openai\"\nmodel = \"{MODEL}\"\nendpoint = \"{endpoint}\"\n\
         dimensions = {dimensions}\nbatch_size = 2\napi_key_env = \"KEBAB_TEST_EMBED_KEY\"\n"
    )
}

fn write_corpus(root: &std::path::Path) {
    for (name, text) in [
        ("bread.md", "# Bread\n\nSourdough loaves rise overnight.\n"),
        ("bikes.md", "# Bikes\n\nOil the chain before a long ride.\n"),
        ("money.md", "# Money\n\nKeep an emergency fund.\n"),
    ] {
        std::fs::write(root.join(name), text).unwrap();
    }
}

fn server() -> LlmServer {
    LlmServer::start(Wire::OpenAi, Script::Answer(tokens("unused")))
}

fn texts_sent(server: &LlmServer) -> usize {
    server
        .embedding_calls()
        .iter()
        .map(|c| c.body["input"].as_array().map_or(0, Vec::len))
        .sum()
}

#[test]
fn a_remote_server_embeds_chunks_once_and_serves_vector_search() {
    let server = server();
    let kb = Kb::with_config(&remote_config(
        &format!("{}/v1", server.endpoint()),
        EMBED_DIMS,
    ));
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let mut ingest = kb.cmd(&["--json", "ingest", corpus.path().to_str().unwrap()]);
    ingest.env("KEBAB_TEST_EMBED_KEY", "sk-test-123");
    let out = ingest.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let chunks = report["chunks_indexed"].as_u64().unwrap() as usize;
    assert!(chunks >= 3, "{report}");
    assert_eq!(
        report["vectors"]["model"],
        format!("{MODEL}@v1"),
        "{report}"
    );
    assert_eq!(report["vectors"]["embedded"], chunks, "{report}");

    // The wire: model name, float encoding, batches of batch_size, the key
    // from the named variable as a bearer token.
    let calls = server.embedding_calls();
    assert_eq!(texts_sent(&server), chunks);
    for call in &calls {
        assert_eq!(call.body["model"], MODEL);
        assert_eq!(call.body["encoding_format"], "float");
        assert!(call.body.get("input_type").is_none(), "{:?}", call.body);
        assert!(
            call.body["input"].as_array().unwrap().len() <= 2,
            "{:?}",
            call.body
        );
        assert_eq!(call.authorization.as_deref(), Some("Bearer sk-test-123"));
    }
    let (rows, chunk_rows, _, _) = vector_counts(&kb);
    assert_eq!((rows, chunk_rows), (chunks, chunks));

    // Nothing changed: nothing is sent again.
    kb.ingest(corpus.path());
    assert_eq!(texts_sent(&server), chunks);
    // One file changed: only its chunks are sent.
    std::fs::write(
        corpus.path().join("money.md"),
        "# Money\n\nKeep an emergency fund and index funds.\n",
    )
    .unwrap();
    let report = kb.ingest(corpus.path());
    assert_eq!(report["vectors"]["embedded"], 1, "{report}");
    assert_eq!(texts_sent(&server), chunks + 1);

    // Vector search: the query is embedded by the server too; the hit
    // sharing its words comes first and names the remote model.
    let (resp, code) = kb.json(&["search", "sourdough loaves", "--mode", "vector"]);
    assert_eq!(code, 0, "{resp}");
    let first = &resp["hits"][0];
    assert_eq!(first["doc_path"], "bread.md", "{resp}");
    assert_eq!(first["embedding_model"], format!("{MODEL}@v1"));
    let (resp, _) = kb.json(&["search", "chain ride"]);
    assert_eq!(resp["mode"], "hybrid", "{resp}");
    assert_eq!(resp["hits"][0]["doc_path"], "bikes.md", "{resp}");

    // doctor probes the server; no ONNX Runtime is needed for it.
    let (doctor, _) = kb.json(&["doctor"]);
    let checks = doctor["checks"].as_array().unwrap();
    let check = |name: &str| checks.iter().find(|c| c["name"] == name).cloned();
    let embedding = check("embedding_model").unwrap();
    assert_eq!(embedding["ok"], true, "{doctor}");
    assert!(
        embedding["detail"].as_str().unwrap().contains("openai"),
        "{embedding}"
    );
    assert!(check("onnx_runtime").is_none(), "{doctor}");
}

#[test]
fn with_input_type_the_server_is_told_passages_from_queries() {
    let server = server();
    let config = format!(
        "{}input_type = true\n",
        remote_config(&format!("{}/v1", server.endpoint()), EMBED_DIMS)
    );
    let kb = Kb::with_config(&config);
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let report = kb.ingest(corpus.path());
    // Vectors made this way are kept apart from ones made without it.
    assert_eq!(
        report["vectors"]["model"],
        format!("{MODEL}@v1+input-type"),
        "{report}"
    );
    let ingest_calls = server.embedding_calls();
    assert!(!ingest_calls.is_empty());
    for call in &ingest_calls {
        assert_eq!(call.body["input_type"], "passage", "{:?}", call.body);
    }
    let (resp, code) = kb.json(&["search", "sourdough loaves", "--mode", "vector"]);
    assert_eq!(code, 0, "{resp}");
    assert_eq!(resp["hits"][0]["doc_path"], "bread.md", "{resp}");
    let calls = server.embedding_calls();
    let query = &calls[ingest_calls.len()..];
    assert_eq!(query.len(), 1, "{calls:?}");
    assert_eq!(query[0].body["input_type"], "query");
    assert_eq!(query[0].body["input"][0], "sourdough loaves");
}

#[test]
fn an_unreachable_or_mismatched_server_is_reported_with_a_hint() {
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());

    // Nothing listens: search in vector mode fails with model_unreachable;
    // doctor says so; the default mode falls back to lexical with a note.
    let dead = Kb::with_config(&remote_config(
        &format!("{}/v1", dead_endpoint()),
        EMBED_DIMS,
    ));
    let out = dead.run(&["--json", "ingest", corpus.path().to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stderr).lines().last().unwrap()).unwrap();
    assert_eq!(err["code"], "model_unreachable", "{err}");
    assert!(err["hint"].as_str().unwrap().contains("endpoint"), "{err}");
    // The documents themselves were indexed; only their vectors wait.
    let (resp, code) = dead.json(&["search", "sourdough", "--mode", "lexical"]);
    assert_eq!(
        (code, &resp["hits"][0]["doc_path"]),
        (0, &Value::from("bread.md"))
    );
    let out = dead.run(&["--json", "search", "bread", "--mode", "vector"]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_str(String::from_utf8_lossy(&out.stderr).trim()).unwrap();
    assert_eq!(err["code"], "model_unreachable", "{err}");
    let (doctor, code) = dead.json(&["doctor"]);
    assert_eq!(code, 3, "{doctor}");

    // The server's vectors are longer than the config says.
    let server = server();
    let wrong = Kb::with_config(&remote_config(&format!("{}/v1", server.endpoint()), 32));
    let out = wrong.run(&["ingest", corpus.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "model produced {EMBED_DIMS} dimensions, config says 32"
        )),
        "{stderr}"
    );

    // A remote model the catalog does not know needs its dimensions.
    let unsized_kb = Kb::with_config(&format!(
        "[models.embedding]\nprovider = \"openai\"\nmodel = \"{MODEL}\"\nendpoint = \"{}/v1\"\n",
        server.endpoint()
    ));
    unsized_kb.ingest(corpus.path());
    let out = unsized_kb.run(&["search", "bread", "--mode", "vector"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("dimensions"), "{stderr}");
}
