//! A full server makes clients wait, not fail (issue 23): the ERSS
//! homework's setting, a bucket server under a hard 1024-descriptor limit
//! (`prlimit --nofile=1024:1024`) and 1000 clients that each connect and
//! send one `1,b` request at once, under every strategy. Past the
//! connection cap, with none idle to evict, the server stops accepting
//! and the clients wait in the listen backlog: all 1000 are answered, none
//! reset — with the cap the descriptors set, and with `--max-connections
//! 100`. And a server full of idle connections still serves a newcomer
//! at once, by eviction. docs/reliability.md ("Waiting at the cap").
//! And several accept loops evicting for a burst of newcomers at once
//! never accept one only to refuse it (issue 28; docs/reliability.md,
//! "Running out of file descriptors").
//!
//! Each test opens a thousand sockets, so they take the heavy tests' turn
//! and raise this process's own descriptor limit.

use crate::support::*;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// Clients of the homework's run.
const CLIENTS: usize = 1000;
/// The descriptor limit of the homework's machine, soft and hard.
const NOFILE: u64 = 1024;
/// How long every client's reply is awaited: a hang guard, not the
/// measure. The homework asks for every client answered within 10 s;
/// on a quiet machine they are in well under a second (the waits are
/// printed), but a pool's 1,000 replies on a machine with fifty runnable
/// tasks can take longer, and a locked-out client waits for ever.
const ANSWERED_WITHIN: Duration = Duration::from_secs(120);

/// Raise this process's soft descriptor limit to its hard limit: the
/// clients' thousand sockets are ours too.
fn raise_own_fd_limit() {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls with valid pointers to an initialised
    // rlimit.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut l), 0);
        l.rlim_cur = l.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &l), 0);
    }
    assert!(
        l.rlim_cur == libc::RLIM_INFINITY || l.rlim_cur >= 2 * CLIENTS as u64 + 256,
        "the tests need {} descriptors; the hard limit is {}",
        2 * CLIENTS + 256,
        l.rlim_cur
    );
}

/// A bucket server as the homework runs it, under the 1024 limit.
fn erss_server(strategy: &str, extra: &[&str]) -> ServerProc {
    let line = format!("--strategy {strategy} --buckets 32 --delay-unit ms");
    let mut args = words(&line);
    args.extend(extra);
    ServerProc::start_with_nofile("bucket", &args, NOFILE, Some(NOFILE))
}

/// How one client fared.
#[derive(Debug)]
enum Outcome {
    /// Answered, this long after it began to connect.
    Answered(Duration),
    /// Reset, or closed without an answer, or no connection.
    Failed(String),
}

/// One client still waiting for its reply.
struct Waiting {
    stream: TcpStream,
    began: Instant,
    got: Vec<u8>,
}

/// `CLIENTS` clients connect one after another as fast as they can, each
/// sending `1,b` (bucket b = its number mod 32) as soon as it is
/// connected; then every reply is awaited until `ANSWERED_WITHIN` from
/// the first connect. Returns each client's outcome.
fn erss_run(addr: SocketAddr) -> Vec<Outcome> {
    burst(addr, CLIENTS, ANSWERED_WITHIN)
}

/// `clients` clients as [`erss_run`]'s, their replies awaited until
/// `within` from the first connect.
fn burst(addr: SocketAddr, clients: usize, within: Duration) -> Vec<Outcome> {
    let t0 = Instant::now();
    let mut outcomes = Vec::new();
    let mut waiting = Vec::new();
    for i in 0..clients {
        let began = Instant::now();
        let sent = TcpStream::connect(addr).and_then(|mut s| {
            s.write_all(format!("1,{}\n", i % 32).as_bytes())?;
            s.set_nonblocking(true)?;
            Ok(s)
        });
        match sent {
            Ok(stream) => waiting.push(Waiting {
                stream,
                began,
                got: Vec::new(),
            }),
            Err(e) => outcomes.push(Outcome::Failed(format!("connect or send: {e}"))),
        }
    }
    while !waiting.is_empty() {
        let left = within.saturating_sub(t0.elapsed());
        if left.is_zero() {
            break;
        }
        poll_readable(&waiting, left);
        waiting.retain_mut(|w| match read_reply(w) {
            None => true,
            Some(outcome) => {
                outcomes.push(outcome);
                false
            }
        });
    }
    let late = waiting.len();
    outcomes.extend((0..late).map(|_| Outcome::Failed(format!("no reply within {within:?}"))));
    outcomes
}

