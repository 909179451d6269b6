//! The harness's part of a run, with a line protocol against a real
//! socket: the request budget, connections per request or per series,
//! the pipeline depth, and errors attributed to the request that failed.

use super::*;
use crate::driver::{take_line, Failure};
use crate::record::Recorder;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::net::TcpListener;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// A server that answers each line with `pong`, after `delay`. It counts
/// connections, and the most lines it ever held unanswered on one.
struct Server {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    deepest: Arc<AtomicUsize>,
}

fn server(delay: Duration) -> Server {
    stalling(delay, usize::MAX, Duration::ZERO)
}

/// As [`server`], but the `at`-th line of the first connection (from 0)
/// is answered only after `stall`.
fn stalling(delay: Duration, at: usize, stall: Duration) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let deepest = Arc::new(AtomicUsize::new(0));
    let (c, d) = (connections.clone(), deepest.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let first = c.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 0;
            let d = d.clone();
            std::thread::spawn(move || {
                let mut w = stream.try_clone().unwrap();
                let mut r = BufReader::new(stream);
                let mut line = String::new();
                let mut n = 0;
                while r.read_line(&mut line).unwrap_or(0) > 0 {
                    // Lines already buffered were sent before this reply.
                    let waiting = 1 + r.buffer().iter().filter(|&&b| b == b'\n').count();
                    d.fetch_max(waiting, std::sync::atomic::Ordering::Relaxed);
                    std::thread::sleep(if first && n == at { stall } else { delay });
                    n += 1;
                    if w.write_all(b"pong\n").is_err() {
                        return;
                    }
                    line.clear();
                }
            });
        }
    });
    Server {
        addr,
        connections,
        deepest,
    }
}

/// Sends `ping <n>` and wants `pong`; connects as often as it is asked.
#[derive(Default)]
struct Ping {
    index: usize,
    sent: u64,
    replies: u64,
}

impl Exchange for Ping {
    type Sent = u64;

    fn connect(&mut self, _now: Instant) -> bool {
        true
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, u64)> {
        self.sent += 1;
        wire.extend_from_slice(format!("ping {}\n", self.sent).as_bytes());
        Some((0, self.sent))
    }

    fn reply(
        &mut self,
        input: &[u8],
        _n: &u64,
        _rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let Some((line, len)) = take_line(input)? else {
            return Ok(None);
        };
        checks.checked(1);
        if line != b"pong" {
            checks.mismatch(format!("{line:?}"));
        }
        self.replies += 1;
        Ok(Some(len))
    }

    fn failed(&mut self, failure: &Failure, unanswered: Option<&u64>) -> String {
        format!("client {}: ping {unanswered:?}: {failure}", self.index)
    }

    fn label(&self) -> (&'static str, usize) {
        ("client", self.index)
    }
}

fn plan(addr: SocketAddr, window: Window, connections: Connections) -> Plan {
    Plan {
        addr: addr.into(),
        window,
        connections,
        pacing: Pacing::default(),
        verify: true,
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            reply: Some(Duration::from_secs(10)),
            drain: Some(Duration::from_secs(10)),
            max_reply: crate::driver::MAX_REPLY,
        },
        model_note: None,
        seed: 1,
        agent: Agent::SOLO,
        start_at: None,
        poll: Default::default(),
    }
}

fn pings(n: usize) -> Vec<Ping> {
    (0..n)
        .map(|index| Ping {
            index,
            ..Ping::default()
        })
        .collect()
}

fn total(run: &CompletedRun<Ping>) -> (u64, u64) {
    let sent = run.clients.iter().map(|c| c.exchange.sent).sum();
    let counted = run.clients.iter().map(|c| c.total).sum();
    (sent, counted)
}

#[test]
fn a_request_budget_is_met_exactly_with_a_connection_per_request() {
    let s = server(Duration::ZERO);
    let p = plan(s.addr, Window::Requests(57), Connections::PerRequest);
    let run = run_clients(&p, 1, pings(4), &Progress::default()).unwrap();
    assert_eq!(total(&run), (57, 57));
    // Every request had its own connection, and no connection was wasted.
    assert_eq!(s.connections.load(std::sync::atomic::Ordering::Relaxed), 57);
    for c in &run.clients {
        assert_eq!(c.errors.count, 0, "{:?}", c.errors.kept);
        assert_eq!(c.exchange.sent, c.exchange.replies);
    }
}

#[test]
fn a_request_budget_is_met_exactly_on_persistent_connections() {
    let s = server(Duration::ZERO);
    let p = plan(s.addr, Window::Requests(101), Connections::Persistent);
    let run = run_clients(&p, 1, pings(3), &Progress::default()).unwrap();
    assert_eq!(total(&run), (101, 101));
    assert_eq!(s.connections.load(std::sync::atomic::Ordering::Relaxed), 3);
}

