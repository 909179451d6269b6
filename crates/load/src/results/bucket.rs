//! The bucket load's own results: the delays it asked for, the
//! connections it opened, and the theoretical bound it is judged by.
//!
//! The bound: a request holds whatever runs it for its whole delay, so at
//! most `concurrency / mean delay` requests finish per second, where the
//! concurrency is the least of:
//! - the client's connections (each has one request in flight);
//! - for `spin` and `sleep`, the requests the server runs at once (a
//!   pool's threads; unbounded for thread-per-request, async, …). Spinning
//!   ends on the wall clock, so it does not depend on cores;
//! - for `work`, also the server's cores: CPU work cannot overlap beyond them.
//!
//! The client cannot see the server's concurrency or cores; they come from
//! flags, and the bound says what it assumed when they are absent. The
//! bound is derived: a merge computes it again, with [`Bound::compute`],
//! from the merged delays and throughput and the agents' shared settings.

use super::{Across, Merge, TextLines};
use serde::{Deserialize, Serialize};
use serverlab_proto::bucket::{DelayMode, DelayUnit};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketResults {
    /// The unit delays count in (`s`, `ms`, `us`).
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_unit: DelayUnit,
    /// The server's delay mode the bound assumes.
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_mode: DelayMode,
    /// Mean delay of the counted requests, in units.
    pub mean_delay_units: f64,
    /// Delay units of the counted requests.
    pub delay_units: u64,
    /// Every TCP connection the run opened, keep-alive ones included.
    pub connections_opened: u64,
    pub bound: Bound,
}

/// The settings of a bucket load the bound is computed from: fields of
/// its `config`, by the same names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundConfig {
    /// Concurrent clients over the whole load (every agent's `config` has
    /// the whole load's).
    pub connections: u64,
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_unit: DelayUnit,
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_mode: DelayMode,
    /// Requests the server runs at once, if known.
    #[serde(default)]
    pub server_concurrency: Option<u64>,
    /// Cores the server runs on, if known (work mode).
    #[serde(default)]
    pub server_cores: Option<u64>,
}

/// What a bucket run counted: the figures its results are made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counted {
    /// Requests answered in the window, reads included.
    pub requests: u64,
    /// Their delays, in units.
    pub delay_units: u64,
    /// TCP connections opened.
    pub connections_opened: u64,
    /// Requests per second over the window.
    pub throughput_rps: f64,
}

impl BucketResults {
    /// A run's results: what it `counted` under `cfg`, with the bound
    /// assuming `cores_here` are the server's cores where `cfg` does not
    /// say.
    pub fn of(cfg: &BoundConfig, counted: Counted, cores_here: usize) -> Self {
        let mean_delay_units = mean_units(counted.delay_units, counted.requests);
        BucketResults {
            delay_unit: cfg.delay_unit,
            delay_mode: cfg.delay_mode,
            mean_delay_units,
            delay_units: counted.delay_units,
            connections_opened: counted.connections_opened,
            bound: Bound::compute(cfg, mean_delay_units, counted.throughput_rps, cores_here),
        }
    }
}

/// The mean delay of `requests` that asked for `units` in all; 0 without
/// requests.
pub fn mean_units(units: u64, requests: u64) -> f64 {
    if requests > 0 {
        units as f64 / requests as f64
    } else {
        0.0
    }
}

impl Merge for BucketResults {
    /// Settings the same in every agent, counts added, and the mean delay
    /// and the bound computed again: from the delays over the merged
    /// requests, the agents' shared settings, the merged throughput, and
    /// the most cores online on any agent's machine (which the bound
    /// assumes the server's only in work mode without `--server-cores`).
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        let cfg: BoundConfig = at.config("the bucket bound's settings")?;
        let delay_unit = at.same("delay_unit", parts, |p| p.delay_unit)?;
        let delay_mode = at.same("delay_mode", parts, |p| p.delay_mode)?;
        if (delay_unit, delay_mode) != (cfg.delay_unit, cfg.delay_mode) {
            return Err(format!(
                "the results' delay unit and mode ({delay_unit}, {delay_mode}) are not their \
                 config's ({}, {})",
                cfg.delay_unit, cfg.delay_mode
            ));
        }
        let delay_units = at.count("delay_units", parts, |p| p.delay_units)?;
        let mean_delay_units = mean_units(delay_units, at.requests);
        Ok(BucketResults {
            delay_unit,
            delay_mode,
            mean_delay_units,
            delay_units,
            connections_opened: at.count("connections_opened", parts, |p| p.connections_opened)?,
            bound: Bound::compute(&cfg, mean_delay_units, at.throughput_rps, at.most_cores()),
        })
    }
}

