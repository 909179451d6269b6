//! Polling for replies before sleeping, and the account of the time it
//! takes in vain.
//!
//! A sleeping CPU (above all a virtual one, which the hypervisor parks)
//! can take milliseconds to wake: a client that sleeps between replies
//! measures its own wake-ups, not the server. So while replies are due
//! the loop polls without sleeping, for up to [`SPIN`] after the last
//! event. Time spent polling in vain is reported apart from real work.

use std::time::{Duration, Instant};

/// How long to busy-poll for replies before sleeping in the kernel.
pub(super) const SPIN: Duration = Duration::from_millis(1);

/// One loop's polling: since when it has been quiet, and the time it has
/// spent polling in vain.
#[derive(Debug, Default)]
pub(super) struct Spin {
    quiet_since: Option<Instant>,
    spun: Duration,
}

impl Spin {
    /// Whether to poll without sleeping at `now`: replies are due and the
    /// loop has not been quiet for [`SPIN`].
    pub(super) fn polling(&self, replies_due: bool, now: Instant) -> bool {
        replies_due && self.quiet_since.is_none_or(|t| now - t < SPIN)
    }

    /// A poll from `before` to `now` returned nothing; `polling`: it did
    /// not sleep.
    pub(super) fn empty(&mut self, polling: bool, before: Instant, now: Instant) {
        if polling {
            self.spun += now - before;
            self.quiet_since.get_or_insert(before);
        }
    }

    /// A poll returned events: the loop is no longer quiet.
    pub(super) fn events(&mut self) {
        self.quiet_since = None;
    }

    /// The time spent polling in vain.
    pub(super) fn spun(&self) -> Duration {
        self.spun
    }
}
