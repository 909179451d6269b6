//! After the run: every loop's recorder and every client's checks and
//! errors merged, the measured window, the per-second series padded to
//! it, a summary per client, and for an open loop each second's latency
//! and how well the schedule was kept — the parts of the results that are
//! the same for every protocol. The per-second histograms also go to an
//! HDR interval log, when one is kept.

use super::metered::Sends;
use super::{CompletedRun, LogTo, Plan, Window};
use crate::checks::Checks;
use crate::intervals::{self, buckets, View};
use crate::record::{new_histogram, Recorder, Span};
use crate::report::{op_summaries, Results, ScheduleReport, SecondLatency, ThreadSummary};
use crate::report::{AgentRun, Percentiles, Served, Verification};
use hdrhistogram::Histogram;
use serverlab_util::Named;
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The run's figures, for a protocol's `finish` (and its results).
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// The measured window, in seconds.
    pub duration_s: f64,
    /// Requests answered within it.
    pub requests: u64,
    pub throughput_rps: f64,
    /// From the start until the last client finished, in seconds (the
    /// warm-up included).
    pub wall_s: f64,
}

pub(super) struct Gathered<E> {
    pub exchanges: Vec<E>,
    pub measured: Measured,
    pub checks: Checks,
    /// Errors, verification and the protocol's part still to fill in.
    pub results: Results,
}

/// Merge `run`'s loops and clients; their errors go to `errors` (after
/// any already there), with a line counting those not kept.
pub(super) fn gather<E: super::Exchange>(
    run: CompletedRun<E>,
    ops: &[&str],
    plan: &Plan,
    errors: &mut Vec<String>,
    log: Option<LogTo<'_>>,
) -> Gathered<E> {
    let open = plan.pacing.is_open();
    let agent = agent_run(plan, &run);
    let duration_s = window_s(&run, plan.window);
    let (merged, loops) = merge_loops(run.recorders, ops.len(), run.span, open);
    let seconds = duration_s.ceil() as usize;
    let concurrency = run.clients.len() as u64;
    let sent = sent(&run.clients);
    let last_counted = last_counted(&run.clients, run.span);
    let clients = clients(run.clients, seconds, plan.verify, errors);
    // Deliveries the server sent unasked are recorded by operation, not
    // counted as requests.
    let requests = merged.total() - merged.unasked;
    let throughput_rps = per_s(requests, duration_s);
    let served = Served::of(requests, last_counted, duration_s, !errors.is_empty());
    let per_second = padded(&merged.per_second, seconds);
    let window = SecondsOf::new(run.span, duration_s, ops, &merged, open);
    let by_second = window.merge(loops, &per_second, log);
    let schedule = schedule(plan, run.share, &merged, sent, duration_s);
    let mut results = Results {
        duration_s,
        requests,
        throughput_rps,
        warmup_s: warmup_s(plan),
        served,
        requested_rps: plan.pacing.asked_rps(duration_s).map(|r| r * run.share),
        concurrency,
        operations: op_summaries(&merged, ops, duration_s),
        per_second,
        per_second_latency_us: open.then_some(by_second),
        schedule,
        threads: clients.threads,
        late_replies: merged.late,
        interrupted: run.interrupted_at.is_some(),
        errors: Vec::new(),
        failures: clients.failures,
        thresholds: Vec::new(),
        verification: Verification::default(),
        client_cpu: run.client_cpu,
        agent,
        merged: None,
        validity: None,
        client_share: merged.client.report(),
        tls: merged.tls.report(plan.addr.is_insecure()),
        protocol: None,
    };
    crate::certify::verdict::judge(&mut results, &merged.sample, &merged.ops);
    Gathered {
        exchanges: clients.exchanges,
        measured: Measured {
            duration_s,
            requests,
            throughput_rps,
            wall_s: run.wall.as_secs_f64(),
        },
        checks: clients.checks,
        results,
    }
}

/// The warm-up before a timed window, in seconds (a counted run has none).
fn warmup_s(plan: &Plan) -> f64 {
    match plan.window {
        Window::Duration(_) => plan.pacing.warmup().as_secs_f64(),
        _ => 0.0,
    }
}

/// What every client sent, added.
fn sent<E>(clients: &[super::CompletedClient<E>]) -> Sends {
    let mut sent = Sends::default();
    for c in clients {
        sent.add(c.sent);
    }
    sent
}

