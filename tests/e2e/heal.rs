//! Derived indexes heal themselves: the real binary against an index
//! damaged on disk — the LanceDB directory deleted, its version manifests
//! garbled, the FTS5 table or its triggers dropped (reported by doctor and
//! search until an ingest rebuilds them) — and a SQLite file that is
//! really damaged (said plainly) or only read-only (still searched, by
//! vectors too).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::llm_server::{LlmServer, Script, Wire};
use crate::support::{
    Kb, NO_EMBEDDINGS, assets_dir, doctor_check, embedding_config, hit_paths, sample_corpus,
    vector_counts,
};

/// A paraphrase only the vector channel matches well, and a word the
/// lexical channel finds.
const PARAPHRASE: &str = "how do I keep bread dough rising";
const WORD: &str = "sourdough";

/// The notes of a response, joined.
fn notes(resp: &Value) -> String {
    resp["notes"]
        .as_array()
        .map(|n| {
            n.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .unwrap_or_default()
}

/// An index of the sample notes with vectors, and how many chunks it has.
fn embedded_kb() -> (Kb, usize) {
    let kb = Kb::with_config(&embedding_config());
    let report = kb.ingest(&sample_corpus());
    let (chunks, records, rows, same) = vector_counts(&kb);
    assert!(chunks > 0 && same && records == chunks && rows == chunks);
    assert_eq!(report["vectors"]["total"], chunks, "{report:#}");
    (kb, chunks)
}

/// The vector table's directory.
fn table_dir(kb: &Kb) -> PathBuf {
    let lancedb = kb.data_dir().join("lancedb");
    let tables: Vec<PathBuf> = std::fs::read_dir(&lancedb)
        .expect("lancedb dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lance"))
        .collect();
    assert_eq!(tables.len(), 1, "{tables:?}");
    tables[0].clone()
}

/// After an ingest restored the vectors: every chunk has exactly its row,
/// `kebab doctor` finds the table whole, and hybrid search runs again.
fn assert_vectors_whole(kb: &Kb, chunks: usize, before: &[String]) {
    let (n, records, rows, same) = vector_counts(kb);
    assert_eq!((n, records, rows, same), (chunks, chunks, chunks, true));
    let (doctor, _) = kb.json(&["doctor"]);
    let check = doctor_check(&doctor, "embedding_model");
    assert_eq!(check["ok"], true, "{check}");
    let (resp, code) = kb.json(&["search", PARAPHRASE, "--mode", "vector", "--k", "3"]);
    assert_eq!(code, 0, "{resp:#}");
    assert_eq!(
        hit_paths(&resp),
        before,
        "the same neighbours as before the damage"
    );
    let (resp, code) = kb.json(&["search", PARAPHRASE, "--k", "3"]);
    assert_eq!(
        (code, resp["mode"].as_str()),
        (0, Some("hybrid")),
        "{resp:#}"
    );
    assert_eq!(notes(&resp), "", "{resp:#}");
}

#[test]
fn a_deleted_vector_store_is_reported_and_refilled_from_the_cache() {
    let (kb, chunks) = embedded_kb();
    let (resp, _) = kb.json(&["search", PARAPHRASE, "--mode", "vector", "--k", "3"]);
    let before = hit_paths(&resp);
    assert_eq!(before.len(), 3, "{resp:#}");

    std::fs::remove_dir_all(kb.data_dir().join("lancedb")).unwrap();

    // doctor compares SQLite's records with the rows the table holds.
    let (doctor, code) = kb.json(&["doctor"]);
    assert_eq!(code, 3, "{doctor:#}");
    let check = doctor_check(&doctor, "embedding_model");
    assert_eq!(check["ok"], false, "{check}");
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("{chunks} vectors the index records are missing")),
        "{check}"
    );
    assert!(
        check["hint"].as_str().unwrap().contains("kebab ingest"),
        "{check}"
    );

    // A search says why vector search finds nothing instead of staying silent.
    let (resp, code) = kb.json(&["search", PARAPHRASE, "--mode", "vector", "--k", "3"]);
    assert_eq!(code, 1, "no vector can be found: {resp:#}");
    let said = notes(&resp);
    assert!(
        said.contains(&format!("{chunks} chunks' vectors are missing"))
            && said.contains("kebab ingest"),
        "{resp:#}"
    );

    // Ingest reconciles against what the table really holds: every row is
    // added again from the embedding cache, none re-embedded.
    let report = kb.ingest(&sample_corpus());
    let vectors = &report["vectors"];
    assert_eq!(
        (vectors["from_cache"].as_u64(), vectors["embedded"].as_u64()),
        (Some(chunks as u64), Some(0)),
        "{report:#}"
    );
    assert_eq!(report["embeddings_indexed"], chunks, "{report:#}");
    assert_vectors_whole(&kb, chunks, &before);
}

