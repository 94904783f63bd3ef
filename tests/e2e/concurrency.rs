//! Two processes, one index: a second writer waits its turn and says for
//! whom; searches (vector channel included) keep working during an ingest;
//! `kill -9` in the embedding phase leaves SQLite and LanceDB reconcilable.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::support::{Kb, embedding_config, vector_counts};

/// `n` notes of a few paragraphs each under `dir`.
pub(crate) fn corpus(dir: &std::path::Path, n: usize, tag: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        let body: String = (0..6)
            .map(|p| {
                format!(
                    "## Part {p}\n\nNote {i} of the {tag} set, part {p}: distinct words {tag}{i}x{p} \
                     about gardens, rivers, engines and the weather on day {i}.\n\n"
                )
            })
            .collect();
        std::fs::write(
            dir.join(format!("{tag}-{i:04}.md")),
            format!("# {tag} {i}\n\n{body}"),
        )
        .unwrap();
    }
}

#[test]
fn a_second_ingest_waits_for_the_first_and_says_whom_it_waits_for() {
    let kb = Kb::with_config("[models.embedding]\nmodel = \"\"\n");
    let docs = kb.dir.path().join("docs");
    corpus(&docs, 600, "alpha");
    let spawn = || {
        kb.cmd(&["ingest", docs.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn();
    std::thread::sleep(Duration::from_millis(150));
    let second = spawn();
    let (a, b) = (
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    );
    assert_eq!(a.status.code(), Some(0), "{a:?}");
    assert_eq!(b.status.code(), Some(0), "{b:?}");
    let waited: Vec<String> = [&a, &b]
        .iter()
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .filter(|e| e.contains("waiting: kebab ingest (pid "))
        .collect();
    assert_eq!(waited.len(), 1, "exactly one run waited: {waited:?}");
    let outs: Vec<String> = [&a, &b]
        .iter()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .collect();
    assert!(
        outs.iter().any(|o| o.contains("· 600 new")) && outs.iter().any(|o| o.contains("· 0 new")),
        "one run indexed everything, the other found it unchanged: {outs:?}"
    );
    assert!(
        !outs
            .iter()
            .chain(waited.iter())
            .any(|o| o.contains("locked"))
    );
}

#[test]
fn searches_and_asks_work_during_an_ingest_and_kill_9_while_embedding_is_reconciled() {
    let server = LlmServer::start(
        Wire::OpenAi,
        Script::Answer(tokens("Part 2 of note 3 names beta3x2 [#1].")),
    );
    let kb = Kb::with_config(&format!("{}{}", embedding_config(), server.config(30)));
    let first = kb.dir.path().join("first");
    corpus(&first, 5, "beta");
    kb.ingest(&first);

    let big = kb.dir.path().join("big");
    corpus(&big, 120, "gamma");
    let mut child = kb
        .cmd(&["--json", "ingest", big.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Wait for the embedding phase, searching all along.
    let mut searches = 0;
    let started = Instant::now();
    loop {
        let line = lines.next().expect("progress").unwrap();
        if searches < 3 || line.contains("\"embedded\"") {
            let (resp, code) = kb.json(&["search", "beta3x2", "--mode", "hybrid"]);
            assert_eq!(code, 0, "search during ingest: {resp}");
            assert_eq!(resp["hits"][0]["doc_path"], "beta-0003.md", "{resp}");
            searches += 1;
            if searches == 2 {
                let (answer, code) = kb.json(&[
                    "ask",
                    "Which note of the beta set names beta3x2 and gardens?",
                ]);
                assert_eq!(answer["schema_version"], "answer.v1", "{answer}");
                assert_eq!(code, 0, "ask during ingest: {answer}");
                assert_eq!(answer["grounded"], true, "{answer}");
            }
        }
        if line.contains("\"embedded\"") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no embedding phase"
        );
    }
    child.kill().unwrap(); // SIGKILL in the middle of the vector pass
    child.wait().unwrap();
    assert!(searches >= 4);

    let report = kb.ingest(&big);
    assert_eq!(report["errors"], 0, "{report}");
    let (chunks, records, rows, same) = vector_counts(&kb);
    assert_eq!(
        (records, rows, same),
        (chunks, chunks, true),
        "chunks = embedding records = LanceDB rows after the crash"
    );
    let (resp, code) = kb.json(&["search", "gamma77x4", "--mode", "hybrid"]);
    assert_eq!(code, 0, "{resp}");
    assert_eq!(resp["hits"][0]["doc_path"], "gamma-0077.md", "{resp}");
}

/// The most workers ingest allows, each holding a plugin instance from the
/// engine's pool at once, across the Rust, tree-sitter and CPython
/// components: every file is indexed by its own plugin, none fails.
#[test]
fn sixty_four_workers_draw_instances_from_one_pool() {
    let kb = Kb::with_config(
        "[models.embedding]\nmodel = \"\"\n[indexing]\nmax_parallel_extractors = 64\n",
    );
    let root = kb.dir.path().join("mixed");
    corpus(&root, 64, "md");
    for i in 0..64 {
        std::fs::write(
            root.join(format!("m{i:02}.rs")),
            format!("/// Item {i}.\npub fn item_{i}() -> u32 {{\n    {i}\n}}\n"),
        )
        .unwrap();
        std::fs::write(
            root.join(format!("o{i:02}.org")),
            format!("* Heading {i}\nText of org note {i}.\n** Sub {i}\nMore.\n"),
        )
        .unwrap();
        std::fs::write(
            root.join(format!("t{i:02}.txt")),
            format!("plain note {i}\n"),
        )
        .unwrap();
    }
    let report = kb.ingest(&root);
    assert_eq!(
        (report["new"].as_u64(), report["errors"].as_u64()),
        (Some(256), Some(0)),
        "{report}"
    );
    let (docs, _) = kb.json(&["list", "docs"]);
    let mut per_plugin = std::collections::BTreeMap::new();
    for doc in docs.as_array().unwrap() {
        *per_plugin
            .entry(doc["plugin"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    let expected: std::collections::BTreeMap<String, i32> = ["code", "markdown", "org", "text"]
        .into_iter()
        .map(|p| (p.to_string(), 64))
        .collect();
    assert_eq!(per_plugin, expected);
    let (hits, code) = kb.search("item_63", 1);
    assert_eq!((code, hits[0]["doc_path"].as_str()), (0, Some("m63.rs")));
}
