//! One agent of several: a load split across N processes (on one machine
//! or many) that together make the load one process would. Agent `index`
//! of `count` runs every `count`-th client of the whole run (client g is
//! agent g mod N's), so each kind of client (posters, readers) splits as
//! evenly as it can; an open loop's clients keep their places in the
//! whole run's schedule, so the agents' constant schedules interleave
//! into one at the total rate; a count of requests splits likewise. What
//! a protocol names (topics, keys) is numbered the same way: an agent's
//! local item `i` is the whole run's `i × N + index`, so no two agents
//! share one and each can verify what it owns.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which share of a split load this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    /// From 0.
    pub index: usize,
    pub count: usize,
}

impl Default for Agent {
    fn default() -> Self {
        Agent::SOLO
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// An agent with nothing to do: its share of something is zero.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("agent {agent} has no {what}: {total} {what} can feed at most {total} agents")]
pub struct Unfed {
    pub agent: Agent,
    pub what: String,
    pub total: usize,
}

impl Agent {
    /// The whole load, in one process.
    pub const SOLO: Agent = Agent { index: 0, count: 1 };

    /// Agent `index` of `count`: None unless `index < count`.
    pub fn new(index: usize, count: usize) -> Option<Agent> {
        (index < count).then_some(Agent { index, count })
    }

    pub fn is_solo(&self) -> bool {
        self.count <= 1
    }

    /// This agent's share of `total` items numbered 0..total: those whose
    /// number is `index` modulo `count`.
    pub fn share(&self, total: usize) -> usize {
        let n = self.count.max(1);
        total / n + usize::from(self.index < total % n)
    }

    /// The share of a `u64` count (requests).
    pub fn share_u64(&self, total: u64) -> u64 {
        let n = self.count.max(1) as u64;
        total / n + u64::from((self.index as u64) < total % n)
    }

    /// The whole run's number of this agent's local item `local`.
    pub fn global(&self, local: usize) -> usize {
        local * self.count.max(1) + self.index
    }

    /// Whether the whole run's item `global` is this agent's.
    pub fn owns(&self, global: usize) -> bool {
        global % self.count.max(1) == self.index
    }

    /// This agent's items of the whole run's `items`, each with its
    /// number in the whole run.
    pub fn part<T>(&self, items: Vec<T>) -> Vec<(usize, T)> {
        items
            .into_iter()
            .enumerate()
            .filter(|(g, _)| self.owns(*g))
            .collect()
    }

    /// An error unless this agent's share of `total` `what` is at least one.
    pub fn fed(&self, what: &str, total: usize) -> Result<(), Unfed> {
        if self.share(total) > 0 {
            return Ok(());
        }
        Err(Unfed {
            agent: *self,
            what: what.into(),
            total,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_and_differ_by_at_most_one() {
        for count in 1..9 {
            for total in 0..40 {
                let shares: Vec<usize> = (0..count)
                    .map(|i| Agent::new(i, count).unwrap().share(total))
                    .collect();
                assert_eq!(shares.iter().sum::<usize>(), total);
                let (min, max) = (shares.iter().min(), shares.iter().max());
                assert!(max.unwrap() - min.unwrap() <= 1, "{shares:?}");
            }
        }
    }

    #[test]
    fn parts_are_disjoint_and_cover_the_whole() {
        let mut seen = [0; 10];
        for i in 0..3 {
            let a = Agent::new(i, 3).unwrap();
            let part = a.part((0..10).collect::<Vec<usize>>());
            assert_eq!(part.len(), a.share(10));
            for (local, (g, item)) in part.into_iter().enumerate() {
                assert_eq!((g, a.global(local)), (item, item));
                seen[g] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
        assert!(Agent::new(3, 3).is_none());
        let e = Agent::new(4, 5).unwrap().fed("connections", 4).unwrap_err();
        assert!(e.to_string().contains("can feed at most 4 agents"), "{e}");
    }
}
