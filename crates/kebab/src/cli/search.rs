//! `kebab search` (one query, or `--bulk` ndjson), `kebab list docs` and
//! `kebab schema`: argument handling and rendering around the use cases of
//! [`kebab::api`].

use super::prelude::*;
use kebab::api::search::{BULK_CAP, BULK_LINE_BYTES, SearchInput};
use kebab::api::{ApiError, Session};
use kebab::sanitize::escape_control;

/// Run `kebab search`.
pub(crate) fn search(
    session: &Session,
    input: &SearchInput,
    explain: bool,
    json: bool,
) -> Result<u8> {
    let response = session.search(input)?;
    if !json {
        for note in &response.notes {
            errln!("note: {note}");
        }
    }
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

/// Run `kebab search --bulk`: one `search_input` JSON object per stdin
/// line (`{"query": "…", "k": 5, "mode": "lexical"}`), one
/// `bulk_search_item.v1` per line out, in order (`--json`: one
/// `bulk_search_response.v1`). Exit 2 when any query failed, 1 when none
/// had a hit.
pub(crate) fn search_bulk(session: &Session, json: bool) -> Result<u8> {
    use std::io::{BufRead, Read};
    let mut inputs = Vec::new();
    let mut stdin = std::io::stdin().lock();
    let mut line = Vec::new();
    loop {
        // At most one byte past the bound is held: a longer line is that
        // item's error, and the rest of it is skipped unread.
        line.clear();
        let limit = BULK_LINE_BYTES as u64 + 1;
        let read = (&mut stdin)
            .take(limit)
            .read_until(b'\n', &mut line)
            .context("reading queries from stdin")?;
        if read == 0 {
            break;
        }
        let whole = line.strip_suffix(b"\n").unwrap_or(&line);
        if whole.len() > BULK_LINE_BYTES {
            if line.last() != Some(&b'\n') {
                stdin
                    .skip_until(b'\n')
                    .context("reading queries from stdin")?;
            }
            inputs.push(Err(ApiError::invalid(
                "line",
                format!("over its bound of {BULK_LINE_BYTES} bytes"),
            )));
        } else if !whole.trim_ascii().is_empty() {
            inputs.push(
                serde_json::from_slice::<SearchInput>(whole)
                    .map_err(|e| ApiError::invalid("line", format!("not a search input: {e}"))),
            );
        }
        if inputs.len() > BULK_CAP {
            break;
        }
    }
    let response = session.bulk_search(inputs)?;
    if json {
        print_json(&response)?;
    } else {
        for item in &response.items {
            print_json(item)?;
        }
    }
    let any_hit = response
        .items
        .iter()
        .any(|i| i.response.as_ref().is_some_and(|r| !r.hits.is_empty()));
    Ok(if response.failed > 0 {
        EXIT_ERROR
    } else if any_hit {
        EXIT_OK
    } else {
        EXIT_NO_HIT
    })
}

/// Run `kebab schema`.
pub(crate) fn schema(session: &Session, json: bool) -> Result<u8> {
    let report = session.schema(&kebab::api::Scope::Everything)?;
    if json {
        print_json(&report)?;
        return Ok(EXIT_OK);
    }
    let c = &report.capabilities;
    outln!(
        "kebab {}  wire {}",
        report.kebab_version,
        report.wire.version
    );
    outln!("search modes   {}", c.search_modes.join(", "));
    outln!(
        "korean         {}",
        if c.korean_analysis { "on" } else { "off" }
    );
    if let Some(e) = &report.models.embedding {
        outln!("embedding      {} ({}d)", e.id, e.dimensions);
    }
    outln!(
        "answer model   {} ({})",
        report.models.llm.id,
        report.models.llm.provider
    );
    outln!("plugin api     {}", c.plugin_api);
    for p in &c.plugins {
        outln!("plugin         {} {} ({})", p.name, p.version, p.origin);
    }
    let s = &report.stats;
    outln!(
        "index          {} documents, {} chunks, {} vectors",
        s.documents,
        s.chunks,
        s.embeddings
    );
    for (lang, n) in &s.code_lang_breakdown {
        outln!("  {lang:<12} {n} documents");
    }
    for note in &c.notes {
        outln!("note: {note}");
    }
    Ok(EXIT_OK)
}

pub(crate) fn print_hits(response: &SearchResponse, explain: bool) {
    if response.hits.is_empty() {
        outln!("no hits for \"{}\"", escape_control(&response.query));
        outln!("hint: try other words, or check `kebab list docs` for what is indexed");
        return;
    }
    for hit in &response.hits {
        outln!(
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
        outln!("   {}", escape_control(&heading));
        outln!("   {}", escape_control(&hit.snippet));
        if explain {
            print_explain(hit);
        }
        outln!();
    }
    let model = response
        .hits
        .iter()
        .find_map(|h| h.embedding_model.clone())
        .unwrap_or_default();
    let fusion = response
        .hits
        .iter()
        .find_map(|h| h.retrieval.fusion_kind)
        .unwrap_or("fused");
    let mut method = match response.mode {
        "hybrid" => format!("bm25+{model}/{fusion}"),
        "vector" => model,
        _ => "bm25".into(),
    };
    if response
        .hits
        .iter()
        .any(|h| h.retrieval.rerank_score.is_some())
    {
        method.push_str("+rerank");
    }
    outln!(
        "{} hits  {}  index {}  {method}",
        response.hits.len(),
        response.mode,
        kebab::search::INDEX_VERSION
    );
}

/// The per-channel trace under each hit (`--explain`).
fn print_explain(hit: &kebab::wire::SearchHit) {
    let r = &hit.retrieval;
    let rank = |x: Option<u32>| x.map_or("-".to_string(), |v| v.to_string());
    let score =
        |x: Option<f64>, digits: usize| x.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    let model = hit.embedding_model.as_deref().unwrap_or("none");
    outln!(
        "   ├ lexical (bm25)  rank {}  score {}",
        rank(r.lexical_rank),
        score(r.lexical_score, 2)
    );
    outln!(
        "   ├ vector ({model})  rank {}  score {}",
        rank(r.vector_rank),
        score(r.vector_score, 3)
    );
    if r.method == "hybrid" {
        outln!(
            "   ├ {} fusion  score {}",
            r.fusion_kind.unwrap_or("-"),
            score(r.fusion_score, 3)
        );
    }
    if let Some(rerank) = r.rerank_score {
        outln!("   ├ rerank (cross-encoder)  score {rerank:.3}");
    }
    if let Some(confidence) = hit.citation.ocr_confidence() {
        outln!("   ├ text read from an image by OCR  confidence {confidence:.2}");
    }
    outln!(
        "   ├ final rank {}  {} {:.3}",
        hit.rank,
        hit.score_kind,
        hit.score
    );
    outln!(
        "   └ chunker {}  chunk_id {}",
        hit.chunker_version,
        hit.chunk_id
    );
}

pub(crate) fn list_docs(session: &Session, roots: &[String], json: bool) -> Result<u8> {
    let docs = session.list_docs(roots, &kebab::api::Scope::Everything)?;
    if json {
        print_json(&docs)?;
    } else if docs.is_empty() {
        outln!("no documents indexed yet");
        outln!("hint: `kebab ingest <dir>`");
    } else {
        // Paths name their root when the list spans several.
        let several = docs.iter().any(|d| d.root != docs[0].root);
        for d in &docs {
            let path = match (&d.root, several) {
                (Some(root), true) => format!("{root}:{}", d.doc_path),
                _ => d.doc_path.clone(),
            };
            outln!(
                "{}  {} chunks  {}@{}{}  {}",
                escape_control(&path),
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
        outln!("{} documents", docs.len());
    }
    Ok(EXIT_OK)
}
