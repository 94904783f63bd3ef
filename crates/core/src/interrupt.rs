//! The process-wide Ctrl-C flag.
//!
//! One handler of SIGINT, SIGTERM and SIGHUP sets one flag; everything long-running polls it: the
//! ingest loop between files, plugin calls while the guest runs or sleeps
//! (see [`crate::plugin::runtime`]), the ingest lock while it waits, and the
//! answer stream. A command that stopped because of it exits with
//! [`EXIT_INTERRUPTED`].

use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static HANDLER: Once = Once::new();

/// Install the handler of SIGINT, SIGTERM and SIGHUP (idempotent). Until it
/// is installed they end the process as usual.
pub fn install_handler() {
    HANDLER.call_once(|| {
        // A second handler cannot be installed in this process: nothing to do.
        let _ = ctrlc::set_handler(|| REQUESTED.store(true, Ordering::SeqCst));
    });
}

/// Whether Ctrl-C was pressed.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The flag itself, for loops that take an `&AtomicBool`.
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}