/// Wait until some waiting client has something to read, or `left`.
fn poll_readable(waiting: &[Waiting], left: Duration) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds: Vec<PollFd> = waiting
        .iter()
        .map(|w| PollFd::new(w.stream.as_fd(), PollFlags::POLLIN))
        .collect();
    let ms = left.as_millis().min(1000) as u16;
    let _ = poll(&mut fds, PollTimeout::from(ms));
}

/// Read what has arrived; the outcome once the reply is whole or the
/// connection has ended.
fn read_reply(w: &mut Waiting) -> Option<Outcome> {
    let mut buf = [0u8; 64];
    loop {
        match w.stream.read(&mut buf) {
            // Answered, then closed (evicted while idle: fair), or not.
            Ok(0) if w.got.ends_with(b"\n") => break,
            Ok(0) => return Some(Outcome::Failed("closed without a reply".into())),
            Ok(n) => w.got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Some(Outcome::Failed(format!("{e}"))),
        }
    }
    let line = w.got.strip_suffix(b"\n")?;
    Some(match std::str::from_utf8(line).ok()?.parse::<u64>() {
        Ok(_) => Outcome::Answered(w.began.elapsed()),
        Err(_) => Outcome::Failed(format!("reply {:?}", text(&w.got))),
    })
}

/// Every client answered, none failed; the waits, said for the record
/// (median, p99, max).
fn all_answered(outcomes: &[Outcome], ctx: &str) {
    all_of_answered(outcomes, CLIENTS, ctx);
}

/// All `clients` answered, none failed; the waits, said for the record.
fn all_of_answered(outcomes: &[Outcome], clients: usize, ctx: &str) {
    let failed: Vec<&String> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Failed(why) => Some(why),
            Outcome::Answered(_) => None,
        })
        .collect();
    let mut waits: Vec<Duration> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Answered(d) => Some(*d),
            Outcome::Failed(_) => None,
        })
        .collect();
    waits.sort_unstable();
    let at = |q: f64| waits[((waits.len() - 1) as f64 * q).round() as usize];
    if !waits.is_empty() {
        eprintln!(
            "{ctx}: {} answered; waited median {:?}, p99 {:?}, max {:?}",
            waits.len(),
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }
    assert!(
        failed.is_empty() && waits.len() == clients,
        "{ctx}: {} of {clients} answered; {} failed, first: {:?}",
        waits.len(),
        failed.len(),
        failed.first()
    );
}

/// The run, and the server's own account of it: nothing refused, nothing
/// shed, every client's connection accepted.
fn erss(strategy: &str, extra: &[&str], ctx: &str) {
    let _turn = heavy_turn();
    raise_own_fd_limit();
    let server = erss_server(strategy, extra);
    let outcomes = erss_run(server.addr);
    let (status, out) = server.stop();
    let stats = out
        .lines()
        .find(|l| l.trim_start().starts_with("connections:"))
        .unwrap_or("no statistics");
    all_answered(&outcomes, &format!("{ctx} ({})", stats.trim()));
    assert!(status.success(), "{ctx}: {out}");
    assert_eq!(
        stat(&out, "refused_over_max_connections"),
        0,
        "{ctx}: {out}"
    );
    assert_eq!(stat(&out, "shed_out_of_fds"), 0, "{ctx}: {out}");
    assert_eq!(stat(&out, "accepted"), CLIENTS as u64, "{ctx}: {out}");
}

/// The cap the 1024 descriptors set binds.
fn erss_at_the_fd_limit(strategy: &str) {
    erss(strategy, &[], &format!("{strategy}, nofile 1024"));
}
per_strategy!(erss_fd_limit, erss_at_the_fd_limit);

/// `--max-connections 100` binds: 900 wait at any moment at first.
fn erss_at_max_connections_100(strategy: &str) {
    erss(
        strategy,
        &["--max-connections", "100"],
        &format!("{strategy}, nofile 1024, --max-connections 100"),
    );
}
per_strategy!(erss_max_100, erss_at_max_connections_100);

