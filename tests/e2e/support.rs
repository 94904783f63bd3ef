//! Helpers for driving the real `kebab` binary.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The bundled sample corpus.
pub fn sample_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/notes")
}

/// The hostile test plugin component, built by tests/artifacts/build.rs.
pub fn hostile_wasm() -> PathBuf {
    PathBuf::from(kebab_test_artifacts::HOSTILE_WASM)
}

/// Run `cmd` with `input` on its stdin; its output once it exits.
pub fn run_with_stdin(mut cmd: Command, input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    // A child that stops reading early (it refused the input) closes the
    // pipe: its answer is what the test checks, not the write.
    if let Err(e) = child.stdin.take().expect("stdin").write_all(input) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait for the child")
}

/// Run `cmd` to its end within `limit`: its output and how long it took.
/// A child still running at `limit` is killed and the test fails.
pub fn output_within(
    mut cmd: Command,
    limit: std::time::Duration,
) -> (Output, std::time::Duration) {
    use std::io::Read;
    use std::process::Stdio;
    let started = std::time::Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let took = started.elapsed();
    let output = Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    };
    (output, took)
}

/// One isolated kebab installation: its own config file and data directory.
pub struct Kb {
    pub dir: tempfile::TempDir,
    pub binary: PathBuf,
}

impl Kb {
    pub fn new() -> Kb {
        Kb::with_config("")
    }

    /// A kebab whose config file holds `config`.
    pub fn with_config(config: &str) -> Kb {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("config.toml"), config).expect("write config");
        Kb {
            dir,
            binary: PathBuf::from(env!("CARGO_BIN_EXE_kebab")),
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A `kebab` command with this installation's config and data dir.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.binary);
        c.env("KEBAB_CONFIG", self.dir.path().join("config.toml"))
            .env("KEBAB_DATA_DIR", self.data_dir())
            .env("KEBAB_CACHE_DIR", cache_dir())
            .env("KEBAB_LOG_DIR", self.dir.path().join("logs"))
            .args(args);
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run kebab")
    }

    /// `kebab --json ARGS` that fails, with `env` set: the `error.v1` it
    /// printed on stderr, and its exit code.
    pub fn error(&self, args: &[&str], env: &[(&str, &str)]) -> (Value, i32) {
        let mut cmd = self.cmd(&[&["--json"], args].concat());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run kebab");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = stderr
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .unwrap_or_else(|| panic!("no error.v1 on stderr for {args:?}: {stderr}"));
        (
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")),
            out.status.code().expect("exit code"),
        )
    }

    /// Run with `--json`; the last stdout line parsed, and the exit code.
    pub fn json(&self, args: &[&str]) -> (Value, i32) {
        self.json_with(args, &[])
    }

    /// [`Kb::json`] with the variables `env` set.
    pub fn json_with(&self, args: &[&str], env: &[(&str, &str)]) -> (Value, i32) {
        let out = self
            .cmd(&[&["--json"], args].concat())
            .envs(env.iter().copied())
            .output()
            .expect("run kebab");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().unwrap_or_else(|| {
            panic!(
                "no output from kebab {args:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let value = serde_json::from_str(last).unwrap_or_else(|e| panic!("bad JSON {last:?}: {e}"));
        (value, out.status.code().expect("exit code"))
    }

    /// `kebab ingest --json PATH`, asserting exit 0; the report.
    pub fn ingest(&self, path: &Path) -> Value {
        let (report, code) = self.json(&["ingest", path.to_str().expect("utf-8 path")]);
        assert_eq!(code, 0, "ingest failed: {report}");
        assert_eq!(report["schema_version"], "ingest_report.v1");
        report
    }

    /// `kebab search --json Q`; the hits and the exit code.
    pub fn search(&self, query: &str, k: usize) -> (Vec<Value>, i32) {
        let k = k.to_string();
        let (resp, code) = self.json(&["search", query, "--k", &k]);
        assert_eq!(resp["schema_version"], "search_response.v1", "{resp}");
        (resp["hits"].as_array().cloned().unwrap_or_default(), code)
    }

    /// Install a component as `<data>/plugins/<name>/<version>/plugin.wasm`.
    pub fn install_plugin(&self, name: &str, version: &str, wasm: &Path) {
        let dir = self.data_dir().join("plugins").join(name).join(version);
        std::fs::create_dir_all(&dir).expect("plugin dir");
        std::fs::copy(wasm, dir.join("plugin.wasm")).expect("copy plugin");
    }
}

/// Compiled components are shared by all tests (keyed by hash, safe to share).
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("kebab-component-cache")
}

/// Items of an ingest report with the given kind.
pub fn items<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["kind"] == kind)
        .collect()
}

