//! Runs made of runs. Besides one run as the load's plan says, the
//! harness runs a capacity search — the highest rate at which a statistic
//! of the latency (from the intended send time) meets a target and the
//! rate is kept up — and a scan of rates, for every protocol alike. Each
//! step is a whole timed run (warm-up, then the step's window) on fresh
//! connections.
//!
//! The search, as mutilate's `--search` but with an open loop's latency:
//! a closed-loop probe gives a first guess (the rate the server sustains
//! with this many connections); steps from it bracket the answer (up by
//! half while rates pass, down by half while they fail); bisection then
//! narrows the bracket until the highest rate that passed is within 5%
//! of the lowest that failed.

use super::rates::{rate_text, RateRange};
use super::target::{Stat, Target};
use super::{once, LogTo, Plan, Protocol, Window};
use crate::driver::Polling;
use crate::intervals::IntervalLog;
use crate::report::{LoadReport, ScanReport, SearchReport, Step};
use crate::{LoadError, Progress};
use std::time::{Duration, Instant, SystemTime};

/// What to run.
#[derive(Debug, Clone, Default)]
pub enum Mode {
    /// One run, as the load's plan says.
    #[default]
    Once,
    /// A capacity search at `target`, each step `step` long.
    Search { target: Target, step: Duration },
    /// Every rate of `range`, each step `step` long.
    Scan { range: RateRange, step: Duration },
}

#[derive(Debug, Clone, Default)]
pub struct Execution {
    pub mode: Mode,
    /// Keep an HDR interval log of every second (every step's).
    pub hdr_log: bool,
    /// Start the window at this wall-clock instant (a scan: its first
    /// step's; step k starts [`step_period`] × k later), so agents given
    /// the same instant start, and step, together.
    pub start_at: Option<SystemTime>,
    /// How the loops wait for replies that are due (`--poll`).
    pub poll: Polling,
}

/// Between the starts of two steps of a scan with a start instant: the
/// warm-up, the step, and time for its replies, the next step's setup
/// and its connections.
pub fn step_period(warmup: Duration, step: Duration) -> Duration {
    warmup + step + STEP_SLACK
}

/// See [`step_period`].
const STEP_SLACK: Duration = Duration::from_secs(2);

pub struct Outcome {
    pub report: LoadReport,
    pub log: Option<IntervalLog>,
}

/// The bracket stops widening upwards after this many steps up (the rate
/// then is 3.4 times the probe's): the load's connections, not the
/// server, would be what is measured.
const MAX_UP: usize = 3;
/// Nor downwards below this many requests per second, or this share of
/// the probe's rate: a target that only a hundredth of what the server
/// sustains meets is not a capacity.
const MIN_RATE: f64 = 1.0;
const MIN_SHARE: f64 = 0.01;
/// Bisect until the bracket is this narrow, relative to its low end.
const PRECISION: f64 = 0.05;

/// Run `p` as `ex` says; `on_step` hears of each step of a search or scan
/// as it ends.
pub fn execute<P: Protocol>(
    p: &P,
    ex: &Execution,
    progress: &Progress,
    on_step: &mut dyn FnMut(&Step),
) -> Result<Outcome, LoadError> {
    let (origin, base) = (Instant::now(), SystemTime::now());
    let mut log = ex.hdr_log.then(|| IntervalLog::new(base));
    let plan = Plan {
        start_at: ex.start_at,
        poll: ex.poll,
        ..p.plan()
    };
    for (what, total) in p.shares() {
        plan.agent.fed(what, total)?;
    }
    if let Window::Requests(n) = plan.window {
        plan.agent
            .fed("requests", usize::try_from(n).unwrap_or(usize::MAX))?;
    }
    let timed = p.timed();
    let p_steps = timed.as_ref().unwrap_or(p);
    let steps = |step: Duration, stat: Stat| Stepper {
        p: p_steps,
        plan: Plan {
            window: Window::Duration(step),
            ..plan.clone()
        },
        stat,
        progress,
        log: None,
        origin,
        runs: Vec::new(),
    };
    let mut report = match &ex.mode {
        Mode::Once => {
            let to = log.as_mut().map(|log| LogTo { log, origin });
            once(p, &plan, progress, to)?
        }
        Mode::Search { target, step } => {
            let mut stepper = steps(*step, target.stat);
            stepper.log = log.as_mut();
            stepper.search(target, on_step)?
        }
        Mode::Scan { range, step } => {
            let p99 = Stat::Percentile(super::target::Quantile::P99);
            let mut stepper = steps(*step, p99);
            stepper.log = log.as_mut();
            stepper.scan(range, on_step)?
        }
    };
    // Interrupted, if only between two steps (or after the window):
    // what was asked for was not all done.
    report.results.interrupted |= progress.interrupted();
    Ok(Outcome { report, log })
}

