//! The default, human output: totals, rates and latency percentiles per
//! operation (open loop: from the intended send time, then from the
//! actual send, and how well the schedule was kept), errors,
//! verification, and the client's own CPU use.

use crate::report::{ClientCpu, LoadReport, OpSummary, Percentiles, Results, ScheduleReport};
use std::fmt::Write;

/// What the client added, the TLS handshakes and the protocol's own
/// lines, after the latency.
fn beside_latency(out: &mut String, r: &crate::report::Results) {
    let client = r.client_share.iter().map(|c| c.line());
    let tls = r.tls.iter().flat_map(|t| t.lines());
    let protocol = r.protocol.iter().flat_map(|p| p.text_lines());
    for line in client.chain(tls).chain(protocol) {
        let _ = writeln!(out, "  {line}");
    }
}

pub fn render(report: &LoadReport) -> String {
    let r = &report.results;
    let mut out = String::new();
    if r.interrupted {
        let _ = writeln!(out, "{}", interrupted_line(report));
    }
    out.push_str(&super::steps::render(report));
    if report.search.is_some() {
        out.push_str("\nthe step at the capacity (or the last step run):\n");
    } else if report.scan.is_some() {
        out.push_str("\nthe last step:\n");
    }
    let _ = writeln!(out, "{}", headline(report));
    if r.warmup_s > 0.0 {
        let _ = writeln!(out, "  {}", warmup_line(r.warmup_s, r.verification.enabled));
    }
    match (r.requested_rps, &r.schedule) {
        (Some(rate), Some(s)) => {
            requested_line(&mut out, rate, r.requests, s);
            out.push_str(
                "  latency, from each request's intended send time (the figure to quote):\n",
            );
            latency_table(&mut out, r, |o| Some(&o.latency_us));
            out.push_str("  service time, from the actual send (what a closed loop measures):\n");
            latency_table(&mut out, r, |o| o.service_us.as_ref());
            schedule_lines(&mut out, s);
            super::ramp::lines(&mut out, r);
        }
        _ => latency_table(&mut out, r, |o| Some(&o.latency_us)),
    }
    beside_latency(&mut out, r);
    if r.late_replies > 0 {
        // Late replies are checked only when every reply is.
        let fate = if r.verification.enabled {
            "checked, not counted"
        } else {
            "not counted"
        };
        let _ = writeln!(
            out,
            "  {} arrived after the window: {fate}",
            serverlab_util::plural(r.late_replies, "reply", "replies")
        );
    }
    errors_checks_and_cpu(&mut out, r, pinned(report));
    if let Some(v) = &r.validity {
        super::validity::lines(&mut out, v);
    }
    super::ramp::thresholds(&mut out, &r.thresholds);
    if let Some(a) = &r.agent {
        super::agents::agent_line(&mut out, a);
    }
    if let Some(m) = &r.merged {
        super::agents::merged_lines(&mut out, m);
    }
    out
}

/// The run's requests and rate: over the window, or where the server
/// stopped answering part way, over the seconds it answered, with the
/// silence after said in the same line.
pub fn headline(report: &LoadReport) -> String {
    let r = &report.results;
    let requests = serverlab_util::plural(r.requests, "request", "requests");
    let (protocol, model) = (&report.protocol, &report.load_model);
    match &r.served {
        None => format!(
            "{protocol} load: {requests} in {:.2} s = {:.1} req/s ({model})",
            r.duration_s, r.throughput_rps
        ),
        Some(s) => format!(
            "{protocol} load: the server stopped answering at {:.2} s: {requests} in {:.2} s = \
             {:.1} req/s; {:.2} s of the {:.2} s window without replies ({model})",
            s.duration_s, s.duration_s, s.throughput_rps, s.silent_s, r.duration_s
        ),
    }
}

/// What the warm-up was, and why a server counts more than the client.
pub fn warmup_line(warmup_s: f64, verify: bool) -> String {
    let fate = if verify {
        "checked, not counted"
    } else {
        "not counted"
    };
    format!(
        "warm-up: the first {warmup_s:.2} s of the run were not recorded (--warmup): its replies \
         were {fate}, so the server's own counts exceed these"
    )
}