/// The report item for `path`.
pub fn item<'a>(report: &'a Value, path: &str) -> &'a Value {
    entry(report, "items", "doc_path", path)
}

/// The check called `name` of a `doctor.v1` report.
pub fn doctor_check<'a>(report: &'a Value, name: &str) -> &'a Value {
    entry(report, "checks", "name", name)
}

/// The element of `report[list]` whose `key` is `value`.
fn entry<'a>(report: &'a Value, list: &str, key: &str, value: &str) -> &'a Value {
    report[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list}: {report:#}"))
        .iter()
        .find(|e| e[key] == value)
        .unwrap_or_else(|| panic!("no {key} {value} in {list}: {report:#}"))
}

/// Copy a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// Lines `start..=end` of a file, whitespace collapsed.
pub fn cited_text(root: &Path, hit: &Value) -> String {
    let c = &hit["citation"];
    let path = root.join(c["path"].as_str().expect("citation path"));
    let (start, end) = match c["kind"].as_str() {
        Some("line") => (c["start"].as_u64(), c["end"].as_u64()),
        Some("code") => (c["line_start"].as_u64(), c["line_end"].as_u64()),
        other => panic!("unexpected citation kind {other:?}"),
    };
    let (start, end) = (start.expect("start") as usize, end.expect("end") as usize);
    let text = std::fs::read_to_string(&path).expect("read cited file");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        start >= 1 && end <= lines.len() && start <= end,
        "range {start}-{end} outside {}",
        path.display()
    );
    collapse(&lines[start - 1..end].join("\n"))
}

/// Whitespace runs to single spaces.
pub fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Kb {
    /// Set `[workspace] root` so paths stay relative to `root` whatever
    /// sub-path is ingested.
    pub fn config_root(&self, root: &Path) {
        std::fs::write(
            self.dir.path().join("config.toml"),
            format!("[workspace]\nroot = {:?}\n", root.to_str().expect("utf-8")),
        )
        .expect("write config");
    }
}

/// Offline model assets fetched by `scripts/fetch-assets.sh` (run by
/// `scripts/test.sh`): ONNX Runtime, all-MiniLM-L6-v2, mecab-ko-dic.
pub fn assets_dir() -> PathBuf {
    let dir = std::env::var_os("KEBAB_ASSETS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/kebab-assets")
        });
    assert!(
        dir.join("models/all-minilm-l6-v2/model.onnx").is_file()
            && dir.join("mecab-ko-dic/sys.dic").is_file(),
        "model assets missing in {}: run scripts/fetch-assets.sh",
        dir.display()
    );
    dir
}

/// Config enabling vector search with the offline MiniLM model.
pub fn embedding_config() -> String {
    let assets = assets_dir();
    format!(
        "[models.embedding]\nmodel = \"all-minilm-l6-v2\"\npath = \"{}\"\nruntime = \"{}\"\n",
        assets.join("models/all-minilm-l6-v2").display(),
        assets.join("onnxruntime").display()
    )
}

/// The id vectors of the bundled model are stored under with the default
/// `compute = "auto"`: its int8 copy (`model.int8.onnx`, made by
/// fetch-assets.sh) where the CPU has int8 kernels.
pub fn model_id() -> String {
    let int8 = assets_dir()
        .join("models/all-minilm-l6-v2")
        .join(kebab::embed::INT8_FILE)
        .is_file()
        && kebab::embed::cpu_has_int8_kernels();
    format!("all-minilm-l6-v2@v1{}", if int8 { "+int8" } else { "" })
}

/// Config turning vector search off.
pub const NO_EMBEDDINGS: &str = "[models.embedding]\nmodel = \"\"\n";

/// A dictionary built once per test run into `name` from the assets'
/// `asset` by `kebab models <command>`, with at least `entries` entries.
fn built_dictionary(
    cell: &'static std::sync::OnceLock<PathBuf>,
    command: &str,
    asset: &str,
    name: &str,
    entries: u64,
) -> PathBuf {
    cell.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        if !out.join("metadata.json").is_file() {
            let kb = Kb::with_config(NO_EMBEDDINGS);
            let source = assets_dir().join(asset);
            let (report, code) = kb.json(&[
                "models",
                command,
                source.to_str().expect("utf-8"),
                "--out",
                out.to_str().expect("utf-8"),
            ]);
            assert_eq!(code, 0, "{report}");
            assert!(report["entries"].as_u64().unwrap() > entries, "{report}");
        }
        out
    })
    .clone()
}

