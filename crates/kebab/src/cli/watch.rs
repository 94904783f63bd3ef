//! `kebab watch`: runs [`kebab::api::Session::watch`] until Ctrl-C or
//! SIGTERM, printing a line per batch that changed something (and when a
//! root is watched, polled, lost or back) — `watch_event.v1` lines with
//! `--json`. A batch that changed nothing prints nothing.

use super::prelude::*;
use kebab::sanitize::escape_control;
use kebab::watch::WatchEvent;

pub(crate) fn watch(session: &Session, roots: &[String], json: bool) -> Result<u8> {
    kebab::interrupt::install_handler();
    let mut note = |w: String| errln!("warning: {}", escape_control(&w));
    let mut on_event = show_event(json);
    session.watch(roots, kebab::interrupt::flag(), &mut note, &mut on_event)?;
    Ok(kebab::interrupt::EXIT_INTERRUPTED)
}

/// What a watcher shows of its events (`kebab watch`, `kebab serve
/// --watch`): a `watch_event.v1` line on stdout each with `json`, else a
/// line on stderr for each batch that changed something and each change of
/// a root's state.
pub(crate) fn show_event(json: bool) -> impl FnMut(WatchEvent<'_>) {
    move |event: WatchEvent<'_>| {
        if json {
            if let Some(line) = event.line()
                && let Ok(text) = serde_json::to_string(&line)
            {
                super::term::write_out(format!("{text}\n").as_bytes());
            }
            return;
        }
        match event {
            WatchEvent::Watching { root, dirs } => {
                errln!("{}: watching {dirs} directories", escape_control(root));
            }
            WatchEvent::Applied {
                root,
                paths,
                report,
            } => {
                let c = &report.counts;
                if c.new + c.updated + c.removed + c.errors + c.reindexed == 0 {
                    return;
                }
                errln!(
                    "{}: {paths} path{} → {} new, {} updated, {} removed, {} errors ({} ms)",
                    escape_control(root),
                    if paths == 1 { "" } else { "s" },
                    c.new,
                    c.updated + c.reindexed,
                    c.removed,
                    c.errors,
                    report.duration_ms
                );
            }
            WatchEvent::Polling {
                root,
                reason,
                every,
            } => errln!(
                "{}: not watched: {}; rescanned every {} s instead",
                escape_control(root),
                escape_control(&reason),
                every.as_secs()
            ),
            WatchEvent::Missing { root } => errln!(
                "{}: its directory is gone (unmounted?); its documents are kept, retrying",
                escape_control(root)
            ),
            WatchEvent::Back { root } => errln!("{}: its directory is back", escape_control(root)),
            WatchEvent::Progress(_) => {}
        }
    }
}
