//! `[search]`: the search layer's own section of kebab's config — result
//! shaping, fusion, the vector channel's ANN settings and the reranker —
//! with its defaults and the bounds each value is held to. The app's config
//! composes it.

use kebab_core::bounds::{OutOfBounds, at_most, within};
use serde::{Deserialize, Serialize};

use crate::rerank::RerankConfig;
use crate::search::{MAX_CANDIDATES, MAX_K, MAX_SNIPPET_CHARS};

/// `[search]`: result shaping.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct SearchConfig {
    pub default_k: usize,
    pub snippet_chars: usize,
    /// RRF constant: a chunk at rank r in a channel scores 1 / (rrf_k + r).
    pub rrf_k: u32,
    /// Hybrid fusion: `rrf`, `blend` (min–max normalised scores mixed with
    /// `blend_weight` on the lexical side), `blend-z` (z-scores), or a spec
    /// with its parameter (`rrf:60`, `blend:0.3`).
    pub fusion: String,
    /// Lexical weight of `blend` / `blend-z` when the spec has none.
    pub blend_weight: f64,
    /// Candidates each channel contributes to hybrid fusion.
    pub candidates: usize,
    /// Vector rows before an ANN index is built (exact search below). At
    /// 5 000 rows the exact scan (~1 µs per row) costs what the index does
    /// (~5 ms, recall@10 ≥ 0.995); BENCHMARKS.md "Where the index starts".
    pub ann_min_rows: usize,
    /// IVF partitions a vector query searches once the index exists
    /// (unset: Lance's adaptive probing). `kebab eval ann` measures the
    /// recall each setting gives on this index.
    pub ann_nprobes: Option<usize>,
    /// HNSW candidates per searched partition (unset: 1.5 × the limit;
    /// raised to the rows a query fetches × `ann_refine_factor` when lower).
    pub ann_ef: Option<usize>,
    /// Rows re-scored with their full vectors, per row asked for (0: none,
    /// the index's quantised cosines are kept).
    pub ann_refine_factor: u32,
    /// Neighbours below this cosine similarity are not vector hits
    /// (default: the embedding model's own floor from the catalog).
    pub min_vector_score: Option<f32>,
    /// `[search.rerank]`: a cross-encoder over the best fused hits.
    pub rerank: RerankConfig,
}

/// Largest RRF constant a setting takes (past it every rank scores alike).
pub const MAX_RRF_K: u32 = 1_000_000;

/// The hybrid fusion kebab uses unless configured: the z-score blend with
/// equal weights, the best of the measured fusions on the SciFact train
/// split (BENCHMARKS.md "Fusion": nDCG@10 0.7200 against RRF's 0.7005).
pub const DEFAULT_FUSION: &str = "blend-z";
/// The default lexical weight of a blend.
pub const DEFAULT_BLEND_WEIGHT: f64 = 0.5;

impl SearchConfig {
    /// What a vector query asks of the ANN index.
    pub fn ann(&self) -> kebab_store::vector::AnnParams {
        kebab_store::vector::AnnParams {
            nprobes: self.ann_nprobes,
            ef: self.ann_ef,
            refine_factor: self.ann_refine_factor,
        }
    }

    /// The configured hybrid fusion (checked when the config is loaded;
    /// an unparsable spec given in code falls back to RRF).
    pub fn fusion(&self) -> crate::fusion::Fusion {
        self.parse_fusion()
            .unwrap_or(crate::fusion::Fusion::Rrf { k: self.rrf_k })
    }

    /// The configured hybrid fusion, or why it does not parse.
    pub fn parse_fusion(&self) -> Result<crate::fusion::Fusion, crate::fusion::UnknownFusion> {
        let default = match self.fusion.split(':').next() {
            Some("blend" | "blend-z") => crate::fusion::Fusion::Blend {
                weight: self.blend_weight,
                norm: crate::fusion::Norm::MinMax,
            },
            _ => crate::fusion::Fusion::Rrf { k: self.rrf_k },
        };
        crate::fusion::Fusion::parse(&self.fusion, default)
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            default_k: 10,
            snippet_chars: 220,
            rrf_k: 60,
            fusion: DEFAULT_FUSION.to_string(),
            blend_weight: DEFAULT_BLEND_WEIGHT,
            candidates: 100,
            ann_min_rows: 5_000,
            ann_nprobes: None,
            ann_ef: None,
            ann_refine_factor: kebab_store::vector::AnnParams::default().refine_factor,
            min_vector_score: None,
            rerank: Default::default(),
        }
    }
}

impl SearchConfig {
    /// The whole section as kebab can use it: the fusion spec parses, the
    /// ANN settings are at least 1, and every size is within its bound
    /// ([`crate::search::MAX_K`] and the others beside it, the ANN
    /// parameters' own, the reranker's `top_n`). The first problem names
    /// its section and key.
    pub fn check(&self) -> Result<(), String> {
        self.parse_fusion()
            .map_err(|e| format!("[search] fusion: {e}"))?;
        if self.ann_nprobes == Some(0) || self.ann_ef == Some(0) {
            return Err("[search] ann_nprobes and ann_ef must be at least 1 \
                 (leave them out for the defaults)"
                .into());
        }
        self.check_bounds().map_err(|e| format!("[search] {e}"))?;
        within("blend_weight", self.blend_weight, 0.0, 1.0)
            .and_then(|()| match self.min_vector_score {
                Some(floor) => within("min_vector_score", floor.into(), -1.0, 1.0),
                None => Ok(()),
            })
            .map_err(|e| format!("[search] {e}"))?;
        at_most("top_n", self.rerank.top_n, MAX_K).map_err(|e| format!("[search.rerank] {e}"))
    }

    fn check_bounds(&self) -> Result<(), OutOfBounds> {
        at_most("default_k", self.default_k, MAX_K)?;
        at_most("rrf_k", self.rrf_k, MAX_RRF_K)?;
        at_most("candidates", self.candidates, MAX_CANDIDATES)?;
        at_most("snippet_chars", self.snippet_chars, MAX_SNIPPET_CHARS)?;
        self.ann().check()
    }
}
