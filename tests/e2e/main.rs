//! End-to-end tests: each drives the real `kebab` binary against real files,
//! a real SQLite index and the real WebAssembly plugins.

// Build scripts, benches and tests print freely; the rule that output is
// escaped (crates/clippy.toml) is for what the kebab binary shows a person.
#![allow(clippy::disallowed_macros)]

mod llm_server;
mod mcp;
mod pdf;
mod plugins;
mod support;

mod ann_eval;
mod ask;
mod ask_bounds;
mod ask_prompt;
mod bad_input;
mod cjk;
mod cli;
mod code;
mod code_oracle;
mod concurrency;
mod containment;
mod contract;
mod deadline;
mod downloads;
mod edges;
mod engine;
mod external;
mod fetch;
mod formats;
mod fuzz;
mod heal;
mod hybrid;
mod incremental;
mod large_files;
mod lexical;
mod markup;
mod multi_hop;
mod multilingual;
mod object_storage;
mod one_file;
mod postgres_store;
mod remote_embedding;
mod rerank;
mod roots;
mod sandbox;
mod search_quality;
mod serve;
mod sessions;
mod shards;
mod takeover;
mod terminal;
mod text_files;
mod trust;
mod verify;
mod watch;
mod wire_schema;
mod yaml;
