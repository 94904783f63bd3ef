//! The verification gate (`[rag.verify]`) with a real ONNX entailment graph
//! run by ONNX Runtime (`tests/fixtures/nli/model.onnx`, built by
//! `scripts/make-test-cross-encoder.py --nli`: a sentence whose word pieces
//! all occur in the evidence is entailed, one sharing none is not) behind
//! the MiniLM tokenizer: answers it confirms pass, answers with an
//! unsupported sentence are refused, and a model that will not load
//! refuses every answer (fail-closed).

use std::path::Path;

use serde_json::Value;

use crate::ask::{ask, stored};
use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::support::{Kb, assets_dir, cross_encoder_dir, doctor_check, sample_corpus};

const QUESTION: &str = "How does the Raft leader replicate log entries with AppendEntries?";
const SUPPORTED: &str =
    "The leader appends client commands to its log and replicates entries with AppendEntries [#1].";
const UNSUPPORTED: &str =
    "Raft leaders are elected by carrier pigeons flying over the datacenter [#1].";

/// No vector search; ONNX Runtime from the assets (for the NLI model).
fn lexical_config() -> String {
    format!(
        "[models.embedding]\nmodel = \"\"\nruntime = \"{}\"\n",
        assets_dir().join("onnxruntime").display()
    )
}

/// A lexical index of the sample notes, its model server answering
/// `answer`, verified by the model in `dir` at `threshold`.
fn kb_verified(answer: &str, dir: &Path, threshold: f32) -> (LlmServer, Kb) {
    let server = LlmServer::start(Wire::Ollama, Script::Answer(tokens(answer)));
    let kb = Kb::with_config(&format!(
        "{}{}[rag.verify]\nthreshold = {threshold}\npath = \"{}\"\n",
        lexical_config(),
        server.config(10),
        dir.display()
    ));
    kb.ingest(&sample_corpus());
    (server, kb)
}

#[test]
fn an_answer_its_evidence_entails_passes_and_the_verdict_is_kept() {
    let holder = cross_encoder_dir("nli");
    let (_server, kb) = kb_verified(SUPPORTED, holder.path(), 0.5);
    let (a, code, stderr) = ask(&kb, QUESTION, &[]);
    assert_eq!(code, 0, "{a:#}\n{stderr}");
    assert_eq!(a["grounded"], true);
    let v = &a["verification"];
    assert_eq!(v["nli_passed"], true, "{a:#}");
    assert!(v["nli_score"].as_f64().unwrap() > 0.9, "{v}");
    assert!((v["nli_threshold"].as_f64().unwrap() - 0.5).abs() < 1e-6);
    assert_eq!(stored(&kb)["verification"]["nli_passed"], true);

    // doctor loads the model and scores a sentence against itself.
    let (doctor, _) = kb.json(&["doctor"]);
    let check = doctor_check(&doctor, "nli_model");
    assert_eq!(check["ok"], true, "{check}");
    assert!(
        check["detail"].as_str().unwrap().contains("entails itself"),
        "{check}"
    );
}

#[test]
fn an_answer_with_an_unsupported_sentence_is_refused() {
    let holder = cross_encoder_dir("nli");
    for (answer, why) in [
        (UNSUPPORTED.to_string(), "nothing supported"),
        (
            format!("{SUPPORTED} {UNSUPPORTED}"),
            "one supported sentence, one not",
        ),
    ] {
        let (server, kb) = kb_verified(&answer, holder.path(), 0.5);
        let (a, code, _) = ask(&kb, QUESTION, &[]);
        assert_eq!(code, 1, "{why}: {a:#}");
        assert_eq!(a["grounded"], false, "{why}");
        assert_eq!(a["refusal_reason"], "nli_verification_failed", "{why}");
        let v = &a["verification"];
        assert_eq!(v["nli_passed"], false, "{why}: {v}");
        assert!(v["nli_score"].as_f64().unwrap() < 0.5, "{why}: {v}");
        // The unconfirmed text is not passed off as the answer; the
        // evidence it was checked against is listed.
        assert!(
            a["answer"].as_str().unwrap().contains("not confirmed"),
            "{a:#}"
        );
        let citations = a["citations"].as_array().unwrap();
        assert!(!citations.is_empty() && citations.iter().all(|c| c["marker"].is_null()));
        assert!(a.get("claims").is_none(), "{a:#}");
        assert_eq!(server.chat_requests(), 1);
        let row = stored(&kb);
        assert_eq!(row["refusal_reason"], "nli_verification_failed");
        assert_eq!(row["verification"]["nli_passed"], false);
    }
}

#[test]
fn an_unavailable_model_refuses_every_answer() {
    let empty = tempfile::tempdir().unwrap();
    let (server, kb) = kb_verified(SUPPORTED, empty.path(), 0.5);
    let (a, code, stderr) = ask(&kb, QUESTION, &[]);
    assert_eq!(code, 2, "{a:#}");
    assert_eq!(a["grounded"], false);
    assert_eq!(a["refusal_reason"], "nli_model_unavailable");
    assert!(a.get("verification").is_none(), "{a:#}");
    let error: Value = serde_json::from_str(stderr.trim().lines().last().unwrap())
        .unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(error["code"], "nli_model_unavailable", "{error}");
    assert!(
        error["hint"].as_str().unwrap().contains("[rag.verify]"),
        "{error}"
    );
    assert_eq!(stored(&kb)["refusal_reason"], "nli_model_unavailable");
    assert_eq!(
        server.chat_requests(),
        0,
        "refused before the model is asked"
    );

    let (doctor, code) = kb.json(&["doctor"]);
    assert_eq!(code, 3, "{doctor}");
    assert_eq!(doctor_check(&doctor, "nli_model")["ok"], false);

    // threshold 0 turns verification off: the same answer passes unchecked.
    let off = Kb::with_config(&format!(
        "{}{}[rag.verify]\nthreshold = 0\npath = \"{}\"\n",
        lexical_config(),
        server.config(10),
        empty.path().display()
    ));
    off.ingest(&sample_corpus());
    let (a, code, _) = ask(&off, QUESTION, &[]);
    assert_eq!(code, 0, "{a:#}");
    assert!(a.get("verification").is_none());
}
