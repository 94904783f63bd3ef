//! The versioned plugin contract: a component built against the frozen
//! 1.0.0 WIT runs in a host whose newest contract is later, and the 1.1.0
//! `settings` import carries `[plugins.config.<name>]` to a plugin (a change
//! re-indexes exactly that plugin's documents).

use std::path::PathBuf;

use crate::support::{Kb, item};

#[test]
fn a_plugin_built_against_api_1_0_0_installs_parses_and_is_cited() {
    let kb = Kb::new();
    let (schema, _) = kb.json(&["schema"]);
    let host_api = schema["capabilities"]["plugin_api"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(host_api, "1.0.0", "the host must be newer than the plugin");

    let wasm = PathBuf::from(kebab_test_artifacts::LEGACY_WASM);
    let (done, code) = kb.json(&["plugin", "install", wasm.to_str().unwrap()]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(
        (done["name"].as_str(), done["api_version"].as_str()),
        (Some("legacy"), Some("1.0.0"))
    );

    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("deploy.note"),
        "Deploy checklist\n\nDrain the quorum replicas before the upgrade.\n\n$ kubectl drain node-7 --ignore-daemonsets\n",
    )
    .unwrap();
    let report = kb.ingest(&corpus);
    assert_eq!(report["new"], 1, "{report:#}");
    assert_eq!(report["fallbacks"], 0, "{report:#}");
    // The 1.0.0 `log` import reaches the host through the old bindings.
    let note = item(&report, "deploy.note");
    assert!(note.to_string().contains("info: 3 paragraphs"), "{note:#}");

    let (hits, code) = kb.search("kubectl drain daemonsets", 3);
    assert_eq!(code, 0);
    let hit = &hits[0];
    assert_eq!(hit["doc_path"], "deploy.note");
    assert_eq!(hit["chunker_version"], "legacy-paragraph-v1");
    assert_eq!(
        (
            hit["citation"]["line_start"].as_u64(),
            hit["citation"]["line_end"].as_u64()
        ),
        (Some(5), Some(5)),
        "{hit:#}"
    );
    assert_eq!(hit["code_lang"], "shell", "{hit:#}");
    let (hits, _) = kb.search("quorum replicas", 3);
    assert_eq!(
        (
            hits[0]["citation"]["start"].as_u64(),
            hits[0]["heading_path"][0].as_str()
        ),
        (Some(3), Some("Deploy checklist")),
        "{:#}",
        hits[0]
    );

    // What an install says it will re-index follows ingest's own rule:
    // the same component again re-indexes nothing, but once the plugin's
    // settings changed (a new policy hash) its document is stale.
    let (again, _) = kb.json(&["plugin", "install", wasm.to_str().unwrap()]);
    assert_eq!(
        (
            again["unchanged"].as_bool(),
            again["documents_to_reindex"].as_u64()
        ),
        (Some(true), Some(0)),
        "{again}"
    );
    std::fs::write(
        kb.dir.path().join("config.toml"),
        "[plugins.config.legacy]\nstyle = \"terse\"\n",
    )
    .unwrap();
    let (stale, _) = kb.json(&["plugin", "install", wasm.to_str().unwrap()]);
    assert_eq!(stale["documents_to_reindex"], 1, "{stale}");
    let report = kb.ingest(&corpus);
    assert_eq!(report["reindexed"], 1, "{report:#}");
}

/// `lang` of every document of `plugin`, by path.
fn langs(kb: &Kb, plugin: &str) -> Vec<(String, Option<String>)> {
    let (docs, _) = kb.json(&["list", "docs"]);
    let mut out: Vec<_> = docs
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["plugin"] == plugin)
        .map(|d| {
            (
                d["doc_path"].as_str().unwrap().to_string(),
                d["lang"].as_str().map(String::from),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn plugin_settings_reach_the_plugin_and_a_change_reindexes_only_its_documents() {
    let kb = Kb::with_config("[plugins.config.text]\nlang = \"ko\"\n");
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("a.txt"), "first note about rivers\n").unwrap();
    std::fs::write(corpus.join("b.log"), "second note about lakes\n").unwrap();
    std::fs::write(corpus.join("c.md"), "# Seas\n\nA note about seas.\n").unwrap();
    let first = kb.ingest(&corpus);
    assert_eq!(first["new"], 3, "{first:#}");
    let (config_warnings, _) = kb.json(&["doctor"]);
    assert!(
        !config_warnings.to_string().contains("plugins.config"),
        "plugin settings are not unknown keys: {config_warnings}"
    );
    assert_eq!(
        langs(&kb, "text"),
        vec![
            ("a.txt".to_string(), Some("ko".to_string())),
            ("b.log".to_string(), Some("ko".to_string()))
        ]
    );

    let again = kb.ingest(&corpus);
    assert_eq!(again["skipped_unchanged"], 3, "{again:#}");

    std::fs::write(
        kb.dir.path().join("config.toml"),
        "[plugins.config.text]\nlang = \"en\"\n",
    )
    .unwrap();
    let changed = kb.ingest(&corpus);
    assert_eq!(
        (
            changed["reindexed"].as_u64(),
            changed["skipped_unchanged"].as_u64()
        ),
        (Some(2), Some(1)),
        "only the text plugin's documents: {changed:#}"
    );
    assert_eq!(
        langs(&kb, "text"),
        vec![
            ("a.txt".to_string(), Some("en".to_string())),
            ("b.log".to_string(), Some("en".to_string()))
        ]
    );

    // Removing the settings returns to the plain policy hash: re-indexed
    // once more, with no language.
    std::fs::write(kb.dir.path().join("config.toml"), "").unwrap();
    let plain = kb.ingest(&corpus);
    assert_eq!(plain["reindexed"], 2, "{plain:#}");
    assert_eq!(langs(&kb, "text")[0].1, None);
}
