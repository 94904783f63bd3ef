//! CLI surface: init, JSON schemas, exit codes, separate data directories,
//! error messages with hints.

use crate::support::{Kb, sample_corpus};

#[test]
fn init_creates_config_and_database() {
    let kb = Kb::new();
    std::fs::remove_file(kb.dir.path().join("config.toml")).unwrap();
    let out = kb.run(&["init"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("created") && stdout.contains("schema v3"),
        "{stdout}"
    );
    assert!(kb.dir.path().join("config.toml").is_file());
    assert!(kb.data_dir().join("kebab.sqlite").is_file());
    let again = kb.run(&["init"]);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("kept"),
        "existing config is preserved"
    );
}

#[test]
fn json_ingest_streams_progress_then_the_report() {
    let kb = Kb::new();
    let out = kb.run(&["--json", "ingest", sample_corpus().to_str().unwrap()]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "--json keeps stderr empty: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines[..lines.len() - 1]
        .iter()
        .map(|l| {
            assert_eq!(l["schema_version"], "ingest_progress.v1");
            l["event"]["kind"].as_str().unwrap()
        })
        .collect();
    assert_eq!(kinds.first(), Some(&"scan_started"));
    assert_eq!(kinds[1], "scan_completed");
    assert_eq!(kinds.last(), Some(&"completed"));
    let files = lines.last().unwrap()["new"].as_u64().unwrap() as usize;
    assert_eq!(
        kinds.iter().filter(|k| **k == "asset_finished").count(),
        files
    );
}

#[test]
fn human_search_output_is_the_dense_four_line_format() {
    let kb = Kb::new();
    kb.ingest(&sample_corpus());
    let out = kb.run(&["search", "levain hydration", "--k", "2"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("1. ") && lines[0].contains("kitchen/sourdough.md#L"),
        "{stdout}"
    );
    assert!(lines[1].starts_with("   Sourdough bread"), "{stdout}");
    assert!(
        lines[2].starts_with("   ") && lines[2].to_lowercase().contains("levain"),
        "{stdout}"
    );
    assert!(stdout.contains("hits  lexical"), "{stdout}");

    let none = kb.run(&["search", "xylophonist"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stdout).contains("no hits"));
}

#[test]
fn separate_data_dirs_are_separate_indexes() {
    let a = Kb::new();
    let b = Kb::new();
    a.ingest(&sample_corpus());
    let (hits, code) = b.search("Arrakis", 5);
    assert!(hits.is_empty());
    assert_eq!(code, 1);
    let (hits, _) = a.search("Arrakis", 5);
    assert_eq!(hits.len(), 1);
    let (docs, _) = a.json(&["list", "docs"]);
    let dune = docs
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["doc_path"] == "reading/dune.md")
        .unwrap();
    assert_eq!(dune["schema_version"], "doc_summary.v1");
    assert_eq!(dune["plugin"], "markdown");
    assert_eq!(dune["title"], "Dune (Frank Herbert)");
    let sourdough = docs
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["doc_path"] == "kitchen/sourdough.md")
        .unwrap();
    assert_eq!(sourdough["tags"], serde_json::json!(["baking"]));
}

#[test]
fn errors_say_what_and_hint_how_with_exit_two() {
    let kb = Kb::with_config("[chunking]\ntarget = 5\n");
    let out = kb.run(&["search", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: invalid config"), "{stderr}");
    assert!(stderr.contains("hint: "), "{stderr}");

    let kb = Kb::new();
    let (_, code) = kb.json(&["search", "x"]);
    assert_eq!(code, 1);
    let out = kb.run(&["--json", "ingest", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["schema_version"], "error.v1");
    assert_eq!(err["code"], "io_error");
}