/// 100 connections served once and idle under `--max-connections 100`
/// (and the 1024 limit): a new client is served, by evicting
/// the one idle longest — the waiting at the cap does not lock it out.
fn idle_full_server_serves_a_newcomer(strategy: &str) {
    let _turn = heavy_turn();
    raise_own_fd_limit();
    let server = erss_server(strategy, &["--max-connections", "100"]);
    let _idle: Vec<Client> = (0..100)
        .map(|i| {
            let mut c = Client::connect(server.addr);
            c.send(format!("0,{}\n", i % 32).as_bytes());
            let _ = c.recv();
            c
        })
        .collect();
    // Locked out, the newcomer would wait for ever (no idle client
    // leaves): waiting long is the hang guard, not the measure.
    let mut c = Client::connect(server.addr);
    c.stream.set_read_timeout(Some(ANSWERED_WITHIN)).unwrap();
    c.send(b"1,0\n");
    assert!(
        c.try_recv().is_some(),
        "{strategy}: the newcomer is not served"
    );
    let (status, out) = server.stop();
    assert!(status.success(), "{strategy}");
    assert_eq!(stat(&out, "evicted_idle"), 1, "{strategy}: {out}");
    assert_eq!(stat(&out, "refused_over_max_connections"), 0, "{strategy}");
}
per_strategy!(idle_full, idle_full_server_serves_a_newcomer);

/// How long the idle connections are held before the newcomers come:
/// longer than the server's `MIN_IDLE` (500 ms, `idle.rs`), so that they
/// can be evicted. Should the machine be slower than that, fewer are
/// evicted at once and the newcomers wait longer: the outcomes are the
/// same.
const IDLE_FOR: Duration = Duration::from_millis(700);
/// The cap of the eviction test, and the idle connections that fill it.
const EVICT_CAP: usize = 400;
/// Newcomers to the full server: each admitted by an eviction, or after a
/// close.
const NEWCOMERS: usize = 600;
/// Bound on the newcomers' replies (a few seconds are enough).
const NEWCOMERS_ANSWERED_WITHIN: Duration = Duration::from_secs(30);

/// Issue 28: a server full of idle connections, with several accept
/// loops (`--threads 8` where threads apply; shared-nothing and uring run
/// a loop per listener, each its own SO_REUSEPORT listener), and a burst
/// of newcomers spread over every listener. Each loop evicts an idle
/// connection for a pending newcomer and accepts it, up to the eviction
/// slack over the cap, again and again as the evicted close — the loops
/// race for the last place many times a run. No newcomer is accepted only
/// to be refused (a reset, its request unread): all are answered, the
/// server counts none refused and none shed. Before the fix two loops
/// could each find the last place free, and the second's connection was
/// refused: 10 of 10 runs failed under shared-nothing and under uring, 4
/// to 16 newcomers reset in each (docs/reliability.md).
fn evictions_on_several_loops_refuse_none(strategy: &str) {
    let _turn = heavy_turn();
    raise_own_fd_limit();
    let cap = EVICT_CAP.to_string();
    let args = with_threads(strategy, "8", &["--max-connections", &cap]);
    let server = erss_server(strategy, &args);
    let idle: Vec<Client> = (0..EVICT_CAP)
        .map(|i| {
            let mut c = Client::connect(server.addr);
            c.send(format!("0,{}\n", i % 32).as_bytes());
            assert!(
                c.try_recv().is_some(),
                "{strategy}: idle client {i} answered"
            );
            c
        })
        .collect();
    std::thread::sleep(IDLE_FOR);
    let outcomes = burst(server.addr, NEWCOMERS, NEWCOMERS_ANSWERED_WITHIN);
    drop(idle);
    let (status, out) = server.stop();
    let ctx = format!("{strategy}, --max-connections {cap}, {NEWCOMERS} newcomers");
    let stats = out
        .lines()
        .find(|l| l.trim_start().starts_with("connections:"))
        .unwrap_or("no statistics");
    all_of_answered(&outcomes, NEWCOMERS, &format!("{ctx} ({})", stats.trim()));
    assert!(status.success(), "{ctx}: {out}");
    assert_eq!(
        stat(&out, "refused_over_max_connections"),
        0,
        "{ctx}: {out}"
    );
    assert_eq!(stat(&out, "shed_out_of_fds"), 0, "{ctx}: {out}");
    assert!(stat(&out, "evicted_idle") > 0, "{ctx}: none evicted: {out}");
}
per_strategy!(evict_loops, evictions_on_several_loops_refuse_none);
