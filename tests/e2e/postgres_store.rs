//! `[storage] database`: the index in PostgreSQL (team mode), on a real
//! throw-away cluster. Ingest and search answer as the SQLite index does;
//! the data directory holds no SQLite file; a second machine (another
//! data directory over the same database) finds every document already
//! indexed, and follows a change the first one writes without ingesting
//! it itself; a query replica that never ingested answers the same.

use std::collections::BTreeSet;
use std::path::Path;

use kebab_test_postgres::Cluster;
use serde_json::Value;

use crate::support::{
    Kb, NO_EMBEDDINGS, copy_tree, doctor_check, hit_paths, indexed_contents, items, kill_after,
    sample_corpus,
};

/// A database on a throw-away cluster, and a tree to index: the sample
/// corpus, once at its top or `copies` times in `copyN/` directories.
struct Team {
    cluster: Cluster,
    url: String,
    tree: tempfile::TempDir,
}

impl Team {
    fn new(copies: Option<usize>) -> Team {
        let cluster = Cluster::start();
        let url = cluster.create_database("team");
        let tree = tempfile::tempdir().unwrap();
        match copies {
            None => copy_tree(&sample_corpus(), tree.path()),
            Some(n) => (0..n).for_each(|copy| {
                copy_tree(&sample_corpus(), &tree.path().join(format!("copy{copy}")))
            }),
        }
        Team { cluster, url, tree }
    }

    /// The environment that points kebab at the database.
    fn env(&self) -> [(&str, &str); 1] {
        [("KEBAB_STORAGE_DATABASE", self.url.as_str())]
    }
}

const QUERIES: &[&str] = &[
    "espresso grind",
    "kubernetes rolling deployment",
    "vacuum dead tuples",
    "tomato",
    "raft leader election",
];

/// `kebab search --json Q` against `kb` with `env`: the hits' paths.
fn search(kb: &Kb, query: &str, env: &[(&str, &str)]) -> Vec<String> {
    let (resp, code) = kb.json_with(&["search", query, "--k", "5"], env);
    assert!(code == 0 || code == 1, "{resp:#}");
    assert_eq!(resp["schema_version"], "search_response.v1", "{resp:#}");
    hit_paths(&resp)
}

