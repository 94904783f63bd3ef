//! Several roots in one index: two trees that share relative paths are
//! both indexed and told apart in every output, `--root` scopes search,
//! ask, list and fetch before the top k, and roots are listed, renamed and
//! removed (with their vectors).

use std::path::Path;

use serde_json::Value;

use crate::support::{Kb, embedding_config, vector_counts};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `notes/` and `app/`, both with README.md and docs/index.md; notes holds
/// many more documents about consensus than app does.
fn two_trees(base: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let notes = base.join("notes");
    let app = base.join("app");
    write(
        &notes.join("README.md"),
        "# Notes\n\nMy notes on raft consensus and leader election.\n",
    );
    write(
        &notes.join("docs/index.md"),
        "# Index\n\nRaft log replication, raft terms, raft elections.\n",
    );
    for i in 0..12 {
        write(
            &notes.join(format!("raft/{i}.md")),
            &format!("# Raft {i}\n\nRaft consensus raft leader raft follower raft log {i}.\n"),
        );
    }
    write(
        &app.join("README.md"),
        "# App\n\nThe app service; it uses raft for its config store.\n",
    );
    write(
        &app.join("docs/index.md"),
        "# App docs\n\nDeploying the app service behind a load balancer.\n",
    );
    (notes, app)
}

/// `kebab --json ARGS` that fails: its `error.v1` (stderr) and exit code.
fn failure(kb: &Kb, args: &[&str]) -> (Value, i32) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = kb.run(&all);
    let error = serde_json::from_slice(&out.stderr).expect("error.v1 on stderr");
    (error, out.status.code().unwrap())
}

fn docs(kb: &Kb, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["list", "docs"];
    args.extend_from_slice(extra);
    let (docs, code) = kb.json(&args);
    assert_eq!(code, 0, "{docs}");
    docs.as_array().cloned().unwrap()
}

