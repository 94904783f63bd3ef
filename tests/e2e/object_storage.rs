//! `[storage] objects = "s3://bucket/prefix"`: the vector tables live in a
//! real S3-compatible server — `s3s-fs` (crates.io, which checks
//! `If-None-Match`; scripts/test.sh installs it) on loopback — instead of
//! the data directory. Endpoint and keys come from the standard `AWS_*`
//! variables. A store that is down fails an ingest before anything is
//! written, and search goes on lexically; a store that ignores conditional
//! writes (moto 4, a real S3 server from PyPI that predates them) is
//! refused, because two writers' commits could overwrite each other there.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::serve::{Server, http};
use crate::support::{
    Kb, Listening, chunk_count, copy_tree, doctor_check, embedding_config, free_port, hit_paths,
    sample_corpus,
};

const BUCKET: &str = "kebab";
const ACCESS_KEY: &str = "kebab-test";
const SECRET_KEY: &str = "kebab-test-secret-key";

/// An S3-compatible server on a free loopback port, keeping its objects
/// under a temporary directory; stopped when dropped (with its
/// [`Listening`]).
struct S3 {
    root: tempfile::TempDir,
    port: u16,
    server: Option<Listening>,
    endpoint: String,
}

/// The `s3s-fs` binary: `$KEBAB_TEST_S3S_FS`, else cargo's bin directory.
fn s3s_fs() -> PathBuf {
    if let Some(path) = std::env::var_os("KEBAB_TEST_S3S_FS") {
        return path.into();
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    cargo_home.join("bin/s3s-fs")
}

impl S3 {
    fn start() -> S3 {
        let root = tempfile::tempdir().unwrap();
        // s3s-fs keeps a bucket as a directory of its root.
        std::fs::create_dir(root.path().join(BUCKET)).unwrap();
        let port = free_port();
        let mut s3 = S3 {
            root,
            port,
            server: None,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        s3.resume();
        s3
    }

    /// Start the server (again, on the same port and directory).
    fn resume(&mut self) {
        self.server = Some(Listening::spawn(
            Command::new(s3s_fs())
                .args(["--host", "127.0.0.1", "--port", &self.port.to_string()])
                .args(["--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY])
                .arg(self.root.path()),
            self.port,
            Duration::from_secs(30),
            "scripts/test.sh installs s3s-fs: cargo install s3s-fs",
        ));
    }

    /// Kill the server.
    fn stop(&mut self) {
        self.server = None;
    }

    /// Where s3s-fs keeps `prefix` of the bucket.
    fn files(&self, prefix: &str) -> PathBuf {
        self.root.path().join(BUCKET).join(prefix)
    }
}

/// The standard variables that point a client at `endpoint`.
fn aws_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL", endpoint.to_string()),
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY.into()),
        ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ALLOW_HTTP", "true".into()),
    ]
}

/// A kebab with the bundled embedding model whose vectors live at
/// `s3://kebab/{prefix}`.
fn team_kb(prefix: &str) -> Kb {
    Kb::with_config(&format!(
        "{}\n[storage]\nobjects = \"s3://{BUCKET}/{prefix}\"\n",
        embedding_config()
    ))
}

/// `env` as the pairs [`Kb`] takes.
fn pairs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// `kebab --json ARGS` with `env` set.
fn json(kb: &Kb, args: &[&str], env: &[(&'static str, String)]) -> (serde_json::Value, i32) {
    kb.json_with(args, &pairs(env))
}

/// `kebab --json ingest DIR` with `env` set, refused for the object
/// store (exit 2, code `object_storage`) with a message saying `says`:
/// the `error.v1`.
fn ingest_refused(
    kb: &Kb,
    dir: &Path,
    env: &[(&'static str, String)],
    says: &str,
) -> serde_json::Value {
    let (err, code) = kb.error(&["ingest", dir.to_str().unwrap()], &pairs(env));
    assert_eq!(
        (code, &err["code"]),
        (2, &"object_storage".into()),
        "{err:#}"
    );
    assert!(err["message"].as_str().unwrap().contains(says), "{err:#}");
    err
}

/// The lance tables under `dir`.
fn tables(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.ends_with(".lance"))
                .collect()
        })
        .unwrap_or_default()
}

/// The documents of the first vector hits for `query`.
fn vector_hits(kb: &Kb, query: &str, env: &[(&'static str, String)]) -> Vec<String> {
    let (resp, code) = json(kb, &["search", query, "--mode", "vector", "--k", "3"], env);
    assert_eq!(code, 0, "{resp:#}");
    hit_paths(&resp)
}

#[test]
fn vectors_live_in_the_bucket_and_outlast_the_store_going_down() {
    let mut s3 = S3::start();
    let env = aws_env(&s3.endpoint);
    let kb = team_kb("team/index");
    let corpus = sample_corpus();

    let (report, code) = json(&kb, &["ingest", corpus.to_str().unwrap()], &env);
    assert_eq!(code, 0, "{report:#}");
    let chunks = chunk_count(&kb);
    assert_eq!(report["vectors"]["total"], chunks, "{report:#}");
    // The table is in the bucket, not in the data directory.
    assert_eq!(tables(&s3.files("team/index")).len(), 1, "{report:#}");
    assert!(tables(&kb.data_dir().join("lancedb")).is_empty());

    // (`doctor` is unhealthy here anyway: no LLM server runs.)
    let (doctor, _) = json(&kb, &["doctor"], &env);
    let storage = doctor_check(&doctor, "object_storage");
    assert_eq!(storage["ok"], true, "{doctor:#}");
    let embedding = doctor_check(&doctor, "embedding_model");
    assert!(
        embedding["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("{chunks} vectors")),
        "{doctor:#}"
    );
    let before = vector_hits(&kb, "pulling a shot of coffee", &env);
    assert!(!before.is_empty());

    // The store goes down: search goes on lexically, saying why, and an
    // ingest fails before it writes anything.
    s3.stop();
    let (resp, code) = json(&kb, &["search", "coffee", "--k", "3"], &env);
    assert_eq!(code, 0, "{resp:#}");
    assert!(!resp["hits"].as_array().unwrap().is_empty(), "{resp:#}");
    assert!(resp.to_string().contains("object storage"), "{resp:#}");
    let extra = tempfile::tempdir().unwrap();
    std::fs::write(
        extra.path().join("late.md"),
        "# Late\n\nA note about grinders.\n",
    )
    .unwrap();
    ingest_refused(&kb, extra.path(), &env, "object storage");
    assert_eq!(
        chunk_count(&kb),
        chunks,
        "nothing written while the store was down"
    );

    // Back up: the same vectors answer the same query.
    s3.resume();
    assert_eq!(vector_hits(&kb, "pulling a shot of coffee", &env), before);
    let (report, code) = json(&kb, &["ingest", extra.path().to_str().unwrap()], &env);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["vectors"]["total"], chunk_count(&kb), "{report:#}");
    let with_late = vector_hits(&kb, "pulling a shot of coffee", &env);

    // Another index pointed at the same prefix is refused: its ingest
    // would reconcile the table with its own documents and remove these.
    let other = team_kb("team/index");
    ingest_refused(&other, extra.path(), &env, "another index");
    assert_eq!(
        vector_hits(&kb, "pulling a shot of coffee", &env),
        with_late
    );
}

/// moto 4 (PyPI), a real S3 server from before conditional writes: it
/// accepts `If-None-Match: *` and overwrites anyway.
fn moto4() -> Listening {
    let port = free_port();
    let site = std::env::var("KEBAB_TEST_MOTO")
        .unwrap_or_else(|_| format!("{}/.cache/kebab-test/moto4", std::env::var("HOME").unwrap()));
    // Not a newer moto from beside Python: those honour the header.
    let version = Command::new("python3")
        .args(["-c", "import moto; print(moto.__version__)"])
        .env("PYTHONPATH", &site)
        .output()
        .expect("python3 runs");
    let version = String::from_utf8_lossy(&version.stdout);
    assert!(
        version.starts_with("4."),
        "moto {version} from {site}: scripts/test.sh installs moto 4.2.14 there"
    );
    Listening::spawn(
        Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .env("PYTHONPATH", &site),
        port,
        Duration::from_secs(60),
        "scripts/test.sh installs moto 4 under ~/.cache/kebab-test/moto4",
    )
}

#[test]
fn a_store_that_ignores_conditional_writes_is_refused() {
    let moto = moto4();
    let endpoint = format!("http://127.0.0.1:{}", moto.port);
    // moto keeps buckets in memory: make one (it takes unsigned requests).
    let addr = format!("127.0.0.1:{}", moto.port);
    let made = http(
        &addr,
        "PUT",
        &format!("/{BUCKET}"),
        &[("Host", &addr)],
        None,
    );
    assert_eq!(made.status, 200, "{made:?}");
    let env = aws_env(&endpoint);
    let kb = team_kb("team");
    let corpus = sample_corpus();

    let err = ingest_refused(&kb, &corpus, &env, "ignores conditional writes");
    assert!(
        err["hint"].as_str().unwrap().contains("If-None-Match"),
        "{err:#}"
    );
    assert_eq!(chunk_count(&kb), 0, "nothing indexed");

    let (doctor, _) = json(&kb, &["doctor"], &env);
    let storage = doctor_check(&doctor, "object_storage");
    assert_eq!(storage["ok"], false, "{doctor:#}");
    assert!(
        storage["detail"].as_str().unwrap().contains("conditional"),
        "{doctor:#}"
    );
}

#[test]
fn a_local_index_moves_to_the_bucket_without_embedding_again() {
    let s3 = S3::start();
    let env = aws_env(&s3.endpoint);
    let kb = Kb::with_config(&embedding_config());
    let corpus = sample_corpus();
    let local = kb.ingest(&corpus);
    let chunks = chunk_count(&kb);
    assert_eq!(local["vectors"]["embedded"], chunks, "{local:#}");

    // Setting `[storage] objects` and ingesting again fills the bucket's
    // table from the index's embedding cache: nothing is embedded again.
    std::fs::write(
        kb.dir.path().join("config.toml"),
        format!(
            "{}\n[storage]\nobjects = \"s3://{BUCKET}/moved\"\n",
            embedding_config()
        ),
    )
    .unwrap();
    let (moved, code) = json(&kb, &["ingest", corpus.to_str().unwrap()], &env);
    assert_eq!(code, 0, "{moved:#}");
    assert_eq!(moved["vectors"]["embedded"], 0, "{moved:#}");
    assert_eq!(moved["vectors"]["from_cache"], chunks, "{moved:#}");
    assert_eq!(moved["vectors"]["total"], chunks, "{moved:#}");
    assert_eq!(tables(&s3.files("moved")).len(), 1);
}

#[test]
fn the_store_dying_mid_ingest_leaves_nothing_half_written() {
    let mut s3 = S3::start();
    let env = aws_env(&s3.endpoint);
    let tree = tempfile::tempdir().unwrap();
    for copy in 0..6 {
        copy_tree(&sample_corpus(), &tree.path().join(format!("copy{copy}")));
    }
    let kb = team_kb("mid");
    let dir = tree.path().to_str().unwrap();
    let mut run = kb
        .cmd(&["--json", "ingest", dir])
        .envs(pairs(&env))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The store killed once the first vectors are stored.
    let progress = BufReader::new(run.stdout.take().unwrap());
    for line in progress.lines() {
        if line.unwrap().contains("embed_batch_finished") {
            break;
        }
    }
    s3.stop();
    let status = run.wait().unwrap();
    let mut stderr = String::new();
    run.stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    // It fails clearly, or finishes saying the vectors are off.
    assert!(
        status.code() == Some(2) || stderr.contains("object storage"),
        "{status}: {stderr}"
    );

    // Back up, the next ingest completes the table: every chunk has
    // exactly one vector, and the doctor finds none missing or lost.
    s3.resume();
    let (report, code) = json(&kb, &["ingest", dir], &env);
    assert_eq!(code, 0, "{report:#}");
    let chunks = chunk_count(&kb);
    assert_eq!(report["vectors"]["total"], chunks, "{report:#}");
    let (doctor, _) = json(&kb, &["doctor"], &env);
    assert_eq!(
        doctor_check(&doctor, "embedding_model")["ok"],
        true,
        "{doctor:#}"
    );
}

#[test]
fn a_server_started_while_the_store_is_down_finds_the_vectors_when_it_is_back() {
    let mut s3 = S3::start();
    let env = aws_env(&s3.endpoint);
    let kb = team_kb("replica");
    let (report, code) = json(&kb, &["ingest", sample_corpus().to_str().unwrap()], &env);
    assert_eq!(code, 0, "{report:#}");

    s3.stop();
    let server = Server::start(&kb, &[], &pairs(&env));
    let search = "/v1/search?q=pulling%20a%20shot%20of%20coffee&k=3";
    let down = server.get_json(search);
    assert_eq!(down["mode"], "lexical", "{down:#}");
    assert!(
        down["notes"].to_string().contains("object storage"),
        "{down:#}"
    );

    // Back up: within the retry interval (10 s) the same server searches
    // the vectors, without a restart.
    s3.resume();
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        let up = server.get_json(search);
        if up["mode"] == "hybrid" {
            assert_eq!(hit_paths(&up)[0], "kitchen/espresso.md", "{up:#}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still {up:#}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Team mode whole: the index in PostgreSQL, the vectors in the bucket,
/// two shards on two machines ingesting at once. Neither's reconciliation
/// removes the vectors the other is writing: afterwards every chunk has
/// exactly one vector (doctor, on both machines), and vector search
/// answers alike on both.
#[test]
fn two_shards_sharing_postgresql_and_the_bucket_leave_one_vector_per_chunk() {
    let s3 = S3::start();
    let cluster = kebab_test_postgres::Cluster::start();
    let mut env = aws_env(&s3.endpoint);
    env.push(("KEBAB_STORAGE_DATABASE", cluster.create_database("team")));
    let tree = tempfile::tempdir().unwrap();
    for copy in 0..4 {
        copy_tree(&sample_corpus(), &tree.path().join(format!("copy{copy}")));
    }
    let dir = tree.path().to_str().unwrap();
    let machines = [team_kb("team"), team_kb("team")];
    let runs: Vec<std::process::Child> = machines
        .iter()
        .zip(["0/2", "1/2"])
        .map(|(kb, which)| {
            kb.cmd(&["--json", "ingest", dir, "--shard", which])
                .envs(pairs(&env))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for kb in &machines {
        let (doctor, _) = json(kb, &["doctor"], &env);
        let vectors = doctor_check(&doctor, "embedding_model");
        assert_eq!(vectors["ok"], true, "{vectors:#}");
    }
    let hits = vector_hits(&machines[0], "espresso extraction", &env);
    assert!(!hits.is_empty());
    assert_eq!(hits, vector_hits(&machines[1], "espresso extraction", &env));
}
