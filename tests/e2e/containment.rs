//! Files stay inside the root and are what the walk saw: links out of the
//! root are not followed, links inside it once, FIFOs never block, and
//! names that are not UTF-8 keep their identity. Plugin names cannot reach
//! outside the data directory, and install refuses what could not load.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use crate::support::{Kb, hostile_variant, item, items};

const NO_VECTORS: &str = "[models.embedding]\nmodel = \"\"\n";

#[test]
fn symlinks_do_not_lead_out_of_the_root_and_inner_links_count_once() {
    let kb = Kb::with_config(NO_VECTORS);
    let outside = kb.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("secret.md"),
        "# Secret\n\nThe walrus password.\n",
    )
    .unwrap();
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(corpus.join("notes")).unwrap();
    std::fs::write(corpus.join("notes/a.md"), "# A\n\nA note on narwhals.\n").unwrap();
    symlink("/etc", corpus.join("etc")).unwrap();
    symlink(&outside, corpus.join("out")).unwrap();
    symlink(outside.join("secret.md"), corpus.join("secret.md")).unwrap();
    symlink(corpus.join("notes"), corpus.join("again")).unwrap();
    symlink(corpus.join("notes/a.md"), corpus.join("a-link.md")).unwrap();
    symlink(&corpus, corpus.join("notes/up")).unwrap();

    let report = kb.ingest(&corpus);
    assert_eq!(report["new"], 1, "{report:#}");
    assert_eq!(report["skipped_symlink_outside_root"], 3, "{report:#}");
    assert_eq!(report["skipped_symlink_duplicate"], 2, "{report:#}");
    // notes/up, and again/up reached through the inner link.
    assert_eq!(report["skipped_symlink_loop"], 2, "{report:#}");
    assert_eq!(item(&report, "etc")["reason"], "symlink_outside_root");
    assert_eq!(item(&report, "a-link.md")["reason"], "symlink_duplicate");
    let (hits, code) = kb.search("walrus", 3);
    assert_eq!((code, hits.len()), (1, 0), "nothing from outside the root");
    let (hits, _) = kb.search("narwhals", 3);
    assert_eq!(hits[0]["doc_path"], "notes/a.md");
}