/// Overwrite every version manifest of the table with garbage of the same
/// length (`keep_footer`: the last 16 bytes kept, so lance trusts the
/// offset the garbage leaves in front of them).
fn garble_manifests(table: &Path, keep_footer: bool) {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let versions = table.join("_versions");
    let mut garbled = 0;
    for entry in std::fs::read_dir(&versions).expect("_versions") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "manifest") {
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let keep = if keep_footer { 4 } else { 0 };
        let end = bytes.len() - keep;
        for b in &mut bytes[..end] {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *b = (seed >> 56) as u8;
        }
        std::fs::write(&path, bytes).unwrap();
        garbled += 1;
    }
    assert!(garbled > 0, "no manifest in {}", versions.display());
}

#[test]
fn a_garbled_vector_manifest_leaves_lexical_search_working_until_ingest_rebuilds_it() {
    for keep_footer in [true, false] {
        let (kb, chunks) = embedded_kb();
        let (resp, _) = kb.json(&["search", PARAPHRASE, "--mode", "vector", "--k", "3"]);
        let before = hit_paths(&resp);
        let (resp, _) = kb.json(&["search", WORD, "--mode", "lexical"]);
        let lexical = hit_paths(&resp);
        assert!(!lexical.is_empty(), "{resp:#}");

        garble_manifests(&table_dir(&kb), keep_footer);

        // The default (hybrid) and an explicit hybrid search go on
        // lexically, saying why; nothing panics.
        for args in [
            vec!["search", WORD],
            vec!["search", WORD, "--mode", "hybrid"],
        ] {
            let mut all = vec!["--json"];
            all.extend_from_slice(&args);
            let out = kb.run(&all);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
            assert!(!stderr.contains("panicked at"), "{stderr}");
            let resp: Value =
                serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap())
                    .unwrap();
            assert_eq!(resp["mode"], "lexical", "{resp:#}");
            assert_eq!(hit_paths(&resp), lexical, "{resp:#}");
            let said = notes(&resp);
            assert!(
                said.contains("damaged") && said.contains("kebab ingest"),
                "{resp:#}"
            );
        }
        // A vector search cannot: a typed error with the way out.
        let (err, code) = kb.error(&["search", PARAPHRASE, "--mode", "vector"], &[]);
        assert_eq!(code, 2, "{err}");
        let message = err["message"].as_str().unwrap();
        assert!(
            message.contains("damaged") && message.contains("kebab ingest"),
            "{err}"
        );

        // doctor reports the table damaged (not healthy, not a panic).
        let out = kb.run(&["--json", "doctor"]);
        assert_eq!(out.status.code(), Some(3));
        let doctor: Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap())
                .unwrap();
        let check = doctor_check(&doctor, "embedding_model");
        assert_eq!(check["ok"], false, "{check}");
        assert!(
            check["detail"].as_str().unwrap().contains("damaged"),
            "{check}"
        );
        assert!(
            check["hint"].as_str().unwrap().contains("kebab ingest"),
            "{check}"
        );

        // Ingest rebuilds the table from SQLite and the embedding cache.
        let report = kb.ingest(&sample_corpus());
        let warned = report["warnings"].to_string();
        assert!(
            warned.contains("damaged") && warned.contains("rebuilt"),
            "{report:#}"
        );
        assert_eq!(
            (
                report["vectors"]["from_cache"].as_u64(),
                report["vectors"]["embedded"].as_u64()
            ),
            (Some(chunks as u64), Some(0)),
            "{report:#}"
        );
        assert_vectors_whole(&kb, chunks, &before);
    }
}

