//! `[storage] database`: the index in PostgreSQL (team mode), on a real
//! throw-away cluster. Ingest and search answer as the SQLite index does;
//! the data directory holds no SQLite file; a second machine (another
//! data directory over the same database) finds every document already
//! indexed, and follows a change the first one writes without ingesting
//! it itself; a query replica that never ingested answers the same.

use std::path::Path;

use kebab_test_postgres::Cluster;
use serde_json::Value;

use crate::support::{Kb, NO_EMBEDDINGS, copy_tree, doctor_check, hit_paths, items, sample_corpus};

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

fn ingest(kb: &Kb, tree: &Path, env: &[(&str, &str)]) -> Value {
    let (report, code) = kb.json_with(&["ingest", tree.to_str().unwrap()], env);
    assert_eq!(code, 0, "{report:#}");
    report
}

#[test]
fn the_index_in_postgresql_answers_as_sqlite_does_and_a_second_machine_follows_it() {
    let cluster = Cluster::start();
    let url = cluster.create_database("team");
    let team: &[(&str, &str)] = &[("KEBAB_STORAGE_DATABASE", url.as_str())];
    let tree = tempfile::tempdir().unwrap();
    copy_tree(&sample_corpus(), tree.path());

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
    let cluster = Cluster::start();
    let url = cluster.create_database("team");
    let team: &[(&str, &str)] = &[("KEBAB_STORAGE_DATABASE", url.as_str())];
    let tree = tempfile::tempdir().unwrap();
    copy_tree(&sample_corpus(), tree.path());
    let local = Kb::with_config(NO_EMBEDDINGS);
    let all = items(&ingest(&local, tree.path(), &[]), "new").len();

    // Each shard on its own data directory (its own machine), both
    // writing to the database at the same time.
    let machines = [
        Kb::with_config(NO_EMBEDDINGS),
        Kb::with_config(NO_EMBEDDINGS),
    ];
    let running: Vec<_> = machines
        .iter()
        .zip(["0/2", "1/2"])
        .map(|(kb, shard)| {
            kb.cmd(&[
                "--json",
                "ingest",
                tree.path().to_str().unwrap(),
                "--shard",
                shard,
            ])
            .envs(team.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let mut indexed = 0;
    for child in running {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        indexed += items(&report, "new").len();
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
