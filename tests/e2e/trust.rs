//! Frontmatter `trust_level` / `source_type` (design §3.6, §2.5) are kept
//! with the design's values, and `--trust-min` / `--lang` narrow search
//! and ask inside the engine, before the top k are cut.

use std::path::Path;

use serde_json::Value;

use crate::ask::ask;
use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::support::{Kb, NO_EMBEDDINGS, hit_paths, item};

fn write_corpus(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    for (rel, text) in [
        (
            "primary.md",
            "# Walrus\n\nWalrus tusks are elongated canine teeth.\n",
        ),
        (
            "secondary.md",
            "---\ntrust_level: secondary\nsource_type: paper\n---\n# Walrus study\n\nWalrus tusks grow throughout life, a study reports.\n",
        ),
        (
            "generated.md",
            "---\ntrust_level: Generated\nsource_type: blog\n---\n# Walrus walrus\n\nWalrus walrus walrus tusks tusks, a model summarised.\n",
        ),
        (
            "odd.md",
            "---\ntrust_level: very high\n---\n# Walrus note\n\nA walrus note with tusks.\n",
        ),
        (
            "korean.md",
            "# 바다코끼리\n\n바다코끼리의 엄니는 평생 자란다. walrus tusks\n",
        ),
    ] {
        std::fs::write(root.join(rel), text).unwrap();
    }
}

/// The document paths of `kebab search QUERY ARGS`, best first.
fn paths(kb: &Kb, query: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["search", query];
    all.extend_from_slice(args);
    let (resp, code) = kb.json(&all);
    assert_eq!(code, 0, "{resp}");
    hit_paths(&resp)
}

#[test]
fn frontmatter_trust_is_kept_and_filters_narrow_before_the_cut() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let corpus = kb.dir.path().join("corpus");
    write_corpus(&corpus);
    let report = kb.ingest(&corpus);
    let warned = |rel: &str| item(&report, rel)["warnings"].to_string();
    assert!(
        warned("generated.md").contains("source_type `blog` is not one of"),
        "{report:#}"
    );
    assert!(
        warned("odd.md").contains("trust_level `very high`"),
        "{report:#}"
    );

    let (docs, _) = kb.json(&["list", "docs"]);
    let doc = |rel: &str| -> (String, String, Value) {
        let d = docs
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["doc_path"] == rel)
            .unwrap_or_else(|| panic!("{rel} listed: {docs:#}"));
        (
            d["trust_level"].as_str().unwrap().to_string(),
            d["source_type"].as_str().unwrap().to_string(),
            d["lang"].clone(),
        )
    };
    assert_eq!(doc("primary.md").0, "primary");
    assert_eq!(doc("primary.md").1, "markdown");
    let (trust, source, _) = doc("secondary.md");
    assert_eq!((trust.as_str(), source.as_str()), ("secondary", "paper"));
    let (trust, source, _) = doc("generated.md");
    assert_eq!(
        (trust.as_str(), source.as_str()),
        ("generated", "markdown"),
        "a source type the design lacks is not used"
    );
    assert_eq!(doc("odd.md").0, "primary", "an unknown level is not used");
    assert_eq!(doc("korean.md").2, "ko");

    // The best match is the generated note: k = 1 unfiltered finds it,
    // and with a filter the one hit is the best of what the filter admits.
    assert_eq!(
        paths(&kb, "walrus tusks", &["--k", "1"]),
        vec!["generated.md"]
    );
    let secondary = paths(
        &kb,
        "walrus tusks",
        &["--k", "1", "--trust-min", "secondary"],
    );
    assert_eq!(secondary.len(), 1);
    assert_ne!(secondary[0], "generated.md");
    let all_secondary = paths(&kb, "walrus tusks", &["--trust-min", "secondary"]);
    assert!(all_secondary.contains(&"secondary.md".to_string()));
    assert!(!all_secondary.contains(&"generated.md".to_string()));
    let primary = paths(&kb, "walrus tusks", &["--trust-min", "PRIMARY"]);
    assert!(!primary.contains(&"secondary.md".to_string()) && !primary.is_empty());
    assert_eq!(
        paths(&kb, "walrus tusks", &["--lang", "ko"]),
        vec!["korean.md"]
    );
    assert_eq!(
        paths(
            &kb,
            "walrus tusks",
            &["--lang", "ko", "--trust-min", "primary"]
        ),
        vec!["korean.md"]
    );

    let out = kb.run(&["--json", "search", "walrus", "--trust-min", "high"]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "invalid_input", "{err}");
    assert_eq!(err["details"]["field"], "trust_min");

    // Bulk search lines take the same fields.
    let out = crate::support::run_with_stdin(
        kb.cmd(&["--json", "search", "--bulk"]),
        b"{\"query\": \"walrus tusks\", \"k\": 1, \"trust_min\": \"secondary\"}\n",
    );
    let bulk: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = &bulk["items"][0]["response"]["hits"];
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{bulk}");
    assert_ne!(hits[0]["doc_path"], "generated.md", "{bulk}");
}

#[test]
fn ask_takes_the_same_filters() {
    let server = LlmServer::start(
        Wire::Ollama,
        Script::Answer(tokens("Tusks are teeth [#1].")),
    );
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{}", server.config(10)));
    let corpus = kb.dir.path().join("corpus");
    write_corpus(&corpus);
    kb.ingest(&corpus);
    let (a, code, stderr) = ask(&kb, "What are walrus tusks?", &["--trust-min", "primary"]);
    assert_eq!(code, 0, "{a:#} {stderr}");
    let user = server.bodies()[0]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(user.contains("doc=\"primary.md\""), "{user}");
    assert!(
        !user.contains("doc=\"generated.md\"") && !user.contains("doc=\"secondary.md\""),
        "{user}"
    );
    let (_, code, _) = ask(&kb, "What are walrus tusks?", &["--lang", "ko"]);
    assert_eq!(code, 0);
    let user = server.bodies()[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        user.contains("doc=\"korean.md\"") && !user.contains("doc=\"primary.md\""),
        "{user}"
    );
}
