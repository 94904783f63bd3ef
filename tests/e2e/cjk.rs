//! Japanese and Chinese text analysed into words for the lexical index,
//! beside Korean: a question's words meet a passage's whatever they are
//! glued to (particles, inflections, unsplit runs of Han), the script of
//! each run deciding its analyser, with IPADIC imported from its PyPI
//! assets and jieba's dictionary built in.

use serde_json::Value;

use crate::support::{Kb, NO_EMBEDDINGS, hit_paths, japanese_config, korean_config};

/// A corpus in four languages, one document each.
fn corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "kyoto.md",
            "# 旅行の記録\n\n昨年の夏、私たちは京都の古い寺院を訪ねました。\
             金閣寺の庭園はとても美しく、観光客で賑わっていました。\n",
        ),
        (
            "beijing.md",
            "# 学习笔记\n\n我们在北京大学学习中文，老师每天布置很多作业。\
             图书馆的藏书非常丰富，学生们经常在那里复习。\n",
        ),
        (
            "seoul.md",
            "# 출장 메모\n\n서울에서 열린 회의에서 새로운 검색 기능을 발표했습니다.\n",
        ),
        (
            // Kanji only: read as Japanese because the frontmatter says so.
            "tokyo.md",
            "---\nlang: ja\n---\n# 東京都心部再開発計画概要\n\n東京都心部再開発計画概要\n",
        ),
        (
            "notes.md",
            "# Notes\n\nThe tokenizer handles English words and snake_case identifiers.\n",
        ),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// The documents a lexical search finds, best first.
fn found(kb: &Kb, query: &str) -> Vec<String> {
    let (resp, code) = kb.json(&["search", query, "--mode", "lexical", "--k", "5"]);
    assert!(code == 0 || code == 1, "{query}: {resp}");
    hit_paths(&resp)
}

#[test]
fn japanese_and_chinese_questions_find_their_passages_lexically() {
    let corpus = corpus();
    let kb = Kb::with_config(&format!(
        "{NO_EMBEDDINGS}{}{}",
        korean_config(),
        japanese_config()
    ));
    let report = kb.ingest(corpus.path());
    assert_eq!(report["new"], 5, "{report:#}");
    assert!(
        report["korean_analyzed"].as_u64().unwrap() >= 5,
        "{report:#}"
    );

    for (query, expected) in [
        // Inflected verb (訪ねる for 訪ねました), particles between words.
        ("京都の寺院を訪ねる", "kyoto.md"),
        ("金閣寺の庭園", "kyoto.md"),
        // Chinese words out of an unsplit run.
        ("北京大学的图书馆", "beijing.md"),
        ("学生复习", "beijing.md"),
        // Korean as before, English untouched.
        ("서울 회의", "seoul.md"),
        ("tokenizer identifiers", "notes.md"),
    ] {
        let docs = found(&kb, query);
        assert_eq!(
            docs.first().map(String::as_str),
            Some(expected),
            "{query}: {docs:?}"
        );
    }
    // A document's language: from its frontmatter, else from its script.
    let docs = found(&kb, "東京");
    assert_eq!(
        docs.first().map(String::as_str),
        Some("tokyo.md"),
        "{docs:?}"
    );
    assert!(
        !found(&kb, "京都").contains(&"tokyo.md".to_string()),
        "Kyoto is not Tokyo"
    );
    for (lang, doc) in [("ja", "kyoto.md"), ("zh", "beijing.md")] {
        let (resp, _) = kb.json(&["search", "寺院 图书馆 金閣寺 北京大学", "--lang", lang]);
        let paths: Vec<&str> = resp["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["doc_path"].as_str().unwrap())
            .collect();
        assert!(paths.contains(&doc), "--lang {lang}: {paths:?}");
        assert!(
            paths.iter().all(|p| *p == doc || *p == "tokyo.md"),
            "--lang {lang}: {paths:?}"
        );
    }
    // A question in one script does not drag in the others.
    let docs = found(&kb, "図書館");
    assert!(!docs.contains(&"kyoto.md".to_string()), "{docs:?}");

    // schema and doctor say which analysers are there.
    let (schema, _) = kb.json(&["schema"]);
    let analysers: Vec<Value> = schema["capabilities"]["cjk_analysis"]
        .as_array()
        .cloned()
        .unwrap();
    let state = |language: &str| {
        analysers
            .iter()
            .find(|a| a["language"] == language)
            .map(|a| a["state"].clone())
    };
    for language in ["ko", "ja", "zh"] {
        assert!(
            matches!(
                state(language)
                    .and_then(|s| s.as_str().map(String::from))
                    .as_deref(),
                Some("loaded" | "available")
            ),
            "{language}: {analysers:?}"
        );
    }
    let (doctor, _) = kb.json(&["doctor"]);
    let japanese = crate::support::doctor_check(&doctor, "japanese_dictionary");
    assert_eq!(japanese["ok"], true, "{japanese}");
    assert!(
        japanese.to_string().contains("京都") || japanese.to_string().contains("東京"),
        "{japanese}"
    );
}

#[test]
fn without_the_japanese_dictionary_han_words_are_still_found_and_installing_it_analyses_again() {
    let corpus = corpus();
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(corpus.path());
    // jieba reads the Han words of Japanese text.
    assert_eq!(
        found(&kb, "金閣寺 庭園").first().map(String::as_str),
        Some("kyoto.md")
    );
    let (doctor, _) = kb.json(&["doctor"]);
    let japanese = crate::support::doctor_check(&doctor, "japanese_dictionary");
    assert!(japanese.to_string().contains("import-ja-dic"), "{japanese}");

    // The dictionary installed: the next run analyses what is indexed.
    std::fs::write(
        kb.dir.path().join("config.toml"),
        format!("{NO_EMBEDDINGS}{}", japanese_config()),
    )
    .unwrap();
    let report = kb.ingest(corpus.path());
    assert_eq!(report["skipped_unchanged"], 5, "{report:#}");
    assert_eq!(
        report["korean_analyzed"], 5,
        "every chunk analysed again: {report:#}"
    );
    assert_eq!(
        found(&kb, "訪ねる").first().map(String::as_str),
        Some("kyoto.md")
    );
}

/// The multilingual golden suites (24 topics written in each language,
/// questions that paraphrase their passage): each language's questions
/// find their passage lexically in the top 3, as measured when they were
/// written (BENCHMARKS "Multilingual golden suites": lexical hit@3 1.00,
/// MRR 0.96–0.98).
#[test]
fn korean_japanese_and_chinese_questions_find_their_passages_in_the_golden_suites() {
    let suites = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/eval-multilingual");
    for lang in ["ko", "ja", "zh"] {
        let kb = Kb::with_config(&format!(
            "{NO_EMBEDDINGS}{}{}",
            korean_config(),
            japanese_config()
        ));
        kb.ingest(&suites.join("corpus").join(lang));
        let suite = suites.join("suites").join(format!("{lang}-{lang}.yaml"));
        let (report, code) = kb.json(&[
            "eval",
            "run",
            suite.to_str().unwrap(),
            "--mode",
            "lexical",
            "--k",
            "3",
        ]);
        assert_eq!(code, 0, "{lang}: {report}");
        let lexical = &report["modes"]["lexical"];
        assert_eq!(lexical["queries"], 24, "{lang}: {lexical}");
        assert!(
            lexical["hit_at_k"].as_f64().unwrap() >= 0.9,
            "{lang}: {lexical}"
        );
        assert!(
            lexical["mrr"].as_f64().unwrap() >= 0.85,
            "{lang}: {lexical}"
        );
    }
}
