//! Verification tallies: how many replies were checked, how many were
//! wrong, and the first few wrong ones described. Each client keeps its
//! own (no shared counter on the path of every reply); the harness merges
//! them once the run is over, and the final checks add to the merged one.

use crate::report::Verification;

/// Mismatches described in full; the rest are only counted.
const EXAMPLES: usize = 10;

#[derive(Debug, Default)]
pub struct Checks {
    pub enabled: bool,
    checked: u64,
    mismatches: u64,
    examples: Vec<String>,
    not_checked: Option<String>,
}

impl Checks {
    pub fn new(enabled: bool) -> Self {
        Checks {
            enabled,
            ..Checks::default()
        }
    }

    pub fn checked(&mut self, n: u64) {
        self.checked += n;
    }

    pub fn mismatch(&mut self, what: String) {
        self.mismatches += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(what);
        }
    }

    /// `n` mismatches of one kind, described once.
    pub fn mismatches(&mut self, n: u64, what: String) {
        self.mismatches += n;
        if n > 0 && self.examples.len() < EXAMPLES {
            self.examples.push(what);
        }
    }

    /// Add another client's tallies (its examples while there is room).
    pub fn merge(&mut self, other: Checks) {
        self.checked += other.checked;
        self.mismatches += other.mismatches;
        let room = EXAMPLES.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
        self.not_checked = self.not_checked.take().or(other.not_checked);
    }

    /// Say what these checks leave out (kv's: order and lost updates),
    /// and what checks it.
    pub fn not_checked(&mut self, what: impl Into<String>) {
        self.not_checked = Some(what.into());
    }

    pub fn totals(&self) -> (u64, u64, &[String]) {
        (self.checked, self.mismatches, &self.examples)
    }

    /// The tallies as the report holds them.
    pub fn into_verification(self) -> Verification {
        Verification {
            enabled: self.enabled,
            checked: self.checked,
            mismatches: self.mismatches,
            examples: self.examples,
            not_checked: self.not_checked.filter(|_| self.enabled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_counts_and_the_first_examples() {
        let mut a = Checks::new(true);
        a.checked(3);
        for i in 0..8 {
            a.mismatch(format!("a{i}"));
        }
        let mut b = Checks::new(true);
        b.checked(2);
        for i in 0..12 {
            b.mismatch(format!("b{i}"));
        }
        a.merge(b);
        let (checked, mismatches, examples) = a.totals();
        assert_eq!((checked, mismatches), (5, 20));
        assert_eq!(examples.len(), EXAMPLES);
        assert_eq!((&examples[7][..], &examples[9][..]), ("a7", "b1"));
    }
}
