//! Bounded reads of what kebab does not control: `kebab plugin install
//! <URL>` and `kebab models pull` against a loopback server that sends an
//! endless body or announces 100 GiB (stopped at the cap, refused up
//! front, measured by what the server managed to send and the process's
//! peak memory), a malformed `--blake3` refused before any network, a
//! download that is not the component its `--blake3` pins refused as it
//! ends (hashed while it streamed, never read back), the warning for a
//! plugin over plain `http://`, and config files that are devices, FIFOs,
//! too large, or full of unknown keys.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Kb, hostile_wasm};

/// What the server answers every request with.
#[derive(Clone)]
enum Body {
    /// `200`, no length, bytes until the client hangs up.
    Endless,
    /// `200` announcing this `Content-Length`, then bytes until the client
    /// hangs up.
    Announce(u64),
    /// `200` with exactly these bytes.
    Exactly(Vec<u8>),
}

/// Most a server sends on one connection, so a client that never stops
/// (kebab before its downloads were bounded) cannot fill the test machine.
const SAFETY_BYTES: u64 = 512 << 20;

/// A loopback HTTP/1.1 server; stops (bounded) when dropped.
struct Server {
    port: u16,
    sent: Arc<AtomicU64>,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(body: Body) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let (sent, requests, stop) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (s, r, st) = (sent.clone(), requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        r.fetch_add(1, Ordering::Relaxed);
                        serve(conn, &body, &s, &st);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Server {
            port,
            sent,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Read the request head, answer with `body`, count what was written.
fn serve(mut conn: std::net::TcpStream, body: &Body, sent: &AtomicU64, stop: &AtomicBool) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let header = match body {
        Body::Endless => {
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
                .to_string()
        }
        Body::Announce(len) => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
        ),
        Body::Exactly(bytes) => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/wasm\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            bytes.len()
        ),
    };
    if conn.write_all(header.as_bytes()).is_err() {
        return;
    }
    if let Body::Exactly(bytes) = body {
        if conn.write_all(bytes).is_ok() {
            sent.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        return;
    }
    let chunk = vec![b'k'; 64 << 10];
    while sent.load(Ordering::Relaxed) < SAFETY_BYTES && !stop.load(Ordering::Relaxed) {
        match conn.write(&chunk) {
            Ok(n) if n > 0 => {
                sent.fetch_add(n as u64, Ordering::Relaxed);
            }
            _ => return,
        }
    }
}

/// A finished `kebab` run: exit code (`None`: killed at the time limit),
/// output, and its peak resident memory.
struct Measured {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    peak_rss_bytes: u64,
    seconds: f64,
}

impl Measured {
    /// The `error.v1` line of a `--json` run.
    fn error(&self) -> Value {
        let line = self.stderr.lines().last().unwrap_or_default();
        serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("no error.v1 line ({e}): {}", self.stderr))
    }
}

