//! Indexing use cases: ingest a directory or file, and re-index one
//! plugin's documents. Both write through an index handle of their own
//! (the session's stays a reader), take the index's writer lock, stop
//! between files when `cancel` is raised, and report progress as
//! `ingest_progress.v1` events.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::{ApiError, Session};
use crate::app::App;
use crate::indexes::Indexes;
use crate::ingest::{IngestError, IngestReport, Progress, external};
use crate::watch::WatchEvent;
use kebab_core::shard::Shard;

impl Session {
    /// `kebab ingest PATH`: a directory or a file of a root in place; a
    /// file outside every root kept in the data dir's `_external/` and
    /// indexed there (design §6.7). `note` gets what the user should know
    /// before the run (where a one-off file was kept, installed plugins
    /// that do not load, bad routes). With `shard`, only that shard's files
    /// ([`kebab_core::shard::Shard`]).
    pub fn ingest(
        &self,
        path: &Path,
        shard: Option<Shard>,
        cancel: &AtomicBool,
        note: &mut dyn FnMut(String),
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<IngestReport, ApiError> {
        let mut app = App::open(self.config().clone(), self.paths().clone())?;
        let kept = crate::ingest::one_off(&app, path)?;
        if let Some(kept) = &kept {
            note(format!(
                "{} is outside every root: kept as {} and indexed there",
                path.display(),
                kept.display()
            ));
        }
        let path = kept.as_deref().unwrap_or(path);
        self.ingest_with(&mut app, (path, shard), cancel, note, on_progress)
    }

    /// `kebab ingest -`: the document read from `input` (at most `[indexing]
    /// max_file_mb`), kept in the data dir's `_external/` under its content
    /// hash and `name` (its file name, whose extension picks the plugin;
    /// `.txt` added without one) and indexed there.
    pub fn ingest_stdin(
        &self,
        input: &mut dyn Read,
        name: Option<&str>,
        cancel: &AtomicBool,
        note: &mut dyn FnMut(String),
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<IngestReport, ApiError> {
        let mut app = App::open(self.config().clone(), self.paths().clone())?;
        let max_bytes = app.config.indexing.max_file_bytes();
        let bytes = external::read_bounded(input, max_bytes).map_err(IngestError::from)?;
        let kept = external::keep(
            &app.paths.data_dir.join(external::EXTERNAL_DIR),
            &bytes,
            name,
        )
        .map_err(IngestError::from)?;
        note(format!(
            "stdin kept as {} and indexed there",
            kept.display()
        ));
        self.ingest_with(&mut app, (&kept, None), cancel, note, on_progress)
    }

    /// Index `path` (its shard's files) with `app`'s plugins.
    fn ingest_with(
        &self,
        app: &mut App,
        (path, shard): (&Path, Option<Shard>),
        cancel: &AtomicBool,
        note: &mut dyn FnMut(String),
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<IngestReport, ApiError> {
        let plugins = app.plugins()?;
        for w in &plugins.warnings {
            note(w.clone());
        }
        let mut indexes = Indexes::for_ingest(app, app.vector_writer_place()?);
        Ok(crate::ingest::ingest(
            app,
            &plugins,
            &mut indexes,
            path,
            shard,
            cancel,
            on_progress,
        )?)
    }

    /// `kebab reindex --plugin NAME`: parse every document of plugin `name`
    /// again, whatever changed.
    pub fn reindex(
        &self,
        name: &str,
        cancel: &AtomicBool,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<IngestReport, ApiError> {
        let mut app = App::open(self.config().clone(), self.paths().clone())?;
        let plugins = app.plugins()?;
        if plugins.registry.get(name).is_none() {
            return Err(ApiError::UnknownPlugin(name.to_string()));
        }
        let mut indexes = Indexes::for_ingest(&app, app.vector_writer_place()?);
        Ok(crate::ingest::reindex(
            &mut app,
            &plugins,
            &mut indexes,
            name,
            cancel,
            on_progress,
        )?)
    }

    /// `kebab watch [ROOT…]`: bring the roots `names` asks for (names or
    /// directories; every root when empty) up to date, then keep them
    /// fresh until `cancel` is raised. `note` gets what the user should
    /// know first (plugins that do not load); `on_event` what happens.
    pub fn watch(
        &self,
        names: &[String],
        cancel: &AtomicBool,
        note: &mut dyn FnMut(String),
        on_event: &mut dyn FnMut(WatchEvent<'_>),
    ) -> Result<(), ApiError> {
        let mut app = App::open(self.config().clone(), self.paths().clone())?;
        let plugins = app.plugins()?;
        for w in &plugins.warnings {
            note(w.clone());
        }
        let roots = crate::watch::resolve_roots(&mut app, names, cancel)?;
        if roots.is_empty() {
            return Err(ApiError::invalid(
                "roots",
                "the index has no roots to watch: name a directory (`kebab watch ~/notes`)",
            ));
        }
        let mut indexes = Indexes::for_ingest(&app, app.vector_writer_place()?);
        let settings = app.config.watch.clone();
        Ok(crate::watch::watch(
            &mut app,
            &plugins,
            &mut indexes,
            roots,
            &settings,
            cancel,
            on_event,
        )?)
    }
}
