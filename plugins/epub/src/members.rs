//! The book's ZIP members, read within the SDK's bounds, looked up by the
//! names the package documents give them. A reference whose case differs
//! from the stored name (books made on case-insensitive file systems) still
//! finds its member.

use std::collections::HashMap;

use kebab_plugin_sdk::PluginError;
use kebab_plugin_sdk::archive::{Archive, Limits};

use crate::encoding;

/// What one book may inflate to: a chapter past 32 MiB of XHTML is a zip
/// bomb, not a chapter; the total leaves room for the chapters read (see
/// `book::MAX_BOOK_XHTML`) and the package and navigation documents.
const LIMITS: Limits = Limits {
    max_member_bytes: 32 << 20,
    max_total_bytes: 160 << 20,
    max_members: 100_000,
};

/// An open book archive.
pub struct Members<'a> {
    archive: Archive<'a>,
    /// Stored names by their lower-case form.
    by_folded_name: HashMap<String, String>,
}

impl<'a> Members<'a> {
    /// Open the book's bytes as a ZIP archive.
    pub fn open(bytes: &'a [u8]) -> Result<Members<'a>, PluginError> {
        let archive = Archive::with_limits(bytes, LIMITS)?;
        let by_folded_name = archive
            .names()
            .into_iter()
            .map(|name| (name.to_lowercase(), name))
            .collect();
        Ok(Members {
            archive,
            by_folded_name,
        })
    }

    /// The stored name `name` refers to, if any member has it (exactly, or
    /// but for case).
    fn find(&self, name: &str) -> Option<String> {
        if self.archive.contains(name) {
            return Some(name.to_string());
        }
        self.by_folded_name.get(&name.to_lowercase()).cloned()
    }

    /// The first member whose name ends with `suffix` (ASCII case ignored).
    pub fn first_ending_with(&self, suffix: &str) -> Option<String> {
        self.archive
            .names()
            .into_iter()
            .find(|name| name.to_ascii_lowercase().ends_with(suffix))
    }

    /// The text of member `name` (see [`Members::find`]), or `None` when
    /// there is none.
    pub fn text(&mut self, name: &str) -> Result<Option<String>, PluginError> {
        let Some(stored) = self.find(name) else {
            return Ok(None);
        };
        Ok(self
            .archive
            .read(&stored)?
            .map(|bytes| encoding::decode(&bytes)))
    }
}