/// Run `cmd` to its end, killing it after `limit`; measured with `wait4`
/// so the peak memory is this process's own.
// The child is reaped by `libc::wait4` (which also gives its rusage), not
// by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_measured(mut cmd: Command, limit: Duration) -> Measured {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn kebab");
    let pid = child.id() as libc::pid_t;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let done = Arc::new(AtomicBool::new(false));
    // The child's own peak, read from /proc while it runs: `ru_maxrss`
    // would also count the test process's memory, which the child's
    // vfork-style spawn shares until its exec.
    let peak = Arc::new(AtomicU64::new(0));
    let watchdog = {
        let (done, peak) = (done.clone(), peak.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Some(hwm) = high_water_mark(pid) {
                    peak.fetch_max(hwm, Ordering::Relaxed);
                }
                if started.elapsed() > limit {
                    // SAFETY: our own child, not yet reaped (done is unset).
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let mut status = 0;
    // SAFETY: waits for our own child, filling the status out-parameter.
    let reaped = unsafe { libc::waitpid(pid, &mut status, 0) };
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    assert_eq!(reaped, pid, "wait4");
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Measured {
        code,
        stdout: out.join().expect("stdout thread"),
        stderr: err.join().expect("stderr thread"),
        peak_rss_bytes: peak.load(Ordering::Relaxed),
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// `VmHWM` of a running process, in bytes (none once it has exited).
fn high_water_mark(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

const MIB: u64 = 1 << 20;

/// Nothing of a failed download is left under `dir`.
fn no_files_under(dir: &std::path::Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return true;
    };
    entries
        .flatten()
        .all(|e| e.path().is_dir() && no_files_under(&e.path()))
}

#[test]
fn plugin_downloads_stop_at_the_cap_in_bounded_memory() {
    let kb = Kb::new();
    // Endless body, the default 64 MiB cap.
    let server = Server::start(Body::Endless);
    let run = run_measured(
        kb.cmd(&["--json", "plugin", "install", &server.url("/p.wasm")]),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(2), "{:.1} s: {}", run.seconds, run.stderr);
    let error = run.error();
    assert_eq!(error["code"], "too_large", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("max_download_mb") && message.contains(&(64 * MIB).to_string()),
        "{message}"
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("[plugins] max_download_mb"),
        "{error}"
    );
    assert!(
        server.sent() < 96 * MIB,
        "kebab stopped reading near the cap: the server sent {} MiB",
        server.sent() / MIB
    );
    assert!(
        run.peak_rss_bytes < 200 * MIB,
        "the body streamed to disk, not memory: peak {} MiB",
        run.peak_rss_bytes / MIB
    );
    assert!(
        no_files_under(&kb.data_dir().join("plugins")),
        "temp file deleted"
    );

    // A Content-Length over the cap is refused before the body is read.
    let server = Server::start(Body::Announce(100 << 30));
    let run = run_measured(
        kb.cmd(&["--json", "plugin", "install", &server.url("/p.wasm")]),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let error = run.error();
    assert_eq!(error["code"], "too_large", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("announces {} bytes", 100u64 << 30)),
        "{error}"
    );
    assert!(
        server.sent() < 32 * MIB,
        "the body was not read: only socket buffers filled ({} MiB)",
        server.sent() / MIB
    );
    assert!(no_files_under(&kb.data_dir().join("plugins")));

    // The cap is configurable: a smaller one stops an endless body sooner.
    let kb = Kb::with_config("[plugins]\nmax_download_mb = 1\n");
    let server = Server::start(Body::Endless);
    let run = run_measured(
        kb.cmd(&["--json", "plugin", "install", &server.url("/p.wasm")]),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.error()["code"], "too_large");
    assert!(server.sent() < 24 * MIB, "sent {} MiB", server.sent() / MIB);
}

#[test]
fn model_pulls_are_bounded_per_file() {
    let kb = Kb::with_config("[models]\nmax_download_mb = 2\n");
    let cache = kb.dir.path().join("cache");
    let pull = |kb: &Kb, endpoint: &str| {
        let mut cmd = kb.cmd(&[
            "--json",
            "models",
            "pull",
            "all-minilm-l6-v2",
            "--endpoint",
            endpoint,
        ]);
        cmd.env("KEBAB_CACHE_DIR", &cache);
        run_measured(cmd, Duration::from_secs(60))
    };
    let server = Server::start(Body::Endless);
    let run = pull(&kb, &server.url(""));
    assert_eq!(run.code, Some(2), "{:.1} s: {}", run.seconds, run.stderr);
    let error = run.error();
    assert_eq!(error["code"], "too_large", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("{} bytes ([models] max_download_mb)", 2 * MIB)),
        "{error}"
    );
    assert!(server.sent() < 32 * MIB, "sent {} MiB", server.sent() / MIB);
    assert!(
        no_files_under(&cache.join("models")),
        "partial file deleted"
    );

    // 100 GiB announced: over even the default cap, refused up front.
    let kb = Kb::new();
    let server = Server::start(Body::Announce(100 << 30));
    let run = pull(&kb, &server.url(""));
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let error = run.error();
    assert_eq!(error["code"], "too_large", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("announces {} bytes", 100u64 << 30)),
        "{error}"
    );
    assert!(server.sent() < 32 * MIB, "sent {} MiB", server.sent() / MIB);
    assert!(no_files_under(&cache.join("models")));
}

#[test]
fn a_malformed_blake3_is_refused_before_any_network() {
    let kb = Kb::new();
    let server = Server::start(Body::Exactly(
        std::fs::read(hostile_wasm()).expect("hostile plugin"),
    ));
    let url = server.url("/hostile.wasm");
    let local = hostile_wasm();
    for bad in [
        "zz".to_string(),
        "".to_string(),
        "0".repeat(63),
        "0".repeat(65),
        "g".repeat(64),
        format!("{}\u{1b}[31m", "0".repeat(60)),
    ] {
        for source in [url.as_str(), local.to_str().expect("utf-8")] {
            let (error, code) = {
                let out = kb.run(&["--json", "plugin", "install", source, "--blake3", &bad]);
                let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                let line = stderr.lines().last().unwrap_or_default().to_string();
                (
                    serde_json::from_str::<Value>(&line)
                        .unwrap_or_else(|e| panic!("{bad:?}: {e}: {stderr}")),
                    out.status.code(),
                )
            };
            assert_eq!(code, Some(2), "{bad:?}");
            assert_eq!(error["code"], "invalid_input", "{bad:?}: {error}");
            assert!(
                error["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("64 hex"),
                "{error}"
            );
        }
    }
    assert_eq!(server.requests(), 0, "no request was made");
    assert!(no_files_under(&kb.data_dir().join("plugins")));
}

#[test]
fn a_download_not_matching_its_blake3_pin_is_refused_as_it_ends_unread() {
    let kb = Kb::with_config("[plugins]\nmax_download_mb = 128\n");
    let pin = "0".repeat(64);
    // A small body, then one of 100 MiB: the larger costs no more memory,
    // since the mismatch is known from the hash kept while streaming and
    // the file is deleted without being read back.
    let mut peaks = Vec::new();
    for size in [4 << 10, 100 * MIB as usize] {
        let body: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let actual = blake3::hash(&body).to_hex().to_string();
        let server = Server::start(Body::Exactly(body));
        let run = run_measured(
            kb.cmd(&[
                "--json",
                "plugin",
                "install",
                &server.url("/p.wasm"),
                "--blake3",
                &pin,
            ]),
            Duration::from_secs(120),
        );
        assert_eq!(run.code, Some(2), "{size}: {}", run.stderr);
        let error = run.error();
        assert_eq!(error["code"], "hash_mismatch", "{size}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&pin) && message.contains(&actual),
            "{size}: {message}"
        );
        assert_eq!(server.sent(), size as u64, "the whole body was sent");
        assert!(
            no_files_under(&kb.data_dir().join("plugins")),
            "{size}: the download was deleted"
        );
        assert!(run.stdout.is_empty(), "nothing installed: {}", run.stdout);
        peaks.push(run.peak_rss_bytes);
    }
    assert!(
        peaks[1] < peaks[0] + 40 * MIB,
        "a 100 MiB mismatch was read back into memory: peak {} MiB against {} MiB for 4 KiB",
        peaks[1] / MIB,
        peaks[0] / MIB
    );
}

#[test]
fn a_plugin_over_plain_http_without_a_pin_is_installed_with_a_loud_warning() {
    let kb = Kb::new();
    let bytes = std::fs::read(hostile_wasm()).expect("hostile plugin");
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let server = Server::start(Body::Exactly(bytes));
    let url = server.url("/hostile.wasm");
    let out = kb.run(&["--json", "plugin", "install", &url]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: Value = serde_json::from_str(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or(""),
    )
    .expect("plugin_install.v1");
    let warnings = report["warnings"].as_array().cloned().unwrap_or_default();
    assert!(
        warnings.len() == 1 && warnings[0].as_str().unwrap_or("").contains("--blake3"),
        "{report}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning:") && stderr.contains("http://") && stderr.contains("--blake3"),
        "{stderr}"
    );
    // Pinned: no warning.
    let out = kb.run(&["--json", "plugin", "install", &url, "--blake3", &hash]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: Value = serde_json::from_str(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or(""),
    )
    .expect("plugin_install.v1");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning:"));
}

#[test]
fn config_files_are_read_only_when_regular_and_bounded() {
    let kb = Kb::new();
    let fifo = kb.dir.path().join("config.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let big = kb.dir.path().join("big.toml");
    std::fs::write(&big, format!("# {}\n", "x".repeat(9 << 20))).expect("write");
    let cases = [
        ("/dev/zero".into(), "not a regular file"),
        ("/dev/urandom".into(), "not a regular file"),
        (fifo, "not a regular file"),
        (kb.dir.path().to_path_buf(), "not a regular file"),
        (big, "larger than"),
    ];
    for (config, expected) in cases {
        let mut cmd = kb.cmd(&["--json", "list", "docs"]);
        cmd.env("KEBAB_CONFIG", &config);
        let run = run_measured(cmd, Duration::from_secs(20));
        assert_eq!(
            run.code,
            Some(2),
            "{config:?} ({:.1} s, peak {} MiB): {}",
            run.seconds,
            run.peak_rss_bytes / MIB,
            run.stderr
        );
        let error = run.error();
        assert_eq!(error["code"], "config_invalid", "{config:?}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains(expected),
            "{config:?}: {error}"
        );
        assert!(
            error["hint"]
                .as_str()
                .unwrap_or_default()
                .contains("--config"),
            "{error}"
        );
        assert!(run.peak_rss_bytes < 200 * MIB, "{config:?}");
    }
    // A symlink to a regular config is still read.
    let real = kb.dir.path().join("real.toml");
    std::fs::write(&real, "[search]\ndefault_k = 3\n").expect("write");
    let link = kb.dir.path().join("link.toml");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let mut cmd = kb.cmd(&["--json", "list", "docs"]);
    cmd.env("KEBAB_CONFIG", &link);
    let run = run_measured(cmd, Duration::from_secs(20));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn unknown_config_keys_are_summarised() {
    let keys = 200_000;
    // Each key unknown on its own (an unknown table is one key).
    let mut config = String::from("[search]\ndefault_k = 3\n");
    for i in 0..keys {
        config.push_str(&format!("key_{i} = {i}\n"));
    }
    let kb = Kb::with_config(&config);
    let run = run_measured(kb.cmd(&["list", "docs"]), Duration::from_secs(60));
    assert_eq!(
        run.code,
        Some(0),
        "{}",
        &run.stderr[..run.stderr.len().min(2000)]
    );
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert!(
        (2..=25).contains(&warnings.len()),
        "{} warning lines",
        warnings.len()
    );
    assert!(warnings[0].contains("`search.key_"), "{}", warnings[0]);
    let summary = warnings.last().copied().unwrap_or_default();
    let named = warnings.len() - 1;
    assert!(
        summary.contains(&format!("{} more unknown config keys", keys - named)),
        "{summary}"
    );
    assert!(run.stdout.len() < 4096);
    // doctor names them in one bounded check.
    let (doctor, _) = kb.json(&["doctor"]);
    let check = crate::support::doctor_check(&doctor, "config_loaded");
    let text = check.to_string();
    assert!(text.len() < 16 << 10, "{} bytes", text.len());
    assert!(text.contains("more unknown config keys"), "{text}");
}