#[test]
fn a_dropped_or_emptied_full_text_index_is_rebuilt_by_ingest() {
    let breakages = [
        "DROP TABLE chunks_fts",
        "DELETE FROM chunks_fts",
        "DROP TRIGGER chunks_ai",
    ];
    for breakage in breakages {
        let corpus = tempfile::tempdir().unwrap();
        crate::support::copy_tree(&sample_corpus(), corpus.path());
        let kb = Kb::with_config(NO_EMBEDDINGS);
        kb.ingest(corpus.path());
        let (resp, code) = kb.json(&["search", WORD]);
        assert_eq!(code, 0, "{resp:#}");
        let before = hit_paths(&resp);

        let db = rusqlite::Connection::open(kb.data_dir().join("kebab.sqlite")).unwrap();
        db.execute_batch(breakage).unwrap();
        drop(db);

        // Without vectors a search is lexical: it says why it cannot run.
        let (err, code) = kb.error(&["search", WORD], &[]);
        assert_eq!(
            (code, err["code"].as_str()),
            (2, Some("full_text_index_damaged")),
            "{breakage}: {err}"
        );

        // A new note with a word found nowhere else: written after the
        // damage, it needs the triggers back too.
        std::fs::write(
            corpus.path().join("new-note.md"),
            "# Quokka\n\nA quokka smiles at the camera.\n",
        )
        .unwrap();
        let report = kb.ingest(corpus.path());
        assert_eq!(report["new"], 1, "{breakage}: {report:#}");
        assert!(
            report["warnings"].to_string().contains("full-text index"),
            "{breakage}: {report:#}"
        );
        let (resp, code) = kb.json(&["search", WORD]);
        assert_eq!(
            (code, hit_paths(&resp)),
            (0, before),
            "{breakage}: {resp:#}"
        );
        let (resp, code) = kb.json(&["search", "quokka"]);
        assert_eq!(code, 0, "{breakage}: {resp:#}");
        assert_eq!(hit_paths(&resp), ["new-note.md"], "{breakage}");
        // Healed: the next run finds nothing to rebuild.
        let again = kb.ingest(corpus.path());
        assert!(
            !again["warnings"].to_string().contains("full-text index"),
            "{breakage}: {again:#}"
        );
    }
}

