//! Lexical search: the query becomes an FTS5 expression, BM25 ranks chunks,
//! every hit carries a citation and a snippet taken from the chunk's text.

use crate::store::{ChunkFilter, LexicalRow, Store, StoreError};
use crate::wire::{Citation, Retrieval, SearchHit, SearchResponse};

/// Index layout version reported with every hit.
pub const INDEX_VERSION: &str = "v1.0";

/// Lowercase word tokens of a query, deduplicated, in order.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if !word.is_empty() && !terms.contains(&word) {
            terms.push(word);
        }
    }
    terms
}

/// An FTS5 MATCH expression: any of the terms, each quoted so that no user
/// input is read as FTS5 syntax, restricted to the chunk text so that every
/// hit's cited lines hold what matched (a parent heading alone is not a
/// match). `None` when the query has no words.
pub fn fts_expression(terms: &[String]) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    let any = terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ");
    Some(format!("text : ({any})"))
}

/// A hit together with what RAG needs beyond the wire form.
#[derive(Debug, Clone)]
pub struct Retrieved {
    pub hit: SearchHit,
    /// The chunk's full text.
    pub text: String,
    /// Share of the query's content words present in the chunk (0–1): a
    /// bounded relevance signal for gating, unlike raw BM25.
    pub coverage: f64,
}

/// Lexical retrieval: the best `k` chunks for `query` that pass `filter`.
pub fn retrieve(
    store: &Store,
    query: &str,
    k: usize,
    snippet_chars: usize,
    filter: &ChunkFilter,
) -> Result<Vec<Retrieved>, StoreError> {
    let terms = query_terms(query);
    let rows = match fts_expression(&terms) {
        Some(expr) => store.lexical_search(&expr, k, filter)?,
        None => Vec::new(),
    };
    Ok(rows
        .into_iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let coverage = coverage(&row.text, &terms);
            let text = row.text.clone();
            hit(i as u32 + 1, row, &terms, snippet_chars).map(|hit| Retrieved {
                hit,
                text,
                coverage,
            })
        })
        .collect())
}

/// Run a lexical search for `query`, returning at most `k` hits.
pub fn lexical(
    store: &Store,
    query: &str,
    k: usize,
    snippet_chars: usize,
    filter: &ChunkFilter,
) -> Result<SearchResponse, StoreError> {
    Ok(SearchResponse {
        schema_version: "search_response.v1",
        query: query.to_string(),
        mode: "lexical",
        hits: retrieve(store, query, k, snippet_chars, filter)?
            .into_iter()
            .map(|r| r.hit)
            .collect(),
    })
}

fn hit(rank: u32, row: LexicalRow, terms: &[String], snippet_chars: usize) -> Option<SearchHit> {
    let citation =
        Citation::from_spans(&row.workspace_path, &row.spans, row.section_label.clone())?;
    let snippet = snippet(&row.text, terms, snippet_chars);
    Some(SearchHit {
        schema_version: "search_hit.v1",
        rank,
        score: row.bm25,
        score_kind: "bm25",
        chunk_id: row.chunk_id,
        doc_id: row.doc_id,
        doc_path: row.workspace_path,
        heading_path: row.heading_path,
        section_label: row.section_label,
        snippet_full_text: snippet == row.text.trim(),
        snippet,
        citation,
        retrieval: Retrieval {
            method: "lexical",
            lexical_score: Some(row.bm25),
            vector_score: None,
            fusion_score: None,
            lexical_rank: Some(rank),
            vector_rank: None,
        },
        index_version: INDEX_VERSION,
        embedding_model: None,
        chunker_version: row.chunker_version,
        code_lang: row.spans[0]["lang"].as_str().map(String::from),
        repo: row.repo,
    })
}

/// Words too common to say anything about relevance.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "in",
    "is", "it", "its", "me", "my", "of", "on", "or", "s", "so", "that", "the", "this", "to", "was",
    "what", "when", "where", "which", "who", "why", "with", "you", "your",
];

/// Share of the content words of `terms` found (as words) in `text`.
pub fn coverage(text: &str, terms: &[String]) -> f64 {
    let content: Vec<&String> = terms
        .iter()
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .collect();
    let considered: Vec<&String> = if content.is_empty() {
        terms.iter().collect()
    } else {
        content
    };
    if considered.is_empty() {
        return 0.0;
    }
    let words: std::collections::HashSet<String> = query_terms(text).into_iter().collect();
    considered
        .iter()
        .filter(|t| words.contains(t.as_str()))
        .count() as f64
        / considered.len() as f64
}

/// The part of `text` that best shows why it matched: starting at the line
/// with the most query terms, continuing with the following lines, cut to
/// `max_chars` characters (with `…`).
pub fn snippet(text: &str, terms: &[String], max_chars: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let score = |line: &str| {
        let lower = line.to_lowercase();
        terms.iter().filter(|t| lower.contains(t.as_str())).count()
    };
    let best = (0..lines.len())
        .max_by_key(|&i| (score(lines[i]), std::cmp::Reverse(i)))
        .unwrap_or(0);
    let joined = lines[best.min(lines.len())..]
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    if joined.chars().count() <= max_chars {
        return joined;
    }
    let cut: String = joined.chars().take(max_chars.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_words_lowercased_and_unique() {
        assert_eq!(query_terms("Rust's WASM, rust!"), vec!["rust", "s", "wasm"]);
        assert_eq!(query_terms("서울 개발"), vec!["서울", "개발"]);
        assert!(query_terms("  ?? ").is_empty());
    }

    #[test]
    fn expression_quotes_every_term() {
        let e = fts_expression(&query_terms("NEAR(a b) OR c*")).unwrap();
        assert_eq!(e, "text : (\"near\" OR \"a\" OR \"b\" OR \"or\" OR \"c\")");
        assert_eq!(fts_expression(&[]), None);
    }

    #[test]
    fn coverage_counts_content_words_only() {
        let terms = query_terms("what is the raft leader election");
        assert_eq!(coverage("Raft elects a leader by election.", &terms), 1.0);
        assert_eq!(coverage("The leader is here.", &terms), 1.0 / 3.0);
        assert_eq!(coverage("nothing", &terms), 0.0);
        assert_eq!(coverage("the", &query_terms("the")), 1.0);
    }

    #[test]
    fn snippet_starts_at_the_best_line_and_is_cut() {
        let text = "# Title\n\nnothing here\nthe zebra line with stripes\nmore text";
        let terms = query_terms("zebra stripes");
        assert_eq!(
            snippet(text, &terms, 220),
            "the zebra line with stripes more text"
        );
        let s = snippet(text, &terms, 10);
        assert_eq!(s, "the zebra…");
        assert_eq!(s.chars().count(), 10);
    }
}
