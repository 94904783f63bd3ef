//! `kebab watch` on real file systems with real events: creates, edits,
//! deletes, renames, atomic saves, directory moves, a real `git checkout`
//! of 1 200 files, ignored paths, a root that vanishes, the fallback when a
//! root cannot be watched, restarts after `kill -9`, a manual ingest beside
//! the watcher, and `kebab mcp` answering from the watched index.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Kb, NO_EMBEDDINGS, embedding_config, hit_paths};

/// Quick batches, so each test waits well under a second per change.
const FAST: &str = "[watch]\nquiet_ms = 100\nmax_delay_ms = 500\nrescan_secs = 1\n";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A running `kebab --json watch`, its `watch_event.v1` lines on a channel.
struct Watcher {
    child: Child,
    lines: Receiver<Value>,
}

impl Watcher {
    fn start(kb: &Kb, roots: &[&Path]) -> Watcher {
        Watcher::start_with(kb, &[], roots)
    }

    /// [`Watcher::start`] with `options` after `watch`.
    fn start_with(kb: &Kb, options: &[&str], roots: &[&Path]) -> Watcher {
        let mut args = vec!["--json", "watch"];
        args.extend(options);
        args.extend(roots.iter().map(|r| r.to_str().unwrap()));
        let mut child = kb
            .cmd(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kebab watch");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let mut w = Watcher { child, lines };
        w.wait_for("the first sync", Duration::from_secs(120), |v| {
            v["event"] == "applied"
        });
        w
    }

    /// The first event `pred` accepts, within `timeout`.
    fn wait_for(&mut self, what: &str, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) if v["schema_version"] == "watch_event.v1" && pred(&v) => return v,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!("no {what} within {timeout:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("watcher ended before {what}"),
            }
        }
    }

    /// SIGTERM, then the exit code (within a minute).
    fn stop(&mut self) -> i32 {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the watcher ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The paths whose chunks hold `word` (lexical search).
fn found(kb: &Kb, word: &str) -> Vec<String> {
    let (resp, _) = kb.json(&["search", word, "--mode", "lexical", "--k", "50"]);
    let mut paths = hit_paths(&resp);
    paths.sort();
    paths.dedup();
    paths
}

/// Wait (up to `timeout`) until `word` is found exactly in `paths`.
fn eventually(kb: &Kb, word: &str, paths: &[&str], timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let now = found(kb, word);
        if now == paths {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "`{word}` found in {now:?}, expected {paths:?} within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

const SOON: Duration = Duration::from_secs(20);

#[test]
fn edits_of_every_kind_reach_the_index_and_ignored_paths_never_do() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let root = kb.dir.path().join("notes");
    write(&root.join("a.md"), "# A\n\naardvarkword first version\n");
    write(&root.join(".gitignore"), "*.log\nscratch/\n");
    let mut w = Watcher::start(&kb, &[&root]);
    assert_eq!(found(&kb, "aardvarkword"), vec!["a.md"]);

    // Create, then edit in place.
    write(&root.join("b.md"), "# B\n\nzebraword\n");
    eventually(&kb, "zebraword", &["b.md"], SOON);
    write(&root.join("a.md"), "# A\n\nquokkaword second version\n");
    eventually(&kb, "quokkaword", &["a.md"], SOON);
    eventually(&kb, "aardvarkword", &[], SOON);

    // An editor's atomic save: a temporary file renamed over the original.
    write(
        &root.join(".a.md.tmp~"),
        "# A\n\nwombatword third version\n",
    );
    std::fs::rename(root.join(".a.md.tmp~"), root.join("a.md")).unwrap();
    eventually(&kb, "wombatword", &["a.md"], SOON);
    eventually(&kb, "quokkaword", &[], SOON);

    // Rename and delete.
    std::fs::rename(root.join("b.md"), root.join("c.md")).unwrap();
    eventually(&kb, "zebraword", &["c.md"], SOON);
    std::fs::remove_file(root.join("c.md")).unwrap();
    eventually(&kb, "zebraword", &[], SOON);

    // A new directory tree, written at once; then moved; then deleted.
    write(&root.join("sub/deeper/x.md"), "# X\n\notterword\n");
    eventually(&kb, "otterword", &["sub/deeper/x.md"], SOON);
    std::fs::rename(root.join("sub"), root.join("moved")).unwrap();
    eventually(&kb, "otterword", &["moved/deeper/x.md"], SOON);
    write(&root.join("moved/deeper/y.md"), "# Y\n\nplatypusword\n");
    eventually(&kb, "platypusword", &["moved/deeper/y.md"], SOON);
    std::fs::remove_dir_all(root.join("moved")).unwrap();
    eventually(&kb, "otterword", &[], SOON);

    // Ignored: gitignored files and dirs, the built-in blacklist.
    write(&root.join("debug.log"), "ignoredword in a log\n");
    write(&root.join("scratch/s.md"), "# S\n\nignoredword scratch\n");
    write(
        &root.join("target/t.md"),
        "# T\n\nignoredword build output\n",
    );
    write(&root.join("d.md"), "# D\n\nsentinelword\n");
    eventually(&kb, "sentinelword", &["d.md"], SOON);
    // Later than the files above, and nothing of theirs came.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(found(&kb, "ignoredword"), Vec::<String>::new());

    // Fresh while watched; SIGTERM stops it and says it no longer watches.
    let (resp, _) = kb.json(&["search", "sentinelword"]);
    assert_eq!(resp["roots"][0]["watched"], true, "{resp}");
    assert_eq!(w.stop(), 130);
    let (resp, _) = kb.json(&["search", "sentinelword"]);
    assert_eq!(resp["roots"][0]["watched"], false, "{resp}");
}

#[test]
fn a_checkout_of_1200_files_is_applied_in_bounded_batches() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let repo = kb.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&repo)
            .args(args)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    for i in 0..1200 {
        write(
            &repo.join(format!("d{}/n{i}.md", i % 30)),
            &format!("# N{i}\n\nmainbranchword {i}\n"),
        );
    }
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "main"]);
    git(&["checkout", "-q", "-b", "other"]);
    for i in 0..1200 {
        write(
            &repo.join(format!("d{}/n{i}.md", i % 30)),
            &format!("# N{i}\n\notherbranchword {i}\n"),
        );
    }
    git(&["commit", "-q", "-am", "other"]);
    git(&["checkout", "-q", "main"]);

    let w = Watcher::start(&kb, &[&repo]);
    let started = Instant::now();
    git(&["checkout", "-q", "other"]);
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let (docs, _) = kb.json(&["list", "docs"]);
        let (resp, _) = kb.json(&["search", "mainbranchword", "--mode", "lexical"]);
        let (other, _) = kb.json(&["search", "otherbranchword", "--mode", "lexical", "--k", "5"]);
        let done = docs.as_array().unwrap().len() == 1200
            && resp["hits"].as_array().unwrap().is_empty()
            && other["hits"].as_array().unwrap().len() == 5;
        if done {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the index never matched the checkout"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!("checkout of 1200 files applied in {:?}", started.elapsed());
    drop(w);
}

