//! Indexing use cases: ingest a directory or file, and re-index one
//! plugin's documents. Both write through an index handle of their own
//! (the session's stays a reader), take the index's writer lock, stop
//! between files when `cancel` is raised, and report progress as
//! `ingest_progress.v1` events.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::{ApiError, Session};
use crate::app::App;
use crate::indexes::Indexes;
use crate::ingest::{IngestReport, Progress};

impl Session {
    /// `kebab ingest PATH`. `note` gets what the user should know before the
    /// run (installed plugins that do not load, bad routes).
    pub fn ingest(
        &self,
        path: &Path,
        cancel: &AtomicBool,
        note: &mut dyn FnMut(String),
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<IngestReport, ApiError> {
        let mut app = App::open(self.config().clone(), self.paths().clone())?;
        let plugins = app.plugins()?;
        for w in &plugins.warnings {
            note(w.clone());
        }
        let mut indexes = Indexes::for_ingest(&app, &app.paths.vector_dir());
        Ok(crate::ingest::ingest(
            &mut app,
            &plugins,
            &mut indexes,
            path,
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
        let mut indexes = Indexes::for_ingest(&app, &app.paths.vector_dir());
        Ok(crate::ingest::reindex(
            &mut app,
            &plugins,
            &mut indexes,
            name,
            cancel,
            on_progress,
        )?)
    }
}