#[test]
fn a_series_opens_a_connection_per_so_many_requests() {
    let s = server(Duration::ZERO);
    let p = plan(
        s.addr,
        Window::Requests(40),
        Connections::Series { requests: Some(5) },
    );
    let run = run_clients(&p, 1, pings(1), &Progress::default()).unwrap();
    assert_eq!(total(&run), (40, 40));
    assert_eq!(s.connections.load(std::sync::atomic::Ordering::Relaxed), 8);
    // Two clients share the budget, so one connection may end short; none
    // opens without a request to carry.
    let s = server(Duration::ZERO);
    let p = plan(
        s.addr,
        Window::Requests(40),
        Connections::Series { requests: Some(5) },
    );
    let run = run_clients(&p, 1, pings(2), &Progress::default()).unwrap();
    assert_eq!(total(&run), (40, 40));
    let opened = s.connections.load(std::sync::atomic::Ordering::Relaxed);
    assert!((8..=9).contains(&opened), "{opened} connections");
}

#[test]
fn the_pipeline_keeps_that_many_requests_in_flight() {
    let s = server(Duration::from_millis(2));
    let mut p = plan(s.addr, Window::Requests(60), Connections::Persistent);
    p.pacing.pipeline = 4;
    let run = run_clients(&p, 1, pings(1), &Progress::default()).unwrap();
    assert_eq!(total(&run), (60, 60));
    // The server saw 4 waiting at once (and never more).
    assert_eq!(s.deepest.load(std::sync::atomic::Ordering::Relaxed), 4);
    let lockstep = server(Duration::from_millis(1));
    p.addr = lockstep.addr.into();
    p.pacing.pipeline = 1;
    run_clients(&p, 1, pings(1), &Progress::default()).unwrap();
    assert_eq!(
        lockstep.deepest.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[test]
fn a_timed_window_counts_replies_within_it_and_says_what_failed() {
    let s = server(Duration::ZERO);
    let p = plan(
        s.addr,
        Window::Duration(Duration::from_millis(300)),
        Connections::Persistent,
    );
    let run = run_clients(&p, 1, pings(2), &Progress::default()).unwrap();
    let (sent, counted) = total(&run);
    assert!(
        counted > 0 && counted <= sent,
        "{sent} sent, {counted} counted"
    );
    let late: u64 = run.recorders.iter().map(|r| r.late).sum();
    assert_eq!(
        counted + late,
        sent,
        "every reply came, in the window or after"
    );
    for c in &run.clients {
        let (checked, mismatches, _) = c.checks.totals();
        assert_eq!((checked, mismatches), (c.exchange.replies, 0));
        assert!(c.runtime >= Duration::from_millis(300));
    }
    // Nothing listens: each try uses up a request, and the failure says
    // which client lost what.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let p = plan(closed, Window::Requests(2), Connections::PerRequest);
    let run = run_clients(&p, 1, pings(1), &Progress::default()).unwrap();
    let errors = &run.clients[0].errors;
    assert_eq!(errors.count, 2, "{:?}", errors.kept);
    assert!(
        errors.kept[0].starts_with("client 0: ping None: cannot connect to"),
        "{:?}",
        errors.kept
    );
}

#[test]
fn a_paced_request_with_its_own_connection_opens_it_when_due() {
    let s = server(Duration::ZERO);
    let mut p = plan(s.addr, Window::Requests(4), Connections::PerRequest);
    // A slot every 250 ms: were connections opened at once, each request
    // would wait for its slot inside its measured latency.
    p.pacing.throttle = 4.0;
    let t0 = Instant::now();
    let run = run_clients(&p, 1, pings(1), &Progress::default()).unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(750),
        "the slots were kept"
    );
    assert_eq!(total(&run), (4, 4));
    assert_eq!(s.connections.load(std::sync::atomic::Ordering::Relaxed), 4);
    // Opened early, all but the first would wait almost a whole slot.
    let median = run.recorders[0].ops[0].latency_ns.value_at_quantile(0.5);
    assert!(
        median < 125_000_000,
        "median latency {median} ns holds the wait for a slot"
    );
}

fn open_loop(addr: SocketAddr, rate: f64, window: Duration) -> Plan {
    let mut p = plan(addr, Window::Duration(window), Connections::Persistent);
    p.pacing.rate = Some(rate);
    p
}

/// Every recorder merged.
fn merged(run: &CompletedRun<Ping>) -> Recorder {
    let mut all = Recorder::new(1, run.span, true);
    for r in &run.recorders {
        all.merge(r);
    }
    all
}

fn ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1e6
}