#[test]
fn a_restart_after_kill_9_picks_up_what_changed_meanwhile() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let root = kb.dir.path().join("notes");
    write(&root.join("a.md"), "# A\n\nbeforeword\n");
    write(&root.join("gone.md"), "# G\n\nvanishword\n");
    let mut w = Watcher::start(&kb, &[&root]);
    w.child.kill().unwrap();
    w.child.wait().unwrap();
    // While nothing watches.
    write(&root.join("a.md"), "# A\n\nafterword\n");
    write(&root.join("new.md"), "# N\n\nnewword\n");
    std::fs::remove_file(root.join("gone.md")).unwrap();
    // A watcher started with no root named watches every root of the index.
    let w2 = Watcher::start(&kb, &[]);
    assert_eq!(found(&kb, "afterword"), vec!["a.md"]);
    assert_eq!(found(&kb, "beforeword"), Vec::<String>::new());
    assert_eq!(found(&kb, "newword"), vec!["new.md"]);
    assert_eq!(found(&kb, "vanishword"), Vec::<String>::new());
    let (docs, _) = kb.json(&["list", "docs"]);
    assert_eq!(docs.as_array().unwrap().len(), 2, "nothing twice: {docs}");
    drop(w2);
}

#[test]
fn a_manual_ingest_beside_the_watcher_waits_its_turn() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let root = kb.dir.path().join("notes");
    for i in 0..200 {
        write(
            &root.join(format!("n{i}.md")),
            &format!("# N{i}\n\nbusyword {i}\n"),
        );
    }
    let w = Watcher::start(&kb, &[&root]);
    // Keep the watcher busy while ingests run.
    let writer = {
        let root = root.clone();
        std::thread::spawn(move || {
            for round in 0..5 {
                for i in 0..200 {
                    write(
                        &root.join(format!("n{i}.md")),
                        &format!("# N{i}\n\nbusyword {i} round{round}\n"),
                    );
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    for _ in 0..3 {
        let (report, code) = kb.json(&["ingest", root.to_str().unwrap()]);
        assert_eq!(
            code, 0,
            "a manual ingest never fails beside a watcher: {report}"
        );
    }
    writer.join().unwrap();
    // Every file's last version, each indexed once: no earlier round left
    // (a file can skip a round, so the last but one being gone is not enough).
    let deadline = Instant::now() + SOON;
    while (0..4).any(|round| !found(&kb, &format!("round{round}")).is_empty()) {
        assert!(Instant::now() < deadline, "the last edits never arrived");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (docs, _) = kb.json(&["list", "docs"]);
    assert_eq!(docs.as_array().unwrap().len(), 200);
    assert_eq!(found(&kb, "round4").len(), 50);
    drop(w);
}

#[test]
fn a_root_that_cannot_be_watched_is_rescanned_and_a_vanished_root_is_kept() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}max_dirs = 2\n"));
    let root = kb.dir.path().join("wide");
    for d in 0..5 {
        write(
            &root.join(format!("d{d}/n.md")),
            &format!("# N\n\nwideword {d}\n"),
        );
    }
    let other = kb.dir.path().join("other");
    write(&other.join("o.md"), "# O\n\nstayword\n");
    let mut w = Watcher::start(&kb, &[&root, &other]);
    let polling = w.wait_for("the fallback", SOON, |v| v["event"] == "polling");
    assert_eq!(polling["root"], "wide");
    assert!(
        polling["reason"].as_str().unwrap().contains("max_dirs"),
        "{polling}"
    );
    // Changes still arrive, by rescans.
    write(&root.join("d3/later.md"), "# L\n\nrescanword\n");
    eventually(&kb, "rescanword", &["d3/later.md"], SOON);

    // The other root vanishes: reported, its documents kept, and back.
    let moved = kb.dir.path().join("other-away");
    std::fs::rename(&other, &moved).unwrap();
    w.wait_for("the missing root", SOON, |v| {
        v["event"] == "missing" && v["root"] == "other"
    });
    assert_eq!(found(&kb, "stayword"), vec!["o.md"], "documents kept");
    std::fs::rename(&moved, &other).unwrap();
    w.wait_for("the root back", SOON, |v| {
        v["event"] == "back" && v["root"] == "other"
    });
    write(&other.join("p.md"), "# P\n\nbackword\n");
    eventually(&kb, "backword", &["p.md"], SOON);
}

#[test]
fn mcp_answers_from_the_watched_index_with_vectors() {
    let kb = Kb::with_config(&format!("{}{FAST}", embedding_config()));
    let root = kb.dir.path().join("notes");
    write(
        &root.join("a.md"),
        "# Cooking\n\nHow to bake sourdough bread.\n",
    );
    let w = Watcher::start(&kb, &[&root]);
    write(
        &root.join("espresso.md"),
        "# Espresso\n\nA shot of espresso tastes sour when the grind is too coarse.\n",
    );
    eventually(&kb, "espresso", &["espresso.md"], Duration::from_secs(60));
    let report = crate::mcp::mcp(
        &kb,
        json!([crate::mcp::call(
            "search",
            json!({"query": "why is my coffee bitter or sour", "mode": "hybrid", "k": 3})
        )]),
    );
    let result = crate::mcp::ok(&report["results"][0]);
    assert_eq!(result["mode"], "hybrid", "{result}");
    assert_eq!(result["hits"][0]["doc_path"], "espresso.md", "{result}");
    assert!(result["hits"][0]["retrieval"]["vector_score"].is_number());
    assert_eq!(result["roots"][0]["watched"], true, "{result}");
    drop(w);
}

#[test]
fn a_file_moved_between_roots_and_a_file_written_slowly_end_up_right() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let a = kb.dir.path().join("alpha");
    let b = kb.dir.path().join("beta");
    write(&a.join("x.md"), "# X\n\nmigratingword\n");
    write(&b.join("y.md"), "# Y\n\nstayingword\n");
    let w = Watcher::start(&kb, &[&a, &b]);
    let roots_of = |word: &str| -> Vec<String> {
        let (resp, _) = kb.json(&["search", word, "--mode", "lexical"]);
        resp["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                format!(
                    "{}:{}",
                    h["root"].as_str().unwrap(),
                    h["doc_path"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(roots_of("migratingword"), vec!["alpha:x.md"]);
    std::fs::rename(a.join("x.md"), b.join("x.md")).unwrap();
    let deadline = Instant::now() + SOON;
    while roots_of("migratingword") != vec!["beta:x.md"] {
        assert!(Instant::now() < deadline, "{:?}", roots_of("migratingword"));
        std::thread::sleep(Duration::from_millis(100));
    }

    // A file still being written when its first events arrive: whatever
    // batch catches it half-written, the finished file is what stays.
    {
        use std::io::Write;
        let mut f = std::fs::File::create(b.join("slow.md")).unwrap();
        f.write_all(b"# Slow\n\nhalfword\n").unwrap();
        f.flush().unwrap();
        std::thread::sleep(Duration::from_millis(900));
        f.write_all(b"finishedword at last\n").unwrap();
    }
    eventually(&kb, "finishedword", &["slow.md"], SOON);
    assert_eq!(found(&kb, "halfword"), vec!["slow.md"]);
    drop(w);
}

/// The niceness of each of `pid`'s threads (field 19 of
/// `/proc/PID/task/TID/stat`), by thread id.
fn thread_niceness(pid: u32) -> Vec<(u32, i64)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let task = task.unwrap();
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // After the command name, which ends at the last `)`: state is
        // field 3, so niceness (19) is the 17th from there.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        let tid = task.file_name().to_str().unwrap().parse().unwrap();
        out.push((tid, fields[16].parse().unwrap()));
    }
    out
}

#[test]
fn the_watcher_runs_at_its_niceness_and_its_settings_are_checked() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}nice = 12\n"));
    let root = kb.dir.path().join("notes");
    write(&root.join("a.md"), "# One\n\nfirst note\n");
    let mut w = Watcher::start_with(&kb, &["--max-threads", "1"], &[&root]);
    write(&root.join("b.md"), "# Two\n\nniceword in a second note\n");
    eventually(&kb, "niceword", &["b.md"], SOON);
    let pid = w.child.id();
    let threads = thread_niceness(pid);
    let main = threads.iter().find(|(tid, _)| *tid == pid).unwrap().1;
    assert_eq!(main, 12, "the watching thread's niceness: {threads:?}");
    assert_eq!(w.stop(), 130);

    // Out of bounds: refused before anything runs, naming the setting.
    let bad = Kb::with_config(&format!("{NO_EMBEDDINGS}[watch]\nnice = 25\n"));
    let out = bad.run(&["watch", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[watch] nice = 25"), "{err}");
    let out = kb.run(&["watch", "--max-threads", "0", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-threads"));
}

/// Replace the directory `dir` by a link to `target` the way a deploy does
/// (`mv dir dir.oldN && ln -s target dir`), `times` times in a row.
fn swap_for_link(dir: &Path, target: &Path, times: usize) {
    for i in 0..times {
        let old = dir.with_file_name(format!(
            "{}.old{i}",
            dir.file_name().unwrap().to_string_lossy()
        ));
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
            std::fs::remove_file(dir).unwrap();
        } else {
            std::fs::rename(dir, &old).unwrap();
        }
        std::os::unix::fs::symlink(target, dir).unwrap();
        std::thread::sleep(Duration::from_millis(20 * (i as u64 % 3)));
    }
}

#[test]
fn a_watched_directory_swapped_for_a_link_out_of_the_root_is_never_followed() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let root = kb.dir.path().join("site");
    let outside = kb.dir.path().join("elsewhere");
    write(
        &root.join("docs/page.md"),
        "# Page\n\nkeptword before the swaps\n",
    );
    write(
        &outside.join("before.md"),
        "# B\n\nleakedword already there\n",
    );
    let w = Watcher::start(&kb, &[&root]);
    assert_eq!(found(&kb, "keptword"), vec!["docs/page.md"]);
    for round in 0..3 {
        // Thirty swaps in a row; files appear in the link's target after
        // and during them.
        swap_for_link(&root.join("docs"), &outside, 10);
        write(
            &outside.join(format!("after{round}.md")),
            "# A\n\nleakedword written through the link\n",
        );
        swap_for_link(&root.join("docs"), &outside, 1);
        write(
            &outside.join(format!("later{round}.md")),
            "# L\n\nleakedword written later\n",
        );
    }
    // A change inside the root, made last: once it is in, every earlier
    // event was applied.
    write(&root.join("sentinel.md"), "# S\n\nswapsentinelword\n");
    eventually(&kb, "swapsentinelword", &["sentinel.md"], SOON);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        found(&kb, "leakedword"),
        Vec::<String>::new(),
        "nothing from outside the root"
    );
    // What moved aside inside the root is still indexed where it is now.
    assert_eq!(found(&kb, "keptword"), vec!["docs.old0/page.md"]);
    let (docs, _) = kb.json(&["list", "docs"]);
    let paths: Vec<&str> = docs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["doc_path"].as_str().unwrap())
        .collect();
    assert!(
        paths.iter().all(|p| !p.starts_with("docs/")),
        "nothing indexed through the link: {paths:?}"
    );
    drop(w);
}

#[test]
fn a_root_made_again_as_a_link_is_missing_not_followed() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let root = kb.dir.path().join("notes");
    let outside = kb.dir.path().join("elsewhere");
    write(&root.join("n.md"), "# N\n\nrootkeptword\n");
    write(&outside.join("x.md"), "# X\n\nrootleakword\n");
    let mut w = Watcher::start(&kb, &[&root]);
    std::fs::remove_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(&outside, &root).unwrap();
    w.wait_for("the missing root", SOON, |v| {
        v["event"] == "missing" && v["root"] == "notes"
    });
    write(&outside.join("y.md"), "# Y\n\nrootleakword later\n");
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(found(&kb, "rootleakword"), Vec::<String>::new());
    assert_eq!(found(&kb, "rootkeptword"), vec!["n.md"], "documents kept");
    drop(w);
}