impl TextLines for BucketResults {
    /// None: a bucket `ERR` is an error of the run (counted among its
    /// failures), not a reply that failed.
    fn error_replies(&self) -> u64 {
        0
    }

    /// The bound and what it assumed, and the connections opened.
    fn text_lines(&self) -> Vec<String> {
        let unit = self.delay_unit;
        let mut lines = self.bound.lines(unit.to_string().as_str(), unit.seconds());
        if self.connections_opened > 0 {
            lines.push(format!(
                "TCP connections opened: {}",
                self.connections_opened
            ));
        }
        lines
    }
}

/// The theoretical throughput bound of a bucket run, and the share of it
/// the run reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    /// The server's delay mode the bound assumes.
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_mode: DelayMode,
    /// Mean delay of the requests counted, in seconds.
    pub mean_delay_s: f64,
    /// Requests that can run at once.
    pub concurrency: u64,
    /// Where `concurrency` comes from, e.g.
    /// "min(8 client connections, 2 server concurrency)".
    pub limited_by: String,
    /// Requests per second at most; `None` when the mean delay is 0.
    pub rate_rps: Option<f64>,
    /// Throughput reached over `rate_rps`.
    pub share: Option<f64>,
    /// Assumptions made for what the flags did not say.
    pub notes: Vec<String>,
}

/// A share under which the bound is out of the server's reach for a
/// reason of its own, said on the bound's line.
const FAR_BELOW: f64 = 0.5;
/// Why a run stays far below its bound.
const WHY_FAR_BELOW: &str = " (the bound counts the delays alone, not the server's own cost \
     per request — a thread spawned or a connection opened per request — nor how it schedules \
     them on its cores; compare strategies by throughput, not by this share)";

impl Bound {
    /// The bound for `cfg`, given the mean delay (in units) of the
    /// requests counted, the throughput reached, and the cores online
    /// where the load ran (assumed to be the server's when
    /// `--server-cores` is absent).
    pub fn compute(
        cfg: &BoundConfig,
        mean_units: f64,
        throughput: f64,
        cores_here: usize,
    ) -> Bound {
        let mut limits = vec![(cfg.connections, "client connections")];
        // Flags the user gave are named as such in `limited_by`.
        let mut notes = Vec::new();
        match cfg.server_concurrency {
            Some(n) => limits.push((n, "server concurrency")),
            None => notes.push(format!(
                "the server's concurrency is unknown to the client (pass --server-concurrency N, \
                 e.g. a pool's --threads); assumed at least the {} client connections",
                cfg.connections
            )),
        }
        if cfg.delay_mode == DelayMode::Work {
            match cfg.server_cores {
                Some(n) => limits.push((n, "server cores")),
                None => {
                    limits.push((cores_here as u64, "cores online here"));
                    notes.push(format!(
                        "the server's cores are unknown to the client (pass --server-cores N, \
                         e.g. the size of its --cpus); assumed all {cores_here} cores online here"
                    ));
                }
            }
        }
        let concurrency = limits.iter().map(|l| l.0).min().unwrap_or(1).max(1);
        let named: Vec<String> = limits.iter().map(|l| format!("{} {}", l.0, l.1)).collect();
        let limited_by = if named.len() == 1 {
            named.join("")
        } else {
            format!("min({})", named.join(", "))
        };
        let mean_delay_s = mean_units * cfg.delay_unit.seconds();
        let rate_rps = (mean_delay_s > 0.0).then(|| concurrency as f64 / mean_delay_s);
        Bound {
            delay_mode: cfg.delay_mode,
            mean_delay_s,
            concurrency,
            limited_by,
            rate_rps,
            share: rate_rps.map(|r| throughput / r),
            notes,
        }
    }

