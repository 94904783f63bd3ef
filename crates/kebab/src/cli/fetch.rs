//! `kebab fetch` output.

use super::term::{errln, outln};

pub(crate) fn print_fetch(r: &kebab::fetch::FetchResult) {
    if r.stale {
        errln!(
            "warning: {} changed since it was indexed ({}); this is the indexed text",
            kebab::sanitize::escape_control(&r.doc_path),
            r.indexed_at
        );
    }
    let chunks = r
        .context_before
        .iter()
        .chain(r.chunk.iter())
        .chain(r.context_after.iter());
    for c in chunks {
        outln!(
            "── {} [{}]",
            kebab::sanitize::escape_control(&c.doc_path),
            c.chunk_id
        );
        outln!("{}", kebab::sanitize::escape_control_keep_lines(&c.text));
    }
    if let Some(t) = &r.text {
        outln!("{t}");
    }
    if r.truncated {
        errln!("(truncated to the token budget)");
    }
}