#[test]
fn two_trees_with_the_same_paths_are_both_indexed_and_told_apart() {
    let kb = Kb::with_config(&embedding_config());
    let (notes, app) = two_trees(kb.dir.path());
    let first = kb.ingest(&notes);
    let second = kb.ingest(&app);
    assert_eq!(first["errors"], 0, "{first}");
    assert_eq!(
        (second["errors"].as_u64(), second["new"].as_u64()),
        (Some(0), Some(2)),
        "{second}"
    );
    assert_eq!(second["scope"]["root_name"], "app");

    // Both README.md and both docs/index.md, each under its root.
    let listed = docs(&kb, &[]);
    let readmes: Vec<(&str, &str)> = listed
        .iter()
        .filter(|d| d["doc_path"] == "README.md" || d["doc_path"] == "docs/index.md")
        .map(|d| (d["root"].as_str().unwrap(), d["doc_path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        readmes,
        vec![
            ("app", "README.md"),
            ("app", "docs/index.md"),
            ("notes", "README.md"),
            ("notes", "docs/index.md")
        ]
    );
    let ids: std::collections::HashSet<&str> = listed
        .iter()
        .map(|d| d["doc_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), listed.len(), "every document its own id");

    // Hits say their root, and citations name it in a many-root index.
    let (resp, code) = kb.json(&[
        "search",
        "raft config store",
        "--k",
        "20",
        "--mode",
        "lexical",
    ]);
    assert_eq!(code, 0, "{resp}");
    let app_hit = resp["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["root"] == "app")
        .expect("an app hit");
    assert_eq!(app_hit["doc_path"], "README.md");
    assert_eq!(app_hit["citation"]["root"], "app");
    assert!(
        app_hit["citation"]["uri"]
            .as_str()
            .unwrap()
            .starts_with("app:README.md#L"),
        "{app_hit}"
    );
    let roots: Vec<&str> = resp["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(roots, vec!["app", "notes"]);
    assert!(resp["roots"][0]["synced_at"].is_string(), "{resp}");
    assert_eq!(resp["roots"][0]["watched"], false);

    // Scoped before the top k: notes' 14 raft documents outrank app's one,
    // yet a search of app alone finds it, in every mode.
    for mode in ["lexical", "vector", "hybrid"] {
        let (scoped, code) = kb.json(&[
            "search", "raft", "--k", "3", "--root", "app", "--mode", mode,
        ]);
        assert_eq!(code, 0, "{mode}: {scoped}");
        let hits = scoped["hits"].as_array().unwrap();
        assert!(!hits.is_empty(), "{mode}: {scoped}");
        assert!(hits.iter().all(|h| h["root"] == "app"), "{mode}: {scoped}");
        assert_eq!(scoped["roots"].as_array().unwrap().len(), 1);
    }
    let (unknown, code) = failure(&kb, &["search", "raft", "--root", "nope"]);
    assert_eq!(code, 2);
    assert_eq!(unknown["code"], "invalid_input", "{unknown}");

    // list and fetch obey --root too.
    let only_app = docs(&kb, &["--root", "app"]);
    assert_eq!(only_app.len(), 2);
    let app_readme = only_app
        .iter()
        .find(|d| d["doc_path"] == "README.md")
        .unwrap()["doc_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (fetched, code) = kb.json(&["fetch", "doc", &app_readme, "--root", "app"]);
    assert_eq!(
        (code, fetched["root"].as_str()),
        (0, Some("app")),
        "{fetched}"
    );
    assert!(fetched["text"].as_str().unwrap().contains("config store"));
    let (refused, code) = failure(&kb, &["fetch", "doc", &app_readme, "--root", "notes"]);
    assert_eq!((code, refused["code"].as_str()), (2, Some("invalid_input")));

    // roots: listed with sizes; renamed (IDs kept); removed with vectors.
    let (list, code) = kb.json(&["roots"]);
    assert_eq!(code, 0);
    assert_eq!(list["schema_version"], "root_list.v1");
    let sizes: Vec<(&str, u64)> = list["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["documents"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(sizes, vec![("app", 2), ("notes", 14)]);
    let (renamed, code) = kb.json(&["roots", "rename", "app", "web"]);
    assert_eq!(code, 0, "{renamed}");
    let web_ids: Vec<String> = docs(&kb, &["--root", "web"])
        .iter()
        .map(|d| d["doc_id"].as_str().unwrap().to_string())
        .collect();
    assert!(web_ids.contains(&app_readme), "rename keeps document ids");
    let (clash, code) = failure(&kb, &["roots", "rename", "web", "notes"]);
    assert_eq!((code, clash["code"].as_str()), (2, Some("invalid_input")));

    let (removed, code) = kb.json(&["roots", "remove", "web"]);
    assert_eq!(code, 0, "{removed}");
    assert_eq!(removed["roots"].as_array().unwrap().len(), 1);
    assert!(docs(&kb, &[]).iter().all(|d| d["root"] == "notes"));
    let (chunks, records, rows, same) = vector_counts(&kb);
    assert!(
        chunks > 0 && chunks == records && records == rows && same,
        "vectors follow the removed root out: {chunks} chunks, {records} records, {rows} rows"
    );
    assert!(app.join("README.md").is_file(), "files are untouched");
}

#[test]
fn a_folder_inside_a_root_stays_in_it_and_declared_roots_keep_their_names() {
    let base = tempfile::tempdir().unwrap();
    let (notes, app) = two_trees(base.path());
    write(&app.join("drafts/wip.md"), "# WIP\n\nunfinished draft\n");
    let config = format!(
        "{}\n[[roots]]\npath = {:?}\nname = \"service\"\nexclude = [\"drafts/**\"]\n",
        crate::support::NO_EMBEDDINGS,
        app.to_str().unwrap()
    );
    let kb = Kb::with_config(&config);
    kb.ingest(&notes);
    // A folder of an existing root is refreshed within it.
    let sub = kb.ingest(&notes.join("raft"));
    assert_eq!(sub["scope"]["root_name"], "notes", "{sub}");
    assert_eq!(sub["removed"], 0);
    // A folder of a declared root makes that root, with its name and
    // excludes, even when the folder is deeper.
    let deep = kb.ingest(&app.join("docs"));
    assert_eq!(deep["scope"]["root_name"], "service", "{deep}");
    let all = kb.ingest(&app);
    assert_eq!(all["scope"]["root_name"], "service");
    let service: Vec<String> = docs(&kb, &["--root", "service"])
        .iter()
        .map(|d| d["doc_path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(service, vec!["README.md", "docs/index.md"]);
    let (list, _) = kb.json(&["roots"]);
    assert_eq!(list["roots"].as_array().unwrap().len(), 2, "{list}");
}
