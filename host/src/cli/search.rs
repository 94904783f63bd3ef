//! `kebab search` and `kebab list docs`.

use super::prelude::*;
use kebab::indexes::Indexes;
use kebab::sanitize::escape_control;
use kebab::search::{Mode, Request, SearchError};

/// Run `kebab search`.
pub(crate) fn search(
    app: &App,
    query: &str,
    k: Option<usize>,
    mode: Option<&str>,
    filter: &kebab::store::ChunkFilter,
    explain: bool,
    json: bool,
) -> Result<u8> {
    let requested =
        match mode {
            Some(m) => Some(Mode::parse(m).with_context(|| {
                format!("unknown --mode {m}: expected lexical, vector or hybrid")
            })?),
            None => None,
        };
    let wants_vectors = requested != Some(Mode::Lexical);
    let indexes = Indexes::open(app, wants_vectors);
    let channel = indexes.vector_channel(app);
    let mode = match (requested, &channel) {
        (Some(m), _) => m,
        (None, Some(_)) => Mode::Hybrid,
        (None, None) => {
            if !json {
                for w in &indexes.warnings {
                    eprintln!("note: {w}; searching lexically");
                }
            }
            Mode::Lexical
        }
    };
    if mode != Mode::Lexical && channel.is_none() {
        let reason = indexes
            .warnings
            .iter()
            .find(|w| w.starts_with("vector"))
            .cloned()
            .unwrap_or_else(|| "[models.embedding] model is empty".into());
        return Err(SearchError::NoVectors {
            mode: mode.as_str(),
            reason,
        }
        .into());
    }
    let request = Request {
        query,
        k: k.unwrap_or(app.config.search.default_k).max(1),
        mode,
        filter,
        snippet_chars: app.config.search.snippet_chars,
        rrf_k: app.config.search.rrf_k,
        candidates: app.config.search.candidates,
        korean: indexes.korean.as_ref(),
    };
    let response = kebab::search::search(&app.store, channel, &request)?;
    if json {
        print_json(&response)?;
    } else {
        print_hits(&response, explain);
    }
    Ok(if response.hits.is_empty() {
        EXIT_NO_HIT
    } else {
        EXIT_OK
    })
}

pub(crate) fn print_hits(response: &SearchResponse, explain: bool) {
    if response.hits.is_empty() {
        println!("no hits for \"{}\"", escape_control(&response.query));
        println!("hint: try other words, or check `kebab list docs` for what is indexed");
        return;
    }
    for hit in &response.hits {
        println!(
            "{}. {:.2} {}",
            hit.rank,
            hit.score,
            escape_control(hit.citation.uri())
        );
        let heading = if hit.heading_path.is_empty() {
            "—".to_string()
        } else {
            hit.heading_path.join(" › ")
        };
        println!("   {}", escape_control(&heading));
        println!("   {}", escape_control(&hit.snippet));
        if explain {
            print_explain(hit);
        }
        println!();
    }
    let model = response
        .hits
        .iter()
        .find_map(|h| h.embedding_model.clone())
        .unwrap_or_default();
    let method = match response.mode {
        "hybrid" => format!("bm25+{model}/RRF"),
        "vector" => model,
        _ => "bm25/fts5".into(),
    };
    println!(
        "{} hits  {}  index {}  {method}",
        response.hits.len(),
        response.mode,
        kebab::search::INDEX_VERSION
    );
}

/// The per-channel trace of seed §1.6.
fn print_explain(hit: &kebab::wire::SearchHit) {
    let r = &hit.retrieval;
    let rank = |x: Option<u32>| x.map_or("-".to_string(), |v| v.to_string());
    let score =
        |x: Option<f64>, digits: usize| x.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    let model = hit.embedding_model.as_deref().unwrap_or("none");
    println!(
        "   ├ lexical (bm25)  rank {}  score {}",
        rank(r.lexical_rank),
        score(r.lexical_score, 2)
    );
    println!(
        "   ├ vector ({model})  rank {}  score {}",
        rank(r.vector_rank),
        score(r.vector_score, 3)
    );
    if r.method == "hybrid" {
        println!(
            "   ├ rrf fusion  rank {}  score {}",
            hit.rank,
            score(r.fusion_score, 3)
        );
    }
    println!(
        "   └ chunker {}  chunk_id {}",
        hit.chunker_version, hit.chunk_id
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
                escape_control(&d.doc_path),
                d.chunk_count,
                d.plugin,
                d.plugin_version,
                if d.fallback_reason.is_some() {
                    " (text fallback)"
                } else {
                    ""
                },
                escape_control(d.title.as_deref().unwrap_or(""))
            );
        }
        println!("{} documents", docs.len());
    }
    Ok(EXIT_OK)
}