/// When the last reply counted in the window came, in seconds from its
/// start.
fn last_counted<E>(clients: &[super::CompletedClient<E>], span: Span) -> Option<f64> {
    let last = clients.iter().filter_map(|c| c.last_counted).max()?;
    Some(last.saturating_duration_since(span.start).as_secs_f64())
}

/// A split load's agent (or a run with a start instant): which, and
/// when it started.
fn agent_run<E>(plan: &Plan, run: &CompletedRun<E>) -> Option<AgentRun> {
    if plan.agent.is_solo() && plan.start_at.is_none() {
        return None;
    }
    let unix = |t: SystemTime| {
        t.duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    };
    Some(AgentRun {
        index: plan.agent.index,
        count: plan.agent.count,
        start_at_unix_s: plan.start_at.map(unix),
        start_lag_ms: run.start_lag_s.map(|s| s * 1e3),
        started_unix_s: unix(run.started),
        window_start_unix_s: unix(run.started) + (run.span.start - run.start).as_secs_f64(),
        run_id: None,
    })
}

/// Every loop's recorder merged into one, and their per-second
/// histograms, one set per loop.
fn merge_loops(
    recorders: Vec<Recorder>,
    ops: usize,
    span: Span,
    open: bool,
) -> (Recorder, Vec<intervals::Intervals>) {
    let mut merged = Recorder::new(ops, span, open);
    let mut loops = Vec::with_capacity(recorders.len());
    for r in recorders {
        merged.merge(&r);
        loops.push(r.intervals);
    }
    (merged, loops)
}

/// `n` per second of a window `duration_s` long (0 for an empty one).
fn per_s(n: u64, duration_s: f64) -> f64 {
    if duration_s > 0.0 {
        n as f64 / duration_s
    } else {
        0.0
    }
}

/// An open loop's schedule report: the rate asked for against the rate
/// reached and sent, and how late requests went.
fn schedule(
    plan: &Plan,
    share: f64,
    merged: &Recorder,
    sent: Sends,
    duration_s: f64,
) -> Option<ScheduleReport> {
    // A split load's agent asked for its share of the rate.
    let rate = plan.pacing.asked_rps(duration_s)? * share;
    let arrivals = plan.pacing.arrivals.name();
    let throughput_rps = per_s(merged.total() - merged.unasked, duration_s);
    let mut s = ScheduleReport::new(arrivals, rate, throughput_rps, &merged.lag);
    if let Some(stages) = &plan.pacing.stages {
        s.stages = Some(stages.to_string());
        s.asked_per_second = plan
            .pacing
            .asked_per_second(duration_s)
            .unwrap_or_default()
            .into_iter()
            .map(|n| n * share)
            .collect();
    }
    (s.sent_requests, s.sent_rps) = (sent.window, per_s(sent.window, duration_s));
    s.backlog_requests = sent.backlog;
    s.warmup_sent_requests = sent.warmup;
    Some(s)
}

/// The clients after a run, taken apart.
struct Clients<E> {
    exchanges: Vec<E>,
    threads: Vec<ThreadSummary>,
    checks: Checks,
    /// Every error the clients hit, described or only counted.
    failures: u64,
}

/// Each client's summary over `seconds` of window, its checks merged and
/// its errors added to `errors` (with a line counting those not kept).
fn clients<E: super::Exchange>(
    ran: Vec<super::CompletedClient<E>>,
    seconds: usize,
    verify: bool,
    errors: &mut Vec<String>,
) -> Clients<E> {
    let mut out = Clients {
        exchanges: Vec::with_capacity(ran.len()),
        threads: Vec::with_capacity(ran.len()),
        checks: Checks::new(verify),
        failures: 0,
    };
    let (mut kept, mut count) = (0u64, 0u64);
    let mut said = Vec::new();
    for c in ran {
        out.checks.merge(c.checks);
        kept += c.errors.kept.len() as u64;
        count += c.errors.count;
        said.extend(c.errors.kept);
        let (role, index) = c.exchange.label();
        out.threads.push(ThreadSummary {
            role: role.into(),
            index,
            total: c.total,
            per_second: padded(&c.per_second, seconds),
            runtime_s: c.runtime.as_secs_f64(),
        });
        out.exchanges.push(c.exchange);
    }
    out.failures = count;
    errors.extend(fold_same_causes(said));
    if count > kept {
        errors.push(format!("… and {} more errors", count - kept));
    }
    out
}