/// The Korean dictionary, built once per test run from the mecab-ko-dic
/// assets by `kebab models import-ko-dic`.
pub fn ko_dic() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built_dictionary(&BUILT, "import-ko-dic", "mecab-ko-dic", "ko-dic", 500_000)
}

/// The Japanese dictionary, built once per test run from the IPADIC
/// assets by `kebab models import-ja-dic`.
pub fn ja_dic() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built_dictionary(&BUILT, "import-ja-dic", "ipadic", "ja-dic", 300_000)
}

/// Config using the Korean dictionary.
pub fn korean_config() -> String {
    format!("[models.korean]\ndictionary = \"{}\"\n", ko_dic().display())
}

/// Config using the Japanese dictionary.
pub fn japanese_config() -> String {
    format!(
        "[models.japanese]\ndictionary = \"{}\"\n",
        ja_dic().display()
    )
}

/// Chunks SQLite holds.
pub fn chunk_count(kb: &Kb) -> u64 {
    let db = rusqlite::Connection::open(kb.data_dir().join("kebab.sqlite")).unwrap();
    db.query_row("SELECT count(*) FROM chunks", [], |r| r.get::<_, i64>(0))
        .unwrap() as u64
}

/// The documents of a `search_response.v1`'s hits, best first (none when
/// it has no hits).
pub fn hit_paths(resp: &Value) -> Vec<String> {
    resp["hits"]
        .as_array()
        .map(|hits| {
            hits.iter()
                .map(|h| h["doc_path"].as_str().expect("doc_path").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A free port on loopback (free when asked; the caller binds it next).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind loopback")
        .port()
}

/// A server process listening on a loopback port: killed and reaped when
/// dropped, so it stops even when the test using it fails.
pub struct Listening {
    child: Child,
    pub port: u16,
}

impl Listening {
    /// Start `cmd` (its stderr kept for the panic) and wait until it
    /// accepts connections on `port`; panic with its stderr (and `hint`)
    /// if it exits first or takes longer than `within`.
    pub fn spawn(cmd: &mut Command, port: u16, within: Duration, hint: &str) -> Listening {
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e} ({hint})"));
        let mut server = Listening { child, port };
        let deadline = Instant::now() + within;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.child.try_wait().expect("poll the server") {
                let mut err = String::new();
                if let Some(mut stderr) = server.child.stderr.take() {
                    let _ = stderr.read_to_string(&mut err);
                }
                panic!("the server exited ({status}): {err}\n({hint})");
            }
            assert!(
                Instant::now() < deadline,
                "the server did not listen on {port} within {within:?} ({hint})"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Row counts of chunks, embedding records and LanceDB rows, and whether
/// LanceDB holds exactly the chunks SQLite has.
pub fn vector_counts(kb: &Kb) -> (usize, usize, usize, bool) {
    let db = rusqlite::Connection::open(kb.data_dir().join("kebab.sqlite")).unwrap();
    let ids: std::collections::BTreeSet<String> = db
        .prepare("SELECT chunk_id FROM chunks")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let records: i64 = db
        .query_row("SELECT count(*) FROM embedding_records", [], |r| r.get(0))
        .unwrap();
    let place = kebab::vector::VectorPlace::Dir(kb.data_dir().join("lancedb"));
    let table = kebab::vector::VectorStore::open(&place, &model_id(), 384).unwrap();
    let lance: Vec<String> = table.chunk_ids().unwrap();
    let same = lance
        .iter()
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        == ids
        && lance.len() == ids.len();
    (ids.len(), records as usize, table.count().unwrap(), same)
}

/// The hostile test plugin with `info()` rewritten by `overrides`
/// (`key=value;` pairs, see tests/plugins/hostile): the compiled component
/// with its override block patched in place, written under `dir`.
pub fn hostile_variant(dir: &Path, overrides: &str) -> PathBuf {
    const MARKER: &[u8] = b"KEBAB-HOSTILE-INFO-OVERRIDE:";
    let mut wasm = std::fs::read(hostile_wasm()).expect("hostile plugin built");
    let at: Vec<usize> = wasm
        .windows(MARKER.len())
        .enumerate()
        .filter(|(_, w)| *w == MARKER)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "the override block appears once");
    let start = at[0] + MARKER.len();
    assert!(overrides.len() < 4096 - MARKER.len(), "override too long");
    wasm[start..start + overrides.len()].copy_from_slice(overrides.as_bytes());
    let path = dir.join(format!(
        "hostile-{}.wasm",
        &fnv_hex(overrides.as_bytes())[..12]
    ));
    std::fs::write(&path, wasm).expect("write variant");
    path
}

fn fnv_hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ *b as u64).wrapping_mul(0x100000001b3)
        })
        .to_string()
}

