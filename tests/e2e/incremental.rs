//! Re-ingest: unchanged files are skipped, an edited file is re-indexed
//! alone, a deleted file leaves the index.

use crate::support::{Kb, copy_tree, item, items, sample_corpus};

#[test]
fn unchanged_skipped_edited_reindexed_deleted_removed() {
    let kb = Kb::new();
    let corpus = kb.dir.path().join("corpus");
    copy_tree(&sample_corpus(), &corpus);

    let first = kb.ingest(&corpus);
    let indexed = first["new"].as_u64().unwrap();
    assert!(indexed >= 20);

    let again = kb.ingest(&corpus);
    assert_eq!(again["new"], 0, "{again}");
    assert_eq!(again["updated"], 0);
    assert_eq!(again["removed"], 0);
    assert_eq!(again["skipped_unchanged"].as_u64().unwrap(), indexed);

    let edited = corpus.join("kitchen/espresso.md");
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("\n## Milk\n\nA flat white uses microfoam from a quokka-shaped jug.\n");
    std::fs::write(&edited, text).unwrap();
    let after_edit = kb.ingest(&corpus);
    assert_eq!(after_edit["updated"], 1, "{after_edit}");
    assert_eq!(after_edit["new"], 0);
    assert_eq!(
        items(&after_edit, "updated")[0]["doc_path"],
        "kitchen/espresso.md"
    );
    assert_eq!(
        after_edit["skipped_unchanged"].as_u64().unwrap(),
        indexed - 1
    );
    let (hits, code) = kb.search("quokka microfoam", 5);
    assert_eq!(code, 0);
    assert_eq!(hits[0]["doc_path"], "kitchen/espresso.md");
    assert_eq!(
        hits[0]["heading_path"],
        serde_json::json!(["Espresso dialing in", "Milk"])
    );

    let (before, _) = kb.search("Arrakis", 5);
    assert_eq!(before.len(), 1);
    std::fs::remove_file(corpus.join("reading/dune.md")).unwrap();
    let after_delete = kb.ingest(&corpus);
    assert_eq!(after_delete["removed"], 1, "{after_delete}");
    assert_eq!(item(&after_delete, "reading/dune.md")["kind"], "removed");
    let (hits, code) = kb.search("Arrakis", 5);
    assert!(hits.is_empty());
    assert_eq!(code, 1, "no hit exits 1");

    let (docs, _) = kb.json(&["list", "docs"]);
    assert_eq!(docs.as_array().unwrap().len() as u64, indexed - 1);
}

#[test]
fn ingesting_a_subdirectory_does_not_remove_the_rest() {
    let kb = Kb::new();
    let corpus = kb.dir.path().join("corpus");
    copy_tree(&sample_corpus(), &corpus);
    kb.config_root(&corpus);
    kb.ingest(&corpus);
    let sub = kb.ingest(&corpus.join("kitchen"));
    assert_eq!(sub["removed"], 0, "{sub}");
    assert_eq!(sub["skipped_unchanged"], 3, "{sub}");
    let (hits, _) = kb.search("Arrakis", 5);
    assert_eq!(hits.len(), 1);
}

#[test]
fn ignored_files_are_counted_and_leave_the_index_once_ignored() {
    let kb = Kb::new();
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(corpus.join("drafts")).unwrap();
    std::fs::write(corpus.join("keep.md"), "# Keep\n\nA heron.\n").unwrap();
    std::fs::write(corpus.join("scratch.md"), "# Scratch\n\nA kiwi.\n").unwrap();
    std::fs::write(corpus.join("drafts/wip.md"), "# WIP\n\nAn emu.\n").unwrap();
    std::fs::write(corpus.join(".gitignore"), "scratch.md\n").unwrap();
    let first = kb.ingest(&corpus);
    assert_eq!(
        (
            first["skipped_gitignore"].as_u64(),
            first["skipped_kebabignore"].as_u64()
        ),
        (Some(1), Some(0))
    );
    assert_eq!(
        first["skip_examples"]["gitignore"],
        serde_json::json!(["scratch.md"])
    );
    assert_eq!(first["new"], 2);

    std::fs::write(corpus.join(".kebabignore"), "drafts/\n").unwrap();
    let second = kb.ingest(&corpus);
    assert_eq!(second["skipped_kebabignore"], 1, "{second:#}");
    assert_eq!(
        item(&second, "drafts/wip.md")["kind"],
        "removed",
        "now out of scope"
    );
    let (hits, code) = kb.search("emu", 3);
    assert!(hits.is_empty() && code == 1);
}
