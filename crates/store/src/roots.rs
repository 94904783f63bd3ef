//! Roots: the trees an index holds side by side, each a directory with a
//! short unique name. A document belongs to one root and its
//! `workspace_path` is relative to it. Adding, renaming and removing a
//! root, the time each was last synced, and the state of the watcher
//! keeping it fresh.

use std::path::{Path, PathBuf};

use crate::db::{Db, DbError, Optional, Row, params};

use crate::{Store, StoreError, json_text, parse_json};
use kebab_core::clock::now_rfc3339;
use kebab_core::paths::{escape_path, unescape_path};

/// Longest root name.
pub const MAX_ROOT_NAME: usize = 64;

/// A tree the index holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Root {
    pub root_id: i64,
    /// What outputs call it (`notes`).
    pub name: String,
    /// The directory, absolute.
    pub path: PathBuf,
    /// The root's part of its documents' IDs, fixed at creation.
    pub id_key: String,
    /// Gitignore-style patterns left out of this root only.
    pub exclude: Vec<String>,
    /// When a walk of the whole root last completed (RFC 3339).
    pub synced_at: Option<String>,
    /// The watcher keeping it fresh, if one said so.
    pub watch: Option<WatchState>,
}

/// What a watcher last said about a root it keeps fresh.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchState {
    /// The watching process.
    pub pid: u32,
    /// Its last heartbeat (RFC 3339).
    pub seen_at: String,
    /// Changes seen and not yet applied.
    pub queued: u64,
}

/// Whether `name` can name a root: 1–64 characters, letters, digits, `-`,
/// `_` and `.`, not starting with `.` or `-`.
pub fn check_root_name(name: &str) -> Result<(), StoreError> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_ROOT_NAME
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::BadRootName(name.to_string()))
    }
}

/// Whether `name` is kept for kebab's own roots (`_external`, the one-off
/// documents): every name starting with `_`.
pub fn is_reserved_root_name(name: &str) -> bool {
    name.starts_with('_')
}

/// Whether a person may give a root the name `name`: one
/// [`check_root_name`] takes that is not reserved.
pub fn check_user_root_name(name: &str) -> Result<(), StoreError> {
    check_root_name(name)?;
    if is_reserved_root_name(name) {
        return Err(StoreError::ReservedRootName(name.to_string()));
    }
    Ok(())
}

/// A root name made from a directory's name: characters a name cannot hold
/// become `-`, leading `.`, `-` and `_` are dropped (names starting with
/// `_` are reserved), and an empty result is `root`.
pub fn root_name_for(dir: &Path) -> String {
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = base
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(MAX_ROOT_NAME - 4)
        .collect();
    name = name.trim_start_matches(['.', '-', '_']).to_string();
    if name.is_empty() {
        "root".to_string()
    } else {
        name
    }
}

const ROOT_COLUMNS: &str = "root_id, name, path, id_key, exclude_json, synced_at, \
                            watch_pid, watch_seen_at, watch_queued";

fn root_row(r: &Row<'_>) -> Result<Root, DbError> {
    let pid: Option<i64> = r.get(6)?;
    let seen_at: Option<String> = r.get(7)?;
    let queued: i64 = r.get(8)?;
    Ok(Root {
        root_id: r.get(0)?,
        name: r.get(1)?,
        path: unescape_path(&r.get::<String>(2)?),
        id_key: r.get(3)?,
        exclude: parse_json(&r.get::<String>(4)?),
        synced_at: r.get(5)?,
        watch: match (pid, seen_at) {
            (Some(pid), Some(seen_at)) => Some(WatchState {
                pid: u32::try_from(pid).unwrap_or(0),
                seen_at,
                queued: u64::try_from(queued).unwrap_or(0),
            }),
            _ => None,
        },
    })
}

