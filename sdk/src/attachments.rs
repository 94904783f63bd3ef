//! Files inside a file (an e-mail's attachments): a plugin hands them to the
//! host, which reads each with the plugin that claims its name and indexes
//! its chunks as part of the document being parsed (API 1.2.0).
//!
//! Inside a component [`add`] calls the host. In a native build (unit tests,
//! benchmarks) there is no host: what a parse handed over is kept on the
//! calling thread and [`take`] returns it, so a test can check it.

use crate::Span;

/// One file handed to the host, as [`take`] returns it in a native build.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// Its own file name (no directories).
    pub name: String,
    pub bytes: Vec<u8>,
    /// The headings its chunks are placed under.
    pub heading_path: Vec<String>,
    /// The part of the file it belongs to (a mailbox's message), if any.
    pub within: Option<Span>,
}

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static HANDED: std::cell::RefCell<Vec<Attachment>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Hand the file `name` found in the file being parsed to the host; `true`
/// when the host took it (it bounds how many and how large).
pub fn add(name: &str, bytes: &[u8], heading_path: &[String], within: Option<Span>) -> bool {
    #[cfg(target_arch = "wasm32")]
    return crate::kebab::plugin::attachments::add(name, bytes, heading_path, within.as_ref());
    #[cfg(not(target_arch = "wasm32"))]
    HANDED.with(|h| {
        h.borrow_mut().push(Attachment {
            name: name.to_string(),
            bytes: bytes.to_vec(),
            heading_path: heading_path.to_vec(),
            within,
        });
        true
    })
}

/// What this thread handed over since the last call (native builds only:
/// inside a component the host has them).
#[cfg(not(target_arch = "wasm32"))]
pub fn take() -> Vec<Attachment> {
    HANDED.with(|h| std::mem::take(&mut *h.borrow_mut()))
}
