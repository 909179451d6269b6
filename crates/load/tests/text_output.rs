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
            concurrency: 1,
            per_second: vec![100],
            late_replies: 7,
            verification: Verification {
                enabled: verify,
                ..Verification::default()
            },
            client_cpu: ClientCpu::measure((0.1, 0.0), 0.0, 1.0, 1),
            ..Default::default()
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

/// A server that stopped answering part way: the headline is over the
/// seconds it answered, with the silence in the same line, and so are
/// the operations' rates.
#[test]
fn a_server_that_stopped_is_rated_over_the_seconds_it_answered() {
    use serverlab_load::report::{OpSummary, Percentiles, Served};
    let mut r = with_late(false);
    r.results.duration_s = 20.0;
    r.results.requests = 133_129;
    r.results.throughput_rps = 133_129.0 / 20.0;
    r.results.errors = vec!["connection 0: reset".into()];
    r.results.operations = vec![OpSummary {
        name: "GET".into(),
        count: 133_129,
        rate_rps: 133_129.0 / 20.0,
        latency_us: Percentiles::default(),
        service_us: None,
        histogram_us: Vec::new(),
    }];
    r.results.served = Served::of(133_129, Some(4.0), 20.0, true);
    let text = text::render(&r);
    let headline = text.lines().next().unwrap();
    assert_eq!(
        headline,
        "echo load: the server stopped answering at 4.00 s: 133129 requests in 4.00 s = \
         33282.2 req/s; 16.00 s of the 20.00 s window without replies (closed-loop)"
    );
    assert!(text.contains("33282.2"), "the table's rate too:\n{text}");
    assert!(!text.contains("6656.4"), "no diluted rate:\n{text}");
}

#[test]
fn the_warm_up_is_said_with_why_a_server_counts_more() {
    let mut r = with_late(true);
    assert!(!text::render(&r).contains("warm-up"));
    r.results.warmup_s = 1.0;
    let text = text::render(&r);
    assert!(
        text.contains(
            "warm-up: the first 1.00 s of the run were not recorded (--warmup): its replies \
             were checked, not counted, so the server's own counts exceed these"
        ),
        "{text}"
    );
}

#[test]
fn a_verification_says_what_it_did_not_check() {
    let mut r = with_late(true);
    r.results.verification.not_checked = Some("order (see `check`)".into());
    let text = text::render(&r);
    assert!(
        text.contains("\n    not checked: order (see `check`)\n"),
        "{text}"
    );
}

/// A client whose loops spun and kept its one core busy, though its
/// work took a fifth of it: the output says the cores may have set the
/// pace, and to compare sleeping.
#[test]
fn a_spinning_client_that_kept_its_cores_busy_is_told_so() {
    use serverlab_load::report::PollUse;
    let mut r = with_late(false);
    let mut c = ClientCpu::measure((0.6, 0.4), 0.8, 1.0, 1);
    c.poll = Some(PollUse {
        mode: "spin".into(),
        resolved: Some("spin".into()),
        spin_share: 1.0,
        why: "asked".into(),
    });
    r.results.client_cpu = c.clone();
    let text = text::render(&r);
    assert!(text.contains("working 20% of 1 core(s)"), "{text}");
    assert!(
        text.contains(
            "the client's loops spun (--poll spin) and kept its cores 100% busy, 80% of that"
        ),
        "{text}"
    );
    assert!(text.contains("Compare --poll sleep"), "{text}");
    // Sleeping, or spinning on cores it left mostly idle: nothing said.
    c.idle_poll_s = 0.1;
    c.user_s = 0.2;
    c.system_s = 0.0;
    r.results.client_cpu = ClientCpu {
        utilization: 0.1,
        ..c
    };
    assert!(!text::render(&r).contains("loops spun"));
}
