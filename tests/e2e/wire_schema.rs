//! Real `--json` output of the commands with typed wire schemas validates
//! against the committed JSON Schema files (docs/wire-schema/v1).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{Kb, embedding_config, run_with_stdin, sample_corpus};

/// Every stdout line of `kebab --json ARGS`, parsed.
fn lines(kb: &Kb, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = kb.run(&all);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn json_output_validates_against_the_committed_schemas() {
    let kb = Kb::with_config(&embedding_config());
    let mut instances: Vec<(String, Value)> = Vec::new();
    let ingest = lines(&kb, &["ingest", sample_corpus().to_str().unwrap()]);
    let (report, progress) = ingest.split_last().unwrap();
    instances.push(("ingest_report.v1".into(), report.clone()));
    for p in progress {
        instances.push(("ingest_progress.v1".into(), p.clone()));
    }
    for mode in ["lexical", "vector", "hybrid"] {
        let r = lines(&kb, &["search", "leader election", "--mode", mode]);
        for hit in r[0]["hits"].as_array().unwrap() {
            instances.push(("search_hit.v1".into(), hit.clone()));
            instances.push(("citation.v1".into(), hit["citation"].clone()));
        }
        instances.push(("search_response.v1".into(), r[0].clone()));
    }
    let hit = &lines(&kb, &["search", "leader election"])[0]["hits"][0];
    let chunk = lines(
        &kb,
        &[
            "fetch",
            "chunk",
            hit["chunk_id"].as_str().unwrap(),
            "--context",
            "1",
        ],
    );
    instances.push(("fetch_result.v1".into(), chunk[0].clone()));
    instances.push(("chunk_inspection.v1".into(), chunk[0]["chunk"].clone()));
    let doc = lines(&kb, &["fetch", "doc", hit["doc_id"].as_str().unwrap()]);
    instances.push(("fetch_result.v1".into(), doc[0].clone()));
    for d in lines(&kb, &["list", "docs"])[0].as_array().unwrap() {
        instances.push(("doc_summary.v1".into(), d.clone()));
    }
    instances.push(("schema.v1".into(), lines(&kb, &["schema"])[0].clone()));
    instances.push(("doctor.v1".into(), lines(&kb, &["doctor"])[0].clone()));
    let out = kb.run(&["--json", "fetch", "chunk", "no-such-id"]);
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    instances.push(("error.v1".into(), err));
    let out = run_with_stdin(
        kb.cmd(&["--json", "search", "--bulk"]),
        b"{\"query\": \"raft\"}\n{\"query\": \"raft\", \"mode\": \"?\"}\n",
    );
    let bulk: Value = serde_json::from_slice(&out.stdout).unwrap();
    for item in bulk["items"].as_array().unwrap() {
        instances.push(("bulk_search_item.v1".into(), item.clone()));
    }
    instances.push(("bulk_search_response.v1".into(), bulk));

    instances.push(("init.v1".into(), lines(&kb, &["init"])[0].clone()));
    instances.push((
        "models.v1".into(),
        lines(&kb, &["models", "list"])[0].clone(),
    ));
    let out = kb.run(&["--json", "models", "pull", "no-such-model"]);
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        (err["code"].as_str(), err["details"]["field"].as_str()),
        (Some("invalid_input"), Some("name")),
        "{err}"
    );
    instances.push(("error.v1".into(), err));

    // Plugin management: install, list, info, which, test, new, remove.
    let legacy = kebab_test_artifacts::LEGACY_WASM;
    instances.push((
        "plugin_install.v1".into(),
        lines(&kb, &["plugin", "install", legacy])[0].clone(),
    ));
    instances.push((
        "plugin_list.v1".into(),
        lines(&kb, &["plugin", "list"])[0].clone(),
    ));
    instances.push((
        "plugin_list.v1".into(),
        lines(&kb, &["plugin", "info", "legacy"])[0].clone(),
    ));
    for path in ["notes/a.note", "x.unknown-ext"] {
        instances.push((
            "plugin_which.v1".into(),
            lines(&kb, &["plugin", "which", path])[0].clone(),
        ));
    }
    let sample = kb.dir.path().join("sample.note");
    std::fs::write(&sample, "Title\n\nbody\n").unwrap();
    let missing = kb.dir.path().join("missing.note");
    let tested = lines(
        &kb,
        &[
            "plugin",
            "test",
            "legacy",
            sample.to_str().unwrap(),
            missing.to_str().unwrap(),
        ],
    );
    instances.push(("plugin_test.v1".into(), tested[0].clone()));
    let projects = kb.dir.path().join("projects");
    instances.push((
        "plugin_new.v1".into(),
        lines(
            &kb,
            &["plugin", "new", "demo", "--dir", projects.to_str().unwrap()],
        )[0]
        .clone(),
    ));
    instances.push((
        "plugin_remove.v1".into(),
        lines(&kb, &["plugin", "remove", "legacy"])[0].clone(),
    ));
    let out = kb.run(&["--json", "plugin", "info", "no-such-plugin"]);
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        (err["code"].as_str(), err["details"]["name"].as_str()),
        (Some("plugin_not_found"), Some("no-such-plugin"))
    );
    instances.push(("error.v1".into(), err));

    let schema_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/wire-schema/v1");
    let out = validate(&schema_dir, &json!(instances));
    assert!(
        out.status.success(),
        "wire output does not match its schema:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // A real check, not a formality: a wrong type fails validation.
    let mut broken = instances
        .iter()
        .find(|(id, _)| id == "search_hit.v1")
        .unwrap()
        .clone();
    broken.1["rank"] = json!("first");
    assert!(!validate(&schema_dir, &json!([broken])).status.success());
}

/// Panics unless `value` validates against the committed schema `id`
/// (for outputs other tests produce at a cost: `eval run`, `eval beir`).
pub fn assert_conforms(id: &str, value: &Value) {
    let schema_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/wire-schema/v1");
    let out = validate(&schema_dir, &json!([[id, value]]));
    assert!(
        out.status.success(),
        "{id} does not match its schema:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// tests/wire/validate.py over `instances` (`[[schema_id, value], …]`).
fn validate(schema_dir: &Path, instances: &Value) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/wire/validate.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script);
    let plan = json!({ "schema_dir": schema_dir, "instances": instances });
    run_with_stdin(cmd, plan.to_string().as_bytes())
}
