//! `kebab eval ann`: the ANN index measured against an exact scan of the
//! same LanceDB table, with the real model.

use std::path::Path;

use crate::support::{Kb, embedding_config};

const TOPICS: [&str; 8] = [
    "sourdough starter hydration and a hot oven",
    "raft leader election and log replication",
    "tomato blight, pruning suckers and watering",
    "kubernetes rollout, readiness probes and replicas",
    "marathon tempo runs and tapering before the race",
    "postgres vacuum, dead tuples and index bloat",
    "bicycle chain cleaning and tyre pressure",
    "index funds, an emergency fund and a monthly budget",
];
const DETAILS: [&str; 6] = [
    "what went wrong",
    "numbers from last week",
    "questions for later",
    "a checklist",
    "what to try next time",
    "links and references",
];

/// `n` one-chunk notes, each a distinct sentence.
fn write_notes(root: &Path, n: usize) {
    for i in 0..n {
        let text = format!(
            "# Note {i}\n\n{} — {} (entry {i}, page {}).\n",
            TOPICS[i % TOPICS.len()],
            DETAILS[(i / TOPICS.len()) % DETAILS.len()],
            i * 7 % 31
        );
        std::fs::write(root.join(format!("n{i:03}.md")), text).unwrap();
    }
}

#[test]
fn eval_ann_reports_recall_against_the_exact_scan() {
    let kb = Kb::with_config(&format!(
        "{}\n[search]\nann_min_rows = 200\nann_refine_factor = 2\n",
        embedding_config()
    ));
    let corpus = tempfile::tempdir().unwrap();
    write_notes(corpus.path(), 240);
    let report = kb.ingest(corpus.path());
    assert_eq!(report["vectors"]["ann_index"], true, "{report}");
    let queries = corpus.path().join("queries.txt");
    std::fs::write(
        &queries,
        "bread baking at home\nconsensus in distributed systems\n\
         {\"_id\": \"3\", \"text\": \"saving money\"}\nrunning a race\n",
    )
    .unwrap();
    let q = queries.to_str().unwrap();
    let (r, code) = kb.json(&[
        "eval",
        "ann",
        "--queries",
        q,
        "--query",
        "garden plants",
        "--nprobes",
        "1",
        "--nprobes",
        "1000",
        "--ef",
        "10",
        "--ef",
        "500",
        "--refine",
        "10",
    ]);
    assert_eq!(code, 0, "{r}");
    crate::wire_schema::assert_conforms("ann_report.v1", &r);
    assert_eq!(
        (r["rows"].as_u64(), r["indexed"].as_bool()),
        (Some(240), Some(true))
    );
    assert_eq!(
        (r["queries"].as_u64(), r["k"].as_u64()),
        (Some(5), Some(10))
    );
    let rows = r["settings"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "two nprobes × two ef × one refine: {r}");
    for row in rows {
        let recall = row["recall_at_k"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&recall), "{row}");
        assert!(row["p50_ms"].as_f64().unwrap() > 0.0, "{row}");
        assert_eq!(
            row["configured"], false,
            "refine 10 is not the configured 2"
        );
    }
    // Every partition and 500 candidates per partition over 240 rows, then
    // re-scored with the full vectors: the exact result.
    let generous = rows
        .iter()
        .find(|s| s["nprobes"] == 1000 && s["ef"] == 500)
        .unwrap();
    assert_eq!(generous["recall_at_k"], 1.0, "{r}");

    // The configured setting is marked; `--limit` keeps the first queries.
    let (r, code) = kb.json(&["eval", "ann", "--queries", q, "--limit", "2", "--k", "3"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!((r["queries"].as_u64(), r["k"].as_u64()), (Some(2), Some(3)));
    let only = &r["settings"][0];
    assert_eq!(
        (only["configured"].as_bool(), only["refine_factor"].as_u64()),
        (Some(true), Some(2))
    );
    assert!(only["nprobes"].is_null(), "unset means adaptive: {r}");

    // Text output names the setting; no queries is an error with a hint.
    let out = kb.run(&["eval", "ann", "--query", "bread"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("exact scan") && text.contains("(configured)"),
        "{text}"
    );
    let out = kb.run(&["eval", "ann"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--queries"),
        "{out:?}"
    );
}

#[test]
fn below_the_threshold_every_search_is_exact() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = tempfile::tempdir().unwrap();
    write_notes(corpus.path(), 12);
    kb.ingest(corpus.path());
    let (r, code) = kb.json(&[
        "eval",
        "ann",
        "--query",
        "bread",
        "--nprobes",
        "1",
        "--ef",
        "1",
    ]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        (r["rows"].as_u64(), r["indexed"].as_bool()),
        (Some(12), Some(false))
    );
    assert_eq!(r["settings"][0]["recall_at_k"], 1.0, "{r}");
    let text =
        String::from_utf8_lossy(&kb.run(&["eval", "ann", "--query", "bread"]).stdout).into_owned();
    assert!(text.contains("no ANN index"), "{text}");
}
