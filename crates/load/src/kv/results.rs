//! The kv load's own results, httperf's figures: total time and replies
//! per second, responses per status, sessions completed and their times,
//! and the preload.

use crate::report::TextLines;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvResults {
    /// From the start until the last session ended, in seconds.
    pub total_time_s: f64,
    /// Responses over the total time.
    pub replies_per_s: f64,
    /// Responses per HTTP status.
    pub statuses: BTreeMap<u16, u64>,
    pub sessions: Sessions,
    /// The keys written before the run (not measured), if asked for.
    pub preload: Option<Preload>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sessions {
    /// The sessions asked for; 0 in a timed run (`--duration`, a search's
    /// or scan's steps), which runs sessions until its window closes.
    pub planned: u64,
    pub completed: u64,
    pub failed: u64,
    pub time_ms: SessionTimes,
}

impl Sessions {
    /// "16 of 16 completed", or in a timed run "230 completed in the
    /// window".
    fn counted(&self) -> String {
        match self.planned {
            0 => format!("{} completed in the window", self.completed),
            n => format!("{} of {n} completed", self.completed),
        }
    }
}

/// How long completed sessions took, connection to last response, in ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionTimes {
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl SessionTimes {
    /// From session times in nanoseconds; all 0 when none completed.
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return SessionTimes::default();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        SessionTimes {
            mean: h.mean() / 1e6,
            median: ms(h.value_at_quantile(0.5)),
            min: ms(h.min()),
            max: ms(h.max()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preload {
    pub keys: u64,
    pub time_s: f64,
}

impl TextLines for KvResults {
    fn text_lines(&self) -> Vec<String> {
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(s, n)| format!("{s}={n}"))
            .collect();
        let s = &self.sessions;
        let t = &s.time_ms;
        let mut lines = vec![
            format!(
                "total time {:.3} s, {:.1} replies/s",
                self.total_time_s, self.replies_per_s
            ),
            format!("statuses: {}", statuses.join(" ")),
            format!(
                "sessions: {}, {} failed; session time ms: mean {:.2}, median {:.2}, min {:.2}, max {:.2}",
                s.counted(),
                s.failed,
                t.mean,
                t.median,
                t.min,
                t.max
            ),
        ];
        if let Some(p) = &self.preload {
            lines.push(format!(
                "preload: {} written in {:.3} s before the run (not measured)",
                serverlab_util::plural(p.keys, "key", "keys"),
                p.time_s
            ));
        }
        lines
    }
}
