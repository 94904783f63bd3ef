//! One-off documents (design §6.7): `kebab ingest -` and a file outside
//! every root are kept in the data dir's `_external/` under their content
//! hash and indexed as the root `_external`; the file's directory never
//! becomes a root; the same content again changes nothing; a file inside a
//! root is indexed in place.

use serde_json::Value;

use crate::support::{Kb, NO_EMBEDDINGS, run_with_stdin};

/// `kebab --json ingest - ARGS` with `input` on stdin: the last JSON line
/// of stdout (the report) or of stderr (the error), and the exit code.
fn ingest_stdin(kb: &Kb, args: &[&str], input: &[u8]) -> (Value, i32) {
    let mut all = vec!["--json", "ingest", "-"];
    all.extend_from_slice(args);
    let out = run_with_stdin(kb.cmd(&all), input);
    let code = out.status.code().unwrap();
    let stream = if code == 0 { &out.stdout } else { &out.stderr };
    let text = String::from_utf8_lossy(stream);
    let last = text.lines().last().unwrap_or_default();
    let value = serde_json::from_str(last).unwrap_or_else(|e| {
        panic!(
            "{e}: {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (value, code)
}

fn hit_paths(kb: &Kb, query: &str) -> Vec<(String, String)> {
    let (hits, _) = kb.search(query, 5);
    hits.iter()
        .map(|h| {
            (
                h["citation"]["root"].as_str().unwrap().to_string(),
                h["doc_path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn stdin_is_kept_under_its_content_hash_and_indexed_once() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let note = b"# Zebu\n\nThe zebu is a humped cattle of the tropics.\n";
    let (report, code) = ingest_stdin(&kb, &["--name", "zebu.md"], note);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["new"], 1, "{report}");
    let hits = hit_paths(&kb, "humped cattle");
    assert_eq!(hits.len(), 1, "{hits:?}");
    let (root, path) = &hits[0];
    assert_eq!(root, "_external");
    let hash = &blake3::hash(note).to_hex()[..12];
    assert_eq!(path, &format!("{hash}-zebu.md"));
    let kept = kb.data_dir().join("_external").join(path);
    assert_eq!(std::fs::read(&kept).unwrap(), note);
    // Markdown, by its name: the heading is the section.
    let (resp, _) = kb.json(&["search", "humped cattle"]);
    assert_eq!(resp["hits"][0]["heading_path"][0], "Zebu", "{resp}");

    // The same document again changes nothing.
    let (again, code) = ingest_stdin(&kb, &["--name", "zebu.md"], note);
    assert_eq!(code, 0);
    assert_eq!(again["new"], 0, "{again}");
    assert_eq!(hit_paths(&kb, "humped cattle").len(), 1);

    // Without a name: `<hash>.txt`.
    let text = b"Okapis browse the understory of the rainforest.\n";
    let (report, code) = ingest_stdin(&kb, &[], text);
    assert_eq!((code, &report["new"]), (0, &1.into()), "{report}");
    let hits = hit_paths(&kb, "okapis understory");
    assert_eq!(
        hits[0].1,
        format!("{}.txt", &blake3::hash(text).to_hex()[..12])
    );
}

#[test]
fn empty_or_oversized_stdin_is_refused_with_a_hint() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}[indexing]\nmax_file_mb = 1\n"));
    let (err, code) = ingest_stdin(&kb, &[], b"");
    assert_eq!(code, 2, "{err}");
    assert_eq!(err["code"], "invalid_input", "{err}");
    assert!(err["hint"].as_str().unwrap().contains("kebab ingest -"));
    let big = vec![b'a'; 1_000_001];
    let (err, code) = ingest_stdin(&kb, &[], &big);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err["code"], "invalid_input");
    assert!(err["message"].as_str().unwrap().contains("max_file_mb"));
    // --name belongs to stdin.
    let out = kb.run(&["--json", "ingest", "/etc/hostname", "--name", "x.md"]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "invalid_input", "{err}");
    assert!(
        !kb.data_dir().join("_external").exists() || {
            std::fs::read_dir(kb.data_dir().join("_external"))
                .unwrap()
                .next()
                .is_none()
        }
    );
}

#[test]
fn a_file_outside_every_root_is_kept_and_its_directory_is_not_a_root() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let downloads = tempfile::tempdir().unwrap();
    let paper = downloads.path().join("paper.md");
    std::fs::write(&paper, "# Paper\n\nThe quagga was a plains zebra.\n").unwrap();
    std::fs::write(
        downloads.path().join("sibling.md"),
        "# Sibling\n\nA heron spears fish by the reeds.\n",
    )
    .unwrap();
    let out = kb.run(&["ingest", paper.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("outside every root: kept as"), "{stderr}");
    let hits = hit_paths(&kb, "quagga zebra");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].0, "_external");
    assert!(hits[0].1.ends_with("-paper.md"), "{hits:?}");
    let (roots, _) = kb.json(&["roots"]);
    let names: Vec<&str> = roots["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    // Only the kept copy's directory is a root, so `kebab watch` never
    // walks the downloads.
    assert_eq!(names, ["_external"], "{roots}");
    assert_eq!(
        roots["roots"][0]["path"]
            .as_str()
            .map(std::path::PathBuf::from),
        Some(kb.data_dir().join("_external").canonicalize().unwrap())
    );
    assert!(hit_paths(&kb, "heron reeds").is_empty());

    // A file of a root is indexed in place.
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(notes.path().join("a.md"), "# A\n\nOkapis eat leaves.\n").unwrap();
    kb.ingest(notes.path());
    let b = notes.path().join("b.md");
    std::fs::write(&b, "# B\n\nHerons wait motionless.\n").unwrap();
    let out = kb.run(&["ingest", b.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("kept as"));
    let hits = hit_paths(&kb, "herons motionless");
    assert_eq!(hits[0].1, "b.md", "{hits:?}");
    assert_ne!(hits[0].0, "_external");
}