/// Runs an installation's `kebab` as a user that permission bits bind:
/// `nobody` (through `setpriv`, on a copy of the binary it can reach) when
/// the tests run as root, who reads and writes any file whatever its mode;
/// else the current user. Its home, cache and logs are a directory anyone
/// may write, and the installation's directory is opened to all.
pub struct Unprivileged<'a> {
    kb: &'a Kb,
    binary: PathBuf,
    as_nobody: bool,
    home: PathBuf,
}

impl<'a> Unprivileged<'a> {
    pub fn new(kb: &'a Kb) -> Unprivileged<'a> {
        use std::os::unix::fs::PermissionsExt;
        let open = |dir: &Path| {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).expect("chmod")
        };
        let id = Command::new("id").arg("-u").output().expect("id -u");
        let as_nobody = String::from_utf8_lossy(&id.stdout).trim() == "0";
        let home = kb.dir.path().join("unprivileged-home");
        std::fs::create_dir_all(&home).expect("home");
        open(&home);
        open(kb.dir.path());
        let binary = if as_nobody {
            let copy = kb.dir.path().join("kebab-unprivileged");
            std::fs::copy(&kb.binary, &copy).expect("copy kebab");
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755))
                .expect("chmod kebab");
            copy
        } else {
            kb.binary.clone()
        };
        Unprivileged {
            kb,
            binary,
            as_nobody,
            home,
        }
    }

    /// Whether this is another user than the one running the tests (the
    /// tests run as root).
    pub fn is_other_user(&self) -> bool {
        self.as_nobody
    }

    /// A `kebab` command run as this user, with the installation's config
    /// and data dir.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = if self.as_nobody {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(&self.binary);
            c
        } else {
            Command::new(&self.binary)
        };
        c.env("KEBAB_CONFIG", self.kb.dir.path().join("config.toml"))
            .env("KEBAB_DATA_DIR", self.kb.data_dir())
            .env("KEBAB_CACHE_DIR", self.home.join("cache"))
            .env("KEBAB_LOG_DIR", self.home.join("logs"))
            .env("HOME", &self.home)
            .args(args);
        c
    }

    /// Run with `--json`; the last stdout line parsed, and the exit code.
    pub fn json(&self, args: &[&str]) -> (Value, i32) {
        let (stdout, _, code) = self.output(&[&["--json"], args].concat());
        let last = stdout
            .lines()
            .last()
            .unwrap_or_else(|| panic!("no output from kebab {args:?}"));
        let value = serde_json::from_str(last).unwrap_or_else(|e| panic!("bad JSON {last:?}: {e}"));
        (value, code)
    }

    /// Run; stdout, stderr and the exit code.
    pub fn output(&self, args: &[&str]) -> (String, String, i32) {
        let out = self.cmd(args).output().expect("run kebab");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code().expect("exit code"),
        )
    }
}

/// A model directory (outside any corpus) holding the test cross-encoder
/// graph `tests/fixtures/<fixture>/model.onnx` and the MiniLM tokenizer.
pub fn cross_encoder_dir(fixture: &str) -> tempfile::TempDir {
    let holder = tempfile::tempdir().unwrap();
    let dir = holder.path();
    let graph = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(fixture)
        .join("model.onnx");
    std::fs::copy(graph, dir.join("model.onnx")).unwrap();
    std::fs::copy(
        assets_dir().join("models/all-minilm-l6-v2/tokenizer.json"),
        dir.join("tokenizer.json"),
    )
    .unwrap();
    holder
}

/// Run `cmd` until its standard output has shown `marker` on `n` lines,
/// then kill it (SIGKILL: no chance to clean up) and reap it.
pub fn kill_after(cmd: &mut Command, marker: &str, n: usize) {
    use std::io::{BufRead, BufReader};
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let progress = BufReader::new(child.stdout.take().unwrap());
    let mut seen = 0;
    for line in progress.lines() {
        if line.unwrap().contains(marker) {
            seen += 1;
        }
        if seen == n {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The documents' paths and the number of chunks of `kb`'s SQLite index.
pub fn indexed_contents(kb: &Kb) -> (std::collections::BTreeSet<String>, u64) {
    let db = rusqlite::Connection::open(kb.data_dir().join("kebab.sqlite")).unwrap();
    let docs = db
        .prepare("SELECT workspace_path FROM documents")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (docs, chunk_count(kb))
}
