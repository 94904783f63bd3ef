//! kebab: a local-first knowledge base whose parsers are sandboxed
//! WebAssembly components.
//!
//! The `kebab` binary (`src/main.rs`) is a thin CLI over this library.

pub mod api;
pub mod app;
pub mod bounds;
pub mod config;
pub mod embed;
pub mod eval;
pub mod fetch;
pub mod fusion;
pub mod git;
pub mod http;
pub mod ids;
pub mod indexes;
pub mod ingest;
pub mod interrupt;
pub mod korean;
pub mod llm;
pub mod plugin;
pub mod rag;
pub mod rerank;
pub mod sanitize;
pub mod search;
pub mod spans;
pub mod store;
pub mod vector;
pub mod walk;
pub mod wire;
pub mod writer_lock;
