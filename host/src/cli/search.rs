//! `kebab search` and `kebab list docs` output.

use super::prelude::*;

pub(crate) fn print_hits(response: &SearchResponse) {
    if response.hits.is_empty() {
        println!("no hits for \"{}\"", response.query);
        println!("hint: try other words, or check `kebab list docs` for what is indexed");
        return;
    }
    for hit in &response.hits {
        println!("{}. {:.2} {}", hit.rank, hit.score, hit.citation.uri());
        let heading = if hit.heading_path.is_empty() {
            "—".to_string()
        } else {
            hit.heading_path.join(" › ")
        };
        println!("   {heading}");
        println!("   {}", hit.snippet);
        println!();
    }
    println!(
        "{} hits  {}  index {}  bm25/fts5",
        response.hits.len(),
        response.mode,
        kebab::search::INDEX_VERSION
    );
}

pub(crate) fn list_docs(app: &App, json: bool) -> Result<u8> {
    let docs: Vec<DocSummary> = app
        .store
        .list_docs()?
        .into_iter()
        .map(DocSummary::from)
        .collect();
    if json {
        print_json(&docs)?;
    } else if docs.is_empty() {
        println!("no documents indexed yet");
        println!("hint: `kebab ingest <dir>`");
    } else {
        for d in &docs {
            println!(
                "{}  {} chunks  {}@{}{}  {}",
                d.doc_path,
                d.chunk_count,
                d.plugin,
                d.plugin_version,
                if d.fallback_reason.is_some() {
                    " (text fallback)"
                } else {
                    ""
                },
                d.title.as_deref().unwrap_or("")
            );
        }
        println!("{} documents", docs.len());
    }
    Ok(EXIT_OK)
}
