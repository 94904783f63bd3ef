//! The lexical index (tantivy) derived from the chunks: built by ingest,
//! used by search only while it holds exactly what SQLite holds, answering
//! as the FTS5 table did, reconciled after a kill -9, filters applied
//! before the cut.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::concurrency::corpus;
use crate::support::{Kb, NO_EMBEDDINGS, chunk_count, doctor_check, sample_corpus};

/// What doctor says of the lexical index.
fn lexical_detail(kb: &Kb) -> String {
    let (doctor, _) = kb.json(&["doctor"]);
    let check = doctor_check(&doctor, "lexical_index");
    assert_eq!(check["ok"], true, "{check}");
    check["detail"].as_str().unwrap().to_string()
}

/// The hits' (path, heading) in order.
fn ranked(resp: &Value) -> Vec<String> {
    resp["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{resp:#}"))
        .iter()
        .map(|h| format!("{} {}", h["doc_path"], h["heading_path"]))
        .collect()
}

#[test]
fn ingest_builds_the_lexical_index_and_search_answers_as_fts5_did() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let (doctor, _) = kb.json(&["doctor"]);
    assert!(
        doctor_check(&doctor, "lexical_index")["detail"]
            .as_str()
            .unwrap()
            .contains("not built yet"),
        "{doctor:#}"
    );
    let report = kb.ingest(&sample_corpus());
    assert!(
        !report["warnings"].to_string().contains("lexical index"),
        "a first build is not a repair: {report:#}"
    );
    let chunks = chunk_count(&kb);
    assert!(chunks > 5);
    assert!(kb.data_dir().join("lexical/meta.json").is_file());
    assert_eq!(lexical_detail(&kb), format!("{chunks} chunks, in step"));

    // Each query with the note it is about: BM25 over the lexical index
    // and over FTS5 differ in detail (idf, length norms), so the engines
    // must agree on what matches and each must put this note first.
    let queries = [
        ("raft leader election", "tech/raft-consensus.md"),
        ("espresso extraction sour", "kitchen/espresso.md"),
        (
            "kubernetes deployment replicas",
            "tech/kubernetes-deployments.md",
        ),
        ("sourdough starter bread", "kitchen/sourdough.md"),
    ];
    // k above the number of chunks: every match is listed, so both
    // engines' lists hold the same chunks.
    let search = |q: &str| {
        let (resp, code) = kb.json(&["search", q, "--mode", "lexical", "--k", "200"]);
        assert!(code == 0 || code == 1, "{q}: {resp:#}");
        resp
    };
    let by_index: Vec<Value> = queries.iter().map(|(q, _)| search(q)).collect();
    // The same searches with the index moved aside answer from FTS5.
    let lexical = kb.data_dir().join("lexical");
    let aside = kb.data_dir().join("lexical.aside");
    std::fs::rename(&lexical, &aside).unwrap();
    for ((q, best), indexed) in queries.iter().zip(&by_index) {
        let fts5 = search(q);
        for resp in [indexed, &fts5] {
            assert_eq!(resp["hits"][0]["doc_path"], *best, "{q}: {resp:#}");
        }
        let (mut a, mut b) = (ranked(indexed), ranked(&fts5));
        a.sort();
        b.sort();
        assert_eq!(a, b, "{q}: the same chunks match");
        for hit in indexed["hits"].as_array().unwrap() {
            assert_eq!(hit["score_kind"], "bm25");
            assert!(hit["score"].as_f64().unwrap() > 0.0, "{hit}");
        }
    }
    std::fs::rename(&aside, &lexical).unwrap();
}