#[test]
fn a_data_directory_inside_a_watched_root_is_never_indexed() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let root = kb.dir.path().join("notes");
    write(&root.join("a.md"), "# A\n\nselfword one\n");
    let inside = root.join("kebab-data");
    let watcher = |args: &[&str]| {
        let mut c = kb.cmd(args);
        c.env("KEBAB_DATA_DIR", &inside);
        c
    };
    let mut child = watcher(&["--json", "watch", root.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["event"] == "applied"
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    lines
        .recv_timeout(Duration::from_secs(120))
        .expect("the first sync");
    write(&root.join("b.md"), "# B\n\nselfword two\n");
    // Let the edit be applied, then count the batches an idle tree makes.
    std::thread::sleep(Duration::from_secs(3));
    while lines.try_recv().is_ok() {}
    std::thread::sleep(Duration::from_secs(5));
    let idle_batches = std::iter::from_fn(|| lines.try_recv().ok()).count();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(idle_batches, 0, "the watcher fed on its own writes");
    let out = watcher(&["--json", "list", "docs"]).output().unwrap();
    let docs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut paths: Vec<&str> = docs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["doc_path"].as_str().unwrap())
        .collect();
    paths.sort();
    assert_eq!(paths, vec!["a.md", "b.md"]);
}

#[test]
fn a_burst_of_3000_new_files_is_applied_as_one_walk_of_their_directory() {
    let kb = Kb::with_config(&format!("{NO_EMBEDDINGS}{FAST}"));
    let root = kb.dir.path().join("burst");
    write(&root.join("seed.md"), "# Seed\n\nseedword\n");
    let w = Watcher::start(&kb, &[&root]);
    let started = Instant::now();
    for i in 0..3000 {
        write(
            &root.join(format!("many/n{i:04}.md")),
            &format!("# N{i}\n\nburstword number {i}\n"),
        );
    }
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (resp, _) = kb.json(&["list", "docs"]);
        let n = resp.as_array().map_or(0, |d| d.len());
        if n == 3001 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{n} of 3001 documents after {:?}",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(w);
}
