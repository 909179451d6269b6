//! Hostile clients, the session's half (issue 16): replies flow as soon as
//! they exist, large replies are produced as the socket takes them, work
//! follows the client, and a graceful stop answers what it took. Every
//! test runs under every strategy (`per_strategy!`), over real sockets,
//! bounded in time; memory and CPU come from /proc. docs/reliability.md
//! says what each attack is and how it is met.

use crate::kv::Http;
use crate::support::*;
use serverlab_server::OUTPUT_HIGH_WATER;
use serverlab_service::REPLY_CHUNK;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The server's drain limit (`serverlab_server::DRAIN_LIMIT`, documented
/// in docs/design.md): a graceful stop ends within it.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);
/// The board's default `--max-request`: its input limit is one more.
const BOARD_MAX_REQUEST: usize = 65535;
/// Clients that never read.
const SILENT: usize = 50;
/// What the allocator, thread stacks and a test's own normal clients may
/// add to a server's memory beside the bound the limits give.
const SLACK_KIB: u64 = 24 * 1024;

/// Tests here read a server's memory or CPU, or time its replies, and
/// each starts many clients: they take turns with each other and the
/// other heavy tests ([`heavy_turn`]), so one does not disturb another's
/// figures.
fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    heavy_turn()
}

/// A file for `--stats-json`, in a directory removed with the guard.
pub(crate) fn stats_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stats.json");
    (dir, path)
}

pub(crate) fn read_stats(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the statistics file"))
        .expect("statistics as JSON")
}

/// CPU time a process has used (user and system), from /proc.
pub(crate) fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("proc stat");
    // Fields after the command (which may hold spaces), from field 3.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .unwrap()
        .unwrap() as u64;
    Duration::from_millis(ticks * 1000 / hz)
}

/// A client that sends `request` and never reads. Its receive buffer is
/// kept small, so it is the server, not the kernel, that must hold what
/// it does not take.
fn silent_client(addr: SocketAddr, request: &[u8]) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(64 * 1024).unwrap();
    socket.connect(&addr.into()).expect("connect");
    let mut stream: TcpStream = socket.into();
    stream.write_all(request).expect("send");
    stream
}

/// Close with a reset (SO_LINGER 0), as a client that gives up does.
fn reset(stream: TcpStream) {
    socket2::SockRef::from(&stream)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
}

/// The most resident memory seen, in KiB, sampling every 20 ms for `for_`.
fn peak_rss(pid: u32, for_: Duration) -> u64 {
    let end = Instant::now() + for_;
    let mut peak = 0;
    while Instant::now() < end {
        peak = peak.max(rss_kib(pid));
        std::thread::sleep(Duration::from_millis(20));
    }
    peak
}

/// The most one never-reading connection may make the server hold: its
/// unread input, up to `input`, in a buffer growth may make twice that;
/// its unwritten output, under the high-water mark plus one part of a
/// reply (`part`); and written output the buffer has not yet dropped (it
/// does at a chunk).
fn per_connection_kib(input: usize, part: usize) -> u64 {
    ((2 * input + OUTPUT_HIGH_WATER + part + REPLY_CHUNK) / 1024) as u64
}

/// Ten pipelined 60 ms requests: each reply goes out as soon as it exists,
/// not when the batch ends. Counted, not timed: when the first reply can
/// be read, the others are not there yet (held back for the batch, all
/// ten come at once). A machine busy with other work may hold the reading
/// thread back past a few delays, so at most half may have come with the
/// first, and a miss is tried once more on the same server: held-back
/// replies miss every time.
fn bucket_replies_flow(strategy: &str) {
    let _one = exclusive();
    let server = ServerProc::start("bucket", &["--strategy", strategy, "--delay-unit", "ms"]);
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut firsts = Vec::new();
    for round in 0..2u64 {
        let first = replies_with_the_first(&mut s, round, strategy);
        firsts.push(first);
        if first <= 5 {
            break;
        }
    }
    assert!(
        *firsts.last().unwrap() <= 5,
        "{strategy}: replies there when the first could be read: {firsts:?} of 10"
    );
    assert!(server.stop().0.success());
}

