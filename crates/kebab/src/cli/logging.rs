//! Logs through `tracing`: to stderr at the level `--verbose` / `--debug`
//! (or `RUST_LOG`) asks for, kebab's own warnings only by default; and to a daily
//! rotating file under the XDG state dir (`$XDG_STATE_HOME/kebab/logs`, or
//! `KEBAB_LOG_DIR`), a week kept. Nothing is ever logged to stdout, which
//! belongs to results (and to protocol messages under `kebab mcp`).

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

/// How much to show on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verbosity {
    /// Warnings and errors.
    Quiet,
    /// What kebab does, step by step (`--verbose`).
    Info,
    /// Everything kebab logs (`--debug`).
    Debug,
}

/// Keeps the file writer flushing until the process ends.
pub(crate) struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Install the stderr and file loggers. A log directory that cannot be
/// created leaves only the stderr logger; logging never stops a command.
pub(crate) fn init(verbosity: Verbosity) -> LogGuard {
    let level = match verbosity {
        // Other crates' warnings (ONNX Runtime, LanceDB) go to the file
        // only: a quiet run's stderr holds kebab's own words.
        Verbosity::Quiet => "kebab=warn",
        Verbosity::Info => "kebab=info,warn",
        Verbosity::Debug => "kebab=debug,info",
    };
    let stderr_filter = match (verbosity, EnvFilter::try_from_default_env()) {
        (Verbosity::Quiet, Ok(from_env)) => from_env,
        _ => EnvFilter::new(level),
    };
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_filter(stderr_filter);
    let dir = kebab::config::default_log_dir();
    let file = std::fs::create_dir_all(&dir)
        .ok()
        .and_then(|_| {
            RollingFileAppender::builder()
                .rotation(Rotation::DAILY)
                .filename_prefix("kebab")
                .filename_suffix("log")
                .max_log_files(7)
                .build(&dir)
                .ok()
        })
        .map(tracing_appender::non_blocking);
    let (file_layer, guard) = match file {
        Some((writer, guard)) => (
            Some(
                fmt::layer()
                    .with_ansi(false)
                    .with_writer(writer)
                    .with_filter(EnvFilter::new(if verbosity == Verbosity::Debug {
                        "kebab=debug,info"
                    } else {
                        "kebab=info,warn"
                    })),
            ),
            Some(guard),
        ),
        None => (None, None),
    };
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file_layer)
        .try_init();
    LogGuard { _file: guard }
}
