//! The agents' HDR logs added, one log at a time as it is read: each
//! operation's two histograms (of the result's step), each scan step's
//! latency, and each merged second's. A log is checked against its own
//! result as it is added — its tags are the protocol's operations, its
//! intervals lie in the result's window, and it holds as many replies of
//! each operation as the result counts — so an empty log, a log of
//! another protocol, run or agent, or one cut short is refused by name.

use super::clocks::Placement;
use super::hlog::{self, Interval};
use super::seconds::Seconds;
use super::AgentFile;
use crate::record::new_histogram;
use hdrhistogram::Histogram;
use std::io::BufReader;

/// An interval may begin this far outside its result's window (its
/// log's base time is kept to the millisecond).
const SLACK_S: f64 = 1.0;

/// What the logs add up to.
pub struct Totals {
    /// Per operation, latency from the intended send time.
    pub latency: Vec<Histogram<u64>>,
    /// Per operation, service time (open loops log it).
    pub service: Vec<Option<Histogram<u64>>>,
    /// A scan: per step, every operation's latency.
    pub steps: Vec<Option<Histogram<u64>>>,
    pub seconds: Seconds,
}

/// Replies per operation in one log: latency view, service view.
struct Counts {
    latency: Vec<u64>,
    service: Vec<u64>,
}

/// What every log is read for: the operations' names, the step whose
/// intervals make the result (a scan's last; None: every interval), and
/// a scan's number of steps.
pub struct Reading<'a> {
    pub names: &'a [String],
    pub step: Option<usize>,
    pub steps: usize,
}

impl Totals {
    pub fn new(ops: usize, steps: usize) -> Self {
        Totals {
            latency: vec![new_histogram(); ops],
            service: vec![None; ops],
            steps: vec![None; steps],
            seconds: Seconds::default(),
        }
    }

    /// Agent `k`'s log added, or why it cannot be (a line naming it).
    pub fn add_log(
        &mut self,
        agents: &[AgentFile],
        k: usize,
        place: &Placement,
        how: &Reading<'_>,
    ) -> Result<(), String> {
        let a = &agents[k];
        let at = |why: String| format!("{}: {why}", a.hlog.display());
        let cannot = |e: std::io::Error| {
            at(format!(
                "cannot read it: {e} (merge adds the agents' histograms from their HDR logs, \
                 which --out writes beside their results)"
            ))
        };
        // Asked before it is opened: opening a named pipe to read waits for
        // a writer, for ever.
        if !std::fs::metadata(&a.hlog).map_err(cannot)?.is_file() {
            return Err(at(
                "not a regular file (a device, pipe or directory): an agent's log is the file \
                 `load --out` wrote"
                    .into(),
            ));
        }
        let file = std::fs::File::open(&a.hlog).map_err(cannot)?;
        let mut counts = Counts {
            latency: vec![0; how.names.len()],
            service: vec![0; how.names.len()],
        };
        let read = hlog::each(BufReader::new(file), |iv| {
            self.add(agents, k, place, how, &iv, &mut counts)
        });
        let intervals = read.map_err(at)?;
        agrees(a, how.names, &counts, intervals).map_err(at)
    }

    /// One interval of agent `k`'s log.
    fn add(
        &mut self,
        agents: &[AgentFile],
        k: usize,
        place: &Placement,
        how: &Reading<'_>,
        iv: &Interval,
        counts: &mut Counts,
    ) -> Result<(), String> {
        let a = &agents[k];
        let (op, service) = match iv.tag.strip_suffix(".service") {
            Some(op) => (op, true),
            None => (iv.tag.as_str(), false),
        };
        let Some(o) = how.names.iter().position(|n| n == op) else {
            return Err(format!(
                "tag '{}' is no operation of a {} load ({}): another protocol's log?",
                iv.tag,
                a.report.protocol,
                how.names.join(", ")
            ));
        };
        let add = |into: &mut Histogram<u64>| {
            into.add(&iv.histogram).map_err(|_| {
                "a histogram with values past the histograms' range (1 hour)".to_string()
            })
        };
        if how.steps > 0 {
            if let Some(s) = iv.step {
                let slot = how.steps_slot(s, a)?;
                if !service {
                    add(self.steps[slot].get_or_insert_with(new_histogram))?;
                }
            }
        }
        if how.step.is_some() && iv.step != how.step {
            return Ok(());
        }
        within_window(a, iv)?;
        if service {
            counts.service[o] = counts.service[o].saturating_add(iv.histogram.len());
            return add(self.service[o].get_or_insert_with(new_histogram));
        }
        add(&mut self.latency[o])?;
        counts.latency[o] = counts.latency[o].saturating_add(iv.histogram.len());
        let sec = place.second(agents, k, iv.start_unix_s);
        self.seconds.add_latency(sec, &iv.histogram)
    }
}

impl Reading<'_> {
    /// Step `s` of a scan, if the result has it.
    fn steps_slot(&self, s: usize, a: &AgentFile) -> Result<usize, String> {
        if s < self.steps {
            return Ok(s);
        }
        Err(format!(
            "an interval of step {s}, but {} has {} steps: another run's log?",
            a.path.display(),
            self.steps
        ))
    }
}

/// The interval `iv` of agent `a`'s log begins within its result's
/// window.
fn within_window(a: &AgentFile, iv: &Interval) -> Result<(), String> {
    let from = a.window_start_unix_s;
    let length = a.report.results.duration_s;
    let offset = iv.start_unix_s - from;
    if offset >= -SLACK_S && offset <= length + SLACK_S {
        return Ok(());
    }
    Err(format!(
        "an interval at {:.3} (Unix seconds), {offset:+.3} s from the start of the window of \
         {} ({from:.3}, {length} s long): another run's log?",
        iv.start_unix_s,
        a.path.display()
    ))
}

/// Agent `a`'s log held `counts` replies of each operation in
/// `intervals` intervals: as many as its result counts, in each view it
/// has.
fn agrees(
    a: &AgentFile,
    names: &[String],
    counts: &Counts,
    intervals: usize,
) -> Result<(), String> {
    let r = &a.report.results;
    if intervals == 0 && r.requests > 0 {
        return Err(format!(
            "empty: no intervals, but {} counts {} requests",
            a.path.display(),
            r.requests
        ));
    }
    for (k, name) in names.iter().enumerate() {
        let op = r.operations.iter().find(|o| &o.name == name);
        let counted = op.map_or(0, |o| o.count);
        let views = [
            (counts.latency[k], ""),
            (counts.service[k], " (service view)"),
        ];
        for (logged, view) in views {
            let kept = view.is_empty() || op.is_some_and(|o| o.service_us.is_some());
            if kept && logged != counted {
                return Err(format!(
                    "it holds {logged} {name} replies{view}, {} counts {counted}: the log of \
                     another run or agent, or cut short",
                    a.path.display()
                ));
            }
        }
    }
    Ok(())
}
