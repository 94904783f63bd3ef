//! `kebab init`: the default config file, the data directory and the
//! database, as `init.v1`.

use std::path::PathBuf;

use serde::Serialize;

use super::ApiError;
use crate::app::{App, AppError, Paths};
use crate::config::Config;

/// `init.v1`: what `kebab init` wrote and opened.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InitReport {
    pub schema_version: &'static str,
    pub config: PathBuf,
    /// The config file was (re)written with the defaults.
    pub config_written: bool,
    /// The config file existed before.
    pub config_existed: bool,
    pub data_dir: PathBuf,
    pub sqlite: PathBuf,
    /// The database's migration level.
    pub db_schema_version: u32,
}

/// `kebab init`: write the default config (when missing, or with
/// `force`) and create the data directory and database.
pub fn init(paths: &Paths, force: bool) -> Result<InitReport, ApiError> {
    let existed = paths.config_file.exists();
    let write = !existed || force;
    if write {
        Config::write_default(&paths.config_file).map_err(AppError::from)?;
    }
    let config = Config::load(&paths.config_file).map_err(AppError::from)?;
    let app = App::open(config, paths.clone())?;
    Ok(InitReport {
        schema_version: "init.v1",
        config: paths.config_file.clone(),
        config_written: write,
        config_existed: existed,
        data_dir: paths.data_dir.clone(),
        sqlite: paths.sqlite(),
        db_schema_version: app.store.schema_version()?,
    })
}
