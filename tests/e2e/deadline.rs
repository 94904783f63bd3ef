//! Plugin deadlines that always fire: a guest sleeping in a WASI call (not
//! running wasm) is stopped at its deadline in `parse`, `chunk-document`
//! and `info()`; `info()` is paid once per component; Ctrl-C stops a run
//! within a second and an aborted ingest exits 130 after keeping what
//! finished.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Kb, hostile_variant, hostile_wasm, item};

/// Send SIGINT, as Ctrl-C does.
fn interrupt(child: &Child) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
}

/// Wait for `child` at most `limit`; its exit code and how long it took.
fn wait_within(child: &mut Child, limit: Duration) -> (Option<i32>, Duration) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return (status.code(), started.elapsed());
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_plugin_sleeping_in_a_host_call_is_stopped_at_its_deadline() {
    let kb = Kb::with_config("[plugins]\ntimeout_ms = 500\n");
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("parse.hostile"), "SLEEPPARSE aardvark\n").unwrap();
    std::fs::write(corpus.join("chunk.hostile"), "SLEEP bonobo\n").unwrap();
    let started = Instant::now();
    let report = kb.ingest(&corpus);
    let took = started.elapsed();
    // Both calls sleep 60 s; each must end at 0.5 s (+ margin), in parallel.
    assert!(took < Duration::from_secs(8), "ingest took {took:?}");
    for name in ["parse.hostile", "chunk.hostile"] {
        let it = item(&report, name);
        assert_eq!(
            it["fallback"], "hostile plugin timed out after 500 ms",
            "{it}"
        );
        assert_eq!(it["kind"], "new", "indexed by the text fallback: {it}");
    }
}

#[test]
fn info_is_bounded_by_the_deadline_and_paid_once_per_component() {
    let kb = Kb::with_config("[plugins]\ntimeout_ms = 800\n");
    let sleepy = hostile_variant(kb.dir.path(), "name=sleepy;sleep_ms=60000;");
    let started = Instant::now();
    let out = kb.run(&["plugin", "install", sleepy.to_str().unwrap()]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("info() failed: timed out after 800 ms"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(6), "install took {took:?}");

    // A slow but finite info(): paid by install, then read from the cache.
    let kb = Kb::with_config("[plugins]\ntimeout_ms = 5000\n");
    let slow = hostile_variant(kb.dir.path(), "name=slow;sleep_ms=700;");
    let cache = kb.dir.path().join("cache");
    let run = |args: &[&str]| -> (std::process::Output, Duration) {
        let started = Instant::now();
        let out = kb
            .cmd(args)
            .env("KEBAB_CACHE_DIR", &cache)
            .output()
            .unwrap();
        (out, started.elapsed())
    };
    let (out, took) = run(&["plugin", "install", slow.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        took >= Duration::from_millis(700),
        "install ran info(): {took:?}"
    );
    let info_files = || {
        std::fs::read_dir(cache.join("components"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".info.json"))
            .filter(|e| {
                std::fs::read_to_string(e.path())
                    .unwrap_or_default()
                    .contains("\"slow\"")
            })
            .count()
    };
    assert_eq!(info_files(), 1, "info() cached, keyed by the component");
    let cached = std::fs::read_dir(cache.join("components"))
        .unwrap()
        .flatten()
        .find(|e| {
            e.file_name().to_string_lossy().ends_with(".info.json")
                && std::fs::read_to_string(e.path())
                    .unwrap()
                    .contains("\"slow\"")
        })
        .unwrap()
        .path();
    let stamp = std::fs::metadata(&cached).unwrap().modified().unwrap();
    for args in [
        &["plugin", "list"][..],
        &["plugin", "which", "x.hostile"],
        &["plugin", "info", "slow"],
        &["doctor"],
    ] {
        let (out, _) = run(args);
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "{args:?}: {out:?}"
        );
    }
    assert_eq!(
        std::fs::metadata(&cached).unwrap().modified().unwrap(),
        stamp,
        "later commands read the cached info() instead of calling it"
    );
    // And they are fast because of it: a sleeping info() would cost 0.7 s each.
    let (_, took) = run(&["plugin", "info", "slow"]);
    assert!(
        took < Duration::from_millis(700),
        "plugin info took {took:?}"
    );
}

#[test]
fn ctrl_c_during_a_plugin_call_stops_ingest_with_130_and_keeps_what_finished() {
    let kb = Kb::with_config(
        "[plugins]\ntimeout_ms = 120000\n[indexing]\nmax_parallel_extractors = 2\n[models.embedding]\nmodel = \"\"\n",
    );
    kb.install_plugin("hostile", "0.1.0", &hostile_wasm());
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("a-note.md"),
        "# Note\n\nThe quokka finished first.\n",
    )
    .unwrap();
    std::fs::write(corpus.join("z.hostile"), "SLEEP wombat\n").unwrap();
    let mut child = kb
        .cmd(&["--json", "ingest", corpus.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut note_done, mut sleeping) = (false, false);
    while !(note_done && sleeping) {
        let line = lines.next().expect("progress line").unwrap();
        note_done |= line.contains("asset_finished") && line.contains("a-note.md");
        sleeping |= line.contains("asset_started") && line.contains("z.hostile");
    }
    interrupt(&child);
    let (code, took) = wait_within(&mut child, Duration::from_secs(10));
    assert!(took < Duration::from_millis(1500), "stopped after {took:?}");
    assert_eq!(code, Some(130));
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let report: serde_json::Value = serde_json::from_str(rest.last().expect("report")).unwrap();
    assert_eq!(report["aborted"], true, "{report}");
    assert_eq!(report["new"], 1, "{report}");
    let (hits, code) = kb.search("quokka", 3);
    assert_eq!(code, 0, "what finished was written");
    assert_eq!(hits[0]["doc_path"], "a-note.md");
    let (hits, _) = kb.search("wombat", 3);
    assert!(hits.is_empty(), "the interrupted file is not half-written");
}

#[test]
fn ctrl_c_stops_an_install_whose_info_never_returns() {
    let kb = Kb::with_config("[plugins]\ntimeout_ms = 120000\n");
    let sleepy = hostile_variant(kb.dir.path(), "name=sleepier;sleep_ms=100000;");
    let mut child = kb
        .cmd(&["plugin", "install", sleepy.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    interrupt(&child);
    let (code, took) = wait_within(&mut child, Duration::from_secs(10));
    assert!(took < Duration::from_secs(1), "stopped after {took:?}");
    assert_eq!(code, Some(130));
    assert!(
        !kb.data_dir().join("plugins/sleepier").exists(),
        "nothing installed"
    );
}
