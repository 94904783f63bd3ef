//! JSON printing and error reporting shared by every command.

use super::prelude::*;

pub(crate) fn print_json(value: &impl Serialize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// `error: …` plus a hint, or an `error.v1` line on stderr with `--json`.
pub(crate) fn report_error(err: &anyhow::Error, json: bool) {
    let (code, hint) = classify(err);
    let message = format!("{err:#}");
    if json {
        let report = ErrorReport {
            schema_version: "error.v1",
            code,
            message,
            hint,
        };
        eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        eprintln!("error: {}", kebab::sanitize::escape_control(&message));
        if let Some(h) = hint {
            eprintln!("  hint: {h}");
        }
    }
}

pub(crate) fn classify(err: &anyhow::Error) -> (&'static str, Option<String>) {
    use kebab::app::AppError;
    use kebab::config::ConfigError;
    use kebab::ingest::IngestError;
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<kebab::fetch::FetchError>() {
            let hint = match e {
                kebab::fetch::FetchError::SpanNotSupported(_) => {
                    "use `kebab fetch doc` or `kebab fetch chunk`"
                }
                _ => "ids come from `kebab search --json` (chunk_id, doc_id)",
            };
            return (e.code(), Some(hint.into()));
        }
        if let Some(e) = cause.downcast_ref::<ConfigError>() {
            let hint = match e {
                ConfigError::Invalid { .. } => {
                    "fix the key it names, or `kebab init --force` to rewrite defaults"
                }
                _ => "check the file's permissions, or pass --config FILE",
            };
            return ("config_invalid", Some(hint.into()));
        }
        if let Some(IngestError::Path { .. }) = cause.downcast_ref::<IngestError>() {
            return (
                "io_error",
                Some("check that the path exists and is readable".into()),
            );
        }
        if let Some(AppError::DataDir { .. }) = cause.downcast_ref::<AppError>() {
            return (
                "io_error",
                Some("pass --data-dir DIR (or set KEBAB_DATA_DIR) to a writable place".into()),
            );
        }
        if let Some(e) = cause.downcast_ref::<kebab::embed::EmbedError>() {
            return ("model_missing", Some(e.hint()));
        }
        if let Some(kebab::search::SearchError::NoVectors { .. }) =
            cause.downcast_ref::<kebab::search::SearchError>()
        {
            return (
                "model_missing",
                Some(
                    "`kebab doctor` shows what is missing; `--mode lexical` works without a model"
                        .into(),
                ),
            );
        }
        if cause.downcast_ref::<kebab::store::StoreError>().is_some() {
            return (
                "io_error",
                Some("is another kebab writing to the same --data-dir?".into()),
            );
        }
    }
    ("generic", None)
}