/// `kebab --json ARGS` on `kb` with `env`, started (not waited for), its
/// output read by [`finished`].
fn started(kb: &Kb, args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    kb.cmd(&[&["--json"], args].concat())
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// A run from [`started`], waited for: it must succeed; its last line.
fn finished(child: std::process::Child) -> Value {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

fn ingest(kb: &Kb, tree: &Path, env: &[(&str, &str)]) -> Value {
    let (report, code) = kb.json_with(&["ingest", tree.to_str().unwrap()], env);
    assert_eq!(code, 0, "{report:#}");
    report
}

#[test]
fn the_index_in_postgresql_answers_as_sqlite_does_and_a_second_machine_follows_it() {
    let setup = Team::new(None);
    let (team, tree) = (&setup.env(), &setup.tree);

    let local = Kb::with_config(NO_EMBEDDINGS);
    let first = Kb::with_config(NO_EMBEDDINGS);
    let report = ingest(&first, tree.path(), team);
    assert_eq!(
        items(&report, "new").len(),
        items(&ingest(&local, tree.path(), &[]), "new").len(),
        "{report:#}"
    );
    assert!(
        !first.data_dir().join("kebab.sqlite").exists(),
        "the index is in PostgreSQL, not in the data directory"
    );
    for query in QUERIES {
        let hits = search(&first, query, team);
        assert!(!hits.is_empty(), "{query}");
        assert_eq!(hits, search(&local, query, &[]), "{query}");
    }
    let (doctor, _) = first.json_with(&["doctor"], team);
    let index = doctor_check(&doctor, "sqlite_open");
    assert_eq!(index["ok"], true, "{index:#}");
    assert!(
        index["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("PostgreSQL postgres://kebab@")),
        "{index:#}"
    );

    // Another machine: its own (empty) data directory, the same database.
    let second = Kb::with_config(NO_EMBEDDINGS);
    let again = ingest(&second, tree.path(), team);
    assert_eq!(items(&again, "new").len(), 0, "{again:#}");
    assert_eq!(items(&again, "updated").len(), 0, "{again:#}");
    for query in QUERIES {
        assert_eq!(
            search(&second, query, team),
            search(&first, query, team),
            "{query}"
        );
    }

    // A query replica: a data directory that never ingested answers the
    // same (its lexical index is built from PostgreSQL at its first search).
    let replica = Kb::with_config(NO_EMBEDDINGS);
    for query in QUERIES {
        assert_eq!(
            search(&replica, query, team),
            search(&first, query, team),
            "{query}"
        );
    }

    // The first machine changes a file; the second finds the new words
    // without ingesting (it reads the change from PostgreSQL's log).
    std::fs::write(
        tree.path().join("kitchen/espresso.md"),
        "# Espresso\n\nA capybara pulls the shot at nine bars.\n",
    )
    .unwrap();
    let changed = ingest(&first, tree.path(), team);
    assert_eq!(items(&changed, "updated").len(), 1, "{changed:#}");
    assert_eq!(
        search(&second, "capybara", team),
        vec!["kitchen/espresso.md".to_string()]
    );
    std::fs::remove_file(tree.path().join("kitchen/espresso.md")).unwrap();
    ingest(&first, tree.path(), team);
    assert!(search(&second, "capybara", team).is_empty());
}

/// `kebab search` with `address` as the database: it fails (exit 2) with
/// an `error.v1` that never shows the password (`hunter2`); the error.
fn refused(address: &str) -> Value {
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let (error, code) = kb.error(
        &["search", "anything"],
        &[("KEBAB_STORAGE_DATABASE", address)],
    );
    assert_eq!(code, 2, "{error:#}");
    assert!(
        !error.to_string().contains("hunter2"),
        "the password is never shown: {error:#}"
    );
    error
}

#[test]
fn an_address_that_is_not_postgresql_is_refused_at_start() {
    let error = refused("mysql://root:hunter2@db/kebab");
    assert!(
        error.to_string().contains("[storage] database"),
        "{error:#}"
    );
}

#[test]
fn a_database_that_cannot_be_reached_is_an_error_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let error = refused(&format!(
        "postgres://kebab:hunter2@localhost/team?host={}",
        dir.path().display()
    ));
    assert_eq!(error["code"], "database", "{error:#}");
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|h| h.contains("[storage] database")),
        "{error:#}"
    );
}

#[test]
fn two_shards_on_two_machines_ingest_one_tree_at_once_into_one_index() {
    let setup = Team::new(None);
    let (team, tree) = (&setup.env(), &setup.tree);
    let local = Kb::with_config(NO_EMBEDDINGS);
    let all = items(&ingest(&local, tree.path(), &[]), "new").len();

    // Each shard on its own data directory (its own machine), both
    // writing to the database at the same time.
    let machines = [
        Kb::with_config(NO_EMBEDDINGS),
        Kb::with_config(NO_EMBEDDINGS),
    ];
    let dir = tree.path().to_str().unwrap();
    let running: Vec<_> = machines
        .iter()
        .zip(["0/2", "1/2"])
        .map(|(kb, shard)| started(kb, &["ingest", dir, "--shard", shard], team))
        .collect();
    let mut indexed = 0;
    for child in running {
        indexed += items(&finished(child), "new").len();
    }
    assert_eq!(indexed, all);

    // Both machines answer as the one-machine index: each one's lexical
    // index took what it saw at its end, and follows the other's writes.
    for query in QUERIES {
        let hits = search(&machines[0], query, team);
        assert_eq!(hits, search(&local, query, &[]), "{query}");
        assert_eq!(hits, search(&machines[1], query, team), "{query}");
    }
}