impl Store {
    /// Every root, by name.
    pub fn roots(&self) -> Result<Vec<Root>, StoreError> {
        let stmt = self
            .conn
            .prepare(&format!("SELECT {ROOT_COLUMNS} FROM roots ORDER BY name"))?;
        let rows = stmt.query_map([], root_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Documents and chunks of each root, by root id.
    pub fn root_sizes(&self) -> Result<std::collections::HashMap<i64, (u64, u64)>, StoreError> {
        let stmt = self.conn.prepare(
            "SELECT d.root_id, count(DISTINCT d.doc_id), count(c.chunk_id)
             FROM documents d LEFT JOIN chunks c ON c.doc_id = d.doc_id
             GROUP BY d.root_id",
        )?;
        let rows = stmt.query_map([], |r| {
            let n = |i: usize| r.get::<i64>(i).map(|v| u64::try_from(v).unwrap_or(0));
            Ok((r.get::<Option<i64>>(0)?.unwrap_or(0), (n(1)?, n(2)?)))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many roots the index holds.
    pub fn root_count(&self) -> Result<usize, StoreError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM roots", [], |r| r.get(0))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// The root called `name`.
    pub fn root_named(&self, name: &str) -> Result<Option<Root>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {ROOT_COLUMNS} FROM roots WHERE name = ?1"),
                params![name],
                root_row,
            )
            .optional()?)
    }

    /// The root whose directory holds `abs` (the deepest one, when roots
    /// nest), if any.
    pub fn root_containing(&self, abs: &Path) -> Result<Option<Root>, StoreError> {
        Ok(self
            .roots()?
            .into_iter()
            .filter(|r| abs.starts_with(&r.path))
            .max_by_key(|r| r.path.components().count()))
    }

    /// `base`, or `base-2`, `base-3`, … : the first name no root has.
    pub fn free_root_name(&self, base: &str) -> Result<String, StoreError> {
        Ok(free_name(&self.conn, base)?)
    }

    /// Add the root `name` for the directory `path` (absolute); its ID key
    /// is its name, for good.
    pub fn add_root(
        &mut self,
        name: &str,
        path: &Path,
        exclude: &[String],
    ) -> Result<Root, StoreError> {
        check_root_name(name)?;
        let tx = self.write_tx()?;
        insert_root(&tx, name, path, exclude)?;
        tx.commit()?;
        self.root_named(name)?
            .ok_or_else(|| StoreError::UnknownRoot(name.to_string()))
    }

    /// Give the root `name` the name `new_name`; its documents and their
    /// IDs stay as they are.
    pub fn rename_root(&mut self, name: &str, new_name: &str) -> Result<(), StoreError> {
        check_user_root_name(new_name)?;
        if self.root_named(new_name)?.is_some() {
            return Err(StoreError::RootExists(new_name.to_string()));
        }
        let changed = self.conn.execute(
            "UPDATE roots SET name = ?2 WHERE name = ?1",
            params![name, new_name],
        )?;
        if changed == 0 {
            return Err(StoreError::UnknownRoot(name.to_string()));
        }
        Ok(())
    }

    /// Set the patterns the root `name` leaves out.
    pub fn set_root_exclude(&mut self, name: &str, exclude: &[String]) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE roots SET exclude_json = ?2 WHERE name = ?1",
            params![name, json_text(&exclude)],
        )?;
        Ok(())
    }