/// What an interrupted run says first: that its figures cover only
/// the time measured.
pub fn interrupted_line(report: &LoadReport) -> String {
    let steps = match (&report.search, &report.scan) {
        (Some(s), _) => format!(" in step {} of the search", s.steps.len()),
        (_, Some(s)) => format!(" in step {} of the scan", s.steps.len()),
        _ => String::new(),
    };
    format!(
        "interrupted{steps}: the window closed early, after {:.2} s; what follows is what was \
         measured until then",
        report.results.duration_s
    )
}

/// An open loop's rate asked for, what was sent in the window and how
/// much of it was answered there, and the warm-up's backlog apart.
fn requested_line(out: &mut String, rate: f64, answered: u64, s: &ScheduleReport) {
    let share = if s.sent_requests > 0 {
        (answered as f64 / s.sent_requests as f64).min(1.0)
    } else {
        0.0
    };
    let backlog = match s.backlog_requests {
        0 => String::new(),
        n => format!(
            "; {n} of them were due in the warm-up (its backlog, sent late), and {} went in it",
            s.warmup_sent_requests
        ),
    };
    let _ = writeln!(
        out,
        "  requested {rate:.1} req/s ({} arrivals): {:.1} sent in the window, {:.1}% of them answered there{backlog}",
        s.arrivals,
        s.sent_rps,
        share * 100.0
    );
}

/// One row per operation that completed anything: counts, rates, and the
/// percentiles `view` picks.
fn latency_table(out: &mut String, r: &Results, view: impl Fn(&OpSummary) -> Option<&Percentiles>) {
    let _ = writeln!(
        out,
        "  {:<8} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "op", "count", "rate/s", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs"
    );
    // Rates over the seconds the server answered, as the headline's.
    let rate = |op: &OpSummary| match &r.served {
        Some(s) if s.duration_s > 0.0 => op.count as f64 / s.duration_s,
        _ => op.rate_rps,
    };
    for op in r.operations.iter().filter(|o| o.count > 0) {
        let Some(l) = view(op) else { continue };
        let _ = writeln!(
            out,
            "  {:<8} {:>10} {:>11.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1}",
            op.name,
            op.count,
            rate(op),
            l.p50,
            l.p90,
            l.p99,
            l.p99_9,
            l.max
        );
    }
    // Each percentile's 95% interval, under the table.
    for op in r.operations.iter().filter(|o| o.count > 0) {
        if let Some(line) = view(op).and_then(|l| super::intervals::line(&op.name, op.count, l)) {
            let _ = writeln!(out, "    {line}");
        }
    }
}

/// How late requests went, and whether the rate was kept up.
fn schedule_lines(out: &mut String, s: &ScheduleReport) {
    let late = ScheduleReport::late_ms();
    let _ = writeln!(
        out,
        "  schedule: {} sent over {late} ms late, the largest lag {} \
         (a request waits while its connection is busy); the client's own lag: {} over {late} ms, \
         the largest {}",
        serverlab_util::plural(s.late_requests, "request", "requests"),
        super::micros(s.max_lag_us),
        s.client_late_requests,
        super::micros(s.client_max_lag_us)
    );
    if !s.kept_up {
        let _ = writeln!(
            out,
            "  warning: could not keep up: {:.1}% of the requested rate was achieved \
             (the server, or the client — see client CPU)",
            s.achieved_share * 100.0
        );
    }
}

/// Errors, verification, and the client's CPU (with the warning when it
/// may have set the pace).
fn errors_checks_and_cpu(out: &mut String, r: &Results, pinned: bool) {
    if r.errors.is_empty() {
        let _ = writeln!(out, "  errors: none");
    } else {
        // A line may name several clients, and the last may count more
        // errors: a count of lines would say less than what failed.
        let _ = writeln!(out, "  errors:");
        for e in &r.errors {
            let _ = writeln!(out, "    {e}");
        }
    }
    let v = &r.verification;
    if v.enabled {
        let _ = writeln!(
            out,
            "  verification: {} checks, {} mismatches",
            v.checked, v.mismatches
        );
        for e in &v.examples {
            let _ = writeln!(out, "    {e}");
        }
        if let Some(n) = &v.not_checked {
            let _ = writeln!(out, "    not checked: {n}");
        }
    } else {
        let _ = writeln!(out, "  verification: off (--verify checks every reply)");
    }
    client_cpu(out, &r.client_cpu, pinned);
}

