//! kebab-plugin-host: parser plugins, WebAssembly components speaking the
//! `kebab:plugin` WIT contract, run sandboxed by wasmtime.
//!
//! What lives here: the bindings of every frozen contract version and their
//! conversion into `kebab_core::document` ([`contract`]), the sandboxed
//! runtime ([`runtime`]), validation of plugin output ([`validate`]), the
//! registry routing files to plugins ([`registry`], [`patterns`]), what a
//! plugin may hand over and how attachments join their holder
//! ([`attach`]), the OCR seam plugins reach through the host ([`ocr`]),
//! install/remove ([`install`], [`overlap`]), scaffolding, the built-in
//! components (`build.rs` compiles and embeds them) and the `[plugins]`
//! config section ([`config`]).
//!
//! It may import `kebab-core` only. It must never know SQL, search,
//! embeddings, the app's config file or any front end: callers hand it
//! bytes, a path and its own config section, and get core types back.

pub mod attach;
mod cache;
pub mod config;
pub mod contract;
pub mod identity;
pub mod install;
pub mod ocr;
pub mod overlap;
pub mod patterns;
pub mod registry;
pub mod runtime;
pub mod scaffold;
pub mod validate;

pub use contract::current::kebab::plugin::types::{Error as PluginError, PluginInfo};
pub use contract::{HOST_API_VERSION, SUPPORTED_API_VERSIONS};
