//! Search: lexical (the query's words ranked by BM25 in the lexical index),
//! vector (cosine neighbours of the query's embedding) or hybrid (both,
//! fused as [`crate::fusion`] says). Every hit carries a citation and a
//! snippet taken from the chunk's text.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::fusion::{ChannelHits, Fusion};
use crate::rerank::{RerankError, Reranker};
use kebab_core::analysis;
use kebab_core::spans::SourceSpan;
use kebab_core::wire::{Citation, Retrieval, SearchHit, SearchResponse};
use kebab_store::{ChunkFilter, HitRow, Store, StoreError};

/// Index layout version reported with every hit.
pub const INDEX_VERSION: &str = "v1.0";

/// Most hits one search (or one `ask`'s retrieval) returns: `k`, `[search]
/// default_k` and `[rag] k` are refused above it.
pub const MAX_K: usize = 1_000;
/// Most candidates each channel contributes to hybrid fusion (`[search]
/// candidates`).
pub const MAX_CANDIDATES: usize = 10_000;
/// Longest query text, in bytes (an `ask` follow-up is retrieved with the
/// question before it, so twice the longest question fits).
pub const MAX_QUERY_BYTES: usize = 16 << 10;
/// Longest snippet, in characters (`[search] snippet_chars`).
pub const MAX_SNIPPET_CHARS: usize = 10_000;

/// Lowercase word tokens of a query, deduplicated, in order.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    query
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|word| !word.is_empty() && seen.insert(word.clone()))
        .collect()
}

/// Which channels rank the chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// BM25 over the lexical index.
    Lexical,
    /// Cosine similarity of embeddings.
    Vector,
    /// Both, fused (normalised RRF or a score blend).
    Hybrid,
}

impl Mode {
    /// The wire name (`retrieval.method`, `search_response.v1.mode`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Lexical => "lexical",
            Mode::Vector => "vector",
            Mode::Hybrid => "hybrid",
        }
    }

    /// Parse a `--mode` value.
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "lexical" => Some(Mode::Lexical),
            "vector" => Some(Mode::Vector),
            "hybrid" => Some(Mode::Hybrid),
            _ => None,
        }
    }
}

/// Search failures.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Vector(#[from] kebab_store::vector::VectorError),
    #[error(transparent)]
    Embed(#[from] crate::embed::EmbedError),
    #[error(transparent)]
    Rerank(#[from] RerankError),
    #[error("{mode} search needs an embedding model: {reason}")]
    NoVectors { mode: &'static str, reason: String },
    /// The full-text index is not what the migrations make of the chunks
    /// ([`Store::full_text_damage`] says what is wrong): the lexical
    /// channel cannot be trusted until an ingest rebuilds it.
    #[error(
        "the full-text index is damaged ({0}): lexical search cannot use it until `kebab ingest` \
         rebuilds it from the chunks"
    )]
    FullTextDamaged(String),
    /// A size of the request over its bound ([`Request::check`]).
    #[error(transparent)]
    Bounds(#[from] kebab_core::bounds::OutOfBounds),
}

/// What to do about a damaged full-text index ([`SearchError::FullTextDamaged`]).
pub const FULL_TEXT_HINT: &str = "`kebab ingest <dir>` (any folder you indexed) rebuilds it from \
     the chunks, your files untouched; `--mode vector` works meanwhile when an embedding model is \
     configured";

/// The vector side of a search: the model for the query and its table.
#[derive(Debug, Clone, Copy)]
pub struct VectorChannel<'a> {
    pub embedder: &'a crate::embed::Embedder,
    pub table: &'a kebab_store::vector::VectorStore,
    /// Neighbours below this cosine are not candidates.
    pub min_score: f32,
}

/// One search.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub query: &'a str,
    pub k: usize,
    pub mode: Mode,
    pub filter: &'a ChunkFilter,
    pub snippet_chars: usize,
    /// How hybrid mode fuses the channels.
    pub fusion: Fusion,
    /// Candidates per channel in hybrid mode.
    pub candidates: usize,
    /// Korean, Japanese and Chinese analysis of the query (the chunks'
    /// words are indexed the same way).
    pub cjk: Option<&'a crate::cjk::CjkAnalyzer>,
    /// Cross-encoder that reorders the best hits (`[search.rerank]`).
    pub rerank: Option<&'a Reranker>,
}

