//! The kv load's own results, httperf's figures: total time and replies
//! per second (the window's, as the run's), responses per status,
//! sessions completed and their times, and the preload.

use super::{Across, Merge, TextLines};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvResults {
    /// The measured window, in seconds: the run's `duration_s` (before
    /// `serverlab-load/3` files said, from the start, the warm-up
    /// included, until the last session ended).
    pub total_time_s: f64,
    /// Responses counted over the total time: the run's rate.
    pub replies_per_s: f64,
    /// Responses counted in the window per HTTP status (the warm-up's
    /// are not).
    pub statuses: BTreeMap<u16, u64>,
    pub sessions: Sessions,
    /// The keys written before the run (not measured), if asked for.
    pub preload: Option<Preload>,
}

impl KvResults {
    /// A run's results: `requests` answered over `total_time_s` (the
    /// measured window), and what it counted.
    pub fn of(
        total_time_s: f64,
        requests: u64,
        statuses: BTreeMap<u16, u64>,
        sessions: Sessions,
        preload: Option<Preload>,
    ) -> Self {
        KvResults {
            total_time_s,
            replies_per_s: replies_per_s(requests, total_time_s),
            statuses,
            sessions,
            preload,
        }
    }
}

/// `requests` over `total_time_s`; 0 without time.
fn replies_per_s(requests: u64, total_time_s: f64) -> f64 {
    if total_time_s > 0.0 {
        requests as f64 / total_time_s
    } else {
        0.0
    }
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

impl Merge for KvResults {
    /// The total time runs from the first agent's start to the last
    /// one's end (by their windows' starts), and the replies per second
    /// are the merged requests over it.
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        let total_time_s = at.latest(parts, |p| p.total_time_s);
        let sessions: Vec<&Sessions> = parts.iter().map(|p| &p.sessions).collect();
        let preload = at.all_or_none("preload", parts, |p| p.preload.as_ref())?;
        Ok(KvResults {
            total_time_s,
            replies_per_s: replies_per_s(at.requests, total_time_s),
            statuses: at.counts("statuses", parts, |p| &p.statuses)?,
            sessions: Sessions::merge(&sessions, at)?,
            preload: preload.map(|p| Preload::merge(&p, at)).transpose()?,
        })
    }
}

impl Merge for Sessions {
    /// Counts added; session times by the sessions completed: the mean
    /// weighted by them (exact), the least and the greatest (exact), and
    /// the median weighted by them — not exact: the median of all lies
    /// between the least and the greatest agent's median, as this does.
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        let timed =
            |get: fn(&SessionTimes) -> f64| move |s: &Sessions| (get(&s.time_ms), s.completed);
        Ok(Sessions {
            planned: at.count("sessions.planned", parts, |s| s.planned)?,
            completed: at.count("sessions.completed", parts, |s| s.completed)?,
            failed: at.count("sessions.failed", parts, |s| s.failed)?,
            time_ms: SessionTimes {
                mean: at.mean(parts, timed(|t| t.mean)),
                median: at.mean(parts, timed(|t| t.median)),
                min: at.min(parts, |s| (s.completed > 0).then_some(s.time_ms.min)),
                max: at.max(parts, |s| s.time_ms.max),
            },
        })
    }
}

impl Merge for Preload {
    /// Each agent writes its share of the keys, at once: keys added, the
    /// longest time.
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        Ok(Preload {
            keys: at.count("preload.keys", parts, |p| p.keys)?,
            time_s: at.max(parts, |p| p.time_s),
        })
    }
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
        // The window's time and rate are the headline's: said once.
        let mut lines = vec![
            format!("statuses (in the window): {}", statuses.join(" ")),
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

    /// 5xx answers (a 404 is a GET of a key not written: an answer).
    fn error_replies(&self) -> u64 {
        self.statuses.range(500..).map(|(_, n)| n).sum()
    }
}
