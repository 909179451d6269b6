//! Clients that no server can sink: small test servers, one per
//! misbehaviour (each reads the first request, then misbehaves), against
//! `load` of the matching protocol (with and without `--verify`) and
//! `check`. Each client must end within its duration plus its timeouts
//! plus 5 s, with a peak RSS (VmHWM in /proc) under 256 MB, exit 1, and
//! say a true cause in one line. Every test takes its turn with the
//! suite's other heavy tests ([`heavy_turn`]): a load busy-polls for its
//! replies while it waits. Each row is printed (run with `--nocapture` to
//! see them: docs/reliability.md's table).

use crate::support::{fake_server, heavy_turn, wait_watching_peak, BIN};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A load's `--duration` and `--reply-timeout`, and check's `--timeout`.
const DURATION_S: u64 = 2;
const TIMEOUT_S: u64 = 2;
/// The slack every client gets past its duration and timeouts.
const SLACK: Duration = Duration::from_secs(5);
/// Peak resident memory any client may reach.
const MAX_HWM_KIB: u64 = 256 * 1024;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Proto {
    Bucket,
    Board,
    Kv,
    Resp,
}

impl Proto {
    fn name(self) -> &'static str {
        match self {
            Proto::Bucket => "bucket",
            Proto::Board => "board",
            Proto::Kv => "kv",
            Proto::Resp => "resp",
        }
    }

    /// What a reply of this protocol begins with, so the client takes the
    /// stream for its own protocol's.
    fn reply_start(self) -> &'static [u8] {
        match self {
            Proto::Bucket | Proto::Board => b"",
            Proto::Kv => b"HTTP/1.1 200 OK\r\nX-Pad: ",
            Proto::Resp => b"+",
        }
    }

    /// A whole, well-formed reply, sent over and over by a flood.
    fn one_reply(self) -> &'static [u8] {
        match self {
            Proto::Bucket => b"0\n",
            Proto::Board => b"0\0",
            Proto::Kv => b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            Proto::Resp => b"+OK\r\n",
        }
    }
}

/// How a hostile server misbehaves after reading the first request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Misbehaviour {
    /// A reply that never ends: bytes without a terminator, for ever.
    EndlessLine,
    /// RESP: `$100000000000000` then bytes for ever.
    HugeBulk,
    /// RESP: `*1000000000` then elements for ever.
    HugeArray,
    /// kv: `Content-Length: 1073741000` then bytes for ever.
    HugeContentLength,
    /// The start of a reply, then one byte every 100 ms.
    Trickle,
    /// Reads requests, answers nothing.
    Silence,
    /// Accepts, never reads, never answers.
    NeverReads,
    /// Replies nobody asked for, as fast as they go.
    Flood,
}

