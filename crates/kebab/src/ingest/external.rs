//! One-off documents (design §6.7): a file outside every root (`kebab
//! ingest ~/Downloads/paper.pdf`) or text read from stdin (`kebab ingest
//! -`) is kept in the data dir's `_external/` directory and indexed there,
//! as the root `_external` — never by making the file's directory a root,
//! which a later `kebab watch` would walk whole.
//!
//! A kept copy is named after its content: `<blake3-12>-<file name>` (the
//! name kept so citations stay readable; `.txt` added to a name without an
//! extension), or `<blake3-12>.txt` for stdin without `--name`. The same content under the same name is
//! the same file, so ingesting it again changes nothing.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The directory under the data dir holding one-off documents (and the
/// name of their root).
pub const EXTERNAL_DIR: &str = "_external";

/// Characters of a kept name after the hash.
const MAX_NAME_CHARS: usize = 80;

/// Problems keeping a one-off document.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    #[error("nothing to index on stdin")]
    Empty,
    #[error("{what} is larger than [indexing] max_file_mb ({max_bytes} bytes)")]
    TooLarge { what: String, max_bytes: u64 },
    #[error("cannot read {what}: {source}")]
    Read {
        what: String,
        source: std::io::Error,
    },
    #[error("cannot keep the one-off document in {dir}: {source}")]
    Write {
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// Read at most `max_bytes` of `input` (stdin): refused when empty or
/// larger, without reading more than one byte past the cap.
pub fn read_bounded(input: &mut dyn Read, max_bytes: u64) -> Result<Vec<u8>, ExternalError> {
    let mut bytes = Vec::new();
    input
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| ExternalError::Read {
            what: "stdin".into(),
            source,
        })?;
    if bytes.is_empty() {
        return Err(ExternalError::Empty);
    }
    if bytes.len() as u64 > max_bytes {
        return Err(ExternalError::TooLarge {
            what: "stdin".into(),
            max_bytes,
        });
    }
    Ok(bytes)
}

/// Keep `bytes` in `dir` under its content name (`name`: the original
/// file name, if any); the kept file's path. Written beside and renamed
/// into place, so a crash leaves no half file under the final name.
pub fn keep(dir: &Path, bytes: &[u8], name: Option<&str>) -> Result<PathBuf, ExternalError> {
    let write_err = |source| ExternalError::Write {
        dir: dir.to_path_buf(),
        source,
    };
    let hash = blake3::hash(bytes).to_hex();
    let file_name = match name.map(safe_name).filter(|n| !n.is_empty()) {
        Some(n) if n.contains('.') => format!("{}-{n}", &hash[..12]),
        Some(n) => format!("{}-{n}.txt", &hash[..12]),
        None => format!("{}.txt", &hash[..12]),
    };
    std::fs::create_dir_all(dir).map_err(write_err)?;
    let target = dir.join(&file_name);
    if std::fs::read(&target).is_ok_and(|kept| kept == bytes) {
        return Ok(target);
    }
    let partial = dir.join(format!(".{file_name}.{}.partial", std::process::id()));
    std::fs::write(&partial, bytes).map_err(write_err)?;
    std::fs::rename(&partial, &target).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        write_err(e)
    })?;
    Ok(target)
}

/// The last component of `name` with every character but letters, digits,
/// `.`, `_` and `-` written `-`, no leading dot, cut to
/// [`MAX_NAME_CHARS`] (its extension kept).
fn safe_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.');
    if clean.chars().count() <= MAX_NAME_CHARS {
        return clean.to_string();
    }
    let ext = clean
        .rsplit_once('.')
        .map(|(_, e)| e)
        .filter(|e| e.len() <= 10)
        .unwrap_or("");
    let keep = MAX_NAME_CHARS - ext.len() - 1;
    let stem: String = clean.chars().take(keep).collect();
    if ext.is_empty() {
        stem
    } else {
        format!("{stem}.{ext}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_safe_component_with_their_extension() {
        assert_eq!(safe_name("paper.pdf"), "paper.pdf");
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name("a b/c d?.md"), "c-d-.md");
        assert_eq!(safe_name(".hidden.md"), "hidden.md");
        assert_eq!(safe_name("..\\win\\x.txt"), "x.txt");
        assert_eq!(safe_name("nul\0byte.md"), "nul-byte.md");
        let long = format!("{}.md", "x".repeat(200));
        let cut = safe_name(&long);
        assert_eq!(cut.chars().count(), MAX_NAME_CHARS);
        assert!(cut.ends_with(".md"));
    }

    #[test]
    fn the_same_content_and_name_is_kept_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = keep(dir.path(), b"# Hello\n", Some("hello.md")).unwrap();
        let again = keep(dir.path(), b"# Hello\n", Some("hello.md")).unwrap();
        assert_eq!(a, again);
        let other = keep(dir.path(), b"# Bye\n", Some("hello.md")).unwrap();
        assert_ne!(a, other);
        let anonymous = keep(dir.path(), b"# Hello\n", None).unwrap();
        assert!(anonymous.to_string_lossy().ends_with(".txt"));
        let bare = keep(dir.path(), b"# Hello\n", Some("README")).unwrap();
        assert!(bare.to_string_lossy().ends_with("-README.txt"), "{bare:?}");
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(files.len(), 4, "no partial files are left");
        assert_eq!(std::fs::read(&a).unwrap(), b"# Hello\n");
    }

    #[test]
    fn stdin_is_read_within_the_cap() {
        assert_eq!(read_bounded(&mut &b"abc"[..], 3).unwrap(), b"abc");
        assert!(matches!(
            read_bounded(&mut &b"abcd"[..], 3),
            Err(ExternalError::TooLarge { .. })
        ));
        assert!(matches!(
            read_bounded(&mut &b""[..], 3),
            Err(ExternalError::Empty)
        ));
    }
}