/// Errors that say the same cause for different clients (`connection 3:
/// the server sent a reply longer than …`) as one line naming them all
/// (`connections 0, 1, 3 and 5 more: the server sent …`), in the order
/// each cause first appeared; a cause said once, and an error that names
/// no client (`<role> <number>: …`), stay as they were.
fn fold_same_causes(errors: Vec<String>) -> Vec<String> {
    enum Said<'a> {
        Alone(&'a str),
        Clients(&'a str, Vec<&'a str>),
    }
    let mut said: Vec<Said> = Vec::new();
    for e in &errors {
        let Some((who, cause)) = e.split_once(": ").filter(|(who, _)| names_a_client(who)) else {
            said.push(Said::Alone(e));
            continue;
        };
        let same = said.iter_mut().find_map(|s| match s {
            Said::Clients(c, whos) if *c == cause => Some(whos),
            _ => None,
        });
        match same {
            Some(whos) => whos.push(who),
            None => said.push(Said::Clients(cause, vec![who])),
        }
    }
    said.into_iter()
        .map(|s| match s {
            Said::Alone(e) => e.to_string(),
            Said::Clients(cause, whos) => match whos.as_slice() {
                [who] => format!("{who}: {cause}"),
                many => format!("{}: {cause}", name_all(many)),
            },
        })
        .collect()
}

/// `connection 3`, `poster 0`, `session 12`: a role and a number.
fn names_a_client(who: &str) -> bool {
    who.rsplit_once(' ').is_some_and(|(role, n)| {
        !role.is_empty() && !role.contains(' ') && n.parse::<u64>().is_ok()
    })
}

/// `connection 0`, `connection 1`, … as `connections 0, 1 and 2`, or, past
/// four, `connections 0, 1, 2 and 5 more`; clients of different kinds
/// (posters and readers) are listed as they are.
fn name_all(whos: &[&str]) -> String {
    const SHOWN: usize = 3;
    let split: Vec<Option<(&str, &str)>> = whos.iter().map(|w| w.rsplit_once(' ')).collect();
    let kind = split[0].map(|(k, _)| k);
    let same = kind.is_some() && split.iter().all(|s| s.map(|(k, _)| k) == kind);
    let names: Vec<&str> = if same {
        split.iter().filter_map(|s| s.map(|(_, n)| n)).collect()
    } else {
        whos.to_vec()
    };
    let mut list = if names.len() > SHOWN + 1 {
        format!(
            "{} and {} more",
            names[..SHOWN].join(", "),
            names.len() - SHOWN
        )
    } else {
        let (last, rest) = names.split_last().expect("two or more");
        format!("{} and {last}", rest.join(", "))
    };
    if same {
        list = format!("{}s {list}", kind.unwrap_or_default());
    }
    list
}

/// The measured window: a timed run's duration (up to the interrupt, if
/// it was cut short); otherwise every reply counts, and the window runs
/// to the last.
fn window_s<E>(run: &CompletedRun<E>, window: Window) -> f64 {
    let since_start = |t: Instant| t.saturating_duration_since(run.span.start).as_secs_f64();
    let cut = run.interrupted_at.map_or(f64::INFINITY, since_start);
    let window_s = match window {
        Window::Duration(d) => d.as_secs_f64(),
        Window::Requests(_) | Window::Work => run
            .clients
            .iter()
            .filter_map(|c| c.last_reply)
            .max()
            .map_or(0.0, since_start),
    };
    window_s.min(cut)
}

/// A per-second series with a slot for every second of the window.
fn padded(series: &[u64], seconds: usize) -> Vec<u64> {
    let mut out = series.to_vec();
    out.resize(seconds.max(out.len()), 0);
    out
}

/// The window, second by second.
struct SecondsOf<'a> {
    span: Span,
    duration_s: f64,
    ops: &'a [&'a str],
    /// Operations with replies in the window: an interval log has a line
    /// for each, every second.
    active: Vec<bool>,
    /// Open loop: the service view is logged too.
    open: bool,
}