impl Request<'_> {
    /// Every size of the request within its bound: `k` ([`MAX_K`]), the
    /// hybrid pool ([`MAX_CANDIDATES`]), the query ([`MAX_QUERY_BYTES`])
    /// and the snippet ([`MAX_SNIPPET_CHARS`]). Every search path checks
    /// it before anything is sized from these values.
    pub fn check(&self) -> Result<(), kebab_core::bounds::OutOfBounds> {
        use kebab_core::bounds::at_most;
        at_most("k", self.k, MAX_K)?;
        at_most("candidates", self.candidates, MAX_CANDIDATES)?;
        at_most("query", self.query.len(), MAX_QUERY_BYTES)?;
        at_most("snippet_chars", self.snippet_chars, MAX_SNIPPET_CHARS)
    }
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
    /// Bounded relevance for gating answers: the larger of `coverage` and
    /// the cosine similarity (when the vector channel found the chunk).
    pub relevance: f64,
}

/// Both channels' candidates for one query, before fusion: what
/// [`rank`] orders, possibly under several fusions (`kebab eval beir`).
/// Chunk ids and scores only: the rows are read for the hits shown.
#[derive(Debug, Clone)]
pub struct Candidates {
    terms: Vec<String>,
    channels: HashMap<String, ChannelHits>,
    model: Option<String>,
    /// The index holds several roots: citations name the root.
    qualify: bool,
}

/// Retrieve the best `k` chunks for `request`; with a reranker, the best
/// `max(k, top_n)` are ranked first and the reranker picks `k` of them.
pub fn retrieve(
    store: &Store,
    vectors: Option<VectorChannel<'_>>,
    request: &Request<'_>,
) -> Result<Vec<Retrieved>, SearchError> {
    let Some(reranker) = request.rerank else {
        let candidates = candidates(store, vectors, request)?;
        return rank(store, &candidates, request, request.fusion);
    };
    let wide = Request {
        k: request.k.max(reranker.top_n()),
        ..request.clone()
    };
    let ranked = rank(
        store,
        &candidates(store, vectors, &wide)?,
        &wide,
        wide.fusion,
    )?;
    Ok(rerank(reranker, request.query, ranked, request.k)?)
}

/// `retrieved` (best first) with its first `top_n` reordered by the
/// cross-encoder's score (`reranker` only scores; the order, ranks and
/// score fields of hits are search's), cut to `k`. A reordered hit's `score` is the
/// logit (`score_kind` `rerank`), its fused score stays in `retrieval`
/// beside `rerank_score`; ranks are renumbered. The gate's bounded
/// `relevance` is left as it was, so refusals stay calibrated.
pub fn rerank(
    reranker: &Reranker,
    query: &str,
    mut retrieved: Vec<Retrieved>,
    k: usize,
) -> Result<Vec<Retrieved>, RerankError> {
    let started = Instant::now();
    let head = retrieved.len().min(reranker.top_n());
    let texts: Vec<&str> = retrieved[..head].iter().map(|r| r.text.as_str()).collect();
    let scores = reranker.scores(query, &texts)?;
    let mut rescored: Vec<(f32, Retrieved)> =
        scores.into_iter().zip(retrieved.drain(..head)).collect();
    // Best first; equal logits keep the fused order (the sort is stable).
    rescored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out: Vec<Retrieved> = rescored
        .into_iter()
        .map(|(score, mut r)| {
            r.hit.score = f64::from(score);
            r.hit.score_kind = "rerank";
            r.hit.retrieval.rerank_score = Some(f64::from(score));
            r
        })
        .chain(retrieved)
        .take(k)
        .collect();
    for (i, r) in out.iter_mut().enumerate() {
        r.hit.rank = i as u32 + 1;
    }
    tracing::debug!(
        pairs = head,
        ms = started.elapsed().as_secs_f64() * 1000.0,
        "rerank"
    );
    Ok(out)
}

