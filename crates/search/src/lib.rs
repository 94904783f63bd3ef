//! kebab-search: finding chunks — text embeddings ([`embed`]: ONNX
//! Runtime or an OpenAI-compatible server, the model catalog, `models
//! pull`), Korean morphology ([`korean`]), the lexical and vector channels
//! and their fusion ([`search`], [`fusion`]), cross-encoders
//! ([`cross_encoder`]) for the optional reranker ([`rerank`]) and the
//! answer verifier's entailment model ([`nli`]), and the `[search]` config
//! section ([`config`]).
//!
//! It may import `kebab-core` and `kebab-store` (the index it searches).
//! It must never know plugins, ingest, the ask pipeline, the app's config
//! file or any front end.

pub mod cjk;
pub mod config;
pub mod cross_encoder;
pub mod embed;
pub mod fusion;
pub mod korean;
pub mod nli;
pub mod rerank;
pub mod search;
