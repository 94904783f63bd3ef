//! One file never aborts a run: twin chunks, unbounded lists and strings,
//! endless recursion and terminal escapes from a plugin are that file's
//! problem (a named validation error, then the text fallback); the rest of
//! the corpus is indexed.

use crate::support::{Kb, hostile_wasm, item};

const NO_VECTORS: &str = "[models.embedding]\nmodel = \"\"\n";

#[test]
fn twin_chunks_from_one_plugin_do_not_stop_a_thousand_other_files() {
    let kb = Kb::with_config(NO_VECTORS);
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for i in 0..1000 {
        std::fs::write(
            corpus.join(format!("note-{i:04}.md")),
            format!("# Note {i}\n\nMarker word zebu{i} in note {i}.\n"),
        )
        .unwrap();
    }
    std::fs::write(corpus.join("twins.hostile"), "DUPCHUNK okapi\n").unwrap();
    for run in 0..2 {
        let report = kb.ingest(&corpus);
        let twins = item(&report, "twins.hostile");
        if run == 0 {
            assert_eq!(report["new"], 1001, "{}", report["errors"]);
            assert!(
                twins["fallback"]
                    .as_str()
                    .unwrap()
                    .contains("duplicate chunk: chunk 1 has the same blocks and spans as chunk 0"),
                "{twins}"
            );
        } else {
            assert_eq!(report["skipped_unchanged"], 1001);
        }
        assert_eq!(report["errors"], 0);
    }
    let (hits, code) = kb.search("zebu517", 3);
    assert_eq!(
        (code, hits[0]["doc_path"].as_str()),
        (0, Some("note-0517.md"))
    );
    let (hits, _) = kb.search("okapi", 3);
    assert_eq!(hits[0]["doc_path"], "twins.hostile");
}

#[test]
fn every_list_and_string_a_plugin_returns_is_bounded_with_the_limit_named() {
    let kb = Kb::with_config(NO_VECTORS);
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let cases = [
        (
            "blocks.hostile",
            "MANYBLOCKS ibex\n",
            "20000000 blocks (limit 65536, max_blocks_per_chunk)",
        ),
        (
            "spans.hostile",
            "MANYSPANS jackal\n",
            "100001 spans (limit 4096, max_spans_per_chunk)",
        ),
        (
            "title.hostile",
            "BIGTITLE kudu\n",
            "title or language is 2097152 bytes (limit 16384, max_field_bytes)",
        ),
        (
            "recurse.hostile",
            "RECURSE lemur\n",
            "hostile plugin stack overflow",
        ),
    ];
    for (name, body, _) in &cases {
        std::fs::write(corpus.join(name), body).unwrap();
    }
    std::fs::write(corpus.join("error.hostile"), "LONGERROR mongoose\n").unwrap();
    let report = kb.ingest(&corpus);
    assert_eq!(report["errors"], 0, "{report:#}");
    for (name, body, reason) in &cases {
        let it = item(&report, name);
        let fallback = it["fallback"].as_str().unwrap_or_default();
        assert!(
            fallback.contains(reason),
            "{name}: {fallback:?} lacks {reason:?}"
        );
        let word = body.split_whitespace().nth(1).unwrap();
        let (hits, _) = kb.search(word, 1);
        assert_eq!(hits[0]["doc_path"], *name, "{name} still searchable");
    }
    // A 1 MiB error message full of escapes is stored bounded and escaped.
    let long = item(&report, "error.hostile")["fallback"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(long.len() < 1024, "stored {} bytes", long.len());
    assert!(long.contains("\\e[2J"), "{long}");
    assert!(!long.contains('\u{1b}') && !long.contains('\r'), "{long:?}");

    // The host did not build the 20-million-entry rows (it used 6.8 GB).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    let peak_mib = usage.ru_maxrss / 1024;
    assert!(peak_mib < 2048, "a kebab child peaked at {peak_mib} MiB");
}

#[test]
fn plugin_text_never_reaches_the_terminal_raw() {
    let kb = Kb::with_config(NO_VECTORS);
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("esc.hostile"), "ESCAPES numbat\n").unwrap();
    std::fs::write(corpus.join("error.hostile"), "LONGERROR mongoose\n").unwrap();
    std::fs::write(
        corpus.join("bad\u{1b}[31mname\rforged.md"),
        "# Heading\n\nOrdinary text about a pangolin.\n",
    )
    .unwrap();
    let out = kb.run(&["ingest", corpus.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let search = kb.run(&["search", "pangolin"]);
    let list = kb.run(&["list", "docs"]);
    for shown in [&out.stdout, &out.stderr, &search.stdout, &list.stdout] {
        let text = String::from_utf8_lossy(shown);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\r'),
            "raw control characters on the terminal: {text:?}"
        );
    }
    let text = String::from_utf8_lossy(&search.stdout);
    assert!(text.contains("bad\\e[31mname\\rforged.md"), "{text}");
    // The JSON keeps the real name (escaped by JSON itself).
    let (report, _) = kb.json(&["list", "docs"]);
    assert!(
        report
            .to_string()
            .contains("bad\\u001b[31mname\\rforged.md"),
        "{report}"
    );
}
