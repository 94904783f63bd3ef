//! Members of a ZIP archive (Office Open XML, OpenDocument and EPUB files
//! are ZIP archives of XML parts), read within bounds: a member is
//! decompressed only up to a limit, so a small file that inflates to
//! gigabytes (a zip bomb) is that file's clear error, not an exhausted
//! sandbox. Feature `archive`.

use std::io::{Cursor, Read};

use crate::PluginError;

/// How much one archive may give.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most bytes one member may inflate to.
    pub max_member_bytes: u64,
    /// Most bytes all members read from one archive may inflate to.
    pub max_total_bytes: u64,
    /// Most members an archive may list.
    pub max_members: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_member_bytes: 64 << 20,
            max_total_bytes: 256 << 20,
            max_members: 100_000,
        }
    }
}

/// An open archive and what is left of its byte budget.
pub struct Archive<'a> {
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
    limits: Limits,
    read_so_far: u64,
}

impl<'a> Archive<'a> {
    /// Open `bytes` as a ZIP archive under the default [`Limits`].
    pub fn open(bytes: &'a [u8]) -> Result<Archive<'a>, PluginError> {
        Archive::with_limits(bytes, Limits::default())
    }

    /// Open `bytes` as a ZIP archive under `limits`.
    pub fn with_limits(bytes: &'a [u8], limits: Limits) -> Result<Archive<'a>, PluginError> {
        let zip = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| PluginError::Malformed(format!("not a readable ZIP archive: {e}")))?;
        if zip.len() > limits.max_members {
            return Err(PluginError::Malformed(format!(
                "the archive lists {} members, more than the {} allowed",
                zip.len(),
                limits.max_members
            )));
        }
        Ok(Archive {
            zip,
            limits,
            read_so_far: 0,
        })
    }

    /// The members' names, in the archive's order.
    pub fn names(&self) -> Vec<String> {
        self.zip
            .file_names()
            .filter_map(Result::ok)
            .map(|n| n.into_owned())
            .collect()
    }

    /// Whether a member of that name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.zip.index_for_name(name).is_some()
    }

    /// The member `name` inflated, or `None` when there is none. A member
    /// past [`Limits::max_member_bytes`], or one that takes the archive past
    /// [`Limits::max_total_bytes`], is an error naming the bound; so is an
    /// encrypted member.
    pub fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>, PluginError> {
        let Some(index) = self.zip.index_for_name(name) else {
            return Ok(None);
        };
        let left = self.limits.max_total_bytes.saturating_sub(self.read_so_far);
        let cap = self.limits.max_member_bytes.min(left);
        let mut member = match self.zip.by_index(index) {
            Ok(m) => m,
            Err(zip::result::ZipError::UnsupportedArchive(m)) if m.contains("assword") => {
                return Err(PluginError::Unsupported(format!(
                    "encrypted archive member {name}: remove the password and ingest again"
                )));
            }
            Err(e) => {
                return Err(PluginError::Malformed(format!(
                    "cannot read archive member {name}: {e}"
                )));
            }
        };
        if member.encrypted() {
            return Err(PluginError::Unsupported(format!(
                "encrypted archive member {name}: remove the password and ingest again"
            )));
        }
        let mut out = Vec::new();
        (&mut member)
            .take(cap + 1)
            .read_to_end(&mut out)
            .map_err(|e| PluginError::Malformed(format!("cannot inflate {name}: {e}")))?;
        if out.len() as u64 > cap {
            return Err(PluginError::Malformed(format!(
                "{name} inflates past {} MiB (a zip bomb?): not read",
                cap.max(1) >> 20
            )));
        }
        self.read_so_far += out.len() as u64;
        Ok(Some(out))
    }

    /// The member `name` as UTF-8 text (a byte-order mark dropped; invalid
    /// sequences replaced), or `None` when there is none.
    pub fn read_text(&mut self, name: &str) -> Result<Option<String>, PluginError> {
        Ok(self.read(name)?.map(|bytes| {
            let text = String::from_utf8_lossy(&bytes);
            text.strip_prefix('\u{feff}').unwrap_or(&text).to_string()
        }))
    }
}

/// Whether `bytes` are an OLE compound file (the container of legacy Office
/// files and of password-protected Office Open XML files).
pub fn is_compound_file(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        let mut w = zip::ZipWriter::new(&mut out);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in members {
            w.start_file(*name, opts).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap();
        out.into_inner()
    }

    #[test]
    fn members_are_read_by_name() {
        let bytes = zip_of(&[("a.xml", b"<a/>"), ("b/c.xml", b"\xef\xbb\xbf<c/>")]);
        let mut archive = Archive::open(&bytes).unwrap();
        assert_eq!(archive.names(), vec!["a.xml", "b/c.xml"]);
        assert_eq!(archive.read("a.xml").unwrap().unwrap(), b"<a/>");
        assert_eq!(archive.read_text("b/c.xml").unwrap().unwrap(), "<c/>");
        assert_eq!(archive.read("missing").unwrap(), None);
    }

    #[test]
    fn a_member_inflating_past_its_bound_is_refused() {
        let big = vec![b'a'; 2 << 20];
        let bytes = zip_of(&[("big.xml", &big)]);
        assert!(bytes.len() < 64 << 10, "deflate should shrink it");
        let limits = Limits {
            max_member_bytes: 1 << 20,
            ..Limits::default()
        };
        let mut archive = Archive::with_limits(&bytes, limits).unwrap();
        let err = archive.read("big.xml").unwrap_err();
        assert!(matches!(err, PluginError::Malformed(m) if m.contains("zip bomb")));
    }

    #[test]
    fn the_archive_total_is_bounded_too() {
        let part = vec![b'b'; 600 << 10];
        let bytes = zip_of(&[("1", &part), ("2", &part)]);
        let limits = Limits {
            max_member_bytes: 1 << 20,
            max_total_bytes: 1 << 20,
            max_members: 10,
        };
        let mut archive = Archive::with_limits(&bytes, limits).unwrap();
        assert!(archive.read("1").is_ok());
        assert!(archive.read("2").is_err());
    }

    #[test]
    fn what_is_not_a_zip_is_malformed() {
        assert!(matches!(
            Archive::open(b"not a zip").err(),
            Some(PluginError::Malformed(_))
        ));
        assert!(is_compound_file(&[
            0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0
        ]));
    }
}
