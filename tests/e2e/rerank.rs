//! `[search.rerank]` with a real ONNX cross-encoder graph run by ONNX
//! Runtime (`tests/fixtures/reranker/model.onnx`, built by
//! `scripts/make-test-cross-encoder.py`: it scores a pair by the share of the
//! passage's word pieces that occur in the query) behind the MiniLM
//! tokenizer: search, ask and `eval beir` use it; a missing model is an
//! error with a hint.

use std::path::Path;

use serde_json::Value;

use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::support::{Kb, NO_EMBEDDINGS, cross_encoder_dir, doctor_check, embedding_config};

/// A model directory holding the test reranker graph and the MiniLM
/// tokenizer.
fn reranker_dir() -> tempfile::TempDir {
    cross_encoder_dir("reranker")
}

/// `[search.rerank]` over `dir`, plus ONNX Runtime from the assets.
fn rerank_config(dir: &Path, enabled: bool) -> String {
    format!(
        "[search.rerank]\nenabled = {enabled}\npath = \"{}\"\ntop_n = 10\nbatch_size = 2\n",
        dir.display()
    )
}

/// `long.md` holds both query words among many others (BM25's favourite);
/// `dense.md` is almost nothing but one of them (the test graph's).
fn write_corpus(root: &Path) {
    let notes = [
        (
            "long.md",
            "# Savanna\n\nThe zebra grazes with the herd while black and white stripes confuse \
             the biting flies, the lions and the visitors who drive past the waterhole at dusk \
             in the long dry season.\n",
        ),
        ("dense.md", "# Zebra\n\nzebra zebra zebra.\n"),
        (
            "garden.md",
            "# Tomatoes\n\nWater the plants at the roots and pinch the suckers.\n",
        ),
    ];
    for (name, text) in notes {
        std::fs::write(root.join(name), text).unwrap();
    }
}

fn hits(resp: &Value) -> &Vec<Value> {
    resp["hits"].as_array().unwrap()
}