/// `kebab doctor`'s exit code and the names of its failing checks.
fn doctor_failing(kb: &Kb) -> (i32, Vec<String>, Value) {
    let (doctor, code) = kb.json(&["doctor"]);
    let failing = doctor["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("{doctor:#}"))
        .iter()
        .filter(|c| c["ok"] != true)
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect();
    (code, failing, doctor)
}

#[test]
fn a_damaged_full_text_index_is_reported_by_doctor_and_search_until_ingest_rebuilds_it() {
    // A model server that answers, so doctor is healthy but for the index.
    let llm = LlmServer::start(Wire::Ollama, Script::Answer(vec!["ok".into()]));
    let kb = Kb::with_config(&format!("{}{}", embedding_config(), llm.config(10)));
    kb.ingest(&sample_corpus());
    let search = |args: &[&str]| {
        let (resp, code) = kb.json(&[&["search"], args].concat());
        assert_eq!(code, 0, "{args:?}: {resp:#}");
        resp
    };
    let lexical = hit_paths(&search(&[WORD, "--mode", "lexical"]));
    let vector = hit_paths(&search(&[PARAPHRASE, "--mode", "vector", "--k", "3"]));
    let hybrid = hit_paths(&search(&[PARAPHRASE, "--k", "3"]));
    assert!(!lexical.is_empty() && vector.len() == 3);

    for breakage in [
        "DROP TABLE chunks_fts",
        "DELETE FROM chunks_fts",
        "DROP TRIGGER chunks_ai",
    ] {
        let (code, failing, doctor) = doctor_failing(&kb);
        assert_eq!((code, failing.len()), (0, 0), "{breakage}: {doctor:#}");
        let db = rusqlite::Connection::open(kb.data_dir().join("kebab.sqlite")).unwrap();
        db.execute_batch(breakage).unwrap();
        drop(db);

        // doctor: unhealthy for that reason alone, with the way out.
        let (code, failing, doctor) = doctor_failing(&kb);
        assert_eq!(
            (code, failing),
            (3, vec!["full_text_index".to_string()]),
            "{breakage}: {doctor:#}"
        );
        let check = doctor_check(&doctor, "full_text_index");
        let detail = check["detail"].as_str().unwrap();
        assert!(
            detail.contains("full-text index is damaged"),
            "{breakage}: {check}"
        );
        assert!(
            check["hint"].as_str().unwrap().contains("kebab ingest"),
            "{breakage}: {check}"
        );

        // A lexical search: a typed error with the way out, no raw SQL.
        let (err, code) = kb.error(&["search", WORD, "--mode", "lexical"], &[]);
        assert_eq!(code, 2, "{breakage}: {err}");
        assert_eq!(err["code"], "full_text_index_damaged", "{breakage}: {err}");
        let message = err["message"].as_str().unwrap();
        assert!(
            message.contains("full-text index is damaged") && !message.contains("sqlite:"),
            "{breakage}: {err}"
        );
        assert!(
            err["hint"].as_str().unwrap().contains("kebab ingest"),
            "{breakage}: {err}"
        );

        // The default and an explicit hybrid search go on by vectors,
        // saying why; a vector search is untouched.
        for args in [
            vec![PARAPHRASE, "--k", "3"],
            vec![PARAPHRASE, "--k", "3", "--mode", "hybrid"],
        ] {
            let resp = search(&args);
            assert_eq!(resp["mode"], "vector", "{breakage} {args:?}: {resp:#}");
            assert_eq!(hit_paths(&resp), vector, "{breakage} {args:?}");
            let said = notes(&resp);
            assert!(
                said.contains("full-text index is damaged")
                    && said.contains("kebab ingest")
                    && said.contains("searching by vectors only"),
                "{breakage} {args:?}: {resp:#}"
            );
        }
        let resp = search(&[PARAPHRASE, "--mode", "vector", "--k", "3"]);
        assert_eq!(
            (hit_paths(&resp), notes(&resp)),
            (vector.clone(), String::new())
        );

        // Ingest rebuilds it: doctor is healthy and search as before.
        let report = kb.ingest(&sample_corpus());
        assert!(
            report["warnings"].to_string().contains("full-text index"),
            "{breakage}: {report:#}"
        );
        assert_eq!(hit_paths(&search(&[WORD, "--mode", "lexical"])), lexical);
        let resp = search(&[PARAPHRASE, "--k", "3"]);
        assert_eq!(resp["mode"], "hybrid", "{breakage}: {resp:#}");
        assert_eq!(
            (hit_paths(&resp), notes(&resp)),
            (hybrid.clone(), String::new())
        );
    }
    let (code, failing, doctor) = doctor_failing(&kb);
    assert_eq!((code, failing.len()), (0, 0), "{doctor:#}");
}

#[test]
fn a_damaged_index_file_is_called_damaged_and_never_blamed_on_another_writer() {
    // Garbage over the header, and a file cut short.
    type Damage = fn(&Path);
    let damages: [(&str, Damage); 2] = [
        ("garbage header", |db| {
            let mut bytes = std::fs::read(db).unwrap();
            for (i, b) in bytes.iter_mut().take(4096).enumerate() {
                *b = (i * 31 % 251) as u8;
            }
            std::fs::write(db, bytes).unwrap();
        }),
        ("truncated", |db| {
            let len = std::fs::metadata(db).unwrap().len();
            let file = std::fs::OpenOptions::new().write(true).open(db).unwrap();
            file.set_len(len / 3).unwrap();
        }),
    ];
    for (what, damage) in damages {
        let corpus = tempfile::tempdir().unwrap();
        crate::support::copy_tree(&sample_corpus(), corpus.path());
        let kb = Kb::with_config(NO_EMBEDDINGS);
        kb.ingest(corpus.path());
        damage(&kb.data_dir().join("kebab.sqlite"));

        for args in [
            vec!["search", WORD],
            vec!["ingest", corpus.path().to_str().unwrap()],
        ] {
            let (err, code) = kb.error(&args, &[]);
            assert_eq!(code, 2, "{what} {args:?}: {err}");
            assert_eq!(err["code"], "index_damaged", "{what} {args:?}: {err}");
            let message = err["message"].as_str().unwrap();
            assert!(
                message.contains("the index file is damaged")
                    && message.contains("move it aside and re-ingest")
                    && message.contains("your files are untouched"),
                "{what} {args:?}: {err}"
            );
            assert!(!err.to_string().contains("another kebab"), "{what}: {err}");
        }
        let (doctor, code) = kb.json(&["doctor"]);
        assert_eq!(code, 3, "{doctor:#}");
        let check = doctor_check(&doctor, "sqlite_open");
        assert_eq!(check["ok"], false, "{what}: {check}");
        assert!(
            check["detail"].as_str().unwrap().contains("damaged"),
            "{what}: {check}"
        );
        assert!(
            !check.to_string().contains("another kebab"),
            "{what}: {check}"
        );
        // The corpus was never written to.
        assert!(
            crate::support::collapse(
                &std::fs::read_to_string(corpus.path().join("kitchen/sourdough.md")).unwrap()
            ) == crate::support::collapse(
                &std::fs::read_to_string(sample_corpus().join("kitchen/sourdough.md")).unwrap()
            )
        );
    }
}

#[test]
fn a_read_only_index_is_still_searched_and_ingest_says_why_it_cannot_write() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(&sample_corpus());
    let (resp, code) = kb.json(&["search", WORD]);
    assert_eq!(code, 0, "{resp:#}");
    let expected = hit_paths(&resp);

    // The data directory and its files lose their write permission, for a
    // user that permission bits bind (root ignores them: the binary then
    // runs as `nobody`).
    let user = crate::support::Unprivileged::new(&kb);
    let data = kb.data_dir();
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        }
    }
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o555)).unwrap();

    let (resp, code) = user.json(&["search", WORD]);
    assert_eq!(code, 0, "{resp:#}");
    assert_eq!(hit_paths(&resp), expected, "{resp:#}");

    let (_, stderr, code) = user.output(&["--json", "ingest", sample_corpus().to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    let line = stderr.lines().rev().find(|l| l.starts_with('{'));
    let err: Value = serde_json::from_str(line.unwrap_or_else(|| panic!("{stderr}")))
        .unwrap_or_else(|e| panic!("{stderr}: {e}"));
    assert_eq!(err["code"], "index_read_only", "{err}");
    assert!(err["hint"].as_str().unwrap().contains("write"), "{err}");
    assert!(!err.to_string().contains("another kebab"), "{err}");

    let (doctor, _) = user.json(&["doctor"]);
    let sqlite = doctor_check(&doctor, "sqlite_open");
    assert_eq!(sqlite["ok"], true, "{sqlite}");
    assert!(
        sqlite["detail"].as_str().unwrap().contains("read-only"),
        "{sqlite}"
    );
    assert_eq!(doctor_check(&doctor, "data_dir_writable")["ok"], false);

    // Writable again (the temp dir must be removable).
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every file under `dir` (and below) set to `file_mode`, every directory
/// (`dir` too) to `dir_mode`.
fn chmod_tree(dir: &Path, file_mode: u32, dir_mode: u32) {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(dir_mode)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            chmod_tree(&path, file_mode, dir_mode);
        } else {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(file_mode)).unwrap();
        }
    }
}