/// Send ten `60,1` lines at once; how many replies had come when the first
/// could be read (checked: the sums after `round` earlier batches, and the
/// batch no sooner than its ten delays).
fn replies_with_the_first(s: &mut TcpStream, round: u64, strategy: &str) -> usize {
    let start = Instant::now();
    s.write_all("60,1\n".repeat(10).as_bytes()).expect("send");
    let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    let (mut got, mut chunk, mut first) = (Vec::new(), [0u8; 4096], 0);
    while lines(&got) < 10 {
        let n = s.read(&mut chunk).expect("a reply");
        assert!(n > 0, "{strategy}: the server closed the connection");
        got.extend_from_slice(&chunk[..n]);
        if first == 0 {
            first = lines(&got);
        }
    }
    let want: String = (1..=10u64)
        .map(|k| format!("{}\n", 60 * (10 * round + k)))
        .collect();
    assert_eq!(text(&got), want, "{strategy}");
    assert!(
        start.elapsed() >= Duration::from_millis(600),
        "{strategy}: ten 60 ms delays on one connection done in {:?}",
        start.elapsed()
    );
    first
}

per_strategy!(bucket_delivery, bucket_replies_flow);

/// A client writes 200 250 ms requests and disconnects: the server does not
/// spin for it (at most the delay in progress and one look after it), and
/// counts what it abandoned. (250 ms: longer than uring's 100 ms tick,
/// which is where it looks for a departed client during a delay, with room
/// for a tick delayed on a busy machine; with 60 ms delays a late tick let
/// the second delay finish, and the departure was found by the failed
/// write after it, abandoning no delay.)
fn orphaned_delays_are_abandoned(strategy: &str) {
    let _one = exclusive();
    let (_dir, stats) = stats_file();
    let stats_arg = stats.to_str().unwrap();
    let server = ServerProc::start(
        "bucket",
        &words(&format!(
            "--strategy {strategy} --delay-unit ms --max-delay 250 --stats-json {stats_arg}"
        )),
    );
    let mut c = Client::connect(server.addr);
    c.send("250,1\n".repeat(200).as_bytes());
    drop(c);
    let before = cpu_time(server.pid());
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_time(server.pid()) - before;
    // Old behaviour: 2 s of a core (50 s of spinning queued). Now at most
    // the delay in progress (spun: 250 ms) and a look after it; 310 ms
    // was seen on a busy machine, so the bound leaves it 250 ms more.
    assert!(
        used < Duration::from_millis(500),
        "{strategy}: {used:?} of CPU in the 2 s after the client left"
    );
    let (status, _) = server.stop();
    assert!(status.success(), "{strategy}");
    let s = read_stats(&stats);
    assert!(
        s["connections"]["delays_abandoned"].as_u64() >= Some(1),
        "{strategy}: {s}"
    );
    let adds = s["protocol"]["requests"]["add"].as_u64().unwrap();
    assert!(
        adds <= 3,
        "{strategy}: {adds} adds for a client that had gone"
    );
    assert_eq!(s["connections"]["closed"], 1, "{strategy}");
}

per_strategy!(orphaned_work, orphaned_delays_are_abandoned);

/// 200 topics of 32 KB names make a 6.5 MB LIST. 50 clients send LIST and
/// never read: the server holds at most the mark and a chunk of each, and
/// clients that do read are served promptly meanwhile.
fn list_to_clients_that_never_read(strategy: &str) {
    let _one = exclusive();
    let server = ServerProc::start("board", &["--strategy", strategy]);
    let name_len = 32 * 1024;
    let mut c = Client::connect(server.addr);
    for i in 0..200 {
        let mut post = format!("POST@{i:03}").into_bytes();
        post.resize(5 + name_len, b'n');
        post.extend_from_slice(b"#m");
        assert_eq!(c.req(&post), b"0", "{strategy}");
    }
    // Once whole, so the start counts what serving a LIST allocates.
    let list_len = 200 * (name_len + 2) - 1;
    assert_eq!(c.req(b"LIST").len(), list_len, "{strategy}");
    let start = rss_kib(server.pid());

    let silent: Vec<TcpStream> = (0..SILENT)
        .map(|_| silent_client(server.addr, b"LIST\0"))
        .collect();
    let pid = server.pid();
    let (latencies, peak) = std::thread::scope(|s| {
        let normal: Vec<_> = (0..4)
            .map(|t| s.spawn(move || lock_step_board(server.addr, t, Duration::from_millis(1500))))
            .collect();
        let peak = peak_rss(pid, Duration::from_millis(1800));
        let mut all: Vec<Duration> = normal.into_iter().flat_map(|n| n.join().unwrap()).collect();
        all.sort_unstable();
        (all, peak)
    });
    // Each: its input (at most the board's input limit) and its output (the
    // mark plus a part of the LIST, a chunk).
    let bound = SILENT as u64 * per_connection_kib(BOARD_MAX_REQUEST + 1, REPLY_CHUNK) + SLACK_KIB;
    assert!(
        peak <= start + bound,
        "{strategy}: {} KiB over the start, bound {bound} KiB",
        peak - start
    );
    // Served, not stalled behind the silent clients: a server that waited
    // on one would hold a normal client until the 30 s write timeout. A
    // busy machine alone took p99 to 1.4 s (seen), so the bound is 15 s, a
    // stall's mark, not a speed.
    let p99 = latencies[(latencies.len() * 99).div_ceil(100) - 1];
    assert!(
        p99 <= Duration::from_secs(15),
        "{strategy}: normal clients' p99 {p99:?} over {} requests",
        latencies.len()
    );
    silent.into_iter().for_each(reset);
    assert_eq!(c.req(b"COUNT@000nnn"), b"0", "{strategy}: still serving");
    assert!(server.stop().0.success(), "{strategy}");
}