#[test]
fn fifos_are_skipped_without_blocking_and_odd_names_stay_distinct() {
    let kb = Kb::with_config(NO_VECTORS);
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let fifo = std::ffi::CString::new(corpus.join("pipe.md").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    for (name, word) in [(&b"bad\xff.md"[..], "ocelot"), (b"bad\xfe.md", "platypus")] {
        std::fs::write(
            corpus.join(OsStr::from_bytes(name)),
            format!("# Odd\n\nA {word} lives here.\n"),
        )
        .unwrap();
    }
    let started = Instant::now();
    let report = kb.ingest(&corpus);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(report["new"], 2, "{report:#}");
    assert_eq!(report["skipped_not_regular_file"], 1, "{report:#}");
    let mut paths = Vec::new();
    for word in ["ocelot", "platypus"] {
        let (hits, code) = kb.search(word, 1);
        assert_eq!(code, 0, "{word}");
        paths.push(hits[0]["doc_path"].as_str().unwrap().to_string());
    }
    assert_eq!(paths, ["bad\u{FFFD}ff.md", "bad\u{FFFD}fe.md"]);
    // Unchanged on a second run: both names map back to their files.
    let again = kb.ingest(&corpus);
    assert_eq!(again["skipped_unchanged"], 2, "{again:#}");
    assert_eq!(again["removed"], 0);
}

#[test]
fn names_spelled_in_two_unicode_forms_are_reported_as_such() {
    let kb = Kb::with_config(NO_VECTORS);
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    // One name in NFC (U+00E9) and in NFD (e + U+0301); the NFD spelling
    // sorts first, so it is the one indexed.
    let (nfc, nfd) = ("caf\u{e9}.md", "cafe\u{301}.md");
    std::fs::write(corpus.join(nfd), "# Cafe\n\nThe decomposed capybara.\n").unwrap();
    std::fs::write(corpus.join(nfc), "# Cafe\n\nThe composed chinchilla.\n").unwrap();
    std::fs::write(corpus.join("other.md"), "# Other\n\nA quokka.\n").unwrap();
    for run in 0..2 {
        let (report, _) = kb.json(&["ingest", corpus.to_str().unwrap()]);
        assert_eq!(report["errors"], 1, "run {run}: {report:#}");
        let errors = items(&report, "error");
        assert_eq!(errors.len(), 1, "run {run}: {report:#}");
        let twin = errors[0];
        assert_eq!(twin["doc_path"], nfc, "{twin}");
        let message = twin["error"].as_str().unwrap_or_default();
        assert!(
            message.contains("two Unicode forms") && message.contains("rename one"),
            "run {run}: {twin}"
        );
        assert!(!message.contains("[workspace] root"), "{twin}");
    }
    let (hits, _) = kb.search("capybara", 1);
    assert_eq!(hits[0]["doc_path"], nfc, "indexed under the NFC name");
    let (hits, code) = kb.search("chinchilla", 1);
    assert_eq!((code, hits.len()), (1, 0), "{hits:?}");
    // With the NFD spelling gone, the NFC file is the document of that name.
    std::fs::remove_file(corpus.join(nfd)).unwrap();
    let report = kb.ingest(&corpus);
    assert_eq!(report["errors"], 0, "{report:#}");
    let (hits, _) = kb.search("chinchilla", 1);
    assert_eq!(hits[0]["doc_path"], nfc, "{hits:?}");
    let (hits, code) = kb.search("capybara", 1);
    assert_eq!((code, hits.len()), (1, 0), "{hits:?}");
    let (hits, _) = kb.search("quokka", 1);
    assert_eq!(
        hits[0]["doc_path"], "other.md",
        "the rest of the tree indexed"
    );
}

#[test]
fn plugin_names_are_checked_before_any_filesystem_operation() {
    let kb = Kb::new();
    let victim = kb.dir.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "x").unwrap();
    std::fs::create_dir_all(kb.data_dir().join("plugins")).unwrap();
    for name in ["../../victim", "../victim", "/tmp", "a/b", ".."] {
        let out = kb.run(&["plugin", "remove", name]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("must be lowercase letters"), "{stderr}");
    }
    assert!(
        victim.join("keep.txt").is_file(),
        "nothing outside was removed"
    );
}

#[test]
fn install_refuses_what_the_registry_could_not_load_later() {
    let kb = Kb::new();
    let long_name = "n".repeat(300);
    let cases = [
        ("handles=*.x,a[b;".to_string(), "file pattern `a[b`"),
        (
            "handles_count=100000;".to_string(),
            "100000 file patterns (limit 256)",
        ),
        (format!("name={long_name};"), "is 300 bytes (limit 64)"),
        ("version=1.0;".to_string(), "is not semver"),
        ("name=Bad Name;".to_string(), "must be lowercase letters"),
    ];
    for (overrides, expected) in &cases {
        let wasm = hostile_variant(kb.dir.path(), overrides);
        let out = kb.run(&["plugin", "install", wasm.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{overrides}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{overrides}: {stderr}");
        assert!(stderr.len() < 2048, "bounded error: {} bytes", stderr.len());
    }
    assert!(
        std::fs::read_dir(kb.data_dir().join("plugins"))
            .map(|d| d.count() == 0)
            .unwrap_or(true),
        "nothing installed"
    );

    // Replacing the fallback plugin needs the flag and says what it replaces.
    let text = hostile_variant(kb.dir.path(), "name=text;version=9.0.0;");
    let out = kb.run(&["plugin", "install", text.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--replace-builtin"));
    let out = kb.run(&[
        "plugin",
        "install",
        text.to_str().unwrap(),
        "--replace-builtin",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("replaces built-in text "));
    // An older version than the built-in needs --allow-downgrade too.
    let old = hostile_variant(kb.dir.path(), "name=yaml;version=0.0.1;");
    let out = kb.run(&[
        "plugin",
        "install",
        old.to_str().unwrap(),
        "--replace-builtin",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-downgrade"));
}
