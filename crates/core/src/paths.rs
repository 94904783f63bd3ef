//! Paths and files as kebab reads them: the lossless text form of a path
//! whose bytes are not all UTF-8 (stored as a document's source and
//! decoded again to read it back), and the one bounded read of a regular
//! file (files to index, config files, plugin components), which refuses
//! FIFOs, devices and symlinks swapped in after a check.

use std::path::{Path, PathBuf};

/// The replacement character that starts an escaped byte.
const ESCAPE: char = '\u{FFFD}';

/// A path as text without losing bytes: each byte of a file name that is
/// not UTF-8 becomes U+FFFD followed by its two hex digits (`bad\xff.md` →
/// `bad\u{FFFD}ff.md`), so two names differing only in such bytes stay two
/// names. [`unescape_path`] reverses it.
pub fn escape_path(path: &Path) -> String {
    use std::fmt::Write;
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "{ESCAPE}{b:02x}");
        }
    }
    out
}

/// The path [`escape_path`] wrote.
pub fn unescape_path(text: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(ESCAPE) {
        bytes.extend_from_slice(&rest.as_bytes()[..at]);
        let after = &rest[at + ESCAPE.len_utf8()..];
        match after.get(..2).and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(b) => {
                bytes.push(b);
                rest = &after[2..];
            }
            None => {
                bytes.extend_from_slice(ESCAPE.to_string().as_bytes());
                rest = after;
            }
        }
    }
    bytes.extend_from_slice(rest.as_bytes());
    PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

/// Why a file was not read after all.
#[derive(Debug)]
pub enum ReadRefusal {
    /// It is no longer (or never was) a regular file: what it is now.
    NotRegular(&'static str),
    /// It grew past the cap since the walk: its size now.
    TooLarge(u64),
    /// It resolves outside the root it was walked in (a directory on the
    /// way became a link out): where it led.
    Outside(String),
    /// The OS said no.
    Io(std::io::Error),
}

/// What a file type is, in a word: `regular file`, `directory`, `FIFO`,
/// `socket`, `device` or `symlink`.
pub fn file_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_file() {
        "regular file"
    } else if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "device"
    } else {
        "symlink"
    }
}

/// Read the regular file at `real` — the path the walk resolved — checking
/// after opening what it is now: opened without following a final symlink
/// and without blocking (opening a FIFO would block), then `fstat`ed, and
/// read up to `max_bytes` + 1 so a file that grew is refused, not read whole.
pub fn read_regular_file(real: &Path, max_bytes: u64) -> Result<Vec<u8>, ReadRefusal> {
    let (file, len) = open_regular(real)?;
    read_capped(file, len, max_bytes)
}

/// [`read_regular_file`] of a file that must lie inside `root`: once it is
/// open, the file the descriptor really names is checked to be there, so a
/// directory on the way swapped for a link out of the root since the walk
/// (a deploy's `mv dir old && ln -s /elsewhere dir`) reads nothing.
pub fn read_regular_file_within(
    real: &Path,
    root: &Path,
    max_bytes: u64,
) -> Result<Vec<u8>, ReadRefusal> {
    use std::os::fd::AsRawFd;
    let (file, len) = open_regular(real)?;
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()));
    match opened {
        Ok(opened) if !opened.starts_with(root) => {
            return Err(ReadRefusal::Outside(escape_path(&opened)));
        }
        // Without /proc the walk's own check stands.
        _ => {}
    }
    read_capped(file, len, max_bytes)
}

/// `real` opened for reading without following a final link and without
/// blocking, when it is a regular file; its length.
fn open_regular(real: &Path) -> Result<(std::fs::File, u64), ReadRefusal> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(real)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => ReadRefusal::NotRegular("symlink"),
            _ => ReadRefusal::Io(e),
        })?;
    let meta = file.metadata().map_err(ReadRefusal::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadRefusal::NotRegular(file_kind(&meta.file_type())));
    }
    Ok((file, meta.len()))
}

/// The bytes of `file` (`len` long when opened), at most `max_bytes`.
fn read_capped(file: std::fs::File, len: u64, max_bytes: u64) -> Result<Vec<u8>, ReadRefusal> {
    use std::io::Read;
    if len > max_bytes {
        return Err(ReadRefusal::TooLarge(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadRefusal::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadRefusal::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}