/// Lock-step board requests for `for_`; each one's latency.
fn lock_step_board(addr: SocketAddr, t: usize, for_: Duration) -> Vec<Duration> {
    let mut c = Client::connect(addr);
    let mut latencies = Vec::new();
    let end = Instant::now() + for_;
    let mut i = 0u64;
    while Instant::now() < end {
        let request = match i % 3 {
            0 => format!("POST@normal{t}#m{i}"),
            1 => format!("COUNT@normal{t}"),
            _ => format!("READ@normal{t}#0"),
        };
        let sent = Instant::now();
        let reply = c.req(request.as_bytes());
        latencies.push(sent.elapsed());
        assert!(!reply.is_empty() || i % 3 == 2, "{request}");
        i += 1;
    }
    latencies
}

per_strategy!(list_memory, list_to_clients_that_never_read);

/// 50 clients pipeline GETs of a 1 MiB value and never read: the server
/// holds at most the mark and a chunk of each reply; once they are reset
/// its memory comes back near where it started.
fn gets_to_clients_that_never_read(strategy: &str) {
    let _one = exclusive();
    let server = ServerProc::start("kv", &["--strategy", strategy]);
    let value = vec![b'v'; 1 << 20];
    let mut c = Http::connect(server.addr);
    assert_eq!(c.request("PUT", "/big", Some(&value)).status, 201);
    assert_eq!(c.request("GET", "/big", None).body.len(), value.len());
    let start = rss_kib(server.pid());

    let gets = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n".repeat(64);
    let silent: Vec<TcpStream> = (0..SILENT)
        .map(|_| silent_client(server.addr, gets.as_bytes()))
        .collect();
    let peak = peak_rss(server.pid(), Duration::from_millis(1500));
    // Each: the GETs it sent (all the input it has), and the output (the
    // mark plus a part: a chunk of body and a response head).
    let bound = SILENT as u64 * per_connection_kib(gets.len(), REPLY_CHUNK + 1024) + SLACK_KIB;
    assert!(
        peak <= start + bound,
        "{strategy}: {} KiB over the start, bound {bound} KiB",
        peak - start
    );
    assert_eq!(c.request("GET", "/big", None).status, 200, "{strategy}");
    silent.into_iter().for_each(reset);
    std::thread::sleep(Duration::from_secs(5));
    let after = rss_kib(server.pid());
    assert!(
        after <= start + kept_after_burst_kib(),
        "{strategy}: {} KiB over the start 5 s after the clients were reset",
        after.saturating_sub(start)
    );
    assert!(server.stop().0.success(), "{strategy}");
}

per_strategy!(get_memory, gets_to_clients_that_never_read);

/// A client keeping `depth` requests in flight (`request(i)` is the i-th)
/// until the server closes the connection; the replies it received whole
/// (each ends with `term`), also added to `progress` as they come.
fn pipelined_until_closed(
    addr: SocketAddr,
    depth: usize,
    term: u8,
    progress: &AtomicU64,
    request: impl Fn(u64) -> Vec<u8>,
) -> u64 {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut sent = 0u64;
    for _ in 0..depth {
        s.write_all(&request(sent)).expect("send");
        sent += 1;
    }
    let (mut got, mut writing) = (0u64, true);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("read failed: {e}"),
        };
        let replies = buf[..n].iter().filter(|&&b| b == term).count() as u64;
        got += replies;
        // Relaxed: a count for the main thread to poll, nothing more.
        progress.fetch_add(replies, Ordering::Relaxed);
        for _ in 0..replies {
            // After the server's close a write may fail: it will not read.
            writing = writing && s.write_all(&request(sent)).is_ok();
            sent += 1;
        }
    }
    got
}