impl<'a> SecondsOf<'a> {
    fn new(span: Span, duration_s: f64, ops: &'a [&'a str], merged: &Recorder, open: bool) -> Self {
        SecondsOf {
            span,
            duration_s,
            ops,
            active: merged.ops.iter().map(|o| o.count > 0).collect(),
            open,
        }
    }

    /// Merge the loops' per-second histograms: each second's latency over
    /// every operation, and (with `log`) every second of every active
    /// operation and view as a line of the interval log.
    fn merge(
        &self,
        loops: Vec<intervals::Intervals>,
        per_second: &[u64],
        log: Option<LogTo<'_>>,
    ) -> Vec<SecondLatency> {
        let mut out: Vec<SecondLatency> = per_second
            .iter()
            .map(|&requests| SecondLatency {
                requests,
                ..SecondLatency::default()
            })
            .collect();
        let mut all = new_histogram();
        let mut current = None;
        let mut lines: HashMap<(usize, View, usize), Vec<(u64, u64)>> = HashMap::new();
        intervals::merge(loops, |sec, view, op, h| {
            if current != Some(sec) {
                summarise(current, &all, &mut out);
                all.reset();
                current = Some(sec);
            }
            if view == View::Latency {
                all.add(h).expect("same bounds");
            }
            if log.is_some() {
                lines.insert((sec, view, op), buckets(h));
            }
        });
        summarise(current, &all, &mut out);
        if let Some(log) = log {
            self.log(log, lines);
        }
        out
    }

    /// Every second of the window, for each active operation and view, as
    /// a line of `log`: seconds without replies as empty intervals, so a
    /// stall shows as a gap in the counts, not as missing lines.
    fn log(&self, to: LogTo<'_>, mut lines: HashMap<(usize, View, usize), Vec<(u64, u64)>>) {
        let views: &[View] = if self.open {
            &[View::Latency, View::Service]
        } else {
            &[View::Latency]
        };
        let tagged: Vec<(View, usize, String)> = views
            .iter()
            .flat_map(|&view| {
                (0..self.ops.len())
                    .filter(|&o| self.active[o])
                    .map(move |op| (view, op, self.tag(view, op)))
            })
            .collect();
        for sec in 0..self.duration_s.ceil() as usize {
            let from = Duration::from_secs(sec as u64);
            let length = Duration::from_secs_f64((self.duration_s - sec as f64).clamp(0.0, 1.0));
            let start = (self.span.start + from).saturating_duration_since(to.origin);
            for (view, op, tag) in &tagged {
                let b = lines.remove(&(sec, *view, *op)).unwrap_or_default();
                to.log.push(start, length, tag.clone(), b);
            }
        }
    }

    /// An interval's tag: the operation's name (its latency), with
    /// `.service` for the service view.
    fn tag(&self, view: View, op: usize) -> String {
        match view {
            View::Latency => self.ops[op].to_string(),
            View::Service => format!("{}.service", self.ops[op]),
        }
    }
}

/// Second `sec`'s latency percentiles, from `h`, into `out`.
fn summarise(sec: Option<usize>, h: &Histogram<u64>, out: &mut Vec<SecondLatency>) {
    let Some(sec) = sec else { return };
    if out.len() <= sec {
        out.resize(sec + 1, SecondLatency::default());
    }
    let p = Percentiles::of(h);
    let s = &mut out[sec];
    (s.p50, s.p99, s.max) = (Some(p.p50), Some(p.p99), Some(p.max));
}

#[cfg(test)]
mod fold_tests {
    use super::fold_same_causes;

    fn fold(errors: &[&str]) -> Vec<String> {
        fold_same_causes(errors.iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn one_cause_of_many_clients_is_said_once() {
        let many: Vec<String> = (0..8)
            .map(|i| format!("connection {i}: the server sent a reply longer than 64 bytes"))
            .collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            fold(&refs),
            ["connections 0, 1, 2 and 5 more: the server sent a reply longer than 64 bytes"]
        );
        assert_eq!(
            fold(&["poster 0: closed", "poster 4: closed"]),
            ["posters 0 and 4: closed"]
        );
    }

    #[test]
    fn different_causes_and_kinds_stay_apart_in_order() {
        assert_eq!(
            fold(&[
                "poster 0: no reply within 1s",
                "reader 2: closed",
                "reader 1: no reply within 1s",
                "session 3: request 2 of 9: reset",
                "no colon here",
            ]),
            [
                "poster 0 and reader 1: no reply within 1s",
                "reader 2: closed",
                "session 3: request 2 of 9: reset",
                "no colon here",
            ]
        );
        assert_eq!(
            fold(&[
                "cannot connect to 1.2.3.4:80: refused",
                "cannot connect to 1.2.3.4:80: refused",
            ]),
            [
                "cannot connect to 1.2.3.4:80: refused",
                "cannot connect to 1.2.3.4:80: refused",
            ],
            "errors naming no client are not folded"
        );
    }
}
