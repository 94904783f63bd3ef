//! One server per data directory: `kebab serve` holds an exclusive
//! advisory lock (`flock`) on `<data_dir>/serve.lock` for its whole life,
//! with its pid and, once it listens, its URL written in the file. A second
//! server is told which pid holds it; `kebab mcp` finds the running server
//! there to forward to ([`running`]). The OS drops the lock when the holder
//! exits, even by `kill -9`, so a stale file never counts: only a held
//! lock does.
//!
//! The file also holds a secret drawn afresh by each server: only this
//! user can read the file (mode 0600 in a 0700 data directory), and a
//! client forwards to the URL it names only once the server there proves it
//! knows the secret ([`super::proof`]), so a process of another user that
//! got hold of the lock or the port is never sent a query or a token. A lock
//! held by another user's process is said to be one.

use std::fs::{File, TryLockError};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kebab_core::lock_file;

use super::ServeError;

/// The lock file's name in the data directory.
pub const FILE_NAME: &str = "serve.lock";

/// How long a starting server retries a lock held by someone else: a
/// `kebab mcp` looking for a server holds it (shared) for an instant.
const CONTENDED: Duration = Duration::from_secs(1);

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct ServerLock {
    file: File,
    path: PathBuf,
    secret: String,
}

/// A server running on a data directory, as its lock file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    pub pid: u32,
    /// Its base URL (`http://127.0.0.1:7474`), once it listens.
    pub url: Option<String>,
    /// The secret it proves it knows before a client forwards to it.
    pub secret: Option<String>,
}

impl ServerLock {
    /// Take the lock of `data_dir` (created when missing), or say which
    /// server holds it.
    pub fn acquire(data_dir: &Path) -> Result<ServerLock, ServeError> {
        let path = data_dir.join(FILE_NAME);
        let io = |source| ServeError::Lock {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(data_dir).map_err(io)?;
        let mut file = lock_file::open(&path).map_err(io)?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if started.elapsed() < CONTENDED => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(TryLockError::WouldBlock) => {
                    if let Some(other) = foreign_holder(&file) {
                        return Err(ServeError::LockedByOtherUser {
                            path,
                            pid: other.pid,
                            uid: other.uid.unwrap_or_default(),
                        });
                    }
                    let held = read(&mut file);
                    return Err(ServeError::AlreadyServing {
                        pid: held.as_ref().map_or(0, |r| r.pid),
                        at: held.and_then(|r| r.url),
                        data_dir: data_dir.to_path_buf(),
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        let secret = super::new_secret().map_err(io)?;
        let mut lock = ServerLock { file, path, secret };
        lock.write(None)?;
        Ok(lock)
    }

    /// The secret this server proves it knows.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// Record the URL the server listens at, for clients to find.
    pub fn announce(&mut self, url: &str) -> Result<(), ServeError> {
        self.write(Some(url))
    }

    fn write(&mut self, url: Option<&str>) -> Result<(), ServeError> {
        let io = |source| ServeError::Lock {
            path: self.path.clone(),
            source,
        };
        let text = format!(
            "{}\n{}\n{}\n",
            std::process::id(),
            url.unwrap_or(""),
            self.secret
        );
        lock_file::rewrite(&mut self.file, &text).map_err(io)
    }
}

impl Drop for ServerLock {
    fn drop(&mut self) {
        // Nobody listens there any more; the lock itself goes with the file
        // handle.
        let _ = self.file.set_len(0);
    }
}

/// The server holding `data_dir`'s lock, if one runs; an error saying why
/// the lock is not to be trusted when another user owns the file or holds
/// the lock.
pub fn running(data_dir: &Path) -> Result<Option<Running>, String> {
    let path = data_dir.join(FILE_NAME);
    let Ok(mut file) = File::open(&path) else {
        return Ok(None);
    };
    if let Ok(meta) = file.metadata()
        && meta.uid() != lock_file::current_uid()
    {
        return Err(format!(
            "{} belongs to another user (uid {})",
            path.display(),
            meta.uid()
        ));
    }
    match file.try_lock_shared() {
        // Nobody holds it: whatever the file says is history.
        Ok(()) => Ok(None),
        Err(TryLockError::WouldBlock) => match foreign_holder(&file) {
            Some(other) => Err(format!(
                "{} is held by pid {} of another user (uid {})",
                path.display(),
                other.pid,
                other.uid.unwrap_or_default()
            )),
            None => Ok(read(&mut file)),
        },
        Err(TryLockError::Error(_)) => Ok(None),
    }
}

/// A process of another user holding the lock on `file`.
fn foreign_holder(file: &File) -> Option<lock_file::LockHolder> {
    lock_file::holders(file)
        .into_iter()
        .find(|h| h.is_other_user())
}

/// The pid and URL written in the lock file.
fn read(file: &mut File) -> Option<Running> {
    let text = lock_file::read(file);
    let mut lines = text.lines();
    let pid = lines.next()?.trim().parse().ok()?;
    let url = lines
        .next()
        .map(str::trim)
        .filter(|u| u.starts_with("http://"))
        .map(String::from);
    let secret = lines
        .next()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from);
    Some(Running { pid, url, secret })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_server_per_data_dir_and_clients_find_it() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(running(dir.path()), Ok(None));
        let mut lock = ServerLock::acquire(dir.path()).unwrap();
        let me = std::process::id();
        let secret = Some(lock.secret().to_string());
        assert_eq!(lock.secret().len(), 64);
        assert_eq!(
            running(dir.path()),
            Ok(Some(Running {
                pid: me,
                url: None,
                secret: secret.clone()
            }))
        );
        lock.announce("http://127.0.0.1:7474").unwrap();
        let found = running(dir.path()).unwrap().unwrap();
        assert_eq!(found.url.as_deref(), Some("http://127.0.0.1:7474"));
        assert_eq!(found.secret, secret, "announcing keeps the secret");
        match ServerLock::acquire(dir.path()) {
            Err(ServeError::AlreadyServing { pid, at, .. }) => {
                assert_eq!(pid, me);
                assert_eq!(at.as_deref(), Some("http://127.0.0.1:7474"));
            }
            other => panic!("a second server started: {other:?}"),
        }
        drop(lock);
        // The file stays, but nobody holds it: no server runs.
        assert!(dir.path().join(FILE_NAME).exists());
        assert_eq!(running(dir.path()), Ok(None));
        ServerLock::acquire(dir.path()).expect("free again");
    }
}
