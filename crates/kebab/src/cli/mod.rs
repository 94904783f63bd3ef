//! The command implementations behind `main.rs`'s argument parser.

pub(crate) mod ask;
pub(crate) mod doctor;
pub(crate) mod eval;
pub(crate) mod fetch;
pub(crate) mod ingest;
pub(crate) mod init;
pub(crate) mod logging;
pub(crate) mod models;
pub(crate) mod output;
pub(crate) mod plugin;
pub(crate) mod roots;
pub(crate) mod search;
pub(crate) mod sessions;
pub(crate) mod term;
pub(crate) mod watch;

/// What every command module uses.
pub(crate) mod prelude {
    pub(crate) use std::io::{IsTerminal, Write};
    pub(crate) use std::path::PathBuf;

    pub(crate) use anyhow::{Context, Result};
    pub(crate) use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    pub(crate) use serde::Serialize;

    pub(crate) use kebab::api::search::SearchInput;
    pub(crate) use kebab::api::{FetchTarget, Session};
    pub(crate) use kebab::app::Paths;
    pub(crate) use kebab::config::Config;
    pub(crate) use kebab::ingest::{IngestReport, Progress};
    pub(crate) use kebab::llm::{LlmError, Provider};
    pub(crate) use kebab::wire::{ErrorReport, SearchResponse};

    pub(crate) use super::ask::*;
    pub(crate) use super::doctor::*;
    pub(crate) use super::eval::*;
    pub(crate) use super::fetch::*;
    pub(crate) use super::ingest::*;
    pub(crate) use super::init::*;
    pub(crate) use super::models::*;
    pub(crate) use super::output::*;
    pub(crate) use super::plugin::*;
    pub(crate) use super::roots::*;
    pub(crate) use super::search::*;
    pub(crate) use super::sessions::*;
    pub(crate) use super::term::{errln, outln};
    pub(crate) use super::watch::*;
    pub(crate) use crate::{
        EXIT_ERROR, EXIT_NO_HIT, EXIT_OK, EXIT_UNHEALTHY, EvalCmd, ModelsCmd, PluginCmd, RootsCmd,
        SessionsCmd,
    };
}
