//! A model server's response body, read on a thread of its own and handed
//! over in pieces through a bounded channel, so that every wait for the
//! server ends at a wall-clock deadline (and answers Ctrl-C within
//! [`POLL`]) whatever the server does: stall, drip a byte at a time, or
//! stream forever. At most a few pieces are ever held.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::{Duration, Instant};

/// Bytes read from the socket at a time.
const PIECE: usize = 16 * 1024;
/// How often a wait looks at the cancel flag.
const POLL: Duration = Duration::from_millis(100);

/// A body being read.
pub(super) struct Body {
    pieces: Receiver<std::io::Result<Vec<u8>>>,
    deadline: Instant,
}

/// Why a body gave no more bytes.
#[derive(Debug)]
pub(super) enum Stop {
    /// The deadline passed.
    Deadline,
    /// The cancel flag was set.
    Cancelled,
    /// Reading failed.
    Failed(std::io::Error),
}

impl Body {
    /// Start reading `body`; every wait for it ends by `deadline`. The
    /// reading thread ends at the body's end or error, or at its next piece
    /// once this `Body` is dropped (a read in progress is bounded by the
    /// client's own read timeout), closing the connection.
    pub(super) fn new(mut body: impl Read + Send + 'static, deadline: Instant) -> Body {
        let (tx, pieces) = sync_channel(2);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; PIECE];
            loop {
                let piece = body.read(&mut buf).map(|n| buf[..n].to_vec());
                let last = !matches!(&piece, Ok(p) if !p.is_empty());
                if tx.send(piece).is_err() || last {
                    return;
                }
            }
        });
        Body { pieces, deadline }
    }

    /// The next bytes of the body; empty at its end.
    pub(super) fn next(&self, cancel: &AtomicBool) -> Result<Vec<u8>, Stop> {
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(Stop::Cancelled);
            }
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Stop::Deadline);
            }
            match self.pieces.recv_timeout(left.min(POLL)) {
                Ok(piece) => return piece.map_err(Stop::Failed),
                Err(RecvTimeoutError::Timeout) => {}
                // The reader sent its last piece and ended.
                Err(RecvTimeoutError::Disconnected) => return Ok(Vec::new()),
            }
        }
    }

    /// The body's first `cap` bytes (what lies beyond is never read).
    pub(super) fn read_up_to(&self, cap: usize, cancel: &AtomicBool) -> Result<Vec<u8>, Stop> {
        let mut out = Vec::new();
        while out.len() < cap {
            let piece = self.next(cancel)?;
            if piece.is_empty() {
                break;
            }
            out.extend_from_slice(&piece);
        }
        out.truncate(cap);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body that yields one byte per `every`, forever.
    struct Drip(Duration);

    impl Read for Drip {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(self.0);
            buf[0] = b'x';
            Ok(1)
        }
    }

    #[test]
    fn a_dripping_body_stops_at_the_deadline() {
        let started = Instant::now();
        let body = Body::new(
            Drip(Duration::from_millis(5)),
            started + Duration::from_millis(300),
        );
        let cancel = AtomicBool::new(false);
        let err = body.read_up_to(usize::MAX, &cancel).unwrap_err();
        assert!(matches!(err, Stop::Deadline), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
        cancel.store(true, Ordering::Relaxed);
        assert!(matches!(body.next(&cancel), Err(Stop::Cancelled)));
    }

    #[test]
    fn read_up_to_keeps_the_first_bytes() {
        let deadline = Instant::now() + Duration::from_secs(5);
        let cancel = AtomicBool::new(false);
        let body = Body::new(std::io::Cursor::new(vec![7u8; 100_000]), deadline);
        assert_eq!(body.read_up_to(10, &cancel).unwrap(), vec![7u8; 10]);
        let body = Body::new(std::io::Cursor::new(b"short".to_vec()), deadline);
        assert_eq!(body.read_up_to(100, &cancel).unwrap(), b"short");
    }
}