/// Query replicas: two `kebab serve` on data directories that never
/// ingested, over one database, answer alike and as the writer does,
/// follow the writer's change within a bound, and one stopped leaves the
/// other answering.
#[test]
fn two_serve_replicas_answer_alike_follow_a_write_and_outlive_each_other() {
    use crate::serve::Server;
    use std::time::{Duration, Instant};

    let setup = Team::new(None);
    let (team, tree) = (&setup.env(), &setup.tree);
    let writer = Kb::with_config(NO_EMBEDDINGS);
    ingest(&writer, tree.path(), team);

    let machines = [
        Kb::with_config(NO_EMBEDDINGS),
        Kb::with_config(NO_EMBEDDINGS),
    ];
    let replicas: Vec<Server> = machines
        .iter()
        .map(|kb| Server::start(kb, &["--stateless"], team))
        .collect();
    let ask = |replica: &Server, query: &str| -> Vec<String> {
        hit_paths(&replica.get_json(&format!(
            "/v1/search?q={}&k=5&mode=lexical",
            query.replace(' ', "+")
        )))
    };
    for query in QUERIES {
        let expected = search(&writer, query, team);
        assert!(!expected.is_empty(), "{query}");
        for replica in &replicas {
            assert_eq!(ask(replica, query), expected, "{query}");
        }
    }

    // The writer adds a word; both replicas find it within the bound.
    std::fs::write(
        tree.path().join("tech/tcp-handshake.md"),
        "# TCP\n\nThe okapi completes the three-way handshake.\n",
    )
    .unwrap();
    ingest(&writer, tree.path(), team);
    let written = Instant::now();
    for replica in &replicas {
        while ask(replica, "okapi") != ["tech/tcp-handshake.md"] {
            assert!(
                written.elapsed() < Duration::from_secs(5),
                "a replica did not see the write within 5 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    // One replica stopped: the other keeps answering.
    let mut replicas = replicas.into_iter();
    drop(replicas.next());
    let survivor = replicas.next().unwrap();
    assert_eq!(ask(&survivor, "okapi"), ["tech/tcp-handshake.md"]);
    assert_eq!(ask(&survivor, "tomato"), search(&writer, "tomato", team));
}

/// The documents' paths and the number of chunks of the index in the
/// database `team`, and its number of document rows.
fn postgres_contents(cluster: &Cluster) -> ((BTreeSet<String>, u64), i64) {
    let mut db = cluster.client("team");
    let paths = db
        .query("SELECT workspace_path FROM documents", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let count = |db: &mut kebab_test_postgres::postgres::Client, sql: &str| -> i64 {
        db.query_one(sql, &[]).unwrap().get(0)
    };
    let chunks = count(&mut db, "SELECT count(*) FROM chunks") as u64;
    let documents = count(&mut db, "SELECT count(*) FROM documents");
    ((paths, chunks), documents)
}

/// A shard killed (SIGKILL) mid-run on one machine, then both shards at
/// once on two: the index holds every document once, with every chunk.
#[test]
fn a_shard_killed_mid_run_and_run_again_beside_the_other_leaves_the_index_exact() {
    use std::process::Stdio;

    let setup = Team::new(Some(20));
    let (team, tree, cluster) = (&setup.env(), &setup.tree, &setup.cluster);
    let whole = Kb::with_config(NO_EMBEDDINGS);
    ingest(&whole, tree.path(), &[]);
    let expected = indexed_contents(&whole);

    let machines = [
        Kb::with_config(NO_EMBEDDINGS),
        Kb::with_config(NO_EMBEDDINGS),
    ];
    let dir = tree.path().to_str().unwrap();
    kill_after(
        machines[0]
            .cmd(&["--json", "ingest", dir, "--shard", "0/2"])
            .envs(team.iter().copied()),
        "asset_started",
        40,
    );
    let ((partial, _), _) = postgres_contents(cluster);
    assert!(
        !partial.is_empty() && partial.len() < expected.0.len() / 2,
        "killed after {} documents",
        partial.len()
    );

    let runs: Vec<std::process::Child> = machines
        .iter()
        .zip(["0/2", "1/2"])
        .map(|(kb, which)| {
            kb.cmd(&["--json", "ingest", dir, "--shard", which])
                .envs(team.iter().copied())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    let (contents, documents) = postgres_contents(cluster);
    assert_eq!(contents, expected);
    assert_eq!(documents as usize, expected.0.len(), "no document twice");
}

/// Several first searches at once on a machine that never ingested: one
/// builds the lexical index, the others wait for it; all answer.
#[test]
fn first_searches_at_once_on_a_new_replica_all_answer() {
    let setup = Team::new(Some(20));
    let (team, tree) = (&setup.env(), &setup.tree);
    let writer = Kb::with_config(NO_EMBEDDINGS);
    ingest(&writer, tree.path(), team);
    let expected = search(&writer, "espresso grind", team);

    let replica = Kb::with_config(NO_EMBEDDINGS);
    let searches: Vec<std::process::Child> = (0..4)
        .map(|_| started(&replica, &["search", "espresso grind", "--k", "5"], team))
        .collect();
    for child in searches {
        assert_eq!(hit_paths(&finished(child)), expected);
    }
}
