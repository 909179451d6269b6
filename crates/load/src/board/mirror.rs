//! What the posters have been told, shared with the readers: for each topic,
//! which message each acknowledged id holds. Readers draw ids from it (so
//! they read messages that exist) and check replies against it.
//!
//! Ids are recorded relative to the topic's count before the run (`base`),
//! so the check holds against a server that already had data.

use parking_lot::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Mirror {
    topics: Vec<TopicMirror>,
}

struct TopicMirror {
    base: u64,
    /// Index `id - base` holds the message code + 1; 0 until acknowledged.
    acked: RwLock<Vec<u64>>,
    /// One past the highest acknowledged id (`Release` after the entry is
    /// written, `Acquire` by checkers): a COUNT sent later must reach it.
    high: AtomicU64,
}

/// A problem found when recording an acknowledgement.
#[derive(Debug, PartialEq, Eq)]
pub enum AckError {
    Repeat { id: u64 },
    BelowBase { id: u64, base: u64 },
}

impl Mirror {
    pub fn new(bases: Vec<u64>) -> Self {
        Mirror {
            topics: bases
                .into_iter()
                .map(|base| TopicMirror {
                    base,
                    acked: RwLock::new(Vec::new()),
                    high: AtomicU64::new(base),
                })
                .collect(),
        }
    }

    pub fn base(&self, topic: usize) -> u64 {
        self.topics[topic].base
    }

    /// POST to `topic` was answered with `id` for message `code`.
    pub fn ack(&self, topic: usize, id: u64, code: u64) -> Result<(), AckError> {
        let t = &self.topics[topic];
        let base = t.base;
        let i = id
            .checked_sub(base)
            .ok_or(AckError::BelowBase { id, base })? as usize;
        {
            let mut acked = t.acked.write();
            if acked.len() <= i {
                acked.resize(i + 1, 0);
            }
            if acked[i] != 0 {
                return Err(AckError::Repeat { id });
            }
            acked[i] = code + 1;
        }
        t.high.fetch_max(id + 1, Ordering::AcqRel);
        Ok(())
    }

    /// One past the highest id acknowledged so far in `topic`.
    pub fn high(&self, topic: usize) -> u64 {
        self.topics[topic].high.load(Ordering::Acquire)
    }

    /// Whether any POST to `topic` has been acknowledged.
    pub fn has_acks(&self, topic: usize) -> bool {
        self.high(topic) > self.topics[topic].base
    }

    /// A random acknowledged id of `topic` and its message code, if any.
    pub fn pick(&self, topic: usize, rng: &mut fastrand::Rng) -> Option<(u64, u64)> {
        let t = &self.topics[topic];
        let acked = t.acked.read();
        if acked.is_empty() {
            return None;
        }
        // A few tries past ids whose acknowledgement is still in flight.
        for _ in 0..4 {
            let i = rng.usize(0..acked.len());
            if acked[i] != 0 {
                return Some((t.base + i as u64, acked[i] - 1));
            }
        }
        None
    }

    /// Ids below the highest acknowledged one that were never
    /// acknowledged: gaps, once every POST has been answered.
    pub fn gaps(&self, topic: usize) -> Vec<u64> {
        let t = &self.topics[topic];
        let acked = t.acked.read();
        acked
            .iter()
            .enumerate()
            .filter(|(_, &c)| c == 0)
            .map(|(i, _)| t.base + i as u64)
            .collect()
    }

    /// How many POSTs to `topic` were acknowledged.
    pub fn acked(&self, topic: usize) -> u64 {
        self.topics[topic]
            .acked
            .read()
            .iter()
            .filter(|&&c| c != 0)
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_repeats_gaps() {
        let m = Mirror::new(vec![0, 5]);
        assert_eq!(m.ack(0, 1, 10), Ok(()));
        assert_eq!(m.gaps(0), vec![0]);
        assert_eq!(m.ack(0, 0, 11), Ok(()));
        assert_eq!(m.gaps(0), Vec::<u64>::new());
        assert_eq!(m.ack(0, 1, 12), Err(AckError::Repeat { id: 1 }));
        assert_eq!(m.high(0), 2);
        assert_eq!(m.ack(1, 4, 1), Err(AckError::BelowBase { id: 4, base: 5 }));
        assert_eq!(m.ack(1, 5, 1), Ok(()));
        assert_eq!(m.pick(1, &mut fastrand::Rng::with_seed(1)), Some((5, 1)));
        assert!(!m.has_acks(0) || m.acked(0) == 2);
    }
}
