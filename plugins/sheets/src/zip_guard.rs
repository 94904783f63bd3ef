//! Checks on a ZIP-based workbook (`.xlsx`, `.xlsm`, `.xlsb`, `.ods`)
//! before any part of it is inflated. calamine opens the archive itself, so
//! the SDK's bounded reader cannot stand in its way; instead the central
//! directory's declared sizes are checked here — the `zip` crate stops a
//! member that inflates past its declared size, so these bounds hold.
//!
//! Parts read whole (shared strings, styles, the workbook part) are bounded
//! in size. Worksheets and `content.xml` are streamed and stop at the
//! file's budgets (cells, and XML read: [`crate::meter`]), so only their
//! inflation ratio is checked: one far past what real sheets compress to
//! is a zip bomb. Members no reader opens (images, embedded files) are not
//! checked.

use std::io::Cursor;

use kebab_plugin_sdk::PluginError;

use crate::meter::Packed;

/// Most bytes a part read whole (shared strings, styles) may declare.
pub const MAX_WHOLE_PART_BYTES: u64 = 96 << 20;

/// A streamed part larger than this must not inflate more than
/// [`MAX_RATIO`] times its packed size (deflate's own limit is ~1 000).
pub const RATIO_FLOOR_BYTES: u64 = 64 << 20;

/// Most inflation ratio of a large streamed part.
pub const MAX_RATIO: u64 = 200;

/// Most members one archive may list.
pub const MAX_MEMBERS: usize = 100_000;

/// What a check found out about the archive.
#[derive(Debug, Default)]
pub struct Members {
    /// Every member's name, in archive order.
    pub names: Vec<String>,
    /// Where each member's packed data lies and how many times it
    /// inflates, sorted by position (what a [`crate::meter::Metered`]
    /// reader charges by).
    pub packed: Vec<Packed>,
}

impl Members {
    /// Whether a member of that name exists (ASCII case ignored, as
    /// calamine looks parts up).
    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n.eq_ignore_ascii_case(name))
    }
}

/// Check the archive's declared sizes; its member names when they pass.
pub fn check(bytes: &[u8]) -> Result<Members, PluginError> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| PluginError::Malformed(format!("not a readable ZIP archive: {e}")))?;
    if zip.len() > MAX_MEMBERS {
        return Err(PluginError::Malformed(format!(
            "the archive lists {} members, more than the {MAX_MEMBERS} allowed",
            zip.len()
        )));
    }
    let mut members = Members::default();
    for i in 0..zip.len() {
        let member = zip
            .by_index_raw(i)
            .map_err(|e| PluginError::Malformed(format!("unreadable archive member {i}: {e}")))?;
        let name = member.name().map(|n| n.into_owned()).unwrap_or_default();
        if member.encrypted() {
            return Err(PluginError::Unsupported(crate::workbook::ENCRYPTED.into()));
        }
        check_member(&name, member.size(), member.compressed_size())?;
        let start = member.data_start().unwrap_or_else(|| member.header_start());
        members.packed.push(Packed {
            start,
            end: start.saturating_add(member.compressed_size()),
            ratio: member
                .size()
                .div_ceil(member.compressed_size().max(1))
                .max(1),
        });
        members.names.push(name);
    }
    members.packed.sort_by_key(|p| p.start);
    Ok(members)
}

/// How a reader treats a member, by its name.
#[derive(Debug, PartialEq)]
enum Use {
    Streamed,
    Whole,
    Unread,
}

fn use_of(name: &str) -> Use {
    let lower = name.to_ascii_lowercase();
    let unread = [
        "media/",
        "embeddings/",
        "pictures/",
        "thumbnails/",
        "printersettings/",
    ];
    if unread.iter().any(|dir| lower.contains(dir)) {
        Use::Unread
    } else if lower.contains("worksheets/") || lower == "content.xml" {
        Use::Streamed
    } else {
        Use::Whole
    }
}

fn check_member(name: &str, size: u64, packed: u64) -> Result<(), PluginError> {
    let (bound, ratio_checked) = match use_of(name) {
        Use::Unread => return Ok(()),
        Use::Streamed => (u64::MAX, size > RATIO_FLOOR_BYTES),
        Use::Whole => (MAX_WHOLE_PART_BYTES, false),
    };
    let ratio = size / packed.max(1);
    if size > bound || (ratio_checked && ratio > MAX_RATIO) {
        return Err(PluginError::Malformed(format!(
            "{name} would inflate to {} MiB ({ratio}× its packed size; a zip bomb?): not read",
            size >> 20
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_bounded_by_how_they_are_read() {
        assert_eq!(use_of("xl/worksheets/sheet1.xml"), Use::Streamed);
        assert_eq!(use_of("content.xml"), Use::Streamed);
        assert_eq!(use_of("xl/sharedStrings.xml"), Use::Whole);
        assert_eq!(use_of("xl/media/image1.png"), Use::Unread);
        assert!(check_member("xl/media/big.png", 1 << 40, 1).is_ok());
        assert!(check_member("xl/sharedStrings.xml", 200 << 20, 100 << 20).is_err());
        assert!(check_member("xl/worksheets/sheet1.xml", 5 << 30, 500 << 20).is_ok());
        let bomb = check_member("xl/worksheets/sheet1.xml", 500 << 20, 1 << 20);
        assert!(matches!(bomb, Err(PluginError::Malformed(m)) if m.contains("zip bomb")));
    }

    #[test]
    fn what_is_not_a_zip_is_malformed() {
        assert!(matches!(
            check(b"PK\x03\x04 broken"),
            Err(PluginError::Malformed(_))
        ));
    }
}
