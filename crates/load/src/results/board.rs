//! The board load's own results: how often a READ found a message, and
//! how many POSTs were acknowledged.

use super::{Across, Merge, TextLines};
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
        // Wide: two counts that each fit may not fit added.
        let reads = hits as u128 + misses as u128;
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

impl Merge for BoardResults {
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        let reads: Vec<&Reads> = parts.iter().map(|p| &p.reads).collect();
        Ok(BoardResults {
            reads: Reads::merge(&reads, at)?,
            posts_acknowledged: at.count("posts_acknowledged", parts, |p| p.posts_acknowledged)?,
        })
    }
}

impl Merge for Reads {
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        let hits = at.count("reads.hits", parts, |r| r.hits)?;
        let misses = at.count("reads.misses", parts, |r| r.misses)?;
        Ok(Reads {
            hits,
            misses,
            // Derived: from the counts added, as a single run's.
            hit_share: Reads::of(hits, misses).hit_share,
        })
    }
}

impl TextLines for BoardResults {
    /// None: a board reply that is not the one expected is an error of
    /// the run (counted among its failures), not a reply that failed.
    fn error_replies(&self) -> u64 {
        0
    }

    fn text_lines(&self) -> Vec<String> {
        let r = &self.reads;
        let reads = r.hits as u128 + r.misses as u128;
        if reads == 0 {
            return Vec::new();
        }
        vec![format!(
            "reads: {} found a message ({} hits, {} misses)",
            percent(r.hits as u128, reads),
            r.hits,
            r.misses
        )]
    }
}

/// `part` of `whole` to a tenth of a percent, never rounded to 100% while
/// something is missing, nor to 0% while something is there.
fn percent(part: u128, whole: u128) -> String {
    let p = part as f64 * 100.0 / whole as f64;
    match format!("{p:.1}") {
        s if s == "100.0" && part < whole => ">99.9%".into(),
        s if s == "0.0" && part > 0 => "<0.1%".into(),
        s => format!("{s}%"),
    }
}

#[cfg(test)]
mod tests {
    use super::percent;

    #[test]
    fn percentages_never_round_to_all_or_nothing() {
        assert_eq!(percent(85824, 85845), ">99.9%");
        assert_eq!(percent(21, 85845), "<0.1%");
        assert_eq!(percent(5, 5), "100.0%");
        assert_eq!(percent(0, 5), "0.0%");
        assert_eq!(percent(1, 3), "33.3%");
    }
}
