//! `kebab fetch` output.

pub(crate) fn print_fetch(r: &kebab::fetch::FetchResult) {
    if r.stale {
        eprintln!(
            "warning: {} changed since it was indexed ({}); this is the indexed text",
            r.doc_path, r.indexed_at
        );
    }
    let chunks = r
        .context_before
        .iter()
        .chain(r.chunk.iter())
        .chain(r.context_after.iter());
    for c in chunks {
        println!(
            "── {} [{}]",
            kebab::sanitize::escape_control(&c.doc_path),
            c.chunk_id
        );
        println!("{}", kebab::sanitize::escape_control_keep_lines(&c.text));
    }
    if let Some(t) = &r.text {
        println!("{t}");
    }
    if r.truncated {
        eprintln!("(truncated to the token budget)");
    }
}