#[test]
fn an_open_loop_sends_at_its_rate_from_its_schedule() {
    let s = server(Duration::ZERO);
    let p = open_loop(s.addr, 400.0, Duration::from_millis(1500));
    let run = run_clients(&p, 1, pings(4), &Progress::default()).unwrap();
    let (sent, counted) = total(&run);
    // 400/s for 1.5 s: 600 requests in the window, 150 per client, and
    // never more (a closed loop would send thousands). A client that fell
    // behind catches up, but what was due when the window closed is not
    // sent, and replies in flight then are not counted: on a machine busy
    // enough to stall a client for a few hundred milliseconds at the end
    // (seen beside CPU hogs), fewer. Half the rate would still fail.
    assert!((450..=606).contains(&counted), "{counted} of {sent} sent");
    for c in &run.clients {
        assert!((110..=152).contains(&c.total), "{}", c.total);
    }
    let all = merged(&run);
    let op = &all.ops[0];
    assert!(op.service_ns.is_some());
    // A fast server: latency counts from each request's own intended
    // time (not, say, from the start), so the median stays small.
    assert!(
        ms(&op.latency_ns, 0.5) < 200.0,
        "{}",
        ms(&op.latency_ns, 0.5)
    );
}

/// What each loop keeps for the verdict, only where it is used: how
/// late sends went, in an open loop; the gaps between sends, under
/// random (Poisson) arrivals.
#[test]
fn lags_and_gaps_are_kept_only_where_the_verdict_uses_them() {
    let s = server(Duration::ZERO);
    let kept = |p: &Plan| {
        let run = run_clients(p, 1, pings(2), &Progress::default()).unwrap();
        assert_eq!(total(&run).1, 60);
        let lags = run.recorders.iter().any(|r| r.sample.send_lag_ns.is_some());
        let gaps: u64 = run
            .recorders
            .iter()
            .map(|r| r.sample.send_gaps.seen())
            .sum();
        (lags, gaps)
    };
    let mut p = plan(s.addr, Window::Requests(60), Connections::Persistent);
    assert_eq!(kept(&p), (false, 0), "closed loop");
    p.pacing.rate = Some(2000.0);
    assert_eq!(kept(&p), (true, 0), "open loop, constant arrivals");
    p.pacing.arrivals = Arrivals::Poisson;
    let (lags, gaps) = kept(&p);
    assert!(lags && gaps > 0, "open loop, poisson: {lags} {gaps}");
}

/// How many of `h`'s values are at least `d`.
fn at_least(h: &hdrhistogram::Histogram<u64>, d: Duration) -> u64 {
    let floor = u64::try_from(d.as_nanos()).unwrap();
    h.iter_recorded()
        .filter(|v| v.value_iterated_to() >= floor)
        .map(|v| v.count_at_value())
        .sum()
}

#[test]
fn a_stall_shows_in_the_latency_from_the_schedule_not_in_the_service_time() {
    // 200 requests/s on one connection, 400 of them; the 20th waits a
    // second, and the 200 meant for that second wait behind it. Counted in
    // requests, not a timed window: a starved client still reaches the
    // stall and counts every reply (with the stall at the 100th and a 2 s
    // window, one beside stress-ng did not). Judged by how many requests
    // took at least half the stall, not by milliseconds: a busy machine
    // slows every request a little and a few a lot, but it cannot make a
    // hundred requests wait half a second each when only one was stalled,
    // nor spare them when they queued behind it.
    let stall = Duration::from_secs(1);
    let s = stalling(Duration::ZERO, 20, stall);
    let mut p = plan(s.addr, Window::Requests(400), Connections::Persistent);
    p.pacing.rate = Some(200.0);
    let run = run_clients(&p, 1, pings(1), &Progress::default()).unwrap();
    let all = merged(&run);
    let op = &all.ops[0];
    let service = op.service_ns.as_ref().unwrap();
    assert!(ms(&op.latency_ns, 1.0) >= 900.0);
    // The ~100 requests meant for the stall's first half waited at least
    // half of it; in service time only the stalled one did (a hiccup of
    // the machine may add one or two more, never tens).
    let (slow_latency, slow_service) = (
        at_least(&op.latency_ns, stall / 2),
        at_least(service, stall / 2),
    );
    assert!(
        slow_latency >= 50,
        "{slow_latency} latencies over half the stall"
    );
    assert!(slow_service >= 1, "the stalled request's own service time");
    assert!(
        slow_latency >= 20 * slow_service,
        "{slow_latency} latencies, {slow_service} service times over half the stall"
    );
    assert!(all.lag.late >= 100, "{:?}", all.lag);
    // Closed loop, the same stall costs one request: nothing was scheduled
    // behind it, so nothing else waits.
    let s = stalling(Duration::from_millis(5), 20, stall);
    let p = plan(s.addr, Window::Requests(60), Connections::Persistent);
    let run = run_clients(&p, 1, pings(1), &Progress::default()).unwrap();
    let h = &merged(&run).ops[0].latency_ns;
    let slow_closed = at_least(h, stall / 2);
    assert!(slow_closed >= 1, "closed: the stalled request");
    assert!(
        slow_latency >= 20 * slow_closed,
        "{slow_closed} closed-loop latencies over half the stall, {slow_latency} open-loop"
    );
}

