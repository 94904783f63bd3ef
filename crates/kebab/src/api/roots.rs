//! `roots`: the trees an index holds side by side — listing them
//! (`root_list.v1`), renaming and removing one — and how fresh each is, as
//! search, ask and `schema` report it.

use kebab_core::scope::ScopeError;
use std::sync::atomic::AtomicBool;

use schemars::JsonSchema;
use serde::Serialize;

use super::{ApiError, Session};
use crate::app::App;
use kebab_core::wire::RootFreshness;
use kebab_search::embed::ModelSpec;
use kebab_store::writer_lock::WriterLock;
use kebab_store::{Root, WatchState};

/// `root_list.v1`: every root of the index.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RootList {
    pub schema_version: &'static str,
    pub roots: Vec<RootSummary>,
}

/// One root of `root_list.v1`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RootSummary {
    /// Its name, as `--root` and citations write it.
    pub name: String,
    /// Its directory.
    pub path: String,
    /// Documents indexed from it.
    pub documents: u64,
    /// Their chunks.
    pub chunks: u64,
    /// Patterns left out of this root only.
    pub exclude: Vec<String>,
    /// How fresh it is.
    pub freshness: RootFreshness,
}

/// Whether the watcher that last reported `state` is keeping its root
/// fresh now: its process is alive and its last heartbeat is recent
/// (within three heartbeats, see [`crate::watch::HEARTBEAT`]).
pub fn is_watched(state: &WatchState) -> bool {
    let alive = pid_alive(state.pid);
    let recent = time::OffsetDateTime::parse(
        &state.seen_at,
        &time::format_description::well_known::Rfc3339,
    )
    .is_ok_and(|seen| {
        let age = time::OffsetDateTime::now_utc() - seen;
        age.whole_milliseconds() < 3 * crate::watch::HEARTBEAT.as_millis() as i128
    });
    alive && recent
}

/// Whether process `pid` exists (a signal-0 probe; `EPERM` means it does,
/// under another user).
fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks the pid.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// How fresh `root` is.
pub fn freshness(root: &Root) -> RootFreshness {
    let watch = root.watch.as_ref().filter(|w| is_watched(w));
    RootFreshness {
        name: root.name.clone(),
        path: root.path.display().to_string(),
        synced_at: root.synced_at.clone(),
        watched: watch.is_some(),
        queued: watch.map_or(0, |w| w.queued),
    }
}

impl Session {
    /// `kebab roots`: every root with its size and freshness
    /// (`root_list.v1`).
    pub fn roots(&self) -> Result<RootList, ApiError> {
        let app = self.app()?;
        let sizes = app.store.root_sizes()?;
        let roots = app
            .store
            .roots()?
            .into_iter()
            .map(|r| {
                let (documents, chunks) = sizes.get(&r.root_id).copied().unwrap_or((0, 0));
                RootSummary {
                    freshness: freshness(&r),
                    name: r.name,
                    path: r.path.display().to_string(),
                    documents,
                    chunks,
                    exclude: r.exclude,
                }
            })
            .collect();
        Ok(RootList {
            schema_version: "root_list.v1",
            roots,
        })
    }

    /// `kebab roots rename NAME NEW`: its documents, their IDs and vectors
    /// stay as they are; only what outputs call the root changes.
    pub fn rename_root(&self, name: &str, new_name: &str) -> Result<RootList, ApiError> {
        let mut app = App::open(self.config().clone(), self.paths().clone())?;
        let _writer = WriterLock::acquire(
            &app.paths.data_dir,
            "kebab roots rename",
            &AtomicBool::new(false),
            &mut |_| {},
        )?;
        app.store.rename_root(name, new_name)?;
        self.roots()
    }

    /// `kebab roots remove NAME`: the root, its documents, chunks and
    /// embedding records go (under the writer lock), and its vectors are
    /// deleted from the configured model's table; the files are untouched.
    pub fn remove_root(&self, name: &str) -> Result<RootList, ApiError> {
        let mut app = App::open(self.config().clone(), self.paths().clone())?;
        let _writer = WriterLock::acquire(
            &app.paths.data_dir,
            "kebab roots remove",
            &AtomicBool::new(false),
            &mut |_| {},
        )?;
        let doc_ids = app.store.remove_root(name)?;
        if let Err(e) = app.store.sync_lexical() {
            tracing::warn!(error = %e, "the lexical index left for the next ingest");
        }
        // SQLite is the truth: vector rows it no longer vouches for are
        // also dropped by the next ingest, should this fail.
        let spec = ModelSpec::resolve(
            &app.config.models.embedding,
            &app.paths.data_dir,
            &app.paths.cache_dir,
        );
        if let Ok(Some(spec)) = spec
            && let Ok(table) = app.own_vector_table(&spec)
            && let Err(e) = table.delete_docs(&doc_ids)
        {
            tracing::warn!(error = %e, "vectors of the removed root left for the next ingest");
        }
        self.roots()
    }

    /// How fresh each root `names` names is (every root when empty); a
    /// name the index has no root for is `invalid_input`.
    /// The roots a call of `scope` reads, asked for `requested`
    /// ([`super::Scope::roots`] over the index's roots).
    pub(crate) fn readable_roots(
        &self,
        app: &App,
        scope: &super::Scope,
        requested: &[String],
    ) -> Result<Vec<String>, ApiError> {
        if *scope == super::Scope::Everything {
            return Ok(requested.to_vec());
        }
        let indexed: Vec<String> = app.store.roots()?.into_iter().map(|r| r.name).collect();
        scope.roots(requested, &indexed).map_err(|e| match e {
            // Word for word what a root the index lacks gets.
            ScopeError::Hidden(_) => ApiError::invalid("roots", e.to_string()),
            ScopeError::NothingReadable(user) => ApiError::NothingReadable { user },
        })
    }

    pub(crate) fn freshness_of(
        &self,
        app: &App,
        names: &[String],
    ) -> Result<Vec<RootFreshness>, ApiError> {
        let roots = app.store.roots()?;
        if let Some(unknown) = names.iter().find(|n| !roots.iter().any(|r| &r.name == *n)) {
            return Err(ApiError::invalid(
                "roots",
                format!("the index has no root `{unknown}` (`kebab roots` lists them)"),
            ));
        }
        Ok(roots
            .iter()
            .filter(|r| names.is_empty() || names.contains(&r.name))
            .map(freshness)
            .collect())
    }
}