#[test]
fn a_kill_9_mid_ingest_is_reconciled_by_the_next_run() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let first = kb.dir.path().join("first");
    corpus(&first, 5, "beta");
    kb.ingest(&first);
    let before = chunk_count(&kb);
    assert_eq!(lexical_detail(&kb), format!("{before} chunks, in step"));

    let big = kb.dir.path().join("big");
    corpus(&big, 400, "gamma");
    let mut child = kb
        .cmd(&["--json", "ingest", big.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let mut finished = 0;
    while finished < 40 {
        let line = lines.next().expect("progress").unwrap();
        if line.contains("\"asset_finished\"") {
            finished += 1;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no progress");
    }
    child.kill().unwrap(); // SIGKILL between documents, before the index is brought up to date
    child.wait().unwrap();

    let written = chunk_count(&kb);
    assert!(written > before, "some documents were committed");
    let detail = lexical_detail(&kb);
    assert!(detail.contains("not applied yet"), "{detail}");
    assert!(detail.contains("ranks them beside the index"), "{detail}");
    // Meanwhile a search finds what the killed run committed.
    let committed: String = rusqlite::Connection::open(kb.data_dir().join("kebab.sqlite"))
        .unwrap()
        .query_row(
            "SELECT workspace_path FROM documents WHERE workspace_path LIKE 'gamma-%' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let n: usize = committed["gamma-".len().."gamma-".len() + 4]
        .parse()
        .unwrap();
    let (resp, code) = kb.json(&["search", &format!("gamma{n}x1"), "--mode", "lexical"]);
    assert_eq!(code, 0, "{resp:#}");
    assert_eq!(resp["hits"][0]["doc_path"], committed.as_str(), "{resp:#}");

    let report = kb.ingest(&big);
    assert_eq!(report["errors"], 0, "{report:#}");
    let chunks = chunk_count(&kb);
    assert!(chunks >= before + 400 * 4, "{chunks}");
    assert_eq!(lexical_detail(&kb), format!("{chunks} chunks, in step"));
    for (word, path) in [
        ("gamma0x1", "gamma-0000.md"),
        ("gamma399x3", "gamma-0399.md"),
        ("beta4x2", "beta-0004.md"),
    ] {
        let (resp, code) = kb.json(&["search", word, "--mode", "lexical"]);
        assert_eq!(code, 0, "{word}: {resp:#}");
        assert_eq!(resp["hits"][0]["doc_path"], path, "{word}: {resp:#}");
    }
    // A removed note leaves the index with the chunks.
    std::fs::remove_file(big.join("gamma-0123.md")).unwrap();
    kb.ingest(&big);
    let (resp, code) = kb.json(&["search", "gamma123x2", "--mode", "lexical"]);
    assert_eq!(code, 1, "no hit once removed: {resp:#}");
    let after = chunk_count(&kb);
    assert!(after < chunks);
    assert_eq!(lexical_detail(&kb), format!("{after} chunks, in step"));
}

#[test]
fn filters_apply_before_the_best_k_are_taken() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let docs = kb.dir.path().join("docs");
    // Thirty notes that say "walrus" many times, outside the filter, and
    // one that says it once, inside: the unfiltered top 5 hold none of
    // the filtered answer.
    std::fs::create_dir_all(docs.join("loud")).unwrap();
    std::fs::create_dir_all(docs.join("quiet")).unwrap();
    for i in 0..30 {
        std::fs::write(
            docs.join(format!("loud/n{i:02}.md")),
            format!("# Loud {i}\n\nwalrus walrus walrus walrus tusks {i}\n"),
        )
        .unwrap();
    }
    std::fs::write(
        docs.join("quiet/one.md"),
        "---\ntags: [rare]\n---\n# Quiet\n\nA single walrus among many other words of a longer \
         paragraph about the northern seas and their ice.\n",
    )
    .unwrap();
    kb.ingest(&docs);
    let (resp, _) = kb.json(&["search", "walrus", "--mode", "lexical", "--k", "5"]);
    assert!(
        ranked(&resp).iter().all(|h| h.contains("loud/")),
        "{resp:#}"
    );
    for filter in [["--path", "quiet/*"], ["--tag", "rare"]] {
        let args = [
            &["search", "walrus", "--mode", "lexical", "--k", "5"][..],
            &filter[..],
        ]
        .concat();
        let (resp, code) = kb.json(&args);
        assert_eq!(code, 0, "{filter:?}: {resp:#}");
        let hits = ranked(&resp);
        assert_eq!(hits.len(), 1, "{filter:?}: {resp:#}");
        assert!(hits[0].contains("quiet/one.md"), "{filter:?}: {resp:#}");
    }
    assert!(lexical_detail(&kb).ends_with("in step"));
}
