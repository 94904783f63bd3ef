//! Vector and hybrid search with the real ONNX model and LanceDB, Korean
//! morphology with the real ko-dic, and the vector index kept in step with
//! the documents.

use std::path::Path;

use serde_json::Value;

use crate::support::{
    Kb, NO_EMBEDDINGS, doctor_check, embedding_config, hit_paths, korean_config, model_id,
    vector_counts,
};

/// A small corpus: one note per topic, no shared vocabulary between the
/// paraphrase query below and its target note.
fn write_corpus(root: &Path) {
    let notes = [
        (
            "bread.md",
            "# Sourdough\n\nMix flour, water and starter. Let the dough rise overnight, \
             then bake it in a very hot oven until the crust is dark.\n",
        ),
        (
            "errors.md",
            "# Deploy log\n\nThe rollout stopped with kbx4471zq while the cache was cold; \
             retrying after warm-up fixed it.\n",
        ),
        (
            "cycling.md",
            "# Bicycle maintenance\n\nClean the chain, check tyre pressure and adjust the \
             brakes before every long ride.\n",
        ),
        (
            "finance.md",
            "# Budget\n\nTrack monthly spending, keep an emergency fund and invest the rest \
             in index funds.\n",
        ),
        (
            "garden.md",
            "# Tomatoes\n\nWater the plants at the roots, pinch the suckers and watch for \
             blight on the leaves.\n",
        ),
    ];
    for (name, text) in notes {
        std::fs::write(root.join(name), text).unwrap();
    }
}

/// Paraphrase of bread.md sharing none of its words.
const PARAPHRASE: &str = "homemade leavened loaves";

fn search(kb: &Kb, query: &str, mode: &str) -> (Value, i32) {
    kb.json(&["search", query, "--mode", mode, "--k", "5"])
}

