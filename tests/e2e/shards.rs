//! `kebab ingest DIR --shard I/N`: N runs share one tree, each indexing
//! (and removing) only the files whose path hashes to its shard; together
//! they index exactly what one run does, run concurrently on one index,
//! and a shard re-run after a crash finishes its part with nothing twice.

use std::process::Command;

use serde_json::Value;

use crate::support::{
    Kb, NO_EMBEDDINGS, copy_tree, indexed_contents, items, kill_after, sample_corpus,
};

fn shard(kb: &Kb, dir: &std::path::Path, which: &str) -> Value {
    let (report, code) = kb.json(&["ingest", dir.to_str().unwrap(), "--shard", which]);
    assert_eq!(code, 0, "{report:#}");
    report
}

#[test]
fn shards_together_index_what_one_run_does_and_each_removes_only_its_own() {
    let tree = tempfile::tempdir().unwrap();
    copy_tree(&sample_corpus(), tree.path());
    let whole = Kb::with_config(NO_EMBEDDINGS);
    whole.ingest(tree.path());
    let (all_docs, all_chunks) = indexed_contents(&whole);

    let kb = Kb::with_config(NO_EMBEDDINGS);
    let first = shard(&kb, tree.path(), "0/3");
    assert_eq!(first["scope"]["shard"], "0/3", "{first:#}");
    let (after_first, _) = indexed_contents(&kb);
    assert!(
        !after_first.is_empty() && after_first.len() < all_docs.len(),
        "{after_first:?}"
    );
    let mut indexed = items(&first, "new").len();
    for which in ["1/3", "2/3"] {
        let report = shard(&kb, tree.path(), which);
        indexed += items(&report, "new").len();
        // A later shard leaves the earlier shards' documents alone.
        assert_eq!(items(&report, "removed").len(), 0, "{report:#}");
    }
    assert_eq!(indexed, all_docs.len());
    assert_eq!(indexed_contents(&kb), (all_docs.clone(), all_chunks));

    // A file deleted: only the shard it falls to removes it.
    let gone = "kitchen/espresso.md";
    std::fs::remove_file(tree.path().join(gone)).unwrap();
    let mut removed = Vec::new();
    for which in ["0/3", "1/3", "2/3"] {
        let report = shard(&kb, tree.path(), which);
        for item in items(&report, "removed") {
            removed.push((which, item["doc_path"].as_str().unwrap().to_string()));
        }
        assert_eq!(items(&report, "new").len(), 0, "{report:#}");
    }
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(removed[0].1, gone);
    let (docs, _) = indexed_contents(&kb);
    assert_eq!(docs.len(), all_docs.len() - 1);
    assert!(!docs.contains(gone));

    // A bad shard is refused, naming the form.
    let out = kb.run(&["ingest", tree.path().to_str().unwrap(), "--shard", "3/3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("I/N"), "{stderr}");
}

#[test]
fn concurrent_shards_on_one_index_and_a_killed_shard_rerun_leave_it_exact() {
    let tree = tempfile::tempdir().unwrap();
    // Enough files that a shard is still running when it is killed.
    for copy in 0..20 {
        copy_tree(&sample_corpus(), &tree.path().join(format!("copy{copy}")));
    }
    let whole = Kb::with_config(NO_EMBEDDINGS);
    whole.ingest(tree.path());
    let expected = indexed_contents(&whole);

    let kb = Kb::with_config(NO_EMBEDDINGS);
    let dir = tree.path().to_str().unwrap();
    // The first shard killed mid-run (SIGKILL: no chance to clean up),
    // once it has indexed some of its files.
    kill_after(
        &mut kb.cmd(&["--json", "ingest", dir, "--shard", "0/2"]),
        "asset_started",
        40,
    );
    let (partial, _) = indexed_contents(&kb);
    assert!(
        !partial.is_empty() && partial.len() < expected.0.len() / 2,
        "killed after {} documents",
        partial.len()
    );
    // Both shards at once (they take turns on the writer lock), then the
    // killed one again.
    let runs: Vec<std::process::Child> = ["0/2", "1/2"]
        .iter()
        .map(|which| {
            let mut cmd: Command = kb.cmd(&["--json", "ingest", dir, "--shard", which]);
            cmd.stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    assert_eq!(indexed_contents(&kb), expected);
}
