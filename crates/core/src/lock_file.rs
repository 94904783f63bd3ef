//! The files behind kebab's advisory locks (`writer.lock`, `serve.lock`):
//! opened for locking without losing what the holder wrote, rewritten by
//! the holder with who it is, read by whoever waits. Each lock's policy
//! (wait, give up, say who holds it) stays with its owner.
//!
//! A lock file is private to its owner (mode 0600, tightened when an older
//! kebab left it readable): anyone who can open a file can `flock` it, even
//! read-only, so a file others could read let another user hold a data
//! directory's lock. Who holds a lock is read from the kernel's list
//! ([`holders`]), so a lock held by another user is said to be one.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Most bytes of a lock file read: a pid and a line or two.
const MAX_READ: u64 = 4096;

/// Open (creating when missing) the lock file at `path`, keeping what the
/// current holder wrote in it.
pub fn open(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    make_private(&file)?;
    Ok(file)
}

/// Take group and other permissions off `file` when this user owns it
/// (a file another user owns is left as it is: the caller finds out who
/// holds it from [`holders`]).
pub fn make_private(file: &File) -> std::io::Result<()> {
    let meta = file.metadata()?;
    if meta.uid() == current_uid() && meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o700))?;
    }
    Ok(())
}

/// This process's effective user id.
pub fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// A process holding an advisory lock on a file, as the kernel lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockHolder {
    pub pid: u32,
    /// Its user, when its `/proc/<pid>/status` can be read.
    pub uid: Option<u32>,
}

impl LockHolder {
    /// Whether it runs as another user than this process.
    pub fn is_other_user(&self) -> bool {
        self.uid.is_some_and(|uid| uid != current_uid())
    }
}

/// The processes holding a lock on `file`, from `/proc/locks` (Linux);
/// none where that list cannot be read.
pub fn holders(file: &File) -> Vec<LockHolder> {
    let Ok(meta) = file.metadata() else {
        return Vec::new();
    };
    let Ok(locks) = std::fs::read_to_string("/proc/locks") else {
        return Vec::new();
    };
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let wanted = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    locks
        .lines()
        .filter_map(|line| {
            // `1: FLOCK  ADVISORY  WRITE 32319 fe:00:10289341 0 EOF`; a
            // blocked waiter's line has `->` after the number.
            let fields: Vec<&str> = line.split_whitespace().filter(|f| *f != "->").collect();
            let pid: u32 = fields.get(4)?.parse().ok()?;
            (fields.get(5)? == &wanted).then_some(pid)
        })
        .map(|pid| LockHolder {
            pid,
            uid: uid_of(pid),
        })
        .collect()
}

/// The real user id of process `pid`.
fn uid_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
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
    fn lock_files_are_private_and_their_holder_is_known() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held.lock");
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let file = open(&path).unwrap();
        assert_eq!(file.metadata().unwrap().mode() & 0o777, 0o600, "tightened");
        let fresh = open(&dir.path().join("new.lock")).unwrap();
        assert_eq!(
            fresh.metadata().unwrap().mode() & 0o777,
            0o600,
            "created private"
        );
        assert!(holders(&file).is_empty());
        file.lock().unwrap();
        let held = holders(&open(&path).unwrap());
        assert_eq!(
            held,
            vec![LockHolder {
                pid: std::process::id(),
                uid: Some(current_uid())
            }]
        );
        assert!(!held[0].is_other_user());
    }

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
