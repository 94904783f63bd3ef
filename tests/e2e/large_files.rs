//! Large ordinary files index within the default deadline: logs up to the
//! size cap (with and without blank lines, and one enormous line) through
//! the text plugin, and a YAML dump of 30 000 resources.

use crate::support::{Kb, item};

const NO_VECTORS: &str = "[models.embedding]\nmodel = \"\"\n";

/// Log lines up to `bytes`, a blank line every `blank_every` lines (0: none).
fn log(bytes: usize, blank_every: usize) -> String {
    let mut out = String::with_capacity(bytes);
    let mut i = 0usize;
    while out.len() < bytes - 200 {
        out.push_str(&format!(
            "2026-11-23T10:{:02}:{:02}Z INFO worker-{} served request {i} in {} ms\n",
            (i / 60) % 60,
            i % 60,
            i % 7,
            i % 997
        ));
        if blank_every > 0 && i % blank_every == blank_every - 1 {
            out.push('\n');
        }
        i += 1;
    }
    out.push_str("final line says quetzal\n");
    out
}

#[test]
fn logs_up_to_the_size_cap_are_indexed_by_the_text_plugin() {
    let kb = Kb::with_config(NO_VECTORS);
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("blank.log"), log(9_900_000, 5)).unwrap();
    std::fs::write(corpus.join("dense.log"), log(9_900_000, 0)).unwrap();
    let mut one_line = "x".repeat(5_000_000);
    one_line.push_str(" rhea\n");
    std::fs::write(corpus.join("one-line.txt"), one_line).unwrap();
    let report = kb.ingest(&corpus);
    assert_eq!(report["errors"], 0, "{report:#}");
    for name in ["blank.log", "dense.log", "one-line.txt"] {
        let it = item(&report, name);
        assert_eq!(it["kind"], "new", "{it}");
        assert!(it["fallback"].is_null(), "{it}");
        assert!(it["chunk_count"].as_u64().unwrap() >= 5, "{it}");
    }
    let (hits, code) = kb.search("quetzal", 5);
    assert_eq!(code, 0);
    assert_eq!(hits.len(), 2, "both logs' last lines are searchable");
    let (hits, _) = kb.search("rhea", 1);
    assert_eq!(hits[0]["doc_path"], "one-line.txt");
}

#[test]
fn a_yaml_dump_of_thirty_thousand_resources_is_one_chunk_per_resource() {
    let kb = Kb::with_config(NO_VECTORS);
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let mut yaml = String::new();
    for i in 0..30_000 {
        yaml.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-{i}\n  namespace: ns{}\n  labels:\n    app: app{i}\ndata:\n  key: value-{i}\n",
            i % 10
        ));
    }
    assert!(yaml.len() < 10_000_000);
    std::fs::write(corpus.join("dump.yaml"), yaml).unwrap();
    let report = kb.ingest(&corpus);
    let it = item(&report, "dump.yaml");
    assert_eq!(it["kind"], "new", "{it}");
    assert!(it["fallback"].is_null(), "{it}");
    assert_eq!(it["chunk_count"], 30_000);
    let (hits, code) = kb.json(&["search", "config-29999", "--kind", "ConfigMap", "--k", "1"]);
    assert_eq!(code, 0, "{hits}");
    assert_eq!(
        hits["hits"][0]["citation"]["symbol"], "ConfigMap/ns9/config-29999",
        "{hits}"
    );
}
