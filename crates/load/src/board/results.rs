//! The board load's own results: how often a READ found a message, and
//! how many POSTs were acknowledged.

use crate::report::TextLines;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardResults {
    pub reads: Reads,
    pub posts_acknowledged: u64,
}

/// READ replies that held a message (hits) or were empty (misses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reads {
    pub hits: u64,
    pub misses: u64,
    /// hits / (hits + misses); 0 without reads.
    pub hit_share: f64,
}

impl Reads {
    pub fn of(hits: u64, misses: u64) -> Self {
        let reads = hits + misses;
        Reads {
            hits,
            misses,
            hit_share: if reads > 0 {
                hits as f64 / reads as f64
            } else {
                0.0
            },
        }
    }
}

impl TextLines for BoardResults {
    fn text_lines(&self) -> Vec<String> {
        let r = &self.reads;
        if r.hits + r.misses == 0 {
            return Vec::new();
        }
        vec![format!(
            "reads: {:.1}% found a message ({} hits, {} misses)",
            r.hit_share * 100.0,
            r.hits,
            r.misses
        )]
    }
}
