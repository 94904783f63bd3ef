//! `kebab ingest` and `kebab reindex`: progress display and the report.

use super::prelude::*;

pub(crate) fn ingest(
    app: &mut App,
    path: &std::path::Path,
    strict: bool,
    json: bool,
) -> Result<u8> {
    let plugins = app.plugins().context("cannot load parser plugins")?;
    for w in &plugins.warnings {
        eprintln!("warning: {w}");
    }
    let indexes = kebab::indexes::Indexes::open(app, true);
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        // Ctrl-C finishes the file in flight, then stops; what was written stays.
        let _ = ctrlc::set_handler(move || cancel.store(true, Ordering::Relaxed));
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if json || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{spinner} {bar:30} {pos}/{len} {wide_msg}")
            .expect("valid template"),
    );
    let mut stdout = std::io::stdout().lock();
    let mut on_progress = |event: &Progress| {
        if json {
            let line = serde_json::json!({
                "schema_version": "ingest_progress.v1",
                "ts": kebab::store::now_rfc3339(),
                "event": event,
            });
            let _ = writeln!(stdout, "{line}");
            return;
        }
        match event {
            Progress::ScanCompleted { total } => bar.set_length(*total as u64),
            Progress::AssetStarted { path, .. } => bar.set_message(path.clone()),
            Progress::AssetFinished { .. } => bar.inc(1),
            Progress::Embedded { done, total } => {
                bar.set_length(*total as u64);
                bar.set_position(*done as u64);
                bar.set_message("embedding chunks");
            }
            _ => {}
        }
    };
    let report = kebab::ingest::ingest(app, &plugins, &indexes, path, &cancel, &mut on_progress)?;
    bar.finish_and_clear();
    if json {
        writeln!(stdout, "{}", serde_json::to_string(&report)?)?;
    } else {
        drop(stdout);
        print_ingest_report(&report);
    }
    Ok(if strict && report.has_bad_input() {
        EXIT_ERROR
    } else {
        EXIT_OK
    })
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
    println!(
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
    let notable: Vec<String> = r
        .items
        .iter()
        .filter_map(|i| match (i.kind, &i.error, &i.fallback, i.reason) {
            ("error", Some(e), _, _) => Some(format!("  error    {}: {e}", i.doc_path)),
            (_, _, Some(f), _) => Some(format!("  fallback {}: {f}", i.doc_path)),
            ("skipped", _, _, Some(reason)) if !matches!(reason, "unchanged" | "unsupported") => {
                Some(format!(
                    "  skipped  {}: {reason}{}",
                    i.doc_path,
                    i.warnings
                        .first()
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default()
                ))
            }
            _ => None,
        })
        .collect();
    for line in notable.iter().take(MAX_REPORT_LINES) {
        println!("{line}");
    }
    if notable.len() > MAX_REPORT_LINES {
        println!("  … {} more (see --json)", notable.len() - MAX_REPORT_LINES);
    }
    if let Some(v) = &r.vectors {
        println!(
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
        println!("  Korean: {} chunks analysed", r.korean_analyzed);
    }
    for w in &r.warnings {
        println!("  warning: {w}");
    }
    if r.skipped_unsupported > 0 {
        println!(
            "  {} files of types no plugin handles were skipped",
            r.skipped_unsupported
        );
    }
}
