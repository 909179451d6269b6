//! What an open-loop run adds to its results: each second's latency, and
//! how well the schedule was kept — the rate asked for against the rate
//! reached, and how late requests went out.

use crate::record::{Lag, LATE};
use serde::{Deserialize, Serialize};

/// A run whose throughput falls below this share of the requested rate
/// could not keep up.
pub const KEPT_UP: f64 = 0.95;

/// One second of an open-loop run's window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SecondLatency {
    /// Replies received in this second.
    pub requests: u64,
    /// Their latency (from the intended send time), µs; null when none came.
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

/// How well an open loop kept its schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleReport {
    /// `constant` or `poisson`.
    pub arrivals: String,
    /// Requests sent in the window (by when they went), and per second
    /// of it: what the client offered. Below the requested rate when the
    /// client or the server fell behind.
    pub sent_requests: u64,
    pub sent_rps: f64,
    /// Of those, requests due before the window opened: the warm-up's
    /// backlog, sent late. (Before this field, `sent_requests` counted
    /// requests by when they were due.)
    #[serde(default)]
    pub backlog_requests: u64,
    /// Requests sent during the warm-up (their replies checked, not
    /// counted).
    #[serde(default)]
    pub warmup_sent_requests: u64,
    /// Throughput (replies in the window) over the requested rate.
    pub achieved_share: f64,
    /// At least [`KEPT_UP`] of the requested rate was reached. If not, the
    /// run could not keep up: the server, or the client (see its CPU).
    pub kept_up: bool,
    /// Recorded requests sent more than 1 ms after their intended time,
    /// for whatever reason: waiting for a busy connection counts.
    pub late_requests: u64,
    /// The largest delay from a request's intended time to its send, µs.
    pub max_lag_us: f64,
    /// Of them, requests sent more than 1 ms after their connection had
    /// room: the client's own lateness (timer wake-ups, CPU).
    pub client_late_requests: u64,
    pub client_max_lag_us: f64,
    /// A ramped rate (`--stages`): its stages, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<String>,
    /// With stages: the requests the ramp asked for in each second of
    /// the window (its intended sends; the last second perhaps part of
    /// one), beside `per_second`'s replies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asked_per_second: Vec<f64>,
}

impl ScheduleReport {
    pub fn new(arrivals: &str, requested_rps: f64, throughput_rps: f64, lag: &Lag) -> Self {
        let achieved_share = if requested_rps > 0.0 {
            throughput_rps / requested_rps
        } else {
            0.0
        };
        let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
        ScheduleReport {
            arrivals: arrivals.into(),
            sent_requests: 0,
            sent_rps: 0.0,
            backlog_requests: 0,
            warmup_sent_requests: 0,
            achieved_share,
            kept_up: achieved_share >= KEPT_UP,
            late_requests: lag.late,
            max_lag_us: us(lag.max),
            client_late_requests: lag.own_late,
            client_max_lag_us: us(lag.own_max),
            stages: None,
            asked_per_second: Vec::new(),
        }
    }

    /// How late counts as late, for text.
    pub fn late_ms() -> f64 {
        LATE.as_secs_f64() * 1e3
    }
}