/// The client's CPU, and the warning when it may have set the pace.
fn client_cpu(out: &mut String, c: &ClientCpu, pinned: bool) {
    let busy = c.cores_busy.map_or(String::new(), |b| {
        format!("; its cores {:.0}% busy in all", b * 100.0)
    });
    let _ = writeln!(
        out,
        "  client CPU: {:.2} s user + {:.2} s system, {:.2} s of it polling for replies; working {:.0}% of {} core(s){busy}",
        c.user_s,
        c.system_s,
        c.idle_poll_s,
        c.utilization * 100.0,
        c.cores
    );
    if let Some(warning) = client_warning(c, pinned) {
        let _ = writeln!(out, "  warning: {warning}");
    }
    if let Some(warning) = spin_warning(c) {
        let _ = writeln!(out, "  warning: {warning}");
    }
}

/// The warning that a spinning client kept its cores busy, and so may
/// have set the pace, if it did.
pub fn spin_warning(c: &ClientCpu) -> Option<String> {
    if !c.spun_busy() {
        return None;
    }
    let mode = c.poll.as_ref().map_or("auto", |p| p.mode.as_str());
    let total = c.user_s + c.system_s;
    Some(format!(
        "the client's loops spun (--poll {mode}) and kept its cores {:.0}% busy, {:.0}% of that \
         polling for replies not yet come: a loop that spins where many replies are due takes \
         them a few at a time, so its cores, not the server, may have set the pace. Compare \
         --poll sleep (docs/measuring.md).",
        c.own_share() * 100.0,
        if total > 0.0 {
            c.idle_poll_s / total * 100.0
        } else {
            0.0
        }
    ))
}

/// Whether the load ran on fewer CPUs than the machine has (`--cpus`, or
/// a `taskset` around it): then it was placed on purpose.
pub fn pinned(report: &LoadReport) -> bool {
    let e = &report.environment;
    !e.client_cpus.is_empty() && e.client_cpus.len() < e.cores_online
}

/// The warning that the client may have set the pace, if it may have. Its
/// advice depends on whether the load was `pinned`: pinning apart is the
/// next step only if it has not been taken.
pub fn client_warning(c: &ClientCpu, pinned: bool) -> Option<String> {
    if !c.bottleneck {
        return None;
    }
    Some(if c.shared() {
        let next = if pinned {
            "The load is pinned already: another process runs on its CPUs (see `top`), or the \
             server shares them; give each its own CPUs, or run on a quieter machine."
        } else {
            "Pin server and client apart (serve --cpus 0, load --cpus 1)."
        };
        format!(
            "the client worked {:.0}% of its cores while they were {:.0}% busy: it shares them with \
             other work (the server?), waiting for them and taking from that work each cycle it used, so it \
             may have set the pace, not the server. {next}",
            c.utilization * 100.0,
            c.cores_busy.unwrap_or_default() * 100.0
        )
    } else {
        format!(
            "the client kept its cores {:.0}% busy, so it may have set the pace, not the server \
             (on loopback part of that is the kernel delivering requests to the server: docs/measuring.md). \
             Give it more cores (--cpus) or fewer connections.",
            c.utilization * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_to_pin_apart_is_given_only_to_a_load_not_pinned() {
        let c = ClientCpu {
            user_s: 0.5,
            system_s: 0.5,
            idle_poll_s: 0.0,
            cores: 1,
            utilization: 0.5,
            cores_busy: Some(1.0),
            bottleneck: true,
            poll: None,
        };
        assert!(c.shared());
        let loose = client_warning(&c, false).unwrap();
        assert!(loose.contains("Pin server and client apart"), "{loose}");
        let pinned = client_warning(&c, true).unwrap();
        assert!(pinned.contains("The load is pinned already"), "{pinned}");
        assert!(!pinned.contains("Pin server and client apart"), "{pinned}");
        let calm = ClientCpu {
            bottleneck: false,
            ..c.clone()
        };
        assert_eq!(client_warning(&calm, false), None);
    }
}
