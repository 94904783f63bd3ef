//! kebab-core: the bottom layer of kebab — the types and pure rules every
//! other layer shares.
//!
//! What lives here: the ID recipe ([`ids`]), word analysis for the
//! lexical index ([`analysis`]), source spans ([`spans`]), the
//! document model a parser plugin's output becomes ([`document`]), the
//! stable `*.v1` wire types of hits, citations and answers ([`wire`];
//! how a chunk's spans become its citation: [`citation`]), how
//! a size over its bound is refused ([`bounds`]), terminal-safe text
//! ([`sanitize`]), a document's trust level and source type ([`trust`]),
//! the path codec and bounded file reads ([`paths`]), lock files
//! ([`lock_file`]), the
//! clock, the Ctrl-C flag, vector normalisation and the one place an
//! outgoing HTTP client is built ([`http`]).
//!
//! What must never live here: SQL, WebAssembly, a model runtime, config
//! files, or any import of another kebab crate. Everything above may import
//! this crate; this crate imports none of them.

pub mod analysis;
pub mod bounds;
pub mod citation;
pub mod clock;
pub mod document;
pub mod http;
pub mod ids;
pub mod interrupt;
pub mod lock_file;
pub mod paths;
pub mod sanitize;
pub mod scope;
pub mod shard;
pub mod spans;
pub mod trust;
pub mod vecmath;
pub mod wire;
