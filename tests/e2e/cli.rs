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
        stdout.contains("created") && stdout.contains("schema v7"),
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
            assert!(l["ts"].is_string(), "{l}");
            l["kind"].as_str().unwrap()
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
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("note.md"),
        "# Other\n\nNothing about deserts.\n",
    )
    .unwrap();
    b.ingest(other.path());
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
    let kb = Kb::with_config("[chunking]\ntarget_tokens = \"five\"\n");
    let out = kb.run(&["search", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: invalid config"), "{stderr}");
    assert!(stderr.contains("hint: "), "{stderr}");

    // Nothing indexed yet: an error that says so, not "no hits".
    let kb = Kb::new();
    let out = kb.run(&["--json", "search", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "not_indexed");
    let out = kb.run(&["--json", "ingest", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["schema_version"], "error.v1");
    assert_eq!(err["code"], "io_error");
}

/// The design's §6.4 config file, as a user would copy it: the keys kebab
/// implements work, the others are named in a warning, paths expand.
const DESIGN_CONFIG: &str = r#"schema_version = 1
[workspace]
root = "${KEBAB_TEST_WORKSPACE}"
include = ["**/*.md"]
exclude = [".git/**", "node_modules/**", ".obsidian/**"]
[storage]
data_dir = "${KEBAB_TEST_DATA_HOME:-~/.local/share}/kebab"
sqlite = "{data_dir}/kebab.sqlite"
vector_dir = "{data_dir}/lancedb"
asset_dir = "{data_dir}/assets"
artifact_dir = "{data_dir}/artifacts"
model_dir = "{data_dir}/models"
runs_dir = "{data_dir}/runs"
copy_threshold_mb = 100
[indexing]
max_parallel_extractors = 2
max_parallel_embeddings = 1
watch_filesystem = false
[chunking]
target_tokens = 500
overlap_tokens = 80
respect_markdown_headings = true
chunker_version = "md-heading-v1"
[models.embedding]
provider = "fastembed"
model = ""
version = "v1"
dimensions = 1024
batch_size = 64
[models.llm]
provider = "ollama"
model = "qwen2.5:14b-instruct"
context_tokens = 32768
endpoint = "http://127.0.0.1:9"
temperature = 0.0
seed = 0
[search]
default_k = 3
hybrid_fusion = "rrf"
rrf_k = 60
snippet_chars = 220
[rag]
prompt_template_version = "rag-v3"
score_gate = 0.30
explain_default = false
max_context_tokens = 8000
"#;

#[test]
fn the_design_config_is_accepted_with_warnings_for_unused_keys() {
    let kb = Kb::new();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(kb.dir.path().join("config.toml"), DESIGN_CONFIG).unwrap();
    let run = |args: &[&str]| {
        // No --data-dir: the config's `${…}` data_dir decides.
        std::process::Command::new(&kb.binary)
            .env("KEBAB_CONFIG", kb.dir.path().join("config.toml"))
            .env_remove("KEBAB_DATA_DIR")
            .env("KEBAB_TEST_DATA_HOME", home.path())
            .env("KEBAB_TEST_WORKSPACE", sample_corpus())
            .env("KEBAB_CACHE_DIR", crate::support::cache_dir())
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["ingest", sample_corpus().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for key in ["storage.sqlite", "workspace.include", "rag.explain_default"] {
        assert!(
            stderr.contains(&format!("`{key}`")),
            "{key} named: {stderr}"
        );
    }
    assert!(
        home.path().join("kebab/kebab.sqlite").is_file(),
        "${{VAR:-default}} expanded in data_dir"
    );
    let out = run(&["--json", "search", "leader election"]);
    assert_eq!(out.status.code(), Some(0));
    let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        response["hits"].as_array().unwrap().len(),
        3,
        "default_k = 3"
    );
    let out = run(&["--json", "doctor"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let config = &report["checks"][0];
    assert_eq!(config["name"], "config_loaded");
    assert_eq!(config["ok"], true);
    assert!(
        config["detail"]
            .as_str()
            .unwrap()
            .contains("storage.sqlite")
    );
}

#[test]
fn doctor_reports_a_broken_config_and_still_runs_its_checks() {
    let kb = Kb::new();
    std::fs::write(kb.dir.path().join("config.toml"), "[search\ndefault_k = ").unwrap();
    let (report, code) = kb.json(&["doctor"]);
    assert_eq!(code, 3, "unhealthy, not an error: {report}");
    assert_eq!(report["checks"][0]["name"], "config_loaded");
    assert_eq!(report["checks"][0]["ok"], false);
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"sqlite_open") && names.contains(&"plugins_loaded"));
    // Other commands still refuse it, with the config_invalid code.
    let out = kb.run(&["--json", "search", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "config_invalid");
}

#[test]
fn an_unknown_prompt_template_is_refused_not_ignored() {
    let kb = Kb::with_config("[rag]\nprompt_template_version = \"rag-v9\"\n");
    let out = kb.run(&["--json", "ask", "anything?"]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "config_invalid");
    assert!(err["message"].as_str().unwrap().contains("rag-v9"), "{err}");
}

#[test]
fn environment_variables_override_the_config_file_and_flags_override_both() {
    let kb = Kb::with_config("[search]\ndefault_k = 3\n");
    kb.ingest(&sample_corpus());
    let hits = |env: &[(&str, &str)], extra: &[&str]| {
        let mut cmd = kb.cmd(&["--json", "search", "leader election"]);
        cmd.args(extra).envs(env.iter().copied());
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        response["hits"].as_array().unwrap().len()
    };
    assert_eq!(hits(&[], &[]), 3, "the file's default_k");
    assert_eq!(
        hits(&[("KEBAB_SEARCH_DEFAULT_K", "1")], &[]),
        1,
        "env over file"
    );
    assert_eq!(
        hits(&[("KEBAB_SEARCH_DEFAULT_K", "1")], &["--k", "2"]),
        2,
        "flag over env"
    );

    // A value the key cannot take: config_invalid naming the variable.
    let out = kb
        .cmd(&["--json", "search", "x"])
        .env("KEBAB_RAG_SCORE_GATE", "high")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "config_invalid", "{err}");
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("KEBAB_RAG_SCORE_GATE") && message.contains("rag.score_gate"),
        "{err}"
    );
    assert!(
        err["hint"].as_str().unwrap().contains("environment"),
        "{err}"
    );
    // A key kebab does not use: a warning naming the variable.
    let out = kb
        .cmd(&["search", "leader"])
        .env("KEBAB_SEARCH_DEFAULT_KAY", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`search.default_kay`") && stderr.contains("KEBAB_SEARCH_DEFAULT_KAY"),
        "{stderr}"
    );
}

#[test]
fn verbose_logs_go_to_stderr_and_the_log_file_never_stdout() {
    let kb = Kb::new();
    kb.ingest(&sample_corpus());
    let logs = tempfile::tempdir().unwrap();
    let out = kb
        .cmd(&["--json", "--verbose", "search", "leader election"])
        .env("KEBAB_LOG_DIR", logs.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().count(),
        1,
        "stdout holds the result only: {stdout}"
    );
    serde_json::from_str::<serde_json::Value>(stdout.trim()).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("search") && stderr.contains("hits"),
        "{stderr}"
    );
    let written: String = std::fs::read_dir(logs.path())
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(written.contains("search"), "log file: {written}");
    // Without --verbose nothing of that reaches stderr.
    let quiet = kb
        .cmd(&["--json", "search", "leader election"])
        .env("KEBAB_LOG_DIR", logs.path())
        .output()
        .unwrap();
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}