#[test]
fn paraphrases_need_vectors_identifiers_need_words_and_hybrid_has_both() {
    // RRF configured explicitly: its scores are checked formula by formula.
    let kb = Kb::with_config(&format!(
        "{}[search]\nfusion = \"rrf\"\n",
        embedding_config()
    ));
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let report = kb.ingest(corpus.path());
    let vectors = &report["vectors"];
    assert_eq!(vectors["model"], model_id(), "{report}");
    assert_eq!(vectors["embedded"], 5, "{report}");
    assert_eq!(vectors["total"], 5, "{report}");

    // The paraphrase: lexical finds nothing, vector and hybrid find bread.md first.
    let (lexical, code) = search(&kb, PARAPHRASE, "lexical");
    assert!(
        !hit_paths(&lexical).contains(&"bread.md".to_string()),
        "{lexical}"
    );
    assert_eq!(code, 1, "no lexical hit at all: {lexical}");
    let (vector, code) = search(&kb, PARAPHRASE, "vector");
    assert_eq!(code, 0);
    assert_eq!(hit_paths(&vector)[0], "bread.md", "{vector}");
    assert_eq!(vector["hits"][0]["score_kind"], "cosine");
    let (hybrid, _) = search(&kb, PARAPHRASE, "hybrid");
    assert_eq!(hit_paths(&hybrid)[0], "bread.md", "{hybrid}");

    // The rare identifier: lexical and hybrid rank errors.md first.
    let (lexical, _) = search(&kb, "kbx4471zq", "lexical");
    assert_eq!(hit_paths(&lexical), vec!["errors.md"], "{lexical}");
    assert_eq!(lexical["hits"][0]["score_kind"], "bm25");
    let (hybrid, _) = search(&kb, "kbx4471zq", "hybrid");
    assert_eq!(hit_paths(&hybrid)[0], "errors.md", "{hybrid}");

    // Default mode with a model installed is hybrid.
    let (default, _) = kb.json(&["search", "oven crust"]);
    assert_eq!(default["mode"], "hybrid");

    // Every hybrid score is normalised RRF, exactly (as configured).
    for resp in [&hybrid, &default] {
        for hit in resp["hits"].as_array().unwrap() {
            let r = &hit["retrieval"];
            assert_eq!(r["method"], "hybrid");
            assert_eq!(hit["score_kind"], "rrf");
            assert_eq!(hit["embedding_model"], model_id());
            let mut raw = 0.0;
            for rank in [&r["lexical_rank"], &r["vector_rank"]] {
                if let Some(rank) = rank.as_f64() {
                    raw += 1.0 / (60.0 + rank);
                }
            }
            let expected = raw / (2.0 / 61.0);
            let fusion = r["fusion_score"].as_f64().unwrap();
            assert!((fusion - expected).abs() < 1e-12, "{hit}");
            assert_eq!(hit["score"].as_f64().unwrap(), fusion);
            assert!(fusion <= 1.0);
            assert_eq!(r["lexical_score"].is_null(), r["lexical_rank"].is_null());
            assert_eq!(r["vector_score"].is_null(), r["vector_rank"].is_null());
        }
    }
    // The errors.md hit was found by both channels or by lexical alone.
    assert_eq!(
        hybrid["hits"][0]["retrieval"]["lexical_rank"], 1,
        "{hybrid}"
    );

    // --explain prints each channel.
    let out = kb.run(&["search", "oven crust", "--explain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("├ lexical (bm25)")
            && text.contains(&format!("├ vector ({})", model_id()))
            && text.contains("├ rrf fusion")
            && text.contains("chunker md-heading-v1"),
        "{text}"
    );
}

/// The default fusion is the z-score blend: both the paraphrase (found by
/// vectors only) and the rare identifier (found by words only) still come
/// first, and the fused score says which fusion made it.
#[test]
fn the_default_hybrid_fusion_is_the_z_score_blend() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    kb.ingest(corpus.path());
    for (query, first) in [(PARAPHRASE, "bread.md"), ("kbx4471zq", "errors.md")] {
        let (hybrid, code) = search(&kb, query, "hybrid");
        assert_eq!(code, 0);
        assert_eq!(hit_paths(&hybrid)[0], first, "{hybrid}");
        for hit in hybrid["hits"].as_array().unwrap() {
            assert_eq!(hit["score_kind"], "blend_z", "{hit}");
            assert_eq!(hit["score"], hit["retrieval"]["fusion_score"], "{hit}");
        }
        let scores: Vec<f64> = hybrid["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["score"].as_f64().unwrap())
            .collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    }
    let out = kb.run(&["search", PARAPHRASE, "--explain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("├ blend_z fusion"), "{text}");
}

#[test]
fn vector_modes_without_a_model_fail_with_a_hint_and_filters_apply_to_both_channels() {
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    std::fs::create_dir(corpus.path().join("sub")).unwrap();
    std::fs::write(
        corpus.path().join("sub/bread2.md"),
        "---\ntags: [rye]\n---\n# Rye\n\nRye flour dough rises slowly; bake it in a hot oven.\n",
    )
    .unwrap();

    let off = Kb::with_config(NO_EMBEDDINGS);
    off.ingest(corpus.path());
    let out = off.run(&["search", "oven", "--mode", "vector"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs an embedding model") && err.contains("hint:"),
        "{err}"
    );
    let (resp, code) = off.json(&["search", "oven"]);
    assert_eq!((resp["mode"].as_str(), code), (Some("lexical"), 0));

    let kb = Kb::with_config(&embedding_config());
    kb.ingest(corpus.path());
    for mode in ["lexical", "vector", "hybrid"] {
        let (resp, _) = kb.json(&[
            "search",
            "bake bread in the oven",
            "--mode",
            mode,
            "--path",
            "sub/*",
        ]);
        assert_eq!(hit_paths(&resp), vec!["sub/bread2.md"], "{mode}: {resp}");
        let (resp, _) = kb.json(&[
            "search",
            "bake bread in the oven",
            "--mode",
            mode,
            "--tag",
            "rye",
        ]);
        assert_eq!(
            hit_paths(&resp),
            vec!["sub/bread2.md"],
            "{mode} --tag: {resp}"
        );
        let (resp, _) = kb.json(&["search", "bake bread in the oven", "--mode", mode]);
        assert!(
            hit_paths(&resp).contains(&"bread.md".to_string()),
            "{mode} unfiltered: {resp}"
        );
    }
}

#[test]
fn changing_or_deleting_documents_leaves_no_orphan_vectors() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    std::fs::write(
        corpus.path().join("long.md"),
        "# One\n\nFirst section about sailing knots.\n\n# Two\n\nSecond section about tides.\n",
    )
    .unwrap();
    kb.ingest(corpus.path());
    let (chunks, records, rows, same) = vector_counts(&kb);
    assert!(chunks >= 7, "{chunks}");
    assert_eq!((records, rows, same), (chunks, chunks, true));

    // Unchanged: nothing embedded again.
    let again = kb.ingest(corpus.path());
    assert_eq!(again["vectors"]["embedded"], 0, "{again}");
    assert_eq!(again["vectors"]["removed"], 0, "{again}");

    // Change one section of long.md and delete cycling.md.
    std::fs::write(
        corpus.path().join("long.md"),
        "# One\n\nFirst section about sailing knots.\n\n# Two\n\nSecond section about moon phases.\n",
    )
    .unwrap();
    std::fs::remove_file(corpus.path().join("cycling.md")).unwrap();
    let report = kb.ingest(corpus.path());
    let v = &report["vectors"];
    assert!(
        v["removed"].as_u64().unwrap() >= 3,
        "old long.md chunks and cycling.md: {report}"
    );
    assert_eq!(
        v["embedded"], 1,
        "only the changed section is new text: {report}"
    );
    assert!(v["from_cache"].as_u64().unwrap() >= 1, "{report}");
    let (chunks2, records2, rows2, same2) = vector_counts(&kb);
    assert_eq!(chunks2, chunks - 1);
    assert_eq!((records2, rows2, same2), (chunks2, chunks2, true));
    let (resp, _) = kb.json(&["search", "bicycle chain tyre", "--mode", "vector"]);
    assert!(
        !hit_paths(&resp).contains(&"cycling.md".to_string()),
        "{resp}"
    );
}

#[test]
fn korean_morphemes_let_two_syllable_words_match_inside_eojeol() {
    let corpus = tempfile::tempdir().unwrap();
    std::fs::write(
        corpus.path().join("korean.md"),
        "# 노트\n\n한국어 형태소 분석기는 서울특별시에서 개발되었다.\n",
    )
    .unwrap();
    std::fs::write(
        corpus.path().join("english.md"),
        "# Notes\n\nThe tokenizer handles English words and snake_case identifiers.\n",
    )
    .unwrap();
    let queries = ["한국", "서울", "개발"];

    let plain = Kb::with_config(NO_EMBEDDINGS);
    plain.ingest(corpus.path());
    for q in queries {
        let (hits, code) = plain.search(q, 5);
        assert!(
            hits.is_empty() && code == 1,
            "unicode61 alone should miss {q}: {hits:?}"
        );
    }

    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{}", korean_config()));
    let report = kb.ingest(corpus.path());
    assert_eq!(report["korean_analyzed"], 2, "{report}");
    for q in queries {
        let (hits, code) = kb.search(q, 5);
        assert_eq!(code, 0, "lindera should find {q}");
        assert_eq!(hits[0]["doc_path"], "korean.md", "{q}: {hits:?}");
    }
    // English and identifiers are unchanged.
    let (hits, _) = kb.search("tokenizer identifiers", 5);
    assert_eq!(hits[0]["doc_path"], "english.md");
    let (hits, _) = kb.search("snake_case", 5);
    assert_eq!(hits[0]["doc_path"], "english.md");

    // A dictionary installed later analyses what is already indexed.
    let late = Kb::with_config(NO_EMBEDDINGS);
    late.ingest(corpus.path());
    std::fs::write(
        late.dir.path().join("config.toml"),
        format!("{NO_EMBEDDINGS}{}", korean_config()),
    )
    .unwrap();
    let report = late.ingest(corpus.path());
    assert_eq!(report["korean_analyzed"], 2, "{report}");
    let (hits, _) = late.search("서울", 5);
    assert_eq!(hits.len(), 1);
}

#[test]
fn eval_run_and_beir_report_metrics_per_mode() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    kb.ingest(corpus.path());
    let suite = corpus.path().join("golden.yaml");
    std::fs::write(
        &suite,
        format!(
            "queries:\n  - id: para\n    query: {PARAPHRASE}\n    expected_paths: [bread.md]\n  \
             - id: ident\n    query: kbx4471zq\n    expected_paths: [errors.md]\n"
        ),
    )
    .unwrap();
    let (report, code) = kb.json(&["eval", "run", suite.to_str().unwrap(), "--k", "3"]);
    assert_eq!(code, 0, "{report}");
    crate::wire_schema::assert_conforms("eval_report.v1", &report);
    let modes = &report["modes"];
    // Lexical misses the paraphrase, finds the identifier: hit@3 = 0.5.
    assert_eq!(modes["lexical"]["hit_at_k"], 0.5, "{report}");
    assert_eq!(modes["lexical"]["queries"], 2);
    assert_eq!(modes["hybrid"]["hit_at_k"], 1.0, "{report}");
    assert_eq!(modes["hybrid"]["mrr"], 1.0, "{report}");
    let per_query = report["per_query"].as_array().unwrap();
    let para_vector = per_query
        .iter()
        .find(|r| r["id"] == "para" && r["mode"] == "vector")
        .unwrap();
    assert_eq!(para_vector["ndcg_at_10"], 1.0, "{para_vector}");

    // BEIR: the same notes as a dataset with graded judgements.
    let beir = tempfile::tempdir().unwrap();
    let dir = beir.path().join("tiny");
    std::fs::create_dir_all(dir.join("qrels")).unwrap();
    let mut corpus_lines = String::new();
    for entry in std::fs::read_dir(corpus.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let id = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            corpus_lines
                .push_str(&serde_json::json!({"_id": id, "title": "", "text": text}).to_string());
            corpus_lines.push('\n');
        }
    }
    std::fs::write(dir.join("corpus.jsonl"), corpus_lines).unwrap();
    std::fs::write(
        dir.join("queries.jsonl"),
        format!(
            "{}\n{}\n",
            serde_json::json!({"_id": "q1", "text": PARAPHRASE}),
            serde_json::json!({"_id": "q2", "text": "index funds and savings"})
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\tbread\t1\nq2\tfinance\t2\nq2\tgarden\t0\n",
    )
    .unwrap();
    let (report, code) = kb.json(&["eval", "beir", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{report}");
    crate::wire_schema::assert_conforms("beir_report.v1", &report);
    assert_eq!(report["documents"], 5);
    let rows = report["modes"].as_array().unwrap();
    let by_mode = |m: &str| rows.iter().find(|r| r["mode"] == m).unwrap().clone();
    // q1 is a paraphrase (lexical nDCG 0); q2 shares "index funds" with finance.md.
    let lexical = by_mode("lexical");
    let hybrid = by_mode("hybrid");
    assert_eq!(lexical["queries"], 2);
    let l = lexical["ndcg_at_10"].as_f64().unwrap();
    assert!(l > 0.4 && l < 0.6, "lexical finds q2 only: {lexical}");
    assert!(hybrid["ndcg_at_10"].as_f64().unwrap() > l, "{report}");
    assert_eq!(hybrid["recall_at_100"], 1.0, "{report}");
}

#[test]
fn ingest_progress_lines_are_flat_and_count_embeddings() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let out = kb.run(&["--json", "ingest", corpus.path().to_str().unwrap()]);
    assert!(out.status.success());
    let run = IngestRun::read(&out.stdout);
    for l in &run.events {
        assert_eq!(l["schema_version"], "ingest_progress.v1");
        assert!(l.get("event").is_none(), "flat, not nested: {l}");
    }
    let started = run.of_kind("embed_batch_started");
    let finished = run.of_kind("embed_batch_finished");
    assert!(!started.is_empty() && started.len() == finished.len());
    let chunks = run.report["chunks_indexed"].as_u64().unwrap();
    let batched: u64 = finished
        .iter()
        .map(|l| l["n_chunks"].as_u64().unwrap())
        .sum();
    assert_eq!(batched, chunks);
    let completed = run.of_kind("completed");
    assert_eq!(completed[0]["counts"]["embeddings_indexed"], chunks);
    // Nothing changed: nothing embedded, no batch events.
    let again = kb.run(&["--json", "ingest", corpus.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(!text.contains("embed_batch_started"));
    assert!(text.contains("\"embeddings_indexed\":0"));
}

/// `n` notes of five short sections each, every section's text distinct,
/// and one footer section the same in every note; `edit` rewrites the
/// second section of each note.
fn write_many_notes(root: &Path, n: usize, edit: &str) {
    for i in 0..n {
        let text = format!(
            "# Note {i}\n\nAlpha {i} first section about rivers.\n\n\
             # Second {i}\n\nBeta {i} second section about {edit} mountains.\n\n\
             # Third {i}\n\nGamma {i} third section about forests.\n\n\
             # Fourth {i}\n\nDelta {i} fourth section about deserts.\n\n\
             # Fifth {i}\n\nEpsilon {i} fifth section about oceans.\n\n\
             # Footer\n\nWritten on the shared notebook template.\n"
        );
        std::fs::write(root.join(format!("note-{i:03}.md")), text).unwrap();
    }
}

/// A `--json` ingest's output: its `ingest_progress.v1` lines and the
/// report (the last line).
struct IngestRun {
    events: Vec<Value>,
    report: Value,
}

impl IngestRun {
    fn read(stdout: &[u8]) -> IngestRun {
        let mut events: Vec<Value> = String::from_utf8_lossy(stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let report = events.pop().expect("a report line");
        IngestRun { events, report }
    }

    /// The events of one kind, in order.
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["kind"] == kind).collect()
    }

    /// Where the events of one kind stand among all events.
    fn positions(&self, kind: &str) -> Vec<usize> {
        (0..self.events.len())
            .filter(|&i| self.events[i]["kind"] == kind)
            .collect()
    }

    /// `(done, total)` of every `embed_batch_finished` event.
    fn embed_progress(&self) -> Vec<(u64, u64)> {
        self.of_kind("embed_batch_finished")
            .iter()
            .map(|e| (e["done"].as_u64().unwrap(), e["total"].as_u64().unwrap()))
            .collect()
    }
}

#[test]
fn embedding_starts_while_files_are_still_parsed_and_leaves_one_row_per_chunk() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = tempfile::tempdir().unwrap();
    // 2 520 chunks: two embedding windows (1 024 each) are stored before
    // the last file is, both holding the footer's text.
    write_many_notes(corpus.path(), 420, "high");
    let arg = corpus.path().to_str().unwrap();
    let out = kb.run(&["--json", "ingest", arg]);
    assert!(out.status.success());
    let run = IngestRun::read(&out.stdout);
    let report = &run.report;
    let (files, started) = (
        run.positions("asset_finished"),
        run.positions("embed_batch_started"),
    );
    assert_eq!(files.len(), 420);
    assert!(
        started[0] < *files.last().unwrap(),
        "the first batch goes to the model before the last file is stored: \
         started at {started:?}, files until {}",
        files.last().unwrap()
    );
    assert_eq!(report["chunks_indexed"], 2520);
    let v = &report["vectors"];
    assert_eq!(
        (&v["embedded"], &v["from_cache"]),
        (&2101.into(), &419.into()),
        "each distinct text embedded once, the footer too: {v}"
    );
    let progress = run.embed_progress();
    assert_eq!(progress.len(), started.len());
    // The progress total never shrinks and ends at every chunk.
    let totals: Vec<u64> = progress.iter().map(|p| p.1).collect();
    assert!(totals.windows(2).all(|w| w[0] <= w[1]), "{totals:?}");
    assert_eq!(progress.last(), Some(&(2520, 2520)));
    assert_eq!(vector_counts(&kb), (2520, 2520, 2520, true));

    // Every note changed in one section: 420 new texts, the rest from the
    // cache, and no row of the replaced chunks left behind.
    write_many_notes(corpus.path(), 420, "low");
    let out = kb.run(&["--json", "ingest", arg]);
    assert!(out.status.success());
    let run = IngestRun::read(&out.stdout);
    let v = &run.report["vectors"];
    assert!(
        run.positions("embed_batch_started")[0] < *run.positions("asset_finished").last().unwrap(),
        "{v}"
    );
    assert_eq!(
        (&v["embedded"], &v["from_cache"]),
        (&420.into(), &2100.into()),
        "{v}"
    );
    assert_eq!(v["removed"], 2520, "{v}");
    assert_eq!(vector_counts(&kb), (2520, 2520, 2520, true));

    // Re-parsed with the same bytes (the same chunk ids): left to the
    // vector pass, which replaces each row once.
    let (report, code) = kb.json(&["reindex", "--plugin", "markdown"]);
    assert_eq!(code, 0);
    assert_eq!(report["vectors"]["embedded"], 0, "{}", report["vectors"]);
    assert_eq!(vector_counts(&kb), (2520, 2520, 2520, true));
    let (resp, _) = search(&kb, "Beta 17 second section about low mountains", "hybrid");
    assert_eq!(hit_paths(&resp)[0], "note-017.md", "{resp}");
}

#[test]
fn a_lexical_search_never_loads_the_model() {
    let kb = Kb::with_config(&embedding_config());
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    kb.ingest(corpus.path());
    let loaded = |mode: &str| {
        let out = kb.run(&["--verbose", "search", "oven crust", "--mode", mode]);
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).contains("embedding model loaded")
    };
    assert!(
        !loaded("lexical"),
        "lexical search loaded the embedding model"
    );
    assert!(
        loaded("hybrid"),
        "the log line this test relies on is missing"
    );
}

#[test]
fn float_and_int8_compute_keep_separate_vectors_and_find_the_same_note() {
    let config = |compute: &str| format!("{}compute = \"{compute}\"\n", embedding_config());
    let kb = Kb::with_config(&config("float"));
    let set = |compute: &str| {
        std::fs::write(kb.dir.path().join("config.toml"), config(compute)).unwrap();
    };
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let top = |kb: &Kb| {
        let (resp, code) = search(kb, PARAPHRASE, "vector");
        assert_eq!(code, 0, "{resp}");
        (
            hit_paths(&resp)[0].clone(),
            resp["hits"][0]["embedding_model"].clone(),
        )
    };

    let float = kb.ingest(corpus.path());
    assert_eq!(float["vectors"]["model"], "all-minilm-l6-v2@v1", "{float}");
    assert_eq!(float["vectors"]["embedded"], 5, "{float}");
    assert_eq!(top(&kb), ("bread.md".into(), "all-minilm-l6-v2@v1".into()));

    // int8 vectors are their own model: until an ingest embeds the chunks
    // for it, search says so and doctor is unhealthy, naming the fix.
    set("int8");
    let out = kb.run(&["search", PARAPHRASE]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("5 chunks have no vector for all-minilm-l6-v2@v1+int8")
            && stderr.contains("kebab ingest"),
        "{stderr}"
    );
    let (resp, _) = search(&kb, PARAPHRASE, "hybrid");
    assert!(
        resp["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("5 chunks have no vector")),
        "{resp}"
    );
    let out = kb.run(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let doctor: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = doctor_check(&doctor, "embedding_model");
    assert_eq!(check["ok"], false, "{check}");
    assert!(
        check["hint"].as_str().unwrap().contains("kebab ingest"),
        "{check}"
    );

    // Embedded afresh (never taken from the float cache) into their own
    // table.
    let int8 = kb.ingest(corpus.path());
    assert_eq!(
        int8["vectors"]["model"], "all-minilm-l6-v2@v1+int8",
        "{int8}"
    );
    assert_eq!(int8["vectors"]["embedded"], 5, "{int8}");
    assert_eq!(int8["vectors"]["from_cache"], 0, "{int8}");
    assert_eq!(
        top(&kb),
        ("bread.md".into(), "all-minilm-l6-v2@v1+int8".into())
    );

    // Back to float: its vectors are still there.
    set("float");
    let again = kb.ingest(corpus.path());
    assert_eq!(again["vectors"]["embedded"], 0, "{again}");
    assert_eq!(again["vectors"]["total"], 5, "{again}");
    let out = kb.run(&["search", PARAPHRASE]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("no vector"), "{stderr}");
    let (resp, _) = search(&kb, PARAPHRASE, "hybrid");
    assert!(resp.get("notes").is_none(), "{resp}");

    // int8 asked for where no int8 file exists: an error that says how to
    // get one.
    let bare = tempfile::tempdir().unwrap();
    let model = crate::support::assets_dir().join("models/all-minilm-l6-v2");
    for file in ["model.onnx", "tokenizer.json"] {
        std::fs::copy(model.join(file), bare.path().join(file)).unwrap();
    }
    std::fs::write(
        kb.dir.path().join("config.toml"),
        format!(
            "[models.embedding]\nmodel = \"all-minilm-l6-v2\"\npath = \"{}\"\nruntime = \"{}\"\ncompute = \"int8\"\n",
            bare.path().display(),
            crate::support::assets_dir().join("onnxruntime").display()
        ),
    )
    .unwrap();
    let out = kb.run(&["search", PARAPHRASE, "--mode", "vector"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("model.int8.onnx") && stderr.contains("fetch-assets.sh"),
        "{stderr}"
    );
}