/// The files of `from` in a new directory `to`: hard links where the file
/// system allows (the model is ~100 MB), copies otherwise.
fn link_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let target = to.join(path.file_name().unwrap());
            if std::fs::hard_link(&path, &target).is_err() {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
}

#[test]
fn a_read_only_index_with_vectors_is_still_searched_by_vectors_and_hybrid() {
    // The bundled model and ONNX Runtime where the unprivileged user can
    // read them (the assets may sit in a home it cannot enter).
    let kb = Kb::new();
    let assets = kb.dir.path().join("assets");
    let (model, runtime) = (assets.join("model"), assets.join("onnxruntime"));
    link_files(&assets_dir().join("models/all-minilm-l6-v2"), &model);
    link_files(&assets_dir().join("onnxruntime"), &runtime);
    std::fs::write(
        kb.dir.path().join("config.toml"),
        format!(
            "[models.embedding]\nmodel = \"all-minilm-l6-v2\"\npath = \"{}\"\nruntime = \"{}\"\n",
            model.display(),
            runtime.display()
        ),
    )
    .unwrap();
    let report = kb.ingest(&sample_corpus());
    let (chunks, records, rows, same) = vector_counts(&kb);
    assert!(
        chunks > 0 && same && records == chunks && rows == chunks,
        "{report:#}"
    );
    let expected: Vec<(Vec<&str>, Value)> = [
        vec!["search", PARAPHRASE, "--mode", "vector", "--k", "3"],
        vec!["search", PARAPHRASE, "--k", "3"],
        vec!["search", WORD, "--mode", "hybrid"],
    ]
    .into_iter()
    .map(|args| {
        let (resp, code) = kb.json(&args);
        assert_eq!(code, 0, "{args:?}: {resp:#}");
        (args, resp)
    })
    .collect();

    // The whole data directory, vector table included, loses its write
    // permission for a user that permission bits bind.
    let user = crate::support::Unprivileged::new(&kb);
    let data = kb.data_dir();
    chmod_tree(&data, 0o444, 0o555);

    for (args, before) in &expected {
        let (resp, code) = user.json(args);
        assert_eq!(code, 0, "{args:?}: {resp:#}");
        assert_eq!(resp["mode"], before["mode"], "{args:?}: {resp:#}");
        assert_eq!(hit_paths(&resp), hit_paths(before), "{args:?}: {resp:#}");
        assert_eq!(notes(&resp), "", "{args:?}: {resp:#}");
    }
    let (doctor, _) = user.json(&["doctor"]);
    for name in ["sqlite_open", "full_text_index", "embedding_model"] {
        let check = doctor_check(&doctor, name);
        assert_eq!(check["ok"], true, "{check}");
    }
    assert_eq!(doctor_check(&doctor, "data_dir_writable")["ok"], false);

    // Writable again (the temp dir must be removable).
    chmod_tree(&data, 0o644, 0o755);
}
