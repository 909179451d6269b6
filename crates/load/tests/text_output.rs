//! The default text sink: what it says about late replies.

mod common;

use serverlab_load::output::text;
use serverlab_load::report::{ClientCpu, LoadReport, Results, Verification};

fn with_late(verify: bool) -> LoadReport {
    common::closed_loop(
        "echo",
        Results {
            duration_s: 1.0,
            requests: 100,
            throughput_rps: 100.0,
            requested_rps: None,
            concurrency: 1,
            operations: Vec::new(),
            per_second: vec![100],
            per_second_latency_us: None,
            schedule: None,
            threads: Vec::new(),
            late_replies: 7,
            interrupted: false,
            errors: Vec::new(),
            verification: Verification {
                enabled: verify,
                ..Verification::default()
            },
            client_cpu: ClientCpu::measure((0.1, 0.0), 0.0, 1.0, 1),
            agent: None,
            merged: None,
            validity: None,
            protocol: None,
        },
    )
}

#[test]
fn late_replies_are_said_checked_only_when_verifying() {
    let on = text::render(&with_late(true));
    assert!(
        on.contains("7 replies arrived after the window: checked, not counted"),
        "{on}"
    );
    let off = text::render(&with_late(false));
    assert!(
        off.contains("7 replies arrived after the window: not counted\n"),
        "{off}"
    );
    assert!(!off.contains("checked"), "{off}");
}

/// An open loop's run at 80% of its rate: both latency views, how late
/// requests went, and the flag that it could not keep up.
#[test]
fn an_open_loop_says_both_views_and_whether_it_kept_up() {
    use serverlab_load::report::{OpSummary, Percentiles, ScheduleReport};
    let mut r = with_late(false);
    r.load_model = "open-loop, constant".into();
    let pct = |p99: f64| Percentiles {
        p99,
        max: p99 * 2.0,
        ..Percentiles::default()
    };
    r.results.operations = vec![OpSummary {
        name: "GET".into(),
        count: 100,
        rate_rps: 100.0,
        latency_us: pct(900_000.0),
        service_us: Some(pct(120.0)),
        histogram_us: Vec::new(),
    }];
    r.results.requested_rps = Some(125.0);
    let lag = serverlab_load::record::Lag {
        late: 40,
        max: std::time::Duration::from_millis(950),
        own_late: 0,
        own_max: std::time::Duration::from_micros(300),
    };
    let mut schedule = ScheduleReport::new("constant", 125.0, 100.0, &lag);
    (schedule.sent_requests, schedule.sent_rps) = (110, 110.0);
    (schedule.backlog_requests, schedule.warmup_sent_requests) = (30, 90);
    r.results.schedule = Some(schedule);
    let text = text::render(&r);
    for needle in [
        "(open-loop, constant)",
        "requested 125.0 req/s (constant arrivals): 110.0 sent in the window, 90.9% of them answered there; \
         30 of them were due in the warm-up (its backlog, sent late), and 90 went in it",
        "latency, from each request's intended send time",
        "900000.0",
        "service time, from the actual send",
        "120.0",
        "schedule: 40 requests sent over 1 ms late, the largest lag 950.00 ms",
        "the client's own lag: 0 over 1 ms, the largest 300 µs",
        "warning: could not keep up: 80.0% of the requested rate was achieved \
         (the server, or the client — see client CPU)",
    ] {
        assert!(text.contains(needle), "lacks {needle:?}:\n{text}");
    }
    // Kept up: no warning.
    r.results.schedule = Some(ScheduleReport::new("constant", 100.0, 100.0, &lag));
    assert!(!text::render(&r).contains("could not keep up"));
}