#[test]
fn the_reranker_reorders_search_hits_and_keeps_the_fused_scores() {
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let holder = reranker_dir();
    let dir = holder.path();
    let plain = Kb::with_config(&embedding_config());
    plain.ingest(corpus.path());
    let reranked = Kb::with_config(&format!(
        "{}{}",
        embedding_config(),
        rerank_config(dir, true)
    ));
    reranked.ingest(corpus.path());

    for mode in ["lexical", "hybrid"] {
        let args = ["search", "zebra stripes", "--mode", mode, "--k", "3"];
        let (before, code) = plain.json(&args);
        assert_eq!(code, 0, "{before}");
        assert_eq!(hits(&before)[0]["doc_path"], "long.md", "{mode}: {before}");
        assert!(hits(&before)[0]["retrieval"]["rerank_score"].is_null());

        let (after, code) = reranked.json(&args);
        assert_eq!(code, 0, "{after}");
        crate::wire_schema::assert_conforms("search_response.v1", &after);
        let after_hits = hits(&after);
        assert_eq!(after_hits[0]["doc_path"], "dense.md", "{mode}: {after}");
        assert_eq!(after_hits[1]["doc_path"], "long.md", "{mode}: {after}");
        let scores: Vec<f64> = after_hits
            .iter()
            .map(|h| h["score"].as_f64().unwrap())
            .collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
        for (i, hit) in after_hits.iter().enumerate() {
            assert_eq!(hit["rank"], i + 1);
            assert_eq!(hit["score_kind"], "rerank", "{hit}");
            assert_eq!(hit["score"], hit["retrieval"]["rerank_score"], "{hit}");
        }
        // The graph's score, worked by hand: "zebra zebra zebra." is four
        // pieces after the heading's two ("#", "zebra"), four of the six are
        // "zebra": 10 × 4 / (6 + 1).
        let dense = after_hits[0]["score"].as_f64().unwrap();
        assert!((dense - 40.0 / 7.0).abs() < 1e-4, "{dense}");
        if mode == "hybrid" {
            let fused = &after_hits[1]["retrieval"];
            assert_eq!(fused["fusion_kind"], "blend_z", "{fused}");
            assert!(fused["fusion_score"].is_f64(), "{fused}");
        }
    }

    // --explain shows the fused and the reranked score.
    let out = reranked.run(&["search", "zebra stripes", "--explain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("├ blend_z fusion")
            && text.contains("├ rerank (cross-encoder)")
            && text.contains("+rerank"),
        "{text}"
    );

    // doctor loads the model and scores a probe pair ("kebab doctor" vs
    // "kebab doctor checks the reranker": 2 of 4 counted pieces, 10 × 2 / 5).
    let (doctor, _) = reranked.json(&["doctor"]);
    let check = doctor_check(&doctor, "reranker");
    assert_eq!(check["ok"], true, "{check}");
    assert!(
        check["detail"].as_str().unwrap().contains("scored 4.000"),
        "{check}"
    );
}

#[test]
fn a_missing_reranker_is_an_error_with_a_hint_everywhere_it_is_used() {
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let kb = Kb::with_config(&format!(
        "{NO_EMBEDDINGS}{}",
        rerank_config(&corpus.path().join("nowhere"), true)
    ));
    kb.ingest(corpus.path());
    let out = kb.run(&["--json", "search", "zebra"]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_str(String::from_utf8_lossy(&out.stderr).trim()).unwrap();
    assert_eq!(err["code"], "model_missing", "{err}");
    assert!(
        err["hint"]
            .as_str()
            .unwrap()
            .contains("[search.rerank] path"),
        "{err}"
    );
    let (doctor, code) = kb.json(&["doctor"]);
    assert_eq!(code, 3, "{doctor}");
    let check = doctor_check(&doctor, "reranker");
    assert_eq!(check["ok"], false, "{check}");
}

#[test]
fn ask_reranks_its_evidence_and_the_gate_still_refuses_the_unrelated() {
    let corpus = tempfile::tempdir().unwrap();
    write_corpus(corpus.path());
    let holder = reranker_dir();
    let dir = holder.path();
    let server = LlmServer::start(
        Wire::Ollama,
        Script::Answer(tokens("Zebras are striped [#1].")),
    );
    let kb = Kb::with_config(&format!(
        "{}{}{}",
        server.config(10),
        embedding_config(),
        rerank_config(dir, true)
    ));
    kb.ingest(corpus.path());
    let (a, code, _) = crate::ask::ask(&kb, "zebra stripes", &["--explain"]);
    assert_eq!(code, 0, "{a:#}");
    assert_eq!(a["grounded"], true, "{a:#}");
    // The reranker's first passage is the evidence marked [#1].
    assert_eq!(a["citations"][0]["citation"]["path"], "dense.md", "{a:#}");
    let prompt = server.bodies()[0].to_string();
    assert!(prompt.contains("zebra zebra zebra"), "{prompt}");

    let (a, code, _) = crate::ask::ask(&kb, "tungsten melting point", &[]);
    assert_eq!(code, 1, "{a:#}");
    assert!(
        matches!(
            a["refusal_reason"].as_str(),
            Some("score_gate" | "no_chunks")
        ),
        "{a:#}"
    );
    assert_eq!(
        server.chat_requests(),
        1,
        "the refused question is not sent"
    );
}

#[test]
fn eval_beir_reports_hybrid_plus_rerank_beside_the_fusions() {
    let corpus = tempfile::tempdir().unwrap();
    let holder = reranker_dir();
    let dir = holder.path();
    // Reranking is off for search; eval loads the configured model for
    // the `+rerank` mode it is asked for.
    let kb = Kb::with_config(&format!(
        "{}{}",
        embedding_config(),
        rerank_config(dir, false)
    ));
    let beir = corpus.path().join("zoo");
    std::fs::create_dir_all(beir.join("qrels")).unwrap();
    let docs = [
        (
            "long",
            "The zebra grazes with the herd while black and white stripes confuse the biting flies, the lions and the visitors at dusk.",
        ),
        ("dense", "zebra zebra zebra."),
        (
            "garden",
            "Water the plants at the roots and pinch the suckers.",
        ),
    ];
    let corpus_lines: String = docs
        .iter()
        .map(|(id, text)| {
            serde_json::json!({"_id": id, "title": "", "text": text}).to_string() + "\n"
        })
        .collect();
    std::fs::write(beir.join("corpus.jsonl"), corpus_lines).unwrap();
    std::fs::write(
        beir.join("queries.jsonl"),
        serde_json::json!({"_id": "q1", "text": "zebra stripes"}).to_string() + "\n",
    )
    .unwrap();
    std::fs::write(
        beir.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\tdense\t1\n",
    )
    .unwrap();
    let (report, code) = kb.json(&[
        "eval",
        "beir",
        beir.to_str().unwrap(),
        "--mode",
        "hybrid",
        "--mode",
        "hybrid+rerank",
        "--fusion",
        "rrf",
        "--fusion",
        "blend-z",
    ]);
    assert_eq!(code, 0, "{report}");
    crate::wire_schema::assert_conforms("beir_report.v1", &report);
    let rows = report["modes"].as_array().unwrap();
    let row = |mode: &str, fusion: &str| {
        rows.iter()
            .find(|r| r["mode"] == mode && r["fusion"].as_str().unwrap().starts_with(fusion))
            .unwrap_or_else(|| panic!("{mode} {fusion}: {report}"))
            .clone()
    };
    // Fused by RRF the judged document is second (nDCG 1/log2(3) = 0.63);
    // reranked it is first under either fusion.
    let fused = row("hybrid", "rrf")["ndcg_at_10"].as_f64().unwrap();
    assert!((fused - 0.6309).abs() < 1e-3, "{report}");
    for fusion in ["rrf", "blend-z"] {
        let reranked = row("hybrid+rerank", fusion);
        assert_eq!(reranked["ndcg_at_10"], 1.0, "{fusion}: {report}");
        assert!(reranked["ms_per_query"].as_f64().unwrap() > 0.0);
    }
    // An unknown mode names what is accepted.
    let out = kb.run(&[
        "eval",
        "beir",
        beir.to_str().unwrap(),
        "--mode",
        "hybrid+foo",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("+rerank"));
}
