//! `kebab roots`: renders [`kebab::api::Session::roots`] (`root_list.v1`)
//! after a rename or removal, if one was asked for.

use super::prelude::*;
use kebab::api::roots::RootList;
use kebab::sanitize::escape_control;

pub(crate) fn roots_cmd(session: &Session, what: Option<RootsCmd>, json: bool) -> Result<u8> {
    let list = match what.unwrap_or(RootsCmd::List) {
        RootsCmd::List => session.roots()?,
        RootsCmd::Rename { name, new_name } => session.rename_root(&name, &new_name)?,
        RootsCmd::Remove { name } => session.remove_root(&name)?,
    };
    render(json, &list, print_roots)
}

fn print_roots(list: &RootList) {
    if list.roots.is_empty() {
        outln!("no roots yet");
        outln!("hint: `kebab ingest <dir>` adds one");
        return;
    }
    for r in &list.roots {
        let f = &r.freshness;
        let synced = f.synced_at.as_deref().unwrap_or("never synced whole");
        let watch = if f.watched {
            format!("watched, {} queued", f.queued)
        } else {
            "not watched".to_string()
        };
        outln!(
            "{}  {}  {} documents, {} chunks  synced {}  {}",
            escape_control(&r.name),
            escape_control(&r.path),
            r.documents,
            r.chunks,
            synced,
            watch
        );
    }
}