#[test]
fn a_warm_up_is_run_but_not_recorded() {
    let s = server(Duration::from_millis(1));
    let mut p = plan(
        s.addr,
        Window::Duration(Duration::from_millis(300)),
        Connections::Persistent,
    );
    p.pacing.warmup_s = 0.3;
    let t0 = Instant::now();
    let run = run_clients(&p, 1, pings(1), &Progress::default()).unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(600));
    let (sent, counted) = total(&run);
    let late = merged(&run).late;
    // Sent in the warm-up, not counted (a busy machine may send few there:
    // one is enough to show it ran).
    assert!(
        counted > 0 && sent > counted + late,
        "{sent} sent, {counted} counted"
    );
    // The window (and the client's figures) start after the warm-up.
    assert_eq!(run.span.start - run.start, Duration::from_millis(300));
    // Its runtime counts from the window's start: with the warm-up it
    // would be the whole run. (Against the run's own wall time, not a
    // fixed bound: a busy machine may finish the client late.)
    assert!(run.clients[0].runtime + Duration::from_millis(300) <= t0.elapsed());
    assert_eq!(run.clients[0].per_second.len(), 1);
}

/// A listening client: sends nothing, takes the server's `tick` lines
/// (each a delivery, sent when it came), and after the window awaits
/// until it has `want` of them.
struct Listener {
    want: u64,
    got: u64,
    opened: bool,
    closed: bool,
    drained: bool,
}

impl Exchange for Listener {
    type Sent = ();

    fn connect(&mut self, _now: Instant) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    fn request(&mut self, _wire: &mut Vec<u8>) -> Option<(usize, ())> {
        None
    }

    fn reply(
        &mut self,
        _input: &[u8],
        _sent: &(),
        _rx: Received,
        _checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        Err("it asked nothing".into())
    }

    fn failed(&mut self, failure: &Failure, _unanswered: Option<&()>) -> String {
        format!("listener: {failure}")
    }

    fn label(&self) -> (&'static str, usize) {
        ("listener", 0)
    }

    fn listening(&self) -> bool {
        true
    }

    fn unasked(
        &mut self,
        input: &[u8],
        rx: Received,
        _checks: &mut Checks,
    ) -> Result<Option<(usize, Option<Pushed>)>, String> {
        let Some((line, len)) = take_line(input)? else {
            return Ok(None);
        };
        assert_eq!(line, b"tick");
        self.got += 1;
        Ok(Some((len, Some(Pushed { op: 0, sent: rx.at }))))
    }

    fn window_closed(&mut self) {
        self.closed = true;
    }

    fn awaiting(&self) -> bool {
        self.closed && !self.drained && self.got < self.want
    }

    fn drained(&mut self) {
        self.drained = true;
    }
}

/// A server that sends five `tick` lines on each connection, unasked,
/// then holds it open.
fn ticking() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let _ = stream.write_all(&b"tick\n".repeat(5));
                let _ = std::io::copy(&mut stream, &mut std::io::sink());
            });
        }
    });
    addr
}

/// A listener's deliveries are recorded by operation, apart from the
/// requests; its connection stays open with nothing to send, and after
/// the window it closes once it awaits nothing more, or at the drain
/// timeout, which is no failure.
#[test]
fn a_listener_records_deliveries_and_drains_without_failing() {
    let addr = ticking();
    for want in [5, 6] {
        let mut p = plan(
            addr,
            Window::Duration(Duration::from_millis(300)),
            Connections::Persistent,
        );
        p.timeouts.drain = Some(Duration::from_millis(300));
        let listener = Listener {
            want,
            got: 0,
            opened: false,
            closed: false,
            drained: false,
        };
        let run = run_clients(&p, 1, vec![listener], &Progress::default()).unwrap();
        let c = &run.clients[0];
        assert_eq!(c.errors.count, 0, "{:?}", c.errors.kept);
        assert_eq!(c.exchange.got, 5);
        // Awaiting a sixth that never comes, it drains to the timeout.
        assert_eq!(c.exchange.drained, want == 6);
        let (mut recorded, mut late, mut unasked, mut requests) = (0, 0, 0, 0);
        for r in &run.recorders {
            recorded += r.ops[0].count;
            late += r.late;
            unasked += r.unasked;
            requests += r.per_second.iter().sum::<u64>();
        }
        // Each in the window (or late, on a machine too busy to read
        // them within 300 ms), none a request.
        assert_eq!((recorded + late, unasked, requests), (5, recorded, 0));
    }
}