/// Runs the steps of a search or scan.
struct Stepper<'a, P> {
    p: &'a P,
    /// The step's plan: a timed window; the rate is set per step.
    plan: Plan,
    /// The statistic steps are judged (a scan: summarised) by.
    stat: Stat,
    progress: &'a Progress,
    log: Option<&'a mut IntervalLog>,
    origin: Instant,
    /// Every step's full report, in order.
    runs: Vec<LoadReport>,
}

impl<P: Protocol> Stepper<'_, P> {
    /// One step at `rate` (None: the closed-loop probe).
    fn step(&mut self, rate: Option<f64>) -> Result<Step, LoadError> {
        let mut plan = self.plan.clone();
        plan.pacing.rate = rate;
        if let (Some(at), Some(step)) = (plan.start_at, plan.window.duration()) {
            let period = step_period(plan.pacing.warmup(), step);
            plan.start_at = Some(at + period * self.runs.len() as u32);
        }
        if let Some(log) = self.log.as_deref_mut() {
            log.comment(match rate {
                Some(r) => format!(
                    "step {}: {} requests/s requested",
                    self.runs.len(),
                    rate_text(r)
                ),
                None => "the probe: closed loop".into(),
            });
        }
        let to = self.log.as_deref_mut().map(|log| LogTo {
            log,
            origin: self.origin,
        });
        let report = once(self.p, &plan, self.progress, to)?;
        let step = Step::of(&report, stat_of(&report, self.stat));
        self.runs.push(report);
        Ok(step)
    }

    fn search(
        &mut self,
        target: &Target,
        on_step: &mut dyn FnMut(&Step),
    ) -> Result<LoadReport, LoadError> {
        let found = search(target, |rate| {
            let step = self.step(rate)?;
            on_step(&step);
            if self.progress.interrupted() {
                return Err(Halt::Interrupted);
            }
            Ok(step)
        });
        let trace = match found {
            Ok(trace) => trace,
            Err(Halt::Load(e)) => return Err(e),
            Err(Halt::Interrupted) => self.interrupted(target),
        };
        // The full results of the step at the capacity (else the last).
        let at = trace
            .capacity
            .and_then(|c| trace.steps.iter().position(|s| s.requested_rps == Some(c)))
            .map_or(self.runs.len() - 1, |i| i + 1);
        let mut report = self.pick(at);
        report.search = Some(SearchReport {
            target: target.to_string(),
            stat: target.stat.name().into(),
            limit_us: target.limit_us(),
            step_s: self.step_s(),
            warmup_s: self.plan.pacing.warmup_s,
            probe: trace.probe,
            steps: trace.steps,
            capacity_rps: trace.capacity,
            note: trace.note,
        });
        Ok(report)
    }

    fn scan(
        &mut self,
        range: &RateRange,
        on_step: &mut dyn FnMut(&Step),
    ) -> Result<LoadReport, LoadError> {
        let mut steps = Vec::new();
        for rate in range.rates() {
            let step = self.step(Some(rate))?;
            on_step(&step);
            steps.push(step);
            // Interrupted: the steps run so far (the last one cut short).
            if self.progress.interrupted() {
                break;
            }
        }
        let mut report = self.pick(self.runs.len() - 1);
        report.scan = Some(ScanReport {
            range: range.to_string(),
            step_s: self.step_s(),
            warmup_s: self.plan.pacing.warmup_s,
            steps,
        });
        Ok(report)
    }

    /// The search as far as it went when it was interrupted: the steps
    /// run (the last one cut short), judged, and no capacity.
    fn interrupted(&self, target: &Target) -> Trace {
        let mut steps = self.runs.iter().map(|r| Step::of(r, stat_of(r, self.stat)));
        let probe = steps.next().expect("the probe ran");
        let steps: Vec<Step> = steps
            .map(|mut step| {
                step.pass = Some(passes(target, &step));
                step
            })
            .collect();
        Trace {
            note: Some(format!(
                "interrupted after {} of its steps: no capacity decided",
                steps.len()
            )),
            probe,
            steps,
            capacity: None,
        }
    }

    fn step_s(&self) -> f64 {
        self.plan
            .window
            .duration()
            .unwrap_or_default()
            .as_secs_f64()
    }

    /// Run `at`'s report, with the other steps' errors added (said with
    /// their rate), so a run with a failing step fails.
    fn pick(&mut self, at: usize) -> LoadReport {
        let mut others = Vec::new();
        for (i, r) in self.runs.iter().enumerate().filter(|(i, _)| *i != at) {
            let rate = r.results.requested_rps.map_or("the probe".into(), |x| {
                format!("the step at {} req/s", rate_text(x))
            });
            let mismatches = r.results.verification.mismatches;
            if mismatches > 0 {
                others.push(format!(
                    "{rate} (step {i}): {mismatches} verification mismatches"
                ));
            }
            others.extend(
                r.results
                    .errors
                    .iter()
                    .map(|e| format!("{rate} (step {i}): {e}")),
            );
        }
        let mut report = self.runs.swap_remove(at);
        report.results.errors.extend(others);
        report
    }
}

