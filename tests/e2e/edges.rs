//! Trust at the edges, driven through the real binary: what a one-off
//! ingest accepts (never a device or a FIFO), reserved root names, a
//! closed stdout, numeric settings out of range (from the config file and
//! the environment), a data directory private to its owner with locks
//! another user can neither take nor fake, and a lexical change log that
//! was dropped or pushed to the end of its numbers.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Kb, NO_EMBEDDINGS, Unprivileged, sample_corpus};

fn root_names(kb: &Kb) -> Vec<String> {
    let (roots, code) = kb.json(&["roots"]);
    assert_eq!(code, 0, "{roots}");
    roots["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_device_or_a_fifo_is_refused_and_adds_no_root() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(&sample_corpus());
    let before = root_names(&kb);
    let fifo = kb.dir.path().join("pipes/feed");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    for target in [Path::new("/dev/zero"), Path::new("/dev/null"), &fifo] {
        let started = Instant::now();
        let (err, code) = kb.error(&["ingest", target.to_str().unwrap()], &[]);
        assert_eq!(
            (code, err["code"].as_str()),
            (2, Some("invalid_input")),
            "{err}"
        );
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("not a directory or a regular file"),
            "{err}"
        );
        assert!(
            err["hint"].as_str().unwrap().contains("kebab ingest -"),
            "{err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "it read the device"
        );
    }
    assert_eq!(
        root_names(&kb),
        before,
        "no root for /dev or the FIFO's folder"
    );
}

#[test]
fn a_root_cannot_take_a_reserved_name() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let notes = kb.dir.path().join("_external");
    crate::support::copy_tree(&sample_corpus(), &notes);
    kb.ingest(&notes);
    // A folder named like kebab's own root gets a name of its own.
    assert_eq!(root_names(&kb), vec!["external"]);
    for reserved in ["_external", "_anything"] {
        let (err, code) = kb.error(&["roots", "rename", "external", reserved], &[]);
        assert_eq!(
            (code, err["code"].as_str()),
            (2, Some("invalid_input")),
            "{err}"
        );
        assert!(
            err["message"].as_str().unwrap().contains("reserved"),
            "{err}"
        );
    }
    // A one-off file still lands in the real `_external` root.
    let paper = kb.dir.path().join("paper.md");
    std::fs::write(&paper, "# Paper\n\none-off words\n").unwrap();
    kb.ingest(&paper);
    let mut names = root_names(&kb);
    names.sort();
    assert_eq!(names, vec!["_external", "external"]);
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(&sample_corpus());
    for args in [
        &["list", "docs"][..],
        &["--json", "list", "docs"],
        &["search", "the", "--k", "50"],
        &["--json", "search", "the"],
    ] {
        // Like `kebab list docs | head -c 10`: the reader is gone before
        // kebab writes.
        let mut child = kb
            .cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

#[test]
fn every_numeric_setting_out_of_its_range_is_config_invalid_naming_its_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "KEBAB_RAG_MULTI_HOP_SECS",
            "9223372036854775807",
            "multi_hop_secs",
        ),
        ("KEBAB_RAG_MULTI_HOP_SECS", "0", "multi_hop_secs"),
        ("KEBAB_RAG_SCORE_GATE", "-1", "score_gate"),
        ("KEBAB_RAG_SCORE_GATE", "nan", "score_gate"),
        ("KEBAB_RAG_SCORE_GATE", "2", "score_gate"),
        ("KEBAB_RAG_SCORE_GATE", "inf", "score_gate"),
        ("KEBAB_SEARCH_BLEND_WEIGHT", "1.5", "blend_weight"),
        ("KEBAB_SEARCH_MIN_VECTOR_SCORE", "nan", "min_vector_score"),
        ("KEBAB_SEARCH_RRF_K", "4000000000", "rrf_k"),
        ("KEBAB_MODELS_LLM_TEMPERATURE", "-0.5", "temperature"),
        ("KEBAB_MODELS_EMBEDDING_BATCH_SIZE", "0", "batch_size"),
    ];
    let kb = Kb::with_config(NO_EMBEDDINGS);
    for (var, value, key) in cases {
        let (err, code) = kb.error(&["schema"], &[(var, value)]);
        assert_eq!(
            (code, err["code"].as_str()),
            (2, Some("config_invalid")),
            "{var}={value}: {err}"
        );
        assert!(
            err["message"].as_str().unwrap().contains(key),
            "{var}={value} does not name {key}: {err}"
        );
    }
    // The same from the config file.
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}[rag]\nscore_gate = -1.0\n"));
    let (err, code) = kb.error(&["ask", "anything"], &[]);
    assert_eq!(
        (code, err["code"].as_str()),
        (2, Some("config_invalid")),
        "{err}"
    );
    assert!(
        err["message"].as_str().unwrap().contains("score_gate"),
        "{err}"
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_data_directory_is_private_and_an_old_open_one_is_tightened() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(&sample_corpus());
    let data = kb.data_dir();
    assert_eq!(mode(&data), 0o700);
    for file in ["kebab.sqlite", "writer.lock"] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file}");
    }
    // A one-off copy of a private file stays private.
    let secret = kb.dir.path().join("secret.md");
    std::fs::write(&secret, "# Secret\n\nprivateword\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    kb.ingest(&secret);
    let kept: Vec<_> = std::fs::read_dir(data.join("_external"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!kept.is_empty());
    for k in &kept {
        assert_eq!(mode(k) & 0o077, 0, "{} readable by others", k.display());
    }
    // A data directory an older kebab left open is closed, with a note.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        data.join("kebab.sqlite"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let out = kb.run(&["search", "sourdough"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("made it private"), "{stderr}");
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("kebab.sqlite")), 0o600);
}

