//! `[watch]`: the watcher's own section of kebab's config — how changes
//! are batched and when a root is rescanned instead of watched — with its
//! defaults and bounds. A leaf: the app's config composes it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `[watch]`: how `kebab watch` batches changes and when it falls back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct WatchSettings {
    /// A root's changes are applied once it has had none for this long,
    /// in milliseconds.
    pub quiet_ms: u64,
    /// … or at the latest this long after the first of them.
    pub max_delay_ms: u64,
    /// Seconds between rescans of a root that cannot be watched (watch
    /// limit reached, queue overflowed) or has disappeared.
    pub rescan_secs: u64,
    /// Most directories watched in one root; a root with more is rescanned
    /// instead, as when the OS watch limit is reached.
    pub max_dirs: usize,
    /// The watcher's CPU priority as a Unix niceness (0 = normal, 19 =
    /// lowest): the threads that parse and embed a batch run at it, so a
    /// branch switch being indexed leaves the machine responsive. It never
    /// raises a priority the process already has lower.
    pub nice: i32,
}

impl Default for WatchSettings {
    fn default() -> Self {
        WatchSettings {
            quiet_ms: 300,
            max_delay_ms: 2_000,
            rescan_secs: 60,
            max_dirs: 100_000,
            nice: 10,
        }
    }
}

/// The lowest CPU priority (`[watch] nice`) a watcher takes.
pub const MAX_NICE: i32 = 19;

impl WatchSettings {
    pub(super) fn quiet(&self) -> Duration {
        Duration::from_millis(self.quiet_ms)
    }

    pub(super) fn max_delay(&self) -> Duration {
        Duration::from_millis(self.max_delay_ms)
    }

    pub(super) fn rescan(&self) -> Duration {
        Duration::from_secs(self.rescan_secs.max(1))
    }

    /// The timings within their bounds (a day at most) and the niceness
    /// one, the first one over naming `[watch]`, its key and bound.
    pub fn check(&self) -> Result<(), String> {
        use kebab_core::bounds::{MAX_TIMEOUT_SECS, at_most};
        at_most("quiet_ms", self.quiet_ms, MAX_TIMEOUT_SECS * 1000)
            .and_then(|()| at_most("max_delay_ms", self.max_delay_ms, MAX_TIMEOUT_SECS * 1000))
            .and_then(|()| at_most("rescan_secs", self.rescan_secs, MAX_TIMEOUT_SECS))
            .map_err(|e| e.to_string())
            .and_then(|()| match self.nice {
                0..=MAX_NICE => Ok(()),
                n => Err(format!("nice = {n} is not a niceness from 0 to {MAX_NICE}")),
            })
            .map_err(|e| format!("[watch] {e}"))
    }
}
