//! Source code through the tree-sitter plugin: symbols, code citations,
//! language filter, and the text fallback for files that do not parse.

use crate::support::{Kb, cited_text, item};

const RUST: &str = r#"use std::collections::HashMap;

/// Counts words.
pub fn count_words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for w in text.split_whitespace() {
        *counts.entry(w.to_string()).or_insert(0) += 1;
    }
    counts
}

pub struct Ledger {
    entries: Vec<i64>,
}

impl Ledger {
    pub fn reconcile_balance(&self) -> i64 {
        self.entries.iter().sum()
    }
}
"#;

const PYTHON: &str = r#"import math


def haversine_distance(a, b):
    """Great-circle distance in km."""
    return 6371 * math.acos(min(1, a[0] * b[0] + a[1] * b[1]))


class Route:
    def total_length(self):
        return sum(self.legs)
"#;

#[test]
fn functions_are_found_first_with_their_symbols() {
    let kb = Kb::new();
    let repo = kb.dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::create_dir_all(repo.join("geo")).unwrap();
    std::fs::write(repo.join("src/words.rs"), RUST).unwrap();
    std::fs::write(repo.join("geo/routes.py"), PYTHON).unwrap();
    std::fs::write(
        repo.join("src/broken.rs"),
        "fn broken( {\n    let unfinished_parrot = 1;\n",
    )
    .unwrap();
    let report = kb.ingest(&repo);
    assert_eq!(report["errors"], 0, "{report:#}");
    assert_eq!(
        item(&report, "src/words.rs")["chunker_version"],
        "code-rust-ast-v1"
    );
    assert_eq!(
        item(&report, "geo/routes.py")["chunker_version"],
        "code-python-ast-v1"
    );
    let broken = item(&report, "src/broken.rs");
    assert!(
        broken["fallback"]
            .as_str()
            .unwrap()
            .contains("syntax error"),
        "{broken}"
    );

    for (query, symbol, path, lines) in [
        ("count_words", "fn count_words", "src/words.rs", (3, 10)),
        (
            "reconcile_balance",
            "Ledger::reconcile_balance",
            "src/words.rs",
            (17, 19),
        ),
        (
            "haversine_distance",
            "geo.routes.haversine_distance",
            "geo/routes.py",
            (4, 6),
        ),
        (
            "total_length",
            "geo.routes.Route.total_length",
            "geo/routes.py",
            (10, 11),
        ),
    ] {
        let (hits, _) = kb.search(query, 3);
        let top = &hits[0];
        assert_eq!(top["doc_path"], path, "{query}");
        assert_eq!(top["citation"]["kind"], "code");
        assert_eq!(top["citation"]["symbol"], symbol, "{query}");
        assert_eq!(
            (
                top["citation"]["line_start"].as_u64(),
                top["citation"]["line_end"].as_u64()
            ),
            (Some(lines.0), Some(lines.1))
        );
        assert!(cited_text(&repo, top).contains(query));
    }
    let (only_py, _) = kb.json(&["search", "distance total", "--code-lang", "python"]);
    let hits = only_py["hits"].as_array().unwrap();
    assert!(!hits.is_empty() && hits.iter().all(|h| h["citation"]["lang"] == "python"));
    let (parrot, _) = kb.search("unfinished_parrot", 3);
    assert_eq!(
        parrot[0]["citation"]["lang"], "rust",
        "fallback keeps the language label"
    );

    let out = kb.run(&["search", "reconcile_balance", "--k", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("src/words.rs#L17-L19") && text.contains("Ledger::reconcile_balance"),
        "{text}"
    );
}