/// `stat` of the latency over every operation of `report`, µs.
fn stat_of(report: &LoadReport, stat: Stat) -> Option<f64> {
    let ops: Vec<_> = report
        .results
        .operations
        .iter()
        .filter(|o| o.count > 0)
        .collect();
    let n: u64 = ops.iter().map(|o| o.count).sum();
    if n == 0 {
        return None;
    }
    match stat {
        Stat::Mean => Some(
            ops.iter()
                .map(|o| o.latency_us.mean * o.count as f64)
                .sum::<f64>()
                / n as f64,
        ),
        Stat::Percentile(_) => {
            let q = stat.quantile().unwrap_or(1.0);
            crate::report::merged_quantile(&report.results.operations, q)
        }
    }
}

/// Why a search's steps stopped before the search's end.
enum Halt {
    Load(LoadError),
    /// The run was interrupted (Ctrl-C).
    Interrupted,
}

impl From<LoadError> for Halt {
    fn from(e: LoadError) -> Self {
        Halt::Load(e)
    }
}

/// A step's verdict: the target met, the rate kept up, no errors.
fn passes(target: &Target, step: &Step) -> bool {
    step.stat_us.is_some_and(|v| target.met_by(v)) && step.kept_up && step.errors == 0
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub probe: Step,
    pub steps: Vec<Step>,
    pub capacity: Option<f64>,
    pub note: Option<String>,
}

/// A rate as steps ask for it: whole requests per second, once there are
/// ten or more.
fn round(rate: f64) -> f64 {
    if rate >= 10.0 {
        rate.round()
    } else {
        (rate * 100.0).round() / 100.0
    }
}

/// The search itself, over `measure` (a step at a rate; None: the
/// closed-loop probe), which it judges against `target`.
pub fn search<E>(
    target: &Target,
    mut measure: impl FnMut(Option<f64>) -> Result<Step, E>,
) -> Result<Trace, E> {
    let probe = measure(None)?;
    let mut trace = Trace {
        probe: probe.clone(),
        steps: Vec::new(),
        capacity: None,
        note: None,
    };
    if probe.achieved_rps <= 0.0 {
        trace.note =
            Some("the closed-loop probe completed no request: nothing to search from".into());
        return Ok(trace);
    }
    let mut judge = |rate: f64, trace: &mut Trace| -> Result<bool, E> {
        let mut step = measure(Some(rate))?;
        let pass = passes(target, &step);
        step.pass = Some(pass);
        trace.steps.push(step);
        Ok(pass)
    };
    let (mut lo, mut hi) = bracket(probe.achieved_rps, &mut trace, &mut judge)?;
    while let (Some(l), Some(h)) = (lo, hi) {
        let mid = round((l + h) / 2.0);
        if h - l <= PRECISION * l || mid <= l || mid >= h {
            break;
        }
        if judge(mid, &mut trace)? {
            lo = Some(mid);
        } else {
            hi = Some(mid);
        }
    }
    trace.capacity = lo;
    Ok(trace)
}

