//! The plugin platform: install (file, URL, hash pin), refusals, routing,
//! per-plugin re-index on upgrade, rollback, removal, `plugin test`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Kb, NO_EMBEDDINGS, copy_tree, hostile_wasm, sample_corpus};

/// The built-in component called `name`, as the binary embeds it, written
/// to `dir/<name>.wasm`.
fn built_in(name: &str, dir: &Path) -> PathBuf {
    let (_, bytes) = kebab::plugin::registry::BUILT_IN
        .iter()
        .find(|(n, _)| *n == name)
        .expect("a built-in plugin");
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn markdown_next() -> PathBuf {
    PathBuf::from(kebab_test_artifacts::MARKDOWN_NEXT_WASM)
}

fn docs_by_path(kb: &Kb) -> std::collections::HashMap<String, Value> {
    let (docs, _) = kb.json(&["list", "docs"]);
    docs.as_array()
        .unwrap()
        .iter()
        .map(|d| (d["doc_path"].as_str().unwrap().to_string(), d.clone()))
        .collect()
}

#[test]
fn upgrading_a_plugin_reindexes_exactly_its_documents() {
    let kb = Kb::with_config("[chunking]\ntarget_tokens = 60\noverlap_tokens = 0\n");
    let corpus = kb.dir.path().join("corpus");
    copy_tree(&sample_corpus(), &corpus);
    kb.ingest(&corpus);
    let before = docs_by_path(&kb);
    let markdown_docs = before
        .values()
        .filter(|d| d["plugin"] == "markdown")
        .count();
    let text_docs = before.values().filter(|d| d["plugin"] == "text").count();
    assert!(markdown_docs >= 20 && text_docs == 2);
    std::thread::sleep(std::time::Duration::from_millis(1100)); // distinct updated_at seconds

    // Replacing a built-in plugin needs an explicit flag, and says so.
    let refused = kb.run(&["plugin", "install", markdown_next().to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--replace-builtin") && stderr.contains("built-in markdown"),
        "{stderr}"
    );
    let (installed, code) = kb.json(&[
        "plugin",
        "install",
        markdown_next().to_str().unwrap(),
        "--replace-builtin",
    ]);
    assert_eq!(code, 0, "{installed}");
    assert!(
        installed["replaces_builtin"]
            .as_str()
            .is_some_and(|r| r.starts_with("built-in markdown ")),
        "{installed}"
    );
    assert_eq!(
        (installed["name"].as_str(), installed["version"].as_str()),
        (Some("markdown"), Some("1.1.0"))
    );
    assert_eq!(installed["documents_to_reindex"], markdown_docs);

    let report = kb.ingest(&corpus);
    assert_eq!(report["reindexed"], markdown_docs, "{report:#}");
    assert_eq!(
        (report["new"].as_u64(), report["updated"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(report["skipped_unchanged"], text_docs);
    let after = docs_by_path(&kb);
    for (path, doc) in &after {
        let old = &before[path];
        if doc["plugin"] == "markdown" {
            assert_eq!(doc["plugin_version"], "1.1.0");
            assert_eq!(doc["chunker_version"], "md-heading-v2");
            assert_ne!(doc["updated_at"], old["updated_at"], "{path} re-parsed");
        } else {
            assert_eq!(doc, old, "{path} untouched");
        }
    }
    let total = |docs: &std::collections::HashMap<String, Value>| -> u64 {
        docs.values()
            .filter(|d| d["plugin"] == "markdown")
            .map(|d| d["chunk_count"].as_u64().unwrap())
            .sum()
    };
    assert!(
        total(&after) > total(&before),
        "half-size chunks: more of them"
    );
    let (hits, _) = kb.search("leader election", 3);
    assert_eq!(
        hits[0]["chunker_version"], "md-heading-v2",
        "search sees the new chunks"
    );

    // On demand: only the text plugin's documents.
    let (again, _) = kb.json(&["reindex", "--plugin", "text"]);
    assert_eq!(
        (again["reindexed"].as_u64(), again["scanned"].as_u64()),
        (Some(text_docs as u64), Some(text_docs as u64))
    );

    // Rollback to the built-in version needs --allow-downgrade.
    let old = built_in("markdown", kb.dir.path());
    let out = kb.run(&[
        "plugin",
        "install",
        old.to_str().unwrap(),
        "--replace-builtin",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-downgrade"));
    let (rolled, code) = kb.json(&[
        "plugin",
        "install",
        old.to_str().unwrap(),
        "--allow-downgrade",
        "--replace-builtin",
    ]);
    assert_eq!(code, 0);
    assert_eq!(rolled["rolled_back"], serde_json::json!(["1.1.0"]));
    let report = kb.ingest(&corpus);
    assert_eq!(report["reindexed"], markdown_docs);

    // Removing the installed copy falls back to the built-in markdown plugin.
    let (removed, _) = kb.json(&["plugin", "remove", "markdown"]);
    assert_eq!(
        (removed["rerouted"].as_u64(), removed["orphaned"].as_u64()),
        (Some(markdown_docs as u64), Some(0))
    );
    let (list, _) = kb.json(&["plugin", "list"]);
    let md = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "markdown")
        .unwrap()
        .clone();
    assert_eq!(
        (md["origin"].as_str(), md["documents"].as_u64()),
        (Some("built-in"), Some(markdown_docs as u64))
    );
}

fn serve_once(body: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/hostile.wasm",
        listener.local_addr().unwrap().port()
    );
    std::thread::spawn(move || {
        for conn in listener.incoming().take(2) {
            let mut conn = conn.unwrap();
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: application/wasm\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(&body);
        }
    });
    url
}

#[test]
fn install_from_a_url_with_a_pinned_hash_and_route_to_it() {
    let kb = Kb::new();
    let bytes = std::fs::read(hostile_wasm()).unwrap();
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let url = serve_once(bytes);
    let out = kb.run(&["plugin", "install", &url, "--blake3", &"0".repeat(64)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("blake3 mismatch"));
    let (done, code) = kb.json(&["plugin", "install", &url, "--blake3", &hash]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["name"], "hostile");

    let out = kb.run(&["plugin", "which", "notes/x.hostile"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("→ hostile 0.1.0 (installed"));
    let (which, code) = kb.json(&["plugin", "which", "notes/x.unknown"]);
    assert_eq!((code, which["plugin"].clone()), (1, Value::Null));
    let (info, _) = kb.json(&["plugin", "info", "hostile"]);
    assert_eq!(info["plugins"][0]["source"], url);
}

#[test]
fn routes_and_disabled_plugins_change_the_choice() {
    let kb = Kb::with_config(
        "[plugins]\ndisabled = [\"yaml\"]\n[plugins.routes]\n\"notes/*.txt\" = \"markdown\"\n",
    );
    let (which, _) = kb.json(&["plugin", "which", "notes/a.txt"]);
    assert_eq!(
        (which["plugin"].as_str(), which["reason"].as_str()),
        (Some("markdown"), Some("route notes/*.txt"))
    );
    let (which, _) = kb.json(&["plugin", "which", "other/a.txt"]);
    assert_eq!(which["plugin"], "text");
    let (which, code) = kb.json(&["plugin", "which", "deploy.yaml"]);
    assert_eq!(
        (code, which["plugin"].clone()),
        (1, Value::Null),
        "disabled plugin is not routed to"
    );
}

#[test]
fn refusals_name_the_problem() {
    let kb = Kb::new();
    let dir = kb.dir.path();
    let not_wasm = dir.join("junk.wasm");
    std::fs::write(&not_wasm, b"this is not webassembly").unwrap();
    let empty_component = dir.join("empty.wasm");
    std::fs::write(
        &empty_component,
        [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00],
    )
    .unwrap();
    // The same plugin built against a future API major: the major in the
    // parser export's version (`parser@1.x.y`) becomes 2 (same length, so
    // still valid).
    let mut future = std::fs::read(hostile_wasm()).unwrap();
    let from = b"kebab:plugin/parser@1.";
    let mut patched = 0;
    for i in 0..future.len().saturating_sub(from.len()) {
        if &future[i..i + from.len()] == from {
            future[i + from.len() - 2] = b'2';
            patched += 1;
        }
    }
    assert!(patched > 0);
    let future_path = dir.join("future.wasm");
    std::fs::write(&future_path, future).unwrap();
    for (file, expected) in [
        (&not_wasm, "not a loadable WebAssembly component"),
        (&empty_component, "does not export `kebab:plugin/parser`"),
        (&future_path, "is incompatible with host API 1."),
    ] {
        let out = kb.run(&["plugin", "install", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{file:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{file:?}: {stderr}");
        if file == &future_path {
            assert!(stderr.contains("plugin API 2."), "{stderr}");
        }
    }
    assert!(
        !kb.data_dir().join("plugins").exists()
            || std::fs::read_dir(kb.data_dir().join("plugins"))
                .unwrap()
                .next()
                .is_none()
    );
}

#[test]
fn plugin_test_checks_validity_and_determinism() {
    let kb = Kb::with_config("[plugins]\ntimeout_ms = 300\n");
    let dir = kb.dir.path();
    std::fs::write(dir.join("good.hostile"), "fine words\n").unwrap();
    std::fs::write(dir.join("bad.hostile"), "BADSPAN words\n").unwrap();
    std::fs::write(dir.join("slow.hostile"), "LOOP words\n").unwrap();
    let wasm = hostile_wasm();
    let (r, code) = kb.json(&[
        "plugin",
        "test",
        wasm.to_str().unwrap(),
        dir.join("good.hostile").to_str().unwrap(),
        dir.join("bad.hostile").to_str().unwrap(),
        dir.join("slow.hostile").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    let files = r["files"].as_array().unwrap();
    assert_eq!(files[0]["ok"], true);
    assert!(
        files[1]["error"]
            .as_str()
            .unwrap()
            .contains("past the file")
    );
    assert!(files[2]["error"].as_str().unwrap().contains("timed out"));
    let (ok, code) = kb.json(&[
        "plugin",
        "test",
        "markdown",
        sample_corpus()
            .join("tech/raft-consensus.md")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!((code, ok["ok"].as_bool()), (0, Some(true)), "{ok}");
}

/// Example plugins in Python (componentize-py) and JavaScript (jco), built
/// by `scripts/build-example-plugins.sh` (run by `scripts/test.sh`, which
/// sets `KEBAB_EXAMPLE_PLUGINS`), installed and searched.
#[test]
fn python_and_javascript_plugins_install_and_index() {
    let Some(dir) = std::env::var_os("KEBAB_EXAMPLE_PLUGINS") else {
        eprintln!(
            "KEBAB_EXAMPLE_PLUGINS unset: run scripts/test.sh to build the Python and JS examples"
        );
        return;
    };
    let dir = PathBuf::from(dir);
    let kb = Kb::new();
    // The CSV plugin is built against the frozen 1.0.0 contract, the
    // notebook plugin against 1.1.0: the host binds each with its own
    // version's bindings. CSV files are the built-in sheets plugin's, so
    // the CSV plugin takes them only when told to.
    for (file, name, api, flags) in [
        ("csv.wasm", "csv", "1.0.0", &["--replace-builtin"][..]),
        ("ipynb.wasm", "ipynb", "1.1.0", &[][..]),
    ] {
        let path = dir.join(file);
        let args = [&["plugin", "install", path.to_str().unwrap()][..], flags].concat();
        let (done, code) = kb.json(&args);
        assert_eq!(code, 0, "{done}");
        assert_eq!(
            (done["name"].as_str(), done["api_version"].as_str()),
            (Some(name), Some(api))
        );
    }
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("animals.csv"),
        "name,species,habitat\nOkapi,Okapia johnstoni,rainforest\nQuokka,Setonix brachyurus,\"island, scrub\"\n",
    )
    .unwrap();
    std::fs::write(
        corpus.join("stations.tsv"),
        "station\tlatitude\nHalley\t-75.6\nVostok\t-78.5\n",
    )
    .unwrap();
    std::fs::write(
        corpus.join("analysis.ipynb"),
        r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "a1",
   "metadata": {},
   "source": ["# Penguin analysis\n", "Flipper length against body mass for the gentoo colony."]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "a2",
   "metadata": {},
   "outputs": [],
   "source": ["import pandas as pd\n", "df = pd.read_csv('penguins.csv')"]
  }
 ],
 "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
"##,
    )
    .unwrap();
    let report = kb.ingest(&corpus);
    assert_eq!(
        (report["new"].as_u64(), report["fallbacks"].as_u64()),
        (Some(3), Some(0)),
        "{report:#}"
    );

    let (hits, _) = kb.search("quokka island", 3);
    assert_eq!(hits[0]["doc_path"], "animals.csv");
    assert_eq!(hits[0]["chunker_version"], "csv-rows-v1");
    let (hits, _) = kb.search("Vostok", 3);
    assert_eq!(hits[0]["doc_path"], "stations.tsv");
    let (hits, _) = kb.search("gentoo flipper", 3);
    assert_eq!(hits[0]["doc_path"], "analysis.ipynb");
    assert_eq!(hits[0]["chunker_version"], "ipynb-cell-v1");
    assert_eq!(
        (
            hits[0]["citation"]["start"].as_u64(),
            hits[0]["citation"]["end"].as_u64()
        ),
        (Some(4), Some(9))
    );
    let (list, _) = kb.json(&["plugin", "list"]);
    let docs = |n: &str| {
        list["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == n)
            .unwrap()["documents"]
            .clone()
    };
    assert_eq!(
        (docs("csv"), docs("ipynb")),
        (serde_json::json!(2), serde_json::json!(1))
    );
}

/// `kebab plugin new` scaffolds build with their toolchains and pass
/// `kebab plugin test`. Rust always; Python and JavaScript when the example
/// toolchains are installed (`KEBAB_EXAMPLE_PLUGINS`, set by scripts/test.sh).
#[test]
fn scaffolded_plugins_build_and_pass_plugin_test() {
    let kb = Kb::new();
    let dir = kb.dir.path().join("projects");
    std::fs::create_dir_all(&dir).unwrap();
    let sample = kb.dir.path().join("sample.txt");
    std::fs::write(&sample, "first paragraph\n\nsecond paragraph\n").unwrap();
    let mut langs = vec![("rust", "target/wasm32-wasip2/release/demo_rust.wasm")];
    if std::env::var_os("KEBAB_EXAMPLE_PLUGINS").is_some() {
        langs.push(("python", "demo-python.wasm"));
        langs.push(("js", "demo-js.wasm"));
    }
    for (lang, artifact) in langs {
        let name = format!("demo-{lang}");
        let out = kb.run(&[
            "plugin",
            "new",
            &name,
            "--lang",
            lang,
            "--dir",
            dir.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let project = dir.join(&name);
        let build = std::process::Command::new("bash")
            .arg(project.join("build.sh"))
            .env("CARGO_TARGET_DIR", project.join("target"))
            .output()
            .unwrap();
        assert!(
            build.status.success(),
            "{lang}: {}",
            String::from_utf8_lossy(&build.stderr)
        );
        let wasm = project.join(artifact);
        let (r, code) = kb.json(&[
            "plugin",
            "test",
            wasm.to_str().unwrap(),
            sample.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{lang}: {r}");
        assert_eq!(r["plugin"], name);
        assert!(r["files"][0]["chunks"].as_u64().unwrap() >= 1);
    }
}

/// The cached compiled components under `cache`.
fn compiled_in(cache: &Path) -> usize {
    std::fs::read_dir(cache.join("components"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".cwasm"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_first_run_compiles_the_plugins_in_a_process_of_their_own_and_a_later_run_compiles_none() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let cache = tempfile::tempdir().unwrap();
    let ingest = |kb: &Kb| {
        let out = kb
            .cmd(&["--verbose", "ingest", sample_corpus().to_str().unwrap()])
            .env("KEBAB_CACHE_DIR", cache.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    let first = ingest(&kb);
    assert!(
        first.contains("plugins compiled in a process of their own"),
        "{first}"
    );
    // Every built-in plugin is in the cache the run then mapped.
    let compiled = compiled_in(cache.path());
    assert!(compiled >= 11, "{compiled} compiled components");
    let again = ingest(&kb);
    assert!(!again.contains("compiled in a process"), "{again}");
    assert_eq!(compiled_in(cache.path()), compiled);
}