/// Serve one connection as `how` for `proto`. Returns when the client
/// has gone (a write fails) or after a minute.
fn misbehave(mut s: TcpStream, proto: Proto, how: Misbehaviour) {
    let until = Instant::now() + Duration::from_secs(60);
    let mut first = [0u8; 4096];
    if !matches!(how, Misbehaviour::NeverReads | Misbehaviour::Flood) && s.read(&mut first).is_err()
    {
        return;
    }
    let filler = [b'A'; 64 * 1024];
    let stream = |s: &mut TcpStream, start: &[u8], body: &[u8]| {
        if s.write_all(start).is_err() {
            return;
        }
        while Instant::now() < until && s.write_all(body).is_ok() {}
    };
    match how {
        Misbehaviour::EndlessLine => stream(&mut s, proto.reply_start(), &filler),
        Misbehaviour::HugeBulk => stream(&mut s, b"$100000000000000\r\n", &filler),
        Misbehaviour::HugeArray => stream(&mut s, b"*1000000000\r\n", &b":1\r\n".repeat(4096)),
        Misbehaviour::HugeContentLength => stream(
            &mut s,
            b"HTTP/1.1 200 OK\r\nContent-Length: 1073741000\r\n\r\n",
            &filler,
        ),
        Misbehaviour::Flood => stream(&mut s, b"", &proto.one_reply().repeat(1024)),
        Misbehaviour::Trickle => {
            let _ = s.write_all(proto.reply_start());
            while Instant::now() < until && s.write_all(b"A").is_ok() {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Misbehaviour::Silence => {
            // Read (and drop) whatever comes, until the client goes.
            while Instant::now() < until && matches!(s.read(&mut first), Ok(n) if n > 0) {}
        }
        Misbehaviour::NeverReads => std::thread::sleep(until - Instant::now()),
    }
}

/// What a client run did: exit code, time, peak RSS, its first error line.
struct Outcome {
    code: Option<i32>,
    took: Duration,
    hwm_kib: u64,
    cause: String,
}

/// Run the binary with `args`, watching its peak RSS; killed at `limit`.
fn watched(args: &[String], limit: Duration) -> Outcome {
    let t0 = Instant::now();
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run serverlab");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut out = child.stdout.take().expect("stdout");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let (code, hwm) = wait_watching_peak(&mut child, limit);
    let took = t0.elapsed();
    let stderr = reader.join().unwrap_or_default();
    let stdout = out_reader.join().unwrap_or_default();
    Outcome {
        code,
        took,
        hwm_kib: hwm,
        cause: first_cause(&stderr, &stdout),
    }
}

/// The line that says why a run failed: the first "serverlab" line of
/// stderr (unless it only counts the errors), else the first error a
/// load's report lists, else the line under a check's first failed case.
fn first_cause(stderr: &str, stdout: &str) -> String {
    let under = |heading: &str| {
        let mut lines = stdout
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(heading));
        lines.next()?;
        lines.next()
    };
    stderr
        .lines()
        .find(|l| l.starts_with("serverlab") && !l.starts_with("serverlab: the run failed"))
        .or_else(|| under("errors:"))
        .or_else(|| under("FAIL"))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The clients to try against a `proto` server: load, load --verify,
/// check.
fn clients(proto: Proto, addr: &str, timeout_s: u64) -> Vec<(String, Vec<String>)> {
    let d = format!("{DURATION_S}s");
    let t = format!("{timeout_s}s");
    let mut load: Vec<String> = ["load", proto.name(), "--addr", addr, "--reply-timeout", &t]
        .map(String::from)
        .to_vec();
    match proto {
        Proto::Kv => load.extend(["--sessions", "20"].map(String::from)),
        _ => load.extend(["--duration".into(), d]),
    }
    if proto == Proto::Bucket {
        // Delays of 1–3 ms, so a reply timeout of 2 s is generous.
        load.extend(["--delay", "1-3", "--delay-unit", "ms"].map(String::from));
    }
    let mut verified = load.clone();
    verified.push("--verify".into());
    let mut check: Vec<String> = ["check", proto.name(), addr, "--timeout", &t]
        .map(String::from)
        .to_vec();
    if proto == Proto::Bucket {
        check.extend(["--buckets", "4", "--delay-unit", "ms"].map(String::from));
    }
    vec![
        ("load".into(), load),
        ("load --verify".into(), verified),
        ("check".into(), check),
    ]
}

/// Each client of `proto` against a server misbehaving as `how`: it ends
/// in time, small, with exit 1 and one of `causes` in its first error
/// line.
fn against(proto: Proto, how: Misbehaviour, causes: &[&str]) {
    against_within(proto, how, causes, TIMEOUT_S);
}

/// As [`against`], the clients' timeouts `timeout_s`.
fn against_within(proto: Proto, how: Misbehaviour, causes: &[&str], timeout_s: u64) {
    let addr = fake_server(move |s| misbehave(s, proto, how));
    for (client, args) in clients(proto, &addr, timeout_s) {
        // A check runs one case past the stall (each within its timeout),
        // a load its duration and its reply timeout, each after a setup
        // bounded by the same timeout.
        let allowed = Duration::from_secs(DURATION_S + 2 * timeout_s) + SLACK;
        let o = watched(&args, allowed + Duration::from_secs(30));
        eprintln!(
            "| {how:?} | {} {client} | {:.1} s | {} MB | {} |",
            proto.name(),
            o.took.as_secs_f64(),
            o.hwm_kib / 1024,
            o.cause
        );
        let what = format!("{how:?} vs {} {client}", proto.name());
        assert_eq!(o.code, Some(1), "{what}: {}", o.cause);
        assert!(o.took <= allowed, "{what}: took {:?}", o.took);
        assert!(o.hwm_kib < MAX_HWM_KIB, "{what}: peak {} KiB", o.hwm_kib);
        assert!(
            causes.iter().any(|c| o.cause.contains(c)),
            "{what}: the cause is not one of {causes:?}: {}",
            o.cause
        );
    }
}

const TOO_LONG: &[&str] = &["longer than"];
/// The clients' timeouts where the reply limit must cut the reply: long,
/// so that the limit, not the timeout, ends them even on a machine so
/// busy that the stream comes slowly (2 s let 1.3 MB of a huge array
/// through, short of the limit). The stream never ends: they take only
/// as long as reaching the limit.
const CUT_TIMEOUT_S: u64 = 30;
const NO_REPLY: &[&str] = &["no reply within", "until the timeout"];
/// A flood's replies are taken for the requests' own: the first that
/// cannot be is the cause (a reply to no request, a reply that is not
/// what was expected).
const UNASKED: &[&str] = &[
    "more than it was asked",
    "does not look like",
    "the server answered",
    "expected",
];

#[test]
fn an_endless_line_is_cut_at_the_reply_limit() {
    let _turn = heavy_turn();
    for proto in [Proto::Bucket, Proto::Board, Proto::Kv, Proto::Resp] {
        against_within(proto, Misbehaviour::EndlessLine, TOO_LONG, CUT_TIMEOUT_S);
    }
}

#[test]
fn a_huge_bulk_is_cut_at_the_reply_limit() {
    let _turn = heavy_turn();
    against_within(Proto::Resp, Misbehaviour::HugeBulk, TOO_LONG, CUT_TIMEOUT_S);
}

#[test]
fn a_huge_array_is_cut_at_the_reply_limit() {
    let _turn = heavy_turn();
    against_within(
        Proto::Resp,
        Misbehaviour::HugeArray,
        TOO_LONG,
        CUT_TIMEOUT_S,
    );
}

#[test]
fn a_huge_content_length_is_cut_at_the_reply_limit() {
    let _turn = heavy_turn();
    against_within(
        Proto::Kv,
        Misbehaviour::HugeContentLength,
        TOO_LONG,
        CUT_TIMEOUT_S,
    );
}

#[test]
fn a_trickle_times_out_as_a_whole() {
    let _turn = heavy_turn();
    for proto in [Proto::Bucket, Proto::Board, Proto::Kv, Proto::Resp] {
        against(proto, Misbehaviour::Trickle, NO_REPLY);
    }
}

#[test]
fn silence_times_out() {
    let _turn = heavy_turn();
    for proto in [Proto::Bucket, Proto::Board, Proto::Kv, Proto::Resp] {
        against(proto, Misbehaviour::Silence, NO_REPLY);
    }
}

#[test]
fn a_server_that_never_reads_times_out() {
    let _turn = heavy_turn();
    for proto in [Proto::Bucket, Proto::Board, Proto::Kv, Proto::Resp] {
        against(proto, Misbehaviour::NeverReads, NO_REPLY);
    }
}

#[test]
fn a_flood_of_replies_nobody_asked_for_fails_the_run() {
    let _turn = heavy_turn();
    for proto in [Proto::Bucket, Proto::Board, Proto::Kv, Proto::Resp] {
        against(proto, Misbehaviour::Flood, UNASKED);
    }
}

/// `--reply-timeout` bounds every load against a server that stops
/// answering: with a 30 s run and a 1 s timeout, each protocol's load
/// ends by the timeout, long before the run would, exit 1, saying so.
#[test]
fn reply_timeout_ends_every_load() {
    let _turn = heavy_turn();
    for proto in [Proto::Bucket, Proto::Board, Proto::Kv, Proto::Resp] {
        let addr = fake_server(move |s| misbehave(s, proto, Misbehaviour::Silence));
        let mut args: Vec<String> = ["load", proto.name(), "--addr", &addr]
            .map(String::from)
            .to_vec();
        args.extend(["--reply-timeout", "1s"].map(String::from));
        match proto {
            Proto::Kv => args.extend(["--sessions", "1000"].map(String::from)),
            _ => args.extend(["--duration", "30s"].map(String::from)),
        }
        let o = watched(&args, Duration::from_secs(60));
        let what = proto.name();
        assert_eq!(o.code, Some(1), "{what}: {}", o.cause);
        // Ended by the timeout, long before the 30 s run (a busy machine
        // may add seconds to the 1 s).
        assert!(
            o.took <= Duration::from_secs(15),
            "{what}: took {:?}",
            o.took
        );
        assert!(
            o.cause.contains("no reply within 1 s"),
            "{what}: {}",
            o.cause
        );
    }
}
