//! kebab: a local-first knowledge base whose parsers are sandboxed
//! WebAssembly components. This crate is the app layer: config composition
//! ([`config`], [`app`], [`indexes`]), the ingest pipeline ([`ingest`],
//! [`walk`], [`git`]) and the watcher that keeps roots fresh through it
//! ([`watch`]), the ask pipeline ([`rag`], [`llm`]), verbatim fetch,
//! evaluation, the use cases every front end calls ([`api`]) and the rules
//! of the local service (who may talk to it, one per data directory:
//! [`service`]). The `kebab` binary (`src/main.rs`: the CLI, the MCP
//! server and `kebab serve`'s HTTP front end) only parses,
//! calls one use case and renders its typed result.
//!
//! The layers below are crates of their own, so none of them can reach up:
//! `kebab-core` (types and pure rules) at the bottom; `kebab-plugin-host`
//! and `kebab-store` beside each other above it; `kebab-search` above the
//! store. Their modules are re-exported here under the paths they had
//! when they were modules of this crate (`kebab::store`, `kebab::plugin`,
//! …), for tests and benches.

pub mod api;
pub mod app;
pub mod config;
pub mod eval;
pub mod fetch;
pub mod git;
pub mod indexes;
pub mod ingest;
pub mod llm;
pub mod rag;
pub mod service;
pub mod walk;
pub mod watch;

pub use kebab_core::{bounds, document, http, ids, interrupt, sanitize, scope, shard, spans, wire};
pub use kebab_plugin_host as plugin;
pub use kebab_search::{embed, fusion, korean, rerank, search};
pub use kebab_store as store;
pub use kebab_store::{vector, writer_lock};