/// Another user (`nobody` under root) holding `file`'s lock, opened
/// through a mode an older kebab left it with; stopped when dropped.
struct ForeignLock(std::process::Child);

impl ForeignLock {
    fn hold(user: &Unprivileged<'_>, file: &Path) -> Option<ForeignLock> {
        if !user.is_other_user() {
            return None;
        }
        std::fs::set_permissions(
            file.parent().unwrap(),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let child = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args(["flock", "--exclusive", "--nonblock"])
            .arg(file)
            .args(["sleep", "60"])
            .spawn()
            .unwrap();
        // Held once the kernel lists it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read_to_string("/proc/locks")
            .unwrap()
            .contains(&format!(" {} ", child.id()))
        {
            assert!(
                Instant::now() < deadline,
                "the foreign lock was never taken"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(ForeignLock(child))
    }
}

impl Drop for ForeignLock {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_lock_held_by_another_user_is_named_and_never_waited_on_or_trusted() {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    kb.ingest(&sample_corpus());
    let user = Unprivileged::new(&kb);
    let data = kb.data_dir();
    let Some(writer) = ForeignLock::hold(&user, &data.join("writer.lock")) else {
        eprintln!("skipped: the tests do not run as root, so no second user is at hand");
        return;
    };
    // The owner's ingest does not wait without end: it says who holds it.
    let started = Instant::now();
    let (err, code) = kb.error(&["ingest", sample_corpus().to_str().unwrap()], &[]);
    assert_eq!(
        (code, err["code"].as_str()),
        (2, Some("locked_by_other_user")),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(err["hint"].as_str().unwrap().contains("chmod 700"), "{err}");
    drop(writer);

    // serve.lock held by another user, naming a URL a stranger listens at:
    // the owner's server refuses to start, and `kebab mcp` sends nothing
    // there (neither queries nor the token) and answers in process.
    let stranger = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", stranger.local_addr().unwrap());
    std::fs::write(
        data.join("serve.lock"),
        format!("4242\n{url}\n{}\n", "a".repeat(64)),
    )
    .unwrap();
    let _serve = ForeignLock::hold(&user, &data.join("serve.lock")).unwrap();
    let (err, code) = kb.error(&["serve", "--listen", "127.0.0.1:0"], &[]);
    assert_eq!(
        (code, err["code"].as_str()),
        (2, Some("locked_by_other_user")),
        "{err}"
    );
    stranger.set_nonblocking(true).unwrap();
    let report = crate::mcp::report(crate::mcp::spawn_client(&serde_json::json!({
        "command": kb.binary,
        "args": ["mcp"],
        "env": {
            "KEBAB_CONFIG": kb.dir.path().join("config.toml"),
            "KEBAB_DATA_DIR": data,
            "KEBAB_CACHE_DIR": crate::support::cache_dir(),
            "KEBAB_SERVE_TOKEN": "the-owners-token",
        },
        "steps": [crate::mcp::call("search", serde_json::json!({"query": "sourdough"}))],
    })));
    assert!(
        report.to_string().contains("sourdough"),
        "answered in process: {report}"
    );
    assert!(
        stranger.accept().is_err(),
        "kebab mcp connected to a server it could not verify"
    );
}

#[test]
fn a_lexical_change_log_at_the_end_of_its_numbers_or_dropped_is_healed() {
    for breakage in [
        "INSERT INTO lexical_log(seq, chunk_rowid) VALUES (9223372036854775807, 1)",
        "DROP TABLE lexical_log",
    ] {
        let corpus = tempfile::tempdir().unwrap();
        crate::support::copy_tree(&sample_corpus(), corpus.path());
        let kb = Kb::with_config(NO_EMBEDDINGS);
        kb.ingest(corpus.path());
        let (resp, code) = kb.json(&["search", "sourdough"]);
        assert_eq!(code, 0, "{resp}");
        let ids = |resp: &Value| -> Vec<Value> {
            resp["hits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["chunk_id"].clone())
                .collect()
        };
        let before = ids(&resp);
        let db = rusqlite::Connection::open(kb.data_dir().join("kebab.sqlite")).unwrap();
        db.execute_batch(breakage).unwrap();
        drop(db);

        // Search goes on (FTS5, with its own scores), doctor says what is
        // wrong.
        let (resp, code) = kb.json(&["search", "sourdough"]);
        assert_eq!(
            (code, ids(&resp)),
            (0, before.clone()),
            "{breakage}: {resp}"
        );
        let (doctor, code) = kb.json(&["doctor"]);
        assert_eq!(code, 3, "{breakage}: {doctor:#}");
        let lexical = crate::support::doctor_check(&doctor, "lexical_index");
        assert_eq!(lexical["ok"], false, "{breakage}: {lexical}");

        // The next ingest heals it and indexes what is new.
        std::fs::write(
            corpus.path().join("fresh.md"),
            "# Fresh\n\nA numbat digs after termites.\n",
        )
        .unwrap();
        let report = kb.ingest(corpus.path());
        assert_eq!(report["new"], 1, "{breakage}: {report:#}");
        assert!(
            report["warnings"].to_string().contains("change log"),
            "{breakage}: {report:#}"
        );
        let (resp, code) = kb.json(&["search", "numbat"]);
        assert_eq!(code, 0, "{breakage}: {resp}");
        assert_eq!(resp["hits"][0]["doc_path"], "fresh.md", "{breakage}");
        let (doctor, _) = kb.json(&["doctor"]);
        let lexical = crate::support::doctor_check(&doctor, "lexical_index");
        assert_eq!(lexical["ok"], true, "{breakage}: {lexical}");
    }
}
