//! One writer per index: the lock an ingest or re-index holds on
//! `<data_dir>/writer.lock` for its whole run.
//!
//! SQLite alone serialises single transactions, not runs: two ingests
//! interleaving their documents and their vector passes would each
//! reconcile LanceDB against a SQLite the other is still changing. So a
//! writer takes this advisory file lock (`flock`) first; a second writer
//! waits its turn, told which process it waits for. Readers (search, ask,
//! fetch) never take it. The OS drops the lock when the holder exits, even
//! by `kill -9`, so a crash never leaves a stale lock behind.

use std::fs::{File, TryLockError};

use kebab_core::lock_file;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often a waiting writer retries.
const RETRY: Duration = Duration::from_millis(100);

/// Failures taking the writer lock.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot open the writer lock {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Ctrl-C while waiting for the other writer.
    #[error("interrupted while waiting for another writer to finish")]
    Interrupted,
    /// A process of another user holds the lock: it would be waited for
    /// without end.
    #[error("the writer lock {path} is held by pid {pid} of another user (uid {uid})")]
    OtherUser { path: PathBuf, pid: u32, uid: u32 },
}

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
}

/// Who holds the lock, as the holder wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: Option<u32>,
    pub what: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pid {
            Some(pid) => write!(f, "{} (pid {pid})", self.what),
            None => write!(f, "another kebab process"),
        }
    }
}

impl WriterLock {
    /// Take the writer lock of `data_dir` for `what` (`"kebab ingest"`…),
    /// waiting while another process holds it: `on_wait` is told once who
    /// holds it. Returns early when `cancel` is raised.
    pub fn acquire(
        data_dir: &Path,
        what: &str,
        cancel: &AtomicBool,
        on_wait: &mut dyn FnMut(&Holder),
    ) -> Result<WriterLock, LockError> {
        let mut told = false;
        let lock = WriterLock::take(data_dir, what, |path, file| {
            if let Some(other) = lock_file::holders(file)
                .into_iter()
                .find(|h| h.is_other_user())
            {
                return Err(LockError::OtherUser {
                    path: path.to_path_buf(),
                    pid: other.pid,
                    uid: other.uid.unwrap_or_default(),
                });
            }
            if !told {
                on_wait(&read_holder(file));
                told = true;
            }
            match cancel.load(Ordering::Relaxed) {
                true => Err(LockError::Interrupted),
                false => Ok(true),
            }
        })?;
        Ok(lock.expect("acquire waits until it holds the lock"))
    }

    /// Take the writer lock of `data_dir` for `what`, waiting at most
    /// `wait` for another holder to let it go; `None` when it did not.
    pub fn acquire_within(
        data_dir: &Path,
        what: &str,
        wait: Duration,
    ) -> Result<Option<WriterLock>, LockError> {
        let deadline = std::time::Instant::now() + wait;
        WriterLock::take(data_dir, what, |_, _| {
            Ok(std::time::Instant::now() < deadline)
        })
    }

    /// Take the lock file of `data_dir`, asking `keep_waiting` (with the
    /// file's path and the open file) each time another holds it whether
    /// to try again after [`RETRY`]; `None` when it says no. The holder's
    /// pid and `what` are written into the file.
    fn take(
        data_dir: &Path,
        what: &str,
        mut keep_waiting: impl FnMut(&Path, &mut File) -> Result<bool, LockError>,
    ) -> Result<Option<WriterLock>, LockError> {
        let path = data_dir.join("writer.lock");
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = lock_file::open(&path).map_err(io)?;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => match keep_waiting(&path, &mut file)? {
                    true => std::thread::sleep(RETRY),
                    false => return Ok(None),
                },
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        lock_file::rewrite(&mut file, &format!("{}\n{what}\n", std::process::id())).map_err(io)?;
        Ok(Some(WriterLock { _file: file }))
    }
}

fn read_holder(file: &mut File) -> Holder {
    let text = lock_file::read(file);
    let mut lines = text.lines();
    Holder {
        pid: lines.next().and_then(|l| l.trim().parse().ok()),
        what: lines.next().unwrap_or("kebab").trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_waits_and_is_told_who_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let never = AtomicBool::new(false);
        let first = WriterLock::acquire(dir.path(), "kebab ingest", &never, &mut |_| {
            panic!("nobody holds it yet")
        })
        .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let data = dir.path().to_path_buf();
        let waiter = std::thread::spawn(move || {
            let never = AtomicBool::new(false);
            let mut seen = None;
            let lock = WriterLock::acquire(&data, "kebab reindex", &never, &mut |h| {
                seen = Some(h.clone());
                tx.send(()).unwrap();
            })
            .unwrap();
            (lock, seen)
        });
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the second writer reports that it waits");
        drop(first);
        let (_lock, seen) = waiter.join().unwrap();
        let holder = seen.unwrap();
        assert_eq!(holder.pid, Some(std::process::id()));
        assert_eq!(holder.what, "kebab ingest");
        assert!(holder.to_string().contains("pid"));
    }

    #[test]
    fn waiting_stops_on_cancel() {
        let dir = tempfile::tempdir().unwrap();
        let never = AtomicBool::new(false);
        let _held = WriterLock::acquire(dir.path(), "a", &never, &mut |_| {}).unwrap();
        let cancel = AtomicBool::new(true);
        let err = WriterLock::acquire(dir.path(), "b", &cancel, &mut |_| {}).unwrap_err();
        assert!(matches!(err, LockError::Interrupted));
    }
}
