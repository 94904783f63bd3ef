//! `kebab fetch chunk|doc|span` and its error codes.

use serde_json::Value;

use crate::support::{Kb, NO_EMBEDDINGS, copy_tree, embedding_config, model_id, sample_corpus};

fn fetch(kb: &Kb, args: &[&str]) -> (Value, i32, String) {
    let mut all = vec!["--json", "fetch"];
    all.extend_from_slice(args);
    let out = kb.run(&all);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (
        value,
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn chunk_doc_and_span_return_the_indexed_text() {
    let kb = Kb::new();
    let corpus = kb.dir.path().join("corpus");
    copy_tree(&sample_corpus(), &corpus);
    kb.ingest(&corpus);
    let (hits, _) = kb.search("AppendEntries majority", 1);
    let chunk_id = hits[0]["chunk_id"].as_str().unwrap();
    let doc_id = hits[0]["doc_id"].as_str().unwrap();
    let source = std::fs::read_to_string(corpus.join("tech/raft-consensus.md")).unwrap();
    let lines: Vec<&str> = source.lines().collect();

    let (r, code, _) = fetch(&kb, &["chunk", chunk_id, "--context", "1"]);
    assert_eq!(code, 0);
    assert_eq!(r["schema_version"], "fetch_result.v1");
    assert_eq!(r["kind"], "chunk");
    assert_eq!(r["stale"], false);
    assert_eq!(r["chunk"]["schema_version"], "chunk_inspection.v1");
    assert!(
        r["chunk"]["text"]
            .as_str()
            .unwrap()
            .contains("AppendEntries")
    );
    assert_eq!(r["context_before"].as_array().unwrap().len(), 1);
    assert!(
        r["context_after"].is_null(),
        "the last chunk has nothing after it"
    );

    let (start, end) = (
        hits[0]["citation"]["start"].as_u64().unwrap(),
        hits[0]["citation"]["end"].as_u64().unwrap(),
    );
    let (s, _, _) = fetch(&kb, &["span", doc_id, &start.to_string(), &end.to_string()]);
    assert_eq!(
        s["text"],
        lines[start as usize - 1..end as usize].join("\n"),
        "exactly the cited lines"
    );
    assert_eq!(s["effective_end"], end);

    let (clamped, code, _) = fetch(&kb, &["span", doc_id, "13", "999"]);
    assert_eq!(code, 0);
    assert_eq!(clamped["effective_end"], lines.len());
    assert_eq!(clamped["text"], lines[12..].join("\n"));
    let (past, code, _) = fetch(&kb, &["span", doc_id, "500", "600"]);
    assert_eq!(
        (code, past["text"].as_str(), past["effective_end"].as_u64()),
        (0, Some(""), Some(499))
    );

    let (d, _, _) = fetch(&kb, &["doc", doc_id]);
    assert_eq!(d["text"], source.trim_end());
    let (cut, _, _) = fetch(&kb, &["doc", doc_id, "--max-tokens", "10"]);
    assert_eq!(
        (
            cut["truncated"].as_bool(),
            cut["text"].as_str().map(str::len)
        ),
        (Some(true), Some(40))
    );

    std::fs::write(corpus.join("tech/raft-consensus.md"), "# changed\n").unwrap();
    let (stale, _, _) = fetch(&kb, &["doc", doc_id]);
    assert_eq!(stale["stale"], true);
    assert_eq!(stale["text"], source.trim_end(), "still the indexed text");
}

#[test]
fn unknown_ids_have_their_error_codes() {
    let kb = Kb::new();
    kb.ingest(&sample_corpus());
    for (args, code) in [
        (vec!["chunk", "nope"], "chunk_not_found"),
        (vec!["doc", "nope"], "doc_not_found"),
        (vec!["span", "nope", "1", "2"], "doc_not_found"),
    ] {
        let (_, exit, stderr) = fetch(&kb, &args);
        assert_eq!(exit, 2);
        let err: Value = serde_json::from_str(stderr.trim()).unwrap();
        assert_eq!(err["code"], code, "{args:?}");
    }
}

#[test]
fn a_chunk_with_a_vector_lists_its_embedding() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = kb.dir.path().join("corpus");
    copy_tree(&sample_corpus(), &corpus);
    kb.ingest(&corpus);
    let (hits, _) = kb.search("AppendEntries majority", 1);
    let chunk_id = hits[0]["chunk_id"].as_str().unwrap();
    let (r, code, stderr) = fetch(&kb, &["chunk", chunk_id, "--context", "1"]);
    assert_eq!(code, 0, "{stderr}");
    let embeddings = r["chunk"]["embeddings"].as_array().unwrap();
    assert_eq!(embeddings.len(), 1, "{r:#}");
    let e = &embeddings[0];
    assert_eq!(
        format!(
            "{}@{}",
            e["model"].as_str().unwrap(),
            e["version"].as_str().unwrap()
        ),
        model_id()
    );
    assert_eq!(e["dimensions"], 384);
    assert_eq!(e["embedding_id"].as_str().map(str::is_empty), Some(false));
    let before = &r["context_before"][0]["embeddings"];
    assert_eq!(before.as_array().map(Vec::len), Some(1), "{r:#}");
    assert_ne!(before[0]["embedding_id"], e["embedding_id"]);

    // Without a model, no chunk has a vector.
    let plain = Kb::with_config(NO_EMBEDDINGS);
    plain.ingest(&corpus);
    let (hits, _) = plain.search("AppendEntries majority", 1);
    let (r, _, _) = fetch(&plain, &["chunk", hits[0]["chunk_id"].as_str().unwrap()]);
    assert_eq!(r["chunk"]["embeddings"], serde_json::json!([]));
}
