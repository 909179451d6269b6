//! Verification tallies shared by a run's workers: how many replies were
//! checked, how many were wrong, and the first few wrong ones described.

use crate::report::Verification;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Mismatches described in full; the rest are only counted.
const EXAMPLES: usize = 10;

pub struct Checks {
    pub enabled: bool,
    // Relaxed counters: tallies read once after every worker has been
    // joined (the join orders them), ordered with nothing else meanwhile.
    checked: AtomicU64,
    mismatches: AtomicU64,
    examples: Mutex<Vec<String>>,
}

impl Checks {
    pub fn new(enabled: bool) -> Self {
        Checks {
            enabled,
            checked: AtomicU64::new(0),
            mismatches: AtomicU64::new(0),
            examples: Mutex::default(),
        }
    }

    pub fn checked(&self, n: u64) {
        self.checked.fetch_add(n, Ordering::Relaxed);
    }

    pub fn mismatch(&self, what: String) {
        self.mismatches.fetch_add(1, Ordering::Relaxed);
        let mut ex = self.examples.lock();
        if ex.len() < EXAMPLES {
            ex.push(what);
        }
    }

    pub fn totals(&self) -> (u64, u64, Vec<String>) {
        (
            self.checked.load(Ordering::Relaxed),
            self.mismatches.load(Ordering::Relaxed),
            self.examples.lock().clone(),
        )
    }

    /// The tallies as the report holds them.
    pub fn into_verification(self) -> Verification {
        let (checked, mismatches, examples) = self.totals();
        Verification {
            enabled: self.enabled,
            checked,
            mismatches,
            examples,
        }
    }
}