/// The candidates of each channel `request.mode` uses.
pub fn candidates(
    store: &Store,
    vectors: Option<VectorChannel<'_>>,
    request: &Request<'_>,
) -> Result<Candidates, SearchError> {
    request.check()?;
    let terms = query_terms(request.query);
    let per_channel = match request.mode {
        Mode::Hybrid => request.candidates.max(request.k),
        _ => request.k,
    };
    let lexical_query = match request.mode {
        Mode::Vector => None,
        _ => Some(cjk_query_terms(request.cjk, &content_terms(&terms)))
            .filter(|terms| !terms.is_empty()),
    };
    let vector_channel = match request.mode {
        Mode::Lexical => None,
        _ => Some(vectors.ok_or_else(|| SearchError::NoVectors {
            mode: request.mode.as_str(),
            reason: "no vector index is open".into(),
        })?),
    };
    let fetch = first_fetch(per_channel, request.filter);
    let started = Instant::now();
    let lexical = |terms: &Vec<String>| {
        let hits = store.lexical_search(terms, per_channel, request.filter);
        (hits, started.elapsed())
    };
    // Both channels: the model and LanceDB answer on a second thread while
    // SQLite (whose connection stays on this one) answers the lexical query.
    let (lexical_hits, vector_hits) = match (&lexical_query, vector_channel) {
        (Some(expr), Some(channel)) => std::thread::scope(|s| {
            let vector = s.spawn(|| nearest(channel, request.query, fetch, request.k));
            let lexical = lexical(expr);
            let vector = vector
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (Some(lexical), Some(vector))
        }),
        (expr, channel) => (
            expr.as_ref().map(lexical),
            channel.map(|c| nearest(c, request.query, fetch, request.k)),
        ),
    };
    let channels_done = started.elapsed();
    let lexical_took = lexical_hits.as_ref().map(|(_, took)| *took);
    let lexical_hits = lexical_hits.map(|(hits, _)| hits);
    let mut channels: HashMap<String, ChannelHits> = HashMap::new();
    for (i, (id, bm25)) in lexical_hits.transpose()?.into_iter().flatten().enumerate() {
        channels.entry(id).or_default().lexical = Some((i as u32 + 1, bm25));
    }
    let mut model = None;
    let mut vector_took = None;
    if let (Some(channel), Some(nearest)) = (vector_channel, vector_hits.transpose()?) {
        let Nearest {
            query,
            neighbours,
            embed,
            search,
        } = nearest;
        vector_took = Some((embed, search));
        model = Some(channel.embedder.spec().id());
        let found = vector_candidates(
            store,
            channel,
            &query,
            neighbours,
            (fetch, request.k),
            per_channel,
            request.filter,
        )?;
        for (i, (id, cosine)) in found.into_iter().enumerate() {
            channels.entry(id).or_default().vector = Some((i as u32 + 1, cosine as f64));
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    tracing::debug!(
        lexical_ms = lexical_took.map(ms),
        embed_ms = vector_took.map(|(embed, _)| ms(embed)),
        ann_ms = vector_took.map(|(_, search)| ms(search)),
        channels_ms = ms(channels_done),
        total_ms = ms(started.elapsed()),
        "search candidates"
    );
    Ok(Candidates {
        terms,
        channels,
        model,
        qualify: store.root_count()? > 1,
    })
}

/// The best `request.k` of `candidates`, scored by the mode's channel or,
/// in hybrid mode, by `fusion`, with their rows read from `store`.
pub fn rank(
    store: &Store,
    candidates: &Candidates,
    request: &Request<'_>,
    fusion: Fusion,
) -> Result<Vec<Retrieved>, SearchError> {
    let channels = &candidates.channels;
    let fused = match request.mode {
        Mode::Hybrid => crate::fusion::fuse(fusion, channels),
        _ => HashMap::new(),
    };
    // A single-channel mode ranks only that channel's candidates (the
    // candidates may have been gathered for a wider mode).
    let mut scored: Vec<(f64, &String)> = channels
        .iter()
        .filter_map(|(id, c)| {
            let score = match request.mode {
                Mode::Lexical => c.lexical?.1,
                Mode::Vector => c.vector?.1,
                Mode::Hybrid => fused[id],
            };
            Some((score, id))
        })
        .collect();
    // Best first. Scores are compared on a grid of `SCORE_EPSILON`, so what
    // floating-point rounding leaves is a tie rather than an order; ties go
    // to the better single-channel rank, then the lexical rank, then the
    // chunk id, so a query orders its hits the same way in every run.
    let grid = |score: f64| (score / crate::fusion::SCORE_EPSILON).round();
    let best_rank = |id: &String| {
        let c = channels[id];
        let rank = |h: Option<(u32, f64)>| h.map_or(u32::MAX, |h| h.0);
        (rank(c.lexical).min(rank(c.vector)), rank(c.lexical))
    };
    scored.sort_by(|a, b| {
        grid(b.0)
            .total_cmp(&grid(a.0))
            .then_with(|| best_rank(a.1).cmp(&best_rank(b.1)))
            .then_with(|| a.1.cmp(b.1))
    });
    scored.truncate(request.k);

    let score_kind = match request.mode {
        Mode::Lexical => "bm25",
        Mode::Vector => "cosine",
        Mode::Hybrid => fusion.score_kind(),
    };
    // A chunk deleted since its channel found it has no row: it is left out.
    let ids: Vec<String> = scored.iter().map(|(_, id)| (*id).clone()).collect();
    let mut rows: HashMap<String, HitRow> = store
        .hit_rows(&ids, request.filter)?
        .into_iter()
        .map(|row| (row.chunk_id.clone(), row))
        .collect();
    let mut out = Vec::new();
    for (score, id) in scored {
        let Some(row) = rows.remove(id) else {
            continue;
        };
        let c = channels[id];
        let retrieval = Retrieval {
            method: request.mode.as_str(),
            lexical_score: c.lexical.map(|l| l.1),
            vector_score: c.vector.map(|v| v.1),
            fusion_score: (request.mode == Mode::Hybrid).then_some(score),
            fusion_kind: (request.mode == Mode::Hybrid).then(|| fusion.score_kind()),
            lexical_rank: c.lexical.map(|l| l.0),
            vector_rank: c.vector.map(|v| v.0),
            rerank_score: None,
        };
        let held = held(&row.text, &candidates.terms);
        let relevance = held.coverage.max(c.vector.map_or(0.0, |v| v.1));
        let text = row.text.clone();
        if let Some(hit) = hit(
            out.len() as u32 + 1,
            row,
            (score, score_kind),
            retrieval,
            candidates.model.clone(),
            (held.best_line_start, candidates.qualify),
            request.snippet_chars,
        ) {
            out.push(Retrieved {
                hit,
                text,
                coverage: held.coverage,
                relevance,
            });
        }
    }
    Ok(out)
}

/// Query terms plus the words of their Korean, Japanese and Chinese runs,
/// so 서울에서 in a query also looks for 서울 and 東京都に住んで for 東京
/// and 住む (the same analysis the chunks got).
fn cjk_query_terms(cjk: Option<&crate::cjk::CjkAnalyzer>, terms: &[String]) -> Vec<String> {
    let Some(analyzer) = cjk else {
        return terms.to_vec();
    };
    let mut out = terms.to_vec();
    for t in terms {
        if let Ok(Some(words)) = analyzer.query_morphemes(t) {
            for w in query_terms(&words) {
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// Neighbours the vector channel asks for first: more when a filter will
/// drop some of them.
fn first_fetch(n: usize, filter: &ChunkFilter) -> usize {
    if filter.is_empty() {
        n
    } else {
        n.saturating_mul(4)
    }
}

/// Chunk ids with their cosine similarity to the query, best first.
type Neighbours = Vec<(String, f32)>;

/// What the vector channel found before SQLite is asked for the rows.
struct Nearest {
    query: Vec<f32>,
    neighbours: Neighbours,
    /// Time spent embedding the query.
    embed: Duration,
    /// Time spent in the vector index.
    search: Duration,
}

/// The query's vector and its `fetch` nearest rows, of which the best
/// `shown` reach the user: the part of the vector channel that does not
/// touch SQLite.
fn nearest(
    channel: VectorChannel<'_>,
    text: &str,
    fetch: usize,
    shown: usize,
) -> Result<Nearest, SearchError> {
    let started = Instant::now();
    let query = channel.embedder.embed_query(text)?;
    let embed = started.elapsed();
    let neighbours = channel.table.search_pool(&query, fetch, shown)?;
    Ok(Nearest {
        query,
        neighbours,
        embed,
        search: started.elapsed() - embed,
    })
}

/// Nearest chunks passing `filter` (and still in SQLite), best first, at
/// most `n`, starting from the first `fetch` `neighbours` of `query`
/// (`shown` of them reach the user): the table is asked for more until `n`
/// pass the filter or it runs out.
fn vector_candidates(
    store: &Store,
    channel: VectorChannel<'_>,
    query: &[f32],
    mut neighbours: Neighbours,
    (mut fetch, shown): (usize, usize),
    n: usize,
    filter: &ChunkFilter,
) -> Result<Neighbours, SearchError> {
    loop {
        neighbours.retain(|(_, cosine)| *cosine >= channel.min_score);
        let exhausted = neighbours.len() < fetch;
        let ids: Vec<String> = neighbours.iter().map(|(id, _)| id.clone()).collect();
        let admitted = store.admitted(&ids, filter)?;
        let found: Neighbours = neighbours
            .drain(..)
            .filter(|(id, _)| admitted.contains(id))
            .take(n)
            .collect();
        if found.len() >= n || exhausted {
            return Ok(found);
        }
        fetch = fetch.saturating_mul(4);
        neighbours = channel.table.search_pool(query, fetch, shown)?;
    }
}

/// Run a search and wrap it as `search_response.v1`.
pub fn search(
    store: &Store,
    vectors: Option<VectorChannel<'_>>,
    request: &Request<'_>,
) -> Result<SearchResponse, SearchError> {
    Ok(SearchResponse {
        schema_version: "search_response.v1",
        query: request.query.to_string(),
        mode: request.mode.as_str(),
        hits: retrieve(store, vectors, request)?
            .into_iter()
            .map(|r| r.hit)
            .collect(),
        notes: Vec::new(),
        roots: Vec::new(),
    })
}

fn hit(
    rank: u32,
    row: HitRow,
    (score, score_kind): (f64, &'static str),
    retrieval: Retrieval,
    embedding_model: Option<String>,
    (best_line_start, qualify): (Option<usize>, bool),
    snippet_chars: usize,
) -> Option<SearchHit> {
    let citation = Citation::from_spans(
        &row.root,
        &row.workspace_path,
        qualify,
        &row.spans,
        row.section_label.clone(),
    )?;
    let snippet = snippet(&row.text, best_line_start, snippet_chars);
    Some(SearchHit {
        schema_version: "search_hit.v1",
        rank,
        score,
        score_kind,
        chunk_id: row.chunk_id,
        doc_id: row.doc_id,
        root: Some(row.root),
        doc_path: row.workspace_path,
        heading_path: row.heading_path,
        section_label: row.section_label,
        snippet_full_text: snippet == row.text.trim(),
        snippet,
        citation,
        retrieval,
        index_version: INDEX_VERSION,
        embedding_model,
        chunker_version: row.chunker_version,
        code_lang: row
            .spans
            .first()
            .and_then(SourceSpan::lang)
            .map(String::from),
        repo: row.repo,
    })
}

/// Words too common to say anything about relevance.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "in",
    "is", "it", "its", "me", "my", "of", "on", "or", "s", "so", "that", "the", "this", "to", "was",
    "what", "when", "where", "which", "who", "why", "with", "you", "your",
];

/// The words of `terms` that say something about relevance: all but the
/// stopwords, or every term when the query is nothing but stopwords. The
/// lexical channel matches only these (a stopword matches most chunks, so
/// ranking it costs time in proportion to the corpus and moves BM25 little,
/// as in the BEIR BM25 baselines' analyzer), and [`Held::coverage`] counts them.
pub fn content_terms(terms: &[String]) -> Vec<String> {
    let content: Vec<String> = terms
        .iter()
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .cloned()
        .collect();
    if content.is_empty() {
        terms.to_vec()
    } else {
        content
    }
}

/// What a text holds of a query's content words, matched as the lexical
/// channel matches words: by their index terms ([`analysis::term`]:
/// folded, English words stemmed), so `tastes` is found in "a sour taste"
/// and `cat` is not in "category".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Held {
    /// Share of the content words of the query found in the text (0–1):
    /// a bounded relevance signal for gating, unlike raw BM25.
    pub coverage: f64,
    /// Where the line holding the most of them begins (a byte offset; the
    /// first of equals), `None` when no line holds any. For this a word
    /// outside ASCII is also held by a line that contains it (a Korean
    /// word takes its particles: `서울` in `서울에서`).
    pub best_line_start: Option<usize>,
}

/// [`Held`] of `text` for the query words `terms`, in one pass over its
/// lines.
pub fn held(text: &str, terms: &[String]) -> Held {
    let considered = content_terms(terms);
    let wanted = IndexTerms::of(&considered);
    let outside_ascii: Vec<usize> = (0..considered.len())
        .filter(|&i| !considered[i].is_ascii())
        .collect();
    let mut anywhere = vec![false; considered.len()];
    let mut best: Option<(usize, usize)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let mut found = wanted.found_in(line);
        for &i in &found {
            anywhere[i] = true;
        }
        if !outside_ascii.is_empty() {
            let lower = line.to_lowercase();
            found.extend(
                outside_ascii
                    .iter()
                    .filter(|&&i| lower.contains(considered[i].as_str())),
            );
        }
        if !found.is_empty() && best.is_none_or(|(most, _)| found.len() > most) {
            best = Some((found.len(), at));
        }
        at += line.len();
    }
    Held {
        coverage: match considered.len() {
            0 => 0.0,
            n => anywhere.iter().filter(|&&f| f).count() as f64 / n as f64,
        },
        best_line_start: best.map(|(_, start)| start),
    }
}

/// Query words as the lexical index knows them, to find in a text.
struct IndexTerms {
    /// Each distinct index term, numbered.
    numbers: HashMap<String, usize>,
    /// Each query word's index term's number, in the query's order.
    of_word: Vec<usize>,
}

impl IndexTerms {
    fn of(words: &[String]) -> IndexTerms {
        let mut numbers = HashMap::new();
        let of_word = words
            .iter()
            .map(|w| {
                let next = numbers.len();
                *numbers.entry(analysis::term(w)).or_insert(next)
            })
            .collect();
        IndexTerms { numbers, of_word }
    }

    /// The positions (in the query) of the words that `text` holds: a
    /// word of the text has the same index term (so `taste` and `tastes`
    /// are found together).
    fn found_in(&self, text: &str) -> HashSet<usize> {
        // A hit's text has hundreds of words, the query a few: an ASCII
        // word is analysed only when it could give a wanted term. Folding
        // lowers it and stemming changes only the end of a word: a stem of
        // four or more letters begins with its word's first two, a shorter
        // one (`dying` → `die`) with its first.
        let could_give = |word: &[u8]| {
            let lower = |i: usize| word.get(i).map(u8::to_ascii_lowercase);
            self.numbers.keys().any(|t| {
                let t = t.as_bytes();
                t.first().copied() == lower(0) && (t.len() <= 3 || t.get(1).copied() == lower(1))
            })
        };
        let mut found = HashSet::new();
        for (_, word) in analysis::runs(text) {
            if word.is_ascii() && !could_give(word.as_bytes()) {
                continue;
            }
            if let Some(&number) = self.numbers.get(analysis::term(word).as_str()) {
                found.insert(number);
                if found.len() == self.numbers.len() {
                    break;
                }
            }
        }
        (0..self.of_word.len())
            .filter(|&i| found.contains(&self.of_word[i]))
            .collect()
    }
}

/// Marks that end a sentence when a blank follows them.
const SENTENCE_ENDS: [char; 5] = ['.', '!', '?', ':', '。'];

/// Lines shorter than this stand on their own (a list item, a label); a
/// longer one that ends no sentence is read as hard-wrapped prose.
const WRAPPED_LINE_CHARS: usize = 40;

/// Where the sentence that the line beginning at `at` continues begins:
/// earlier lines of hard-wrapped prose are taken back, from the last
/// sentence end in them, while no blank line, heading, short line or line
/// ending a sentence comes first and at most `reach` bytes are added (a
/// paragraph whose match is on its second line is shown from its start).
fn sentence_start(text: &str, at: usize, reach: usize) -> usize {
    let past_blanks = |i: usize| i + (text[i..].len() - text[i..].trim_start().len());
    let mut start = at;
    let mut line_end = at;
    for line in text[..at].split_inclusive('\n').rev() {
        let line_start = line_end - line.len();
        line_end = line_start;
        let body = line.trim();
        if body.starts_with('#')
            || body.ends_with(SENTENCE_ENDS)
            || body.chars().count() < WRAPPED_LINE_CHARS
        {
            break;
        }
        let sentence_end = line
            .char_indices()
            .zip(line.chars().skip(1))
            .filter(|((_, c), next)| SENTENCE_ENDS.contains(c) && next.is_whitespace())
            .last()
            .map(|((i, c), _)| i + c.len_utf8());
        let from = past_blanks(line_start + sentence_end.unwrap_or(0));
        if at - from > reach {
            break;
        }
        start = from;
        if sentence_end.is_some() {
            break;
        }
    }
    start
}

/// The part of `text` that best shows why it matched: from the sentence
/// of the line holding the most of the query's words
/// ([`Held::best_line_start`]; else the first line), with what follows,
/// blank lines left out, cut to `max_chars` characters (with `…`).
pub fn snippet(text: &str, best_line_start: Option<usize>, max_chars: usize) -> String {
    let from = best_line_start.map_or(0, |at| sentence_start(text, at, max_chars / 2));
    let lines: Vec<&str> = text[from..]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let joined = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max_chars {
        return joined;
    }
    let cut: String = joined.chars().take(max_chars.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn coverage(text: &str, terms: &[String]) -> f64 {
        held(text, terms).coverage
    }

    fn best_line_start(text: &str, terms: &[String]) -> Option<usize> {
        held(text, terms).best_line_start
    }

    fn snippet_for(text: &str, terms: &[String], max_chars: usize) -> String {
        snippet(text, best_line_start(text, terms), max_chars)
    }

    #[test]
    fn terms_are_words_lowercased_and_unique() {
        assert_eq!(query_terms("Rust's WASM, rust!"), vec!["rust", "s", "wasm"]);
        assert_eq!(query_terms("서울 개발"), vec!["서울", "개발"]);
        assert!(query_terms("  ?? ").is_empty());
    }

    #[test]
    fn content_terms_drop_stopwords_unless_nothing_else_is_left() {
        assert_eq!(
            content_terms(&query_terms("What is the Raft leader election?")),
            vec!["raft", "leader", "election"]
        );
        assert_eq!(content_terms(&query_terms("the who")), vec!["the", "who"]);
        assert!(content_terms(&[]).is_empty());
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
    fn coverage_matches_words_as_the_lexical_index_does() {
        // What coverage means: the share of content terms whose index
        // term is the index term of one of the text's words.
        let by_index_terms = |text: &str, terms: &[String]| {
            let words: HashSet<String> = analysis::words(text).map(|w| w.term).collect();
            let considered = content_terms(terms);
            considered
                .iter()
                .filter(|t| words.contains(&analysis::term(t)))
                .count() as f64
                / considered.len() as f64
        };
        let texts = [
            "Raft elects a LEADER; the Leader-election times out.",
            "ΟΔΟΣ and Straße, ÉCOLE, İstanbul, Café",
            "서울에서 개발 회의 — 서울 SEOUL",
            "Yelling skies: dying, lying and tying; happily generously",
            "x",
        ];
        let queries = [
            "leader election raft quorum elections",
            "οδος straße école istanbul i̇stanbul cafe",
            "서울 개발 seoul",
            "yell sky die lie tie happy generous",
            "the of",
        ];
        for text in texts {
            for query in queries {
                let terms = query_terms(query);
                assert_eq!(
                    coverage(text, &terms),
                    by_index_terms(text, &terms),
                    "{text:?} {query:?}"
                );
            }
        }
        // Every word of the bundled samples, and forms whose stems change
        // their start or are short, asked for in every sample.
        let mut folders = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")];
        let mut texts: Vec<String> = Vec::new();
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                match path.is_dir() {
                    true => folders.push(path),
                    false => texts.push(std::fs::read_to_string(path).unwrap()),
                }
            }
        }
        let mut vocabulary: Vec<String> = texts.iter().flat_map(|t| query_terms(t)).collect();
        vocabulary.extend(query_terms(
            "dying lying tying skies cries hopping generously eing aying early only yelling",
        ));
        vocabulary.sort();
        vocabulary.dedup();
        assert!(vocabulary.len() > 500, "{}", vocabulary.len());
        for text in &texts {
            for word in &vocabulary {
                let terms = [word.clone()];
                assert_eq!(
                    coverage(text, &terms),
                    by_index_terms(text, &terms),
                    "{word:?}"
                );
            }
        }
        // Another form of a word is found; a word that only begins like it is not.
        let terms = query_terms("tastes sour");
        assert_eq!(coverage("A sour taste.", &terms), 1.0);
        assert_eq!(coverage("Tasty sourdough.", &terms), 0.0);
    }

    #[test]
    fn snippet_starts_at_the_best_line_and_is_cut() {
        let text = "# Title\n\nnothing here\nthe zebra line with stripes\nmore text";
        let terms = query_terms("zebra stripes");
        assert_eq!(
            snippet_for(text, &terms, 220),
            "the zebra line with stripes more text"
        );
        let s = snippet_for(text, &terms, 10);
        assert_eq!(s, "the zebra…");
        assert_eq!(s.chars().count(), 10);
    }

    #[test]
    fn the_best_line_is_the_first_holding_the_most_query_words() {
        let text = "intro\nraft leader\n\nleader and raft again\nraft";
        let terms = query_terms("the raft leader");
        assert_eq!(best_line_start(text, &terms), Some(6));
        assert_eq!(best_line_start(text, &query_terms("quorum")), None);
        assert_eq!(best_line_start("", &terms), None);
    }

    #[test]
    fn a_snippet_starts_at_the_sentence_its_line_continues() {
        let terms = query_terms("sour");
        let text = "Sourdough\n\nFeed the starter; the levain is ready when it has doubled and\nsmells mildly sour.\nMore.";
        assert_eq!(
            snippet_for(text, &terms, 220),
            "Feed the starter; the levain is ready when it has doubled and smells mildly sour. More."
        );
        // Two lines back.
        let text = "Bread\n  Feed the starter and let it rise somewhere\nwarm; the levain is ready when it doubled and\nsmells mildly sour.";
        assert_eq!(
            snippet_for(text, &terms, 220),
            "Feed the starter and let it rise somewhere warm; the levain is ready when it doubled and smells mildly sour."
        );
        // From the last sentence end of the line before.
        let text = "It rose overnight. The levain is ready when it has doubled\nand smells sour.";
        assert_eq!(
            snippet_for(text, &terms, 220),
            "The levain is ready when it has doubled and smells sour."
        );
        // Not past a finished sentence, a heading, a blank or a short line.
        let long = "It rose overnight in the warm kitchen by the window";
        for text in [
            format!("{long}.\nIt smells sour."),
            format!("# {long}\nIt smells sour."),
            format!("{long}\n\nIt smells sour."),
            "- it rose\nIt smells sour.".to_string(),
        ] {
            assert_eq!(
                snippet_for(&text, &terms, 220),
                "It smells sour.",
                "{text:?}"
            );
        }
        // Not further back than half the snippet.
        let text = format!("{} and\nit smells sour.", "word ".repeat(40));
        assert_eq!(snippet_for(&text, &terms, 220), "it smells sour.");
    }

    #[test]
    fn snippet_starts_where_the_query_words_are_as_search_matched_them() {
        // Another form of a word counts (search found the chunk by it); a
        // word that only contains a query word, and stopwords, do not.
        let text =
            "The coffee was of the season.\nMost of the category is here.\nA sour taste, brewed.";
        let terms = query_terms("why does the coffee taste sour");
        assert_eq!(snippet_for(text, &terms, 220), "A sour taste, brewed.");
        let terms = query_terms("tastes of the cat");
        assert!(snippet_for(text, &terms, 220).starts_with("A sour taste"));
        // Korean words are found with their particles attached.
        let text = "첫 줄\n서울에서 열린 개발 회의";
        assert_eq!(
            snippet_for(text, &query_terms("서울 회의"), 220),
            "서울에서 열린 개발 회의"
        );
    }
}
