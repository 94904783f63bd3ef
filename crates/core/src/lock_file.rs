//! The files behind kebab's advisory locks (`writer.lock`, `serve.lock`):
//! opened for locking without losing what the holder wrote, rewritten by
//! the holder with who it is, read by whoever waits. Each lock's policy
//! (wait, give up, say who holds it) stays with its owner.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Most bytes of a lock file read: a pid and a line or two.
const MAX_READ: u64 = 4096;

/// Open (creating when missing) the lock file at `path`, keeping what the
/// current holder wrote in it.
pub fn open(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Replace what the lock file says with `text` (the holder, once it has
/// the lock).
pub fn rewrite(file: &mut File, text: &str) -> std::io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(text.as_bytes())?;
    file.flush()
}

/// What the lock file says (its first 4 KiB); empty when it cannot be read.
pub fn read(file: &mut File) -> String {
    let mut text = String::new();
    if file.seek(SeekFrom::Start(0)).is_ok() {
        let _ = file.take(MAX_READ).read_to_string(&mut text);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewritten_lock_file_reads_back_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let mut file = open(&path).unwrap();
        rewrite(&mut file, "123\nlonger text first\n").unwrap();
        rewrite(&mut file, "7\nshort\n").unwrap();
        assert_eq!(read(&mut file), "7\nshort\n");
        let mut again = open(&path).unwrap();
        assert_eq!(read(&mut again), "7\nshort\n", "opening does not truncate");
    }
}