    /// Remove the root `name` with its documents (their blocks, chunks,
    /// full-text rows, tags and embedding records); the IDs of the removed
    /// documents, whose vectors the caller deletes (their embedding records
    /// go with their chunks).
    pub fn remove_root(&mut self, name: &str) -> Result<Vec<String>, StoreError> {
        let root = self
            .root_named(name)?
            .ok_or_else(|| StoreError::UnknownRoot(name.to_string()))?;
        let tx = self.write_tx()?;
        let doc_ids: Vec<String> = {
            let stmt = tx.prepare("SELECT doc_id FROM documents WHERE root_id = ?1")?;
            let rows = stmt.query_map(params![root.root_id], |r| r.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        tx.execute(
            "DELETE FROM documents WHERE root_id = ?1",
            params![root.root_id],
        )?;
        tx.execute(
            "DELETE FROM assets WHERE NOT EXISTS
               (SELECT 1 FROM documents d WHERE d.asset_id = assets.asset_id)",
            [],
        )?;
        tx.execute(
            "DELETE FROM roots WHERE root_id = ?1",
            params![root.root_id],
        )?;
        tx.commit()?;
        Ok(doc_ids)
    }

    /// Record that a walk of the whole root `root_id` just completed.
    pub fn mark_root_synced(&mut self, root_id: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE roots SET synced_at = ?2 WHERE root_id = ?1",
            params![root_id, now_rfc3339()],
        )?;
        Ok(())
    }

    /// Record what the watcher of `root_id` says now (`None`: it stopped).
    pub fn set_watch_state(
        &mut self,
        root_id: i64,
        state: Option<(u32, u64)>,
    ) -> Result<(), StoreError> {
        match state {
            Some((pid, queued)) => self.conn.execute(
                "UPDATE roots SET watch_pid = ?2, watch_seen_at = ?3, watch_queued = ?4
                 WHERE root_id = ?1",
                params![
                    root_id,
                    i64::from(pid),
                    now_rfc3339(),
                    i64::try_from(queued).unwrap_or(i64::MAX)
                ],
            )?,
            None => self.conn.execute(
                "UPDATE roots SET watch_pid = NULL, watch_seen_at = NULL, watch_queued = 0
                 WHERE root_id = ?1",
                params![root_id],
            )?,
        };
        Ok(())
    }
}

/// `base`, or `base-2`, `base-3`, … : the first name no root has.
fn free_name(conn: &Db, base: &str) -> Result<String, DbError> {
    let mut name = base.to_string();
    let mut n = 1;
    while conn
        .query_row("SELECT 1 FROM roots WHERE name = ?1", params![name], |_| {
            Ok(())
        })
        .optional()?
        .is_some()
    {
        n += 1;
        name = format!("{base}-{n}");
    }
    Ok(name)
}

fn insert_root(tx: &Db, name: &str, path: &Path, exclude: &[String]) -> Result<(), StoreError> {
    let path_text = escape_path(path);
    let taken: Option<String> = tx
        .query_row(
            "SELECT name FROM roots WHERE name = ?1 OR path = ?2",
            params![name, path_text],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(taken) = taken {
        return Err(StoreError::RootExists(taken));
    }
    // Another writer of a shared database may have added it since the
    // check: then its root is the one that exists.
    let added = tx.execute(
        "INSERT INTO roots (name, path, id_key, exclude_json, created_at)
         VALUES (?1, ?2, ?1, ?3, ?4) ON CONFLICT DO NOTHING",
        params![name, path_text, json_text(&exclude), now_rfc3339()],
    )?;
    if added == 0 {
        return Err(StoreError::RootExists(name.to_string()));
    }
    Ok(())
}

/// The migration step that gives documents indexed before roots existed
/// their roots: the tree each came from is its source path less as many
/// trailing components as its workspace path has; each tree becomes a root
/// named after its directory (made unique). Their IDs were derived without
/// a root and stay as they are: IDs derived from now on include the root's
/// key, so the two recipes never meet.
pub(crate) fn backfill_roots(tx: &Db) -> Result<(), DbError> {
    let docs: Vec<(String, String, String)> = {
        let stmt = tx.prepare(
            "SELECT doc_id, source_uri, workspace_path FROM documents WHERE root_id IS NULL",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    let mut roots: Vec<(String, i64)> = Vec::new();
    for (doc_id, source_uri, workspace_path) in docs {
        let depth = workspace_path.split('/').filter(|p| !p.is_empty()).count();
        let source = unescape_path(&source_uri);
        let dir = source
            .ancestors()
            .nth(depth)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dir_text = escape_path(&dir);
        let root_id = match roots.iter().find(|(p, _)| *p == dir_text) {
            Some((_, id)) => *id,
            None => {
                let name = free_name(tx, &root_name_for(&dir))?;
                let id: i64 = tx.query_row(
                    "INSERT INTO roots (name, path, id_key, exclude_json, created_at)
                     VALUES (?1, ?2, ?1, '[]', ?3) RETURNING root_id",
                    params![name, dir_text, now_rfc3339()],
                    |r| r.get(0),
                )?;
                roots.push((dir_text, id));
                id
            }
        };
        tx.execute(
            "UPDATE documents SET root_id = ?2 WHERE doc_id = ?1",
            params![doc_id, root_id],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChunkFilter;
    use crate::tests::{doc, open_with_root};

    crate::tests::on_both_backends! {
        fn two_roots_hold_the_same_path_side_by_side(store) {
            let app = store.add_root("app", Path::new("/src/app"), &[]).unwrap();
            store
                .replace_document(&doc("README.md", "notes readme"))
                .unwrap();
            let mut other = doc("README.md", "app readme");
            other.root_id = app.root_id;
            other.source_uri = "/src/app/README.md".into();
            other.doc_id = kebab_core::ids::doc_id("app", "README.md", &other.asset_id, "p1");
            store.replace_document(&other).unwrap();
            let listed = store.list_docs(None).unwrap();
            let places: Vec<(String, String)> = listed
                .iter()
                .map(|d| (d.root.clone(), d.workspace_path.clone()))
                .collect();
            assert_eq!(
                places,
                vec![
                    ("abs".to_string(), "README.md".to_string()),
                    ("app".to_string(), "README.md".to_string())
                ]
            );
            let only_app = ChunkFilter {
                roots: vec!["app".into()],
                ..Default::default()
            };
            let hits =
                crate::tests::lexical_hits(store, &crate::tests::terms(&["readme"]), 5, &only_app)
                    .unwrap();
            assert_eq!(hits.len(), 1);
            assert_eq!(
                (hits[0].0.root.as_str(), hits[0].0.text.as_str()),
                ("app", "app readme")
            );
            assert_eq!(
                store.list_docs(Some(&["abs".to_string()])).unwrap().len(),
                1
            );

            // Renaming keeps documents and IDs; removing drops the root's only.
            store.rename_root("app", "web").unwrap();
            assert!(matches!(
                store.rename_root("web", "abs"),
                Err(StoreError::RootExists(_))
            ));
            assert!(matches!(
                store.rename_root("nope", "x"),
                Err(StoreError::UnknownRoot(_))
            ));
            let removed = store.remove_root("web").unwrap();
            assert_eq!(removed, vec![other.doc_id.clone()]);
            let left = store.list_docs(None).unwrap();
            assert_eq!((left.len(), left[0].root.as_str()), (1, "abs"));
            assert_eq!(store.root_count().unwrap(), 1);
        }
    }

    crate::tests::on_both_backends! {
        fn names_and_directories_are_unique_and_checked(store) {
            assert!(matches!(
                store.add_root("abs", Path::new("/other"), &[]),
                Err(StoreError::RootExists(_))
            ));
            assert!(matches!(
                store.add_root("other", Path::new("/abs"), &[]),
                Err(StoreError::RootExists(_))
            ));
            for bad in ["", ".hidden", "-x", "a/b", "a b", &"x".repeat(65)] {
                assert!(check_root_name(bad).is_err(), "{bad:?}");
            }
            assert_eq!(store.free_root_name("abs").unwrap(), "abs-2");
            assert_eq!(root_name_for(Path::new("/home/me/My Notes")), "My-Notes");
            assert_eq!(root_name_for(Path::new("/")), "root");
            assert_eq!(root_name_for(Path::new("/x/_external")), "external");
            assert!(check_root_name("_external").is_ok(), "kebab's own root");
            assert!(matches!(
                check_user_root_name("_external"),
                Err(StoreError::ReservedRootName(_))
            ));
            assert!(matches!(
                store.rename_root("abs", "_mine"),
                Err(StoreError::ReservedRootName(_))
            ));
            assert!(check_user_root_name("notes_2").is_ok());
            let nested = store.add_root("deep", Path::new("/abs/deep"), &[]).unwrap();
            let found = store.root_containing(Path::new("/abs/deep/x.md")).unwrap();
            assert_eq!(found.map(|r| r.name), Some(nested.name));
            let found = store.root_containing(Path::new("/abs/x.md")).unwrap();
            assert_eq!(found.map(|r| r.name), Some("abs".to_string()));
            assert!(
                store
                    .root_containing(Path::new("/elsewhere"))
                    .unwrap()
                    .is_none()
            );
        }
    }

    #[test]
    fn documents_indexed_before_roots_get_one_root_per_tree_keeping_their_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.sqlite");
        let mut store = open_with_root(&path);
        let mut notes = doc("tech/raft.md", "raft");
        notes.source_uri = "/home/me/notes/tech/raft.md".into();
        let mut code = doc("src/main.rs", "fn main");
        code.source_uri = "/home/me/src/app/src/main.rs".into();
        for d in [&notes, &code] {
            store.replace_document(d).unwrap();
        }
        // Make it an index from before roots: schema v3, no roots table
        // (nor what later migrations add).
        store
            .conn
            .execute_batch(
                "ALTER TABLE answers DROP COLUMN hops_json;
                 ALTER TABLE answers DROP COLUMN verification_json;
                 DROP TRIGGER chunks_lexical_ai;
                 DROP TRIGGER chunks_lexical_ad;
                 DROP TRIGGER chunks_lexical_au;
                 DROP TABLE lexical_log;
                 DROP INDEX idx_docs_root_path;
                 ALTER TABLE documents DROP COLUMN root_id;
                 DROP TABLE roots;
                 CREATE UNIQUE INDEX idx_docs_workspace_path ON documents(workspace_path);
                 DELETE FROM migrations WHERE id >= 4;
                 UPDATE schema_meta SET value = '3' WHERE key = 'schema_version';",
            )
            .unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        let roots: Vec<(String, PathBuf)> = store
            .roots()
            .unwrap()
            .into_iter()
            .map(|r| (r.name, r.path))
            .collect();
        assert_eq!(
            roots,
            vec![
                ("app".to_string(), PathBuf::from("/home/me/src/app")),
                ("notes".to_string(), PathBuf::from("/home/me/notes")),
            ]
        );
        let listed = store.list_docs(None).unwrap();
        let ids: Vec<(String, String)> = listed
            .iter()
            .map(|d| (d.root.clone(), d.doc_id.clone()))
            .collect();
        assert_eq!(
            ids,
            vec![
                ("app".to_string(), code.doc_id.clone()),
                ("notes".to_string(), notes.doc_id.clone())
            ]
        );
    }
}
