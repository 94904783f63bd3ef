//! `kebab ingest` and `kebab reindex`: progress display and the report.

use super::prelude::*;
use kebab::sanitize::escape_control;

pub(crate) fn ingest(
    session: &Session,
    path: &std::path::Path,
    (name, shard): (Option<&str>, Option<kebab::shard::Shard>),
    strict: bool,
    json: bool,
) -> Result<u8> {
    let stdin = path == std::path::Path::new("-");
    if name.is_some() && !stdin {
        return Err(kebab::api::ApiError::invalid(
            "name",
            "--name names a document read from stdin: `kebab ingest - --name note.md`",
        )
        .into());
    }
    if shard.is_some() && stdin {
        return Err(kebab::api::ApiError::invalid(
            "shard",
            "--shard splits a tree between runs; a document on stdin is one file",
        )
        .into());
    }
    let report = with_progress(json, |on_progress| {
        let mut note = |w: String| errln!("note: {}", kebab::sanitize::escape_control(&w));
        let cancel = kebab::interrupt::flag();
        if stdin {
            session.ingest_stdin(&mut std::io::stdin(), name, cancel, &mut note, on_progress)
        } else {
            session.ingest(path, shard, cancel, &mut note, on_progress)
        }
    })?;
    Ok(exit_code(&report, strict))
}

/// `kebab reindex --plugin NAME`.
pub(crate) fn reindex(session: &Session, plugin: &str, json: bool) -> Result<u8> {
    let report = with_progress(json, |on_progress| {
        session.reindex(plugin, kebab::interrupt::flag(), on_progress)
    })?;
    Ok(exit_code(&report, false))
}

/// 130 for a run Ctrl-C stopped; with `strict`, 2 when anything was bad input.
fn exit_code(report: &IngestReport, strict: bool) -> u8 {
    if report.aborted {
        kebab::interrupt::EXIT_INTERRUPTED
    } else if strict && report.has_bad_input() {
        EXIT_ERROR
    } else {
        EXIT_OK
    }
}

/// Run an ingest-like job with Ctrl-C handled (the file in flight stops,
/// what finished stays) and its progress shown: a bar on a terminal, or
/// `ingest_progress.v1` lines with `--json`; then print the report.
fn with_progress(
    json: bool,
    job: impl FnOnce(&mut dyn FnMut(&Progress)) -> Result<IngestReport, kebab::api::ApiError>,
) -> Result<IngestReport> {
    kebab::interrupt::install_handler();
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if json || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{spinner} {bar:30} {pos}/{len} {wide_msg}")
            .expect("valid template"),
    );
    // Progress lines nobody reads any more do not stop the ingest: the
    // run finishes and keeps what it indexed.
    let mut stdout = std::io::stdout().lock();
    // Files still to be parsed: until then the bar counts files, and
    // chunks embedded beside parsing only show in its message.
    let mut files_left = 0usize;
    let mut on_progress = |event: &Progress| {
        if let Progress::WaitingForWriter { holder, .. } = event {
            errln!(
                "waiting: {} is writing to this index; this run starts when it finishes (Ctrl-C to stop)",
                kebab::sanitize::escape_control(holder)
            );
        }
        if json {
            let line = kebab::ingest::ProgressLine::new(event);
            let _ = writeln!(
                stdout,
                "{}",
                serde_json::to_string(&line).unwrap_or_default()
            );
            let _ = stdout.flush();
            return;
        }
        match event {
            Progress::ScanCompleted { total } => {
                files_left = *total;
                bar.set_length(*total as u64)
            }
            Progress::AssetStarted { path, .. } => {
                bar.set_message(kebab::sanitize::escape_control(path).into_owned())
            }
            Progress::AssetFinished { .. } => {
                files_left = files_left.saturating_sub(1);
                bar.inc(1)
            }
            Progress::EmbedBatchFinished { done, .. } if files_left > 0 => {
                bar.set_message(format!("{done} chunks embedded so far"));
            }
            Progress::EmbedBatchFinished { done, total, .. } => {
                bar.set_length(*total as u64);
                bar.set_position(*done as u64);
                bar.set_message("embedding chunks");
            }
            _ => {}
        }
    };
    let report = job(&mut on_progress)?;
    bar.finish_and_clear();
    drop(stdout);
    if json {
        super::output::print_json(&report)?;
    } else {
        print_ingest_report(&report);
    }
    Ok(report)
}

/// Notable report lines shown without `--json`.
pub(crate) const MAX_REPORT_LINES: usize = 30;

pub(crate) fn print_ingest_report(r: &IngestReport) {
    let c = &r.counts;
    let optional = |n: usize, label: &str| {
        if n > 0 {
            format!(" · {n} {label}")
        } else {
            String::new()
        }
    };
    outln!(
        "{}: {} scanned · {} new · {} updated{} · {} skipped · {} errors · {} removed{} ({:.1} s)",
        if r.aborted {
            "ingest aborted"
        } else {
            "ingested"
        },
        c.scanned,
        c.new,
        c.updated,
        optional(c.reindexed, "re-indexed"),
        c.skipped,
        c.errors,
        c.removed,
        optional(c.fallbacks, "via text fallback"),
        r.duration_ms as f64 / 1000.0
    );
    let notable: Vec<String> = r.items.iter().filter_map(notable_line).collect();
    for line in notable.iter().take(MAX_REPORT_LINES) {
        outln!("{line}");
    }
    if notable.len() > MAX_REPORT_LINES {
        outln!("  … {} more (see --json)", notable.len() - MAX_REPORT_LINES);
    }
    if let Some(v) = &r.vectors {
        outln!(
            "  vectors: {} embedded · {} from cache · {} stale removed · {} in {}{}",
            v.embedded,
            v.from_cache,
            v.removed,
            v.total,
            v.table,
            if v.ann_index {
                " (ANN index up to date)"
            } else {
                ""
            }
        );
    }
    if r.korean_analyzed > 0 {
        outln!("  CJK words: {} chunks analysed", r.korean_analyzed);
    }
    for w in &r.warnings {
        outln!("  warning: {}", escape_control(w));
    }
    if r.skipped_unsupported > 0 {
        outln!(
            "  {} files of types no plugin handles were skipped",
            r.skipped_unsupported
        );
    }
}

/// The line a report item gets in the human summary, if it is notable
/// (errors, fallbacks, skips other than unchanged or unsupported files).
fn notable_line(i: &kebab::ingest::IngestItem) -> Option<String> {
    let path = escape_control(&i.doc_path);
    match (i.kind, &i.error, &i.fallback, i.reason) {
        ("error", Some(e), _, _) => Some(format!("  error    {path}: {}", escape_control(e))),
        (_, _, Some(f), _) => Some(format!("  fallback {path}: {}", escape_control(f))),
        ("skipped", _, _, Some(reason)) if !matches!(reason, "unchanged" | "unsupported") => {
            Some(format!(
                "  skipped  {path}: {reason}{}",
                i.warnings
                    .first()
                    .map(|w| format!(" ({})", escape_control(w)))
                    .unwrap_or_default()
            ))
        }
        _ => None,
    }
}