/// SIGTERM during a pipelined load: every request the server counts has
/// its reply delivered, its final statistics equal what the clients
/// received, and it exits 0 within the drain limit.
fn graceful_stop(strategy: &str, protocol: &str, args: &[&str], depth: usize) {
    let _one = exclusive();
    let (_dir, stats) = stats_file();
    let mut all = vec![
        "--strategy",
        strategy,
        "--stats-json",
        stats.to_str().unwrap(),
    ];
    all.extend(args);
    let mut server = ServerProc::start(protocol, &all);
    let addr = server.addr;
    let progress = AtomicU64::new(0);
    let progress = &progress;
    let (received, signalled) = std::thread::scope(|s| {
        let clients: Vec<_> = (0..4u64)
            .map(|c| {
                s.spawn(move || {
                    if protocol == "board" {
                        pipelined_until_closed(addr, depth, 0, progress, |i| match i % 2 {
                            0 => format!("POST@g{c}#m{i}\0").into_bytes(),
                            _ => format!("COUNT@g{c}\0").into_bytes(),
                        })
                    } else {
                        pipelined_until_closed(addr, depth, b'\n', progress, |i| {
                            format!("{},{c}\n", i % 2).into_bytes()
                        })
                    }
                })
            })
            .collect();
        // The stop comes mid-load: once the clients have had more replies
        // than their first windows (on a busy machine that may take a
        // while), or after 10 s whatever they had.
        let waited = Instant::now();
        while progress.load(Ordering::Relaxed) <= depth as u64 * 4
            && waited.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        server.signal(nix::sys::signal::Signal::SIGTERM);
        let signalled = Instant::now();
        let received: u64 = clients.into_iter().map(|c| c.join().unwrap()).sum();
        (received, signalled)
    });
    let status = server.wait_exit(DRAIN_LIMIT + Duration::from_secs(5));
    assert!(
        status.is_some_and(|s| s.success()),
        "{strategy} {protocol}: {status:?}"
    );
    assert!(
        signalled.elapsed() < DRAIN_LIMIT,
        "{strategy} {protocol}: exited {:?} after SIGTERM",
        signalled.elapsed()
    );
    let s = read_stats(&stats);
    assert_eq!(
        s["service_time_us"]["count"].as_u64(),
        Some(received),
        "{strategy} {protocol}: the server counted other than the clients received: {s}"
    );
    assert!(
        received > depth as u64 * 4,
        "{strategy} {protocol}: {received}"
    );
    assert_eq!(s["connections"]["unanswered_on_reset"], 0, "{strategy}");
    assert_eq!(s["connections"]["delays_abandoned"], 0, "{strategy}");
}

fn graceful_stop_board_and_bucket(strategy: &str) {
    graceful_stop(strategy, "board", &[], 16);
    graceful_stop(strategy, "bucket", &["--delay-unit", "ms"], 64);
}

per_strategy!(
    graceful_stop_answers_what_it_took,
    graceful_stop_board_and_bucket
);

/// Delays that would outlast the drain limit do not hold the stop: past
/// it the delay in progress is abandoned (its request never applied) and
/// the server exits 0.
fn the_drain_limit_bounds_the_stop(strategy: &str) {
    let (_dir, stats) = stats_file();
    let stats_arg = stats.to_str().unwrap();
    let mut server = ServerProc::start(
        "bucket",
        &["--strategy", strategy, "--stats-json", stats_arg],
    );
    let mut c = Client::connect(server.addr);
    // 16 requests of a minute each (the default unit is the second): 80
    // bytes, which a bucket server reads at once (it buffers at most
    // `--max-pipelined` shortest lines, 256 bytes by default, so 64 of
    // them were never all read). The stop comes once the server has read them (a busy machine
    // may take a while), and must end long before the first minute is up:
    // a busy machine may add seconds to the drain limit, never the minute.
    c.send("60,1\n".repeat(16).as_bytes());
    wait_for(
        &format!("{strategy}: the server reads the requests"),
        Duration::from_secs(30),
        || read_by_server(&c.stream),
    );
    server.signal(nix::sys::signal::Signal::SIGTERM);
    let status = server.wait_exit(Duration::from_secs(40));
    assert!(
        status.is_some_and(|s| s.success()),
        "{strategy}: {status:?} (40 s after SIGTERM)"
    );
    assert!(c.closed_by_server(), "{strategy}");
    let s = read_stats(&stats);
    assert_eq!(s["connections"]["delays_abandoned"], 1, "{strategy}: {s}");
    assert_eq!(s["protocol"]["requests"]["add"], 0, "{strategy}: {s}");
}

per_strategy!(drain_limit, the_drain_limit_bounds_the_stop);
