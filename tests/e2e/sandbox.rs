//! A plugin that traps, loops, hoards memory or lies falls back to the text
//! plugin for that file; the ingest goes on and the report says why.

use crate::support::{Kb, hostile_wasm, item};

#[test]
fn hostile_plugin_failures_fall_back_to_text() {
    let kb = Kb::with_config("[plugins]\ntimeout_ms = 500\nmemory_mb = 64\n");
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let cases = [
        ("trap.hostile", "TRAP armadillo\n", "trapped: "),
        ("loop.hostile", "LOOP bandicoot\n", "timed out after 500 ms"),
        (
            "alloc.hostile",
            "ALLOC capybara\n",
            "exceeded the memory limit of 64 MiB",
        ),
        (
            "badspan.hostile",
            "BADSPAN dugong\n",
            "ends past the file's 1 lines",
        ),
        (
            "badblock.hostile",
            "BADBLOCK echidna\n",
            "refers to block 7",
        ),
        ("empty.hostile", "EMPTY fossa\n", "produced no chunks"),
    ];
    for (name, body, _) in &cases {
        std::fs::write(corpus.join(name), body).unwrap();
    }
    std::fs::write(corpus.join("fine.hostile"), "honest gecko\n").unwrap();
    std::fs::write(corpus.join("note.md"), "# Note\n\nA markdown heron.\n").unwrap();

    let started = std::time::Instant::now();
    let report = kb.ingest(&corpus);
    assert!(
        started.elapsed().as_secs() < 60,
        "ingest must finish in bounded time"
    );
    assert_eq!(report["errors"], 0, "{report:#}");
    assert_eq!(report["new"], 8, "{report:#}");
    assert_eq!(report["fallbacks"], 6, "{report:#}");

    for (name, body, reason) in &cases {
        let it = item(&report, name);
        let fallback = it["fallback"]
            .as_str()
            .unwrap_or_else(|| panic!("{name} did not fall back: {it}"));
        assert!(fallback.starts_with("hostile plugin "), "{fallback}");
        assert!(
            fallback.contains(reason),
            "{name}: expected {reason:?} in {fallback:?}"
        );
        assert_eq!(
            it["chunker_version"], "code-text-paragraph-v1",
            "the stored versions name the fallback"
        );
        assert_eq!(
            it["plugin"], "hostile",
            "the routed plugin stays responsible"
        );
        let word = body.split_whitespace().nth(1).unwrap();
        let (hits, code) = kb.search(word, 3);
        assert_eq!(code, 0, "{word} not searchable");
        assert_eq!(hits[0]["doc_path"], *name);
    }
    let trap = item(&report, "trap.hostile");
    assert!(
        trap["fallback"]
            .as_str()
            .unwrap()
            .contains("deliberate trap"),
        "panic message kept: {trap}"
    );

    let fine = item(&report, "fine.hostile");
    assert_eq!(fine["fallback"], serde_json::Value::Null);
    assert_eq!(fine["chunker_version"], "hostile-chunker-v1");
    assert_eq!(item(&report, "note.md")["plugin"], "markdown");

    let (docs, _) = kb.json(&["list", "docs"]);
    let trap_doc = docs
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["doc_path"] == "trap.hostile")
        .unwrap();
    assert!(
        trap_doc["fallback_reason"]
            .as_str()
            .unwrap()
            .contains("trapped")
    );
}

#[test]
fn log_spam_is_capped_and_counted() {
    let kb = Kb::new();
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("spam.hostile"), "LOGSPAM hoopoe\n").unwrap();
    let report = kb.ingest(&corpus);
    let it = item(&report, "spam.hostile");
    assert_eq!(it["kind"], "new", "{it}");
    let warnings = it["warnings"].as_array().unwrap();
    assert!(
        warnings.len() <= 51,
        "log lines are capped: {}",
        warnings.len()
    );
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("999950 more plugin log lines dropped")),
        "{warnings:?}"
    );
}

#[test]
fn a_hundred_megabyte_answer_is_refused_not_stored() {
    let kb = Kb::new();
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("big.hostile"), "BIGTEXT ibex\n").unwrap();
    let report = kb.ingest(&corpus);
    let it = item(&report, "big.hostile");
    let fallback = it["fallback"].as_str().unwrap();
    assert!(
        fallback.contains("chunk 0: text is 104857600 bytes (limit 4194304, max_text_kb)"),
        "{fallback}"
    );
    let (docs, _) = kb.json(&["list", "docs"]);
    assert_eq!(
        (
            docs[0]["chunker_version"].as_str(),
            docs[0]["chunk_count"].as_u64()
        ),
        (Some("code-text-paragraph-v1"), Some(1)),
        "only the text fallback's chunk is stored"
    );
    let (hits, _) = kb.search("ibex", 3);
    assert_eq!(hits[0]["doc_path"], "big.hostile");
}

#[test]
fn output_limits_are_configurable_per_plugin() {
    let kb = Kb::with_config("[plugins.limits.hostile]\nmax_chunks = 0\n");
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("fine.hostile"), "honest tapir\n").unwrap();
    std::fs::write(corpus.join("note.md"), "# Note\n\nA tapir in markdown.\n").unwrap();
    let report = kb.ingest(&corpus);
    let hostile = item(&report, "fine.hostile");
    assert!(
        hostile["fallback"]
            .as_str()
            .unwrap()
            .contains("1 chunks (limit 0, max_chunks)"),
        "{hostile}"
    );
    assert_eq!(
        item(&report, "note.md")["fallback"],
        serde_json::Value::Null,
        "other plugins keep the defaults"
    );
}