    /// The bound as the text output prints it.
    pub fn lines(&self, unit: &str, unit_s: f64) -> Vec<String> {
        let mean = self.mean_delay_s / unit_s;
        let mut out = vec![match (self.rate_rps, self.share) {
            (Some(rate), Some(share)) => format!(
                "bound ({}): {} = {} at once / {mean:.3} {unit} mean delay = {rate:.1} req/s; reached {:.1}%{}",
                self.delay_mode,
                self.limited_by,
                self.concurrency,
                share * 100.0,
                if share < FAR_BELOW { WHY_FAR_BELOW } else { "" }
            ),
            _ => format!(
                "bound ({}): none, the mean delay is 0 (every request was a read)",
                self.delay_mode
            ),
        }];
        out.extend(self.notes.iter().map(|n| format!("note: {n}")));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(connections: u64, mode: DelayMode) -> BoundConfig {
        BoundConfig {
            connections,
            delay_unit: DelayUnit::Millis,
            delay_mode: mode,
            server_concurrency: None,
            server_cores: None,
        }
    }

    #[test]
    fn spin_is_limited_by_the_smaller_concurrency() {
        let mut c = cfg(8, DelayMode::Spin);
        c.server_concurrency = Some(2);
        let b = Bound::compute(&c, 2.0, 500.0, 2);
        assert_eq!(b.concurrency, 2);
        assert_eq!(b.rate_rps, Some(1000.0));
        assert_eq!(b.share, Some(0.5));
        assert!(b.notes.is_empty());
        assert_eq!(
            b.limited_by,
            "min(8 client connections, 2 server concurrency)"
        );
        // Cores do not bound spinning.
        c.server_concurrency = Some(64);
        let b = Bound::compute(&c, 2.0, 500.0, 2);
        assert_eq!((b.concurrency, b.rate_rps), (8, Some(4000.0)));
    }

    #[test]
    fn unknown_server_concurrency_is_said() {
        let b = Bound::compute(&cfg(4, DelayMode::Sleep), 1.0, 100.0, 2);
        assert_eq!(b.concurrency, 4);
        assert_eq!(b.limited_by, "4 client connections");
        assert_eq!(b.notes.len(), 1);
        assert!(b.notes[0].contains("--server-concurrency"));
        assert!(b.lines("ms", 1e-3).iter().any(|l| l.starts_with("note:")));
    }

    #[test]
    fn work_is_limited_by_cores() {
        let mut c = cfg(8, DelayMode::Work);
        c.server_concurrency = Some(8);
        c.server_cores = Some(1);
        let b = Bound::compute(&c, 2.0, 250.0, 2);
        assert_eq!(
            (b.concurrency, b.rate_rps, b.share),
            (1, Some(500.0), Some(0.5))
        );
        c.server_cores = None;
        let b = Bound::compute(&c, 2.0, 250.0, 2);
        assert_eq!(b.concurrency, 2);
        assert!(b.notes[0].contains("--server-cores"));
    }

    #[test]
    fn a_bound_far_out_of_reach_says_why_on_its_line() {
        // 1000 connections of 2 ms delays: 500k req/s, which a server that
        // spawns a thread per request cannot approach.
        let b = Bound::compute(&cfg(1000, DelayMode::Spin), 2.0, 500.0, 2);
        let line = &b.lines("ms", 1e-3)[0];
        assert!(
            line.contains("reached 0.1% (the bound counts the delays alone"),
            "{line}"
        );
        assert!(
            line.contains("a thread spawned or a connection opened per request"),
            "{line}"
        );
        // Near the bound, nothing more is said.
        let b = Bound::compute(&cfg(4, DelayMode::Spin), 2.0, 1800.0, 2);
        assert!(
            b.lines("ms", 1e-3)[0].ends_with("reached 90.0%"),
            "{:?}",
            b.lines("ms", 1e-3)
        );
    }

    #[test]
    fn zero_delay_has_no_bound() {
        let b = Bound::compute(&cfg(4, DelayMode::Spin), 0.0, 100.0, 2);
        assert_eq!((b.rate_rps, b.share), (None, None));
        assert!(b.lines("ms", 1e-3)[0].contains("none"));
    }
}