/// Steps from the probe's rate until a rate that passed (`lo`) and one
/// that failed (`hi`) bracket the answer — or the steps give up, saying
/// why in the trace's note.
fn bracket<E>(
    probe_rps: f64,
    trace: &mut Trace,
    judge: &mut impl FnMut(f64, &mut Trace) -> Result<bool, E>,
) -> Result<(Option<f64>, Option<f64>), E> {
    let (mut lo, mut hi) = (None, None);
    let mut rate = round(probe_rps);
    let mut ups = 0;
    loop {
        if judge(rate, trace)? {
            lo = Some(rate);
            if hi.is_some() {
                break;
            }
            if ups == MAX_UP {
                trace.note = Some(format!(
                    "every rate tried passed, up to {} req/s: the capacity is at least that \
                     (the client's connections may be what limits it)",
                    rate_text(rate)
                ));
                break;
            }
            ups += 1;
            rate = round(rate * 1.5);
        } else {
            hi = Some(rate);
            if lo.is_some() {
                break;
            }
            let down = round(rate / 2.0);
            if down < MIN_RATE.max(probe_rps * MIN_SHARE) {
                trace.note = Some(format!("no rate passed, down to {} req/s", rate_text(rate)));
                break;
            }
            rate = down;
        }
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server of known capacity: below it the p99 is 1 ms, above it
    /// the queue grows and the rate falls short.
    fn server(capacity: f64) -> impl FnMut(Option<f64>) -> Result<Step, ()> {
        move |rate| {
            let offered = rate.unwrap_or(capacity * 0.9);
            let achieved = offered.min(capacity);
            let p99 = if offered <= capacity {
                1000.0
            } else {
                50_000.0
            };
            Ok(Step {
                requested_rps: rate,
                achieved_rps: achieved,
                stat_us: Some(p99),
                p50_us: Some(500.0),
                p99_us: Some(p99),
                max_us: Some(p99),
                late_requests: 0,
                client_late_requests: 0,
                kept_up: achieved >= 0.95 * offered,
                errors: 0,
                pass: None,
            })
        }
    }

    fn target(text: &str) -> Target {
        text.parse().unwrap()
    }

    #[test]
    fn the_search_lands_within_five_percent_below_the_capacity() {
        for capacity in [1000.0, 12_345.0, 80.0, 3.0] {
            let t = search(&target("p99<=2ms"), server(capacity)).unwrap();
            let found = t.capacity.expect("a capacity");
            assert!(
                found <= capacity && found >= capacity * 0.94,
                "{capacity}: found {found} in {:?}",
                t.steps.iter().map(|s| s.requested_rps).collect::<Vec<_>>()
            );
            assert!(t.steps.len() <= 12, "{} steps", t.steps.len());
            assert!(t.steps.iter().all(|s| s.pass.is_some()));
        }
    }

    #[test]
    fn a_target_nothing_meets_has_no_capacity() {
        let t = search(&target("p99<=500us"), server(1000.0)).unwrap();
        assert_eq!(t.capacity, None);
        assert!(t.note.unwrap().contains("no rate passed"));
        assert!(t.steps.iter().all(|s| s.pass == Some(false)));
    }

    #[test]
    fn errors_fail_a_step() {
        let mut inner = server(1000.0);
        let t = search(&target("p99<=2ms"), |rate| {
            let mut s = inner(rate)?;
            s.errors = u64::from(rate.is_some_and(|r| r > 500.0));
            Ok::<_, ()>(s)
        })
        .unwrap();
        let found = t.capacity.unwrap();
        assert!((475.0..=500.0).contains(&found), "{found}");
    }

    #[test]
    fn a_dead_probe_ends_the_search() {
        let t = search(&target("p99<=2ms"), |_| {
            server(0.0)(None).map(|mut s| {
                s.achieved_rps = 0.0;
                s
            })
        })
        .unwrap();
        assert!(t.steps.is_empty() && t.capacity.is_none());
        assert!(t.note.unwrap().contains("probe"));
    }
}
