//! The process-wide Ctrl-C flag.
//!
//! One handler of SIGINT, SIGTERM and SIGHUP sets one flag (and notes which
//! signal it was); everything long-running polls it: the
//! ingest loop between files, plugin calls while the guest runs or sleeps
//! (see [`crate::plugin::runtime`]), the ingest lock while it waits, and the
//! answer stream. A command that stopped because of it exits with
//! [`EXIT_INTERRUPTED`].

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// The last signal that raised [`REQUESTED`].
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static HANDLER: Once = Once::new();

/// The signal handler: only stores (async-signal-safe).
extern "C" fn on_signal(signal: libc::c_int) {
    SIGNAL.store(signal, Ordering::SeqCst);
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Install the handler of SIGINT, SIGTERM and SIGHUP (idempotent). Until it
/// is installed they end the process as usual. Interrupted system calls
/// are restarted (`SA_RESTART`): the flag is polled, never delivered as an
/// error.
pub fn install_handler() {
    HANDLER.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: a zeroed sigaction is a valid "no flags, empty mask"
            // value; the handler only stores to atomics.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    });
}

/// Whether the stop was asked for by SIGTERM (a service manager stopping
/// a service), rather than by Ctrl-C or a closed terminal.
pub fn by_terminate() -> bool {
    SIGNAL.load(Ordering::Relaxed) == libc::SIGTERM
}

/// Whether Ctrl-C was pressed.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The flag itself, for loops that take an `&AtomicBool`.
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}
