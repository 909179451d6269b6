//! `serverlab load resp --workload pubsub`: publishers PUBLISH stamped
//! messages, subscribers time and check their delivery. Against a small
//! pub/sub server of the test's own (threads, SUBSCRIBE, PSUBSCRIBE and
//! PUBLISH only): served honestly, every message arrives once and in
//! order; served with one message dropped, one duplicated or two
//! swapped, `--verify` names the fault and the run exits 1; a server
//! that never delivers, or floods a subscriber, ends the run in bounded
//! time and memory. Then against redis-server (ignored: it needs one).

use crate::resp_interop::RedisServer;
use crate::support::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the test's server serves pub/sub.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Honest,
    /// Message [`AT`] never reaches the first subscriber.
    Drop,
    /// Message [`AT`] reaches the first subscriber twice.
    Duplicate,
    /// Messages [`AT`] and [`AT`] + 1 reach the first subscriber swapped.
    Swap,
    /// No message reaches anyone (PUBLISH still counts the subscribers).
    Mute,
    /// Each subscriber, once subscribed, gets an endless stream of
    /// messages on its channel that no publisher sent.
    FloodMessages,
    /// Each subscriber, once subscribed, gets a message whose payload
    /// never ends.
    FloodBulk,
    /// Each subscriber, once subscribed, gets endless bytes that are not
    /// RESP.
    FloodJunk,
    /// PUBLISH's reply for message [`AT`] counts one subscriber fewer
    /// than it reached.
    Miscount,
    /// SUBSCRIBE is an unknown command.
    Refuse,
    /// SUBSCRIBE is never answered.
    Unconfirmed,
    /// Every message reaches its subscribers 700 ms after its PUBLISH.
    Late,
}

/// The message (counted over the whole server, from 0) a fault hits.
const AT: u64 = 20;

/// One subscription: a channel, or a pattern's prefix (`sl:…:*`).
struct Sub {
    name: Vec<u8>,
    pattern: bool,
    out: TcpStream,
}

struct Hub {
    fault: Fault,
    subs: Vec<Sub>,
    published: u64,
    /// A swapped message, held back.
    held: Option<Vec<u8>>,
}

/// A bulk string.
fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

/// The next whole command (an array of bulk strings) in `buf`, and its length.
fn command(buf: &[u8]) -> Option<(Vec<Vec<u8>>, usize)> {
    let line = |at: usize| -> Option<(&[u8], usize)> {
        let end = buf[at..].windows(2).position(|w| w == b"\r\n")? + at;
        Some((&buf[at + 1..end], end + 2))
    };
    let num = |b: &[u8]| std::str::from_utf8(b).unwrap().parse::<usize>().unwrap();
    if buf.is_empty() {
        return None;
    }
    assert_eq!(buf[0], b'*', "the load sends arrays");
    let (n, mut at) = line(0)?;
    let mut args = Vec::new();
    for _ in 0..num(n) {
        if at >= buf.len() {
            return None;
        }
        let (len, start) = line(at)?;
        let end = start + num(len);
        if buf.len() < end + 2 {
            return None;
        }
        args.push(buf[start..end].to_vec());
        at = end + 2;
    }
    Some((args, at))
}

impl Hub {
    fn matches(s: &Sub, channel: &[u8]) -> bool {
        if s.pattern {
            channel.starts_with(&s.name[..s.name.len() - 1])
        } else {
            s.name == channel
        }
    }

    /// PUBLISH `msg` to `channel`, faults and all: the count of
    /// subscribers it matched.
    fn publish(&mut self, channel: &[u8], msg: &[u8]) -> usize {
        let n = self.published;
        if n == 0 {
            // Floods start with the run, once every subscriber is in.
            for s in &self.subs {
                flood(self.fault, s.out.try_clone().unwrap(), &s.name);
            }
        }
        self.published += 1;
        let fault = self.fault;
        let mut held = self.held.take();
        let mut reached = 0;
        for s in self.subs.iter_mut().filter(|s| Hub::matches(s, channel)) {
            let mut frame = Vec::new();
            if s.pattern {
                frame.extend_from_slice(b"*4\r\n");
                bulk(&mut frame, b"pmessage");
                bulk(&mut frame, &s.name);
            } else {
                frame.extend_from_slice(b"*3\r\n");
                bulk(&mut frame, b"message");
            }
            bulk(&mut frame, channel);
            bulk(&mut frame, msg);
            let first = reached == 0;
            reached += 1;
            let copies: Vec<Vec<u8>> = match (fault, first) {
                (Fault::Mute, _) => vec![],
                (Fault::Drop, true) if n == AT => vec![],
                (Fault::Duplicate, true) if n == AT => vec![frame.clone(), frame],
                (Fault::Swap, true) if n == AT => {
                    held = Some(frame);
                    vec![]
                }
                (Fault::Swap, true) if n == AT + 1 => {
                    let mut both = vec![frame];
                    both.extend(held.take());
                    both
                }
                _ => vec![frame],
            };
            for c in copies {
                if fault == Fault::Late {
                    let mut out = s.out.try_clone().unwrap();
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(700));
                        let _ = out.write_all(&c);
                    });
                } else {
                    let _ = s.out.write_all(&c);
                }
            }
        }
        self.held = held;
        if fault == Fault::Miscount && n == AT {
            reached -= 1;
        }
        reached
    }
}

/// The test's pub/sub server, misbehaving as `fault` says: its address.
fn pubsub_server(fault: Fault) -> String {
    let hub = Arc::new(Mutex::new(Hub {
        fault,
        subs: Vec::new(),
        published: 0,
        held: None,
    }));
    fake_server(move |s| serve(&hub, s))
}

/// One connection: SUBSCRIBE, PSUBSCRIBE and PUBLISH until it closes.
fn serve(hub: &Mutex<Hub>, mut s: TcpStream) {
    let (mut buf, mut chunk) = (Vec::new(), [0u8; 65536]);
    loop {
        while let Some((args, len)) = command(&buf) {
            buf.drain(..len);
            let reply = answer(hub, &s, &args);
            if s.write_all(&reply).is_err() {
                return;
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn answer(hub: &Mutex<Hub>, s: &TcpStream, args: &[Vec<u8>]) -> Vec<u8> {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    let mut hub = hub.lock().unwrap();
    match name.as_str() {
        "PUBLISH" => format!(":{}\r\n", hub.publish(&args[1], &args[2])).into_bytes(),
        "SUBSCRIBE" | "PSUBSCRIBE" if hub.fault == Fault::Refuse => {
            format!("-ERR unknown command '{name}'\r\n").into_bytes()
        }
        "SUBSCRIBE" | "PSUBSCRIBE" if hub.fault == Fault::Unconfirmed => Vec::new(),
        "SUBSCRIBE" | "PSUBSCRIBE" => {
            let pattern = name == "PSUBSCRIBE";
            let mut out = Vec::new();
            for (k, ch) in args[1..].iter().enumerate() {
                out.extend_from_slice(b"*3\r\n");
                bulk(&mut out, name.to_ascii_lowercase().as_bytes());
                bulk(&mut out, ch);
                out.extend_from_slice(format!(":{}\r\n", k + 1).as_bytes());
            }
            // Confirmed before anything is delivered: written here, under
            // the lock, before the subscription is seen by PUBLISH.
            s.try_clone().unwrap().write_all(&out).unwrap();
            for ch in &args[1..] {
                hub.subs.push(Sub {
                    name: ch.clone(),
                    pattern,
                    out: s.try_clone().unwrap(),
                });
            }
            Vec::new()
        }
        _ => format!("-ERR unknown command '{name}'\r\n").into_bytes(),
    }
}

/// A flooding fault's stream to a subscriber of `channel` (a channel's
/// name), on a thread of its own until the subscriber goes.
fn flood(fault: Fault, mut out: TcpStream, channel: &[u8]) {
    let mut frame = b"*3\r\n".to_vec();
    bulk(&mut frame, b"message");
    bulk(&mut frame, channel);
    match fault {
        Fault::FloodMessages => {
            bulk(&mut frame, b"no stamp here");
            let frames = frame.repeat(1000);
            std::thread::spawn(move || while out.write_all(&frames).is_ok() {});
        }
        Fault::FloodJunk => {
            let junk = b"hello, subscriber\n".repeat(4096);
            std::thread::spawn(move || while out.write_all(&junk).is_ok() {});
        }
        Fault::FloodBulk => {
            frame.extend_from_slice(b"$999999999\r\n");
            let junk = vec![b'x'; 65536];
            std::thread::spawn(move || {
                let _ = out.write_all(&frame);
                while out.write_all(&junk).is_ok() {}
            });
        }
        _ => {}
    }
}

fn load(args: &[&str]) -> std::process::Output {
    crate::support::load("resp", args)
}

/// A short pub/sub run against `addr` with `more` flags: a reply timeout
/// of 1 s, for the faulty servers' lost messages to be called lost soon.
fn pubsub_run(addr: &str, more: &[&str]) -> (std::process::Output, String) {
    run_within(addr, "1s", more)
}

/// A short pub/sub run against `addr`, its reply timeout `timeout`.
fn run_within(addr: &str, timeout: &str, more: &[&str]) -> (std::process::Output, String) {
    let line = format!(
        "--addr {addr} --workload pubsub --duration 1s --warmup 0s --reply-timeout {timeout}"
    );
    let mut args = words(&line);
    args.extend(more);
    let out = load(&args);
    let stdout = text(&out.stdout);
    (out, stdout)
}

fn field(json: &serde_json::Value, name: &str) -> u64 {
    json["results"]["resp"]["pubsub"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("results.resp.pubsub.{name} in {json}"))
}

/// A verified run that must pass: every message delivered once, in
/// order, to every subscriber that hears its channel, each timed (the
/// `deliver` operation), and each PUBLISH's reach as expected.
fn passes(addr: &str, more: &[&str], ctx: &str) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut args = vec!["--verify", "--json", json.to_str().unwrap()];
    args.extend(more);
    // A reply timeout a busy machine cannot reach: a run that must pass
    // (10 s; one of 1 s timed out beside CPU hogs at a load average of 15).
    let (out, stdout) = run_within(addr, "10s", &args);
    assert!(
        out.status.success(),
        "{ctx}: {stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("lost 0, duplicated 0, reordered 0, garbled 0"),
        "{ctx}: {stdout}"
    );
    assert!(stdout.contains(" 0 mismatches"), "{ctx}: {stdout}");
    let j = read_json(&json);
    let (published, delivered) = (field(&j, "published"), field(&j, "delivered"));
    assert!(published > AT + 2, "{ctx}: {published} published");
    assert_eq!(delivered, field(&j, "expected_deliveries"), "{ctx}");
    assert_eq!(field(&j, "reach_got"), field(&j, "reach_expected"), "{ctx}");
    assert_eq!(field(&j, "publish_replies"), published, "{ctx}");
    let ops = op_counts(&j);
    let count = |op: &str| ops.iter().find(|(o, _)| o == op).map_or(0, |(_, n)| *n);
    assert!(
        count("PUBLISH") > 0 && count("deliver") > 0,
        "{ctx}: {ops:?}"
    );
    assert_eq!(count("deliver"), field(&j, "delivered_in_window"), "{ctx}");
    // Requests are the PUBLISHes: deliveries are recorded apart.
    assert_eq!(j["results"]["requests"].as_u64(), Some(count("PUBLISH")));
}

#[test]
fn an_honest_server_delivers_every_message_once_in_order() {
    let addr = pubsub_server(Fault::Honest);
    let counts = ["--publishers", "2", "--subscribers", "3", "--channels", "4"];
    passes(&addr, &counts, "channels");
    let mut patterns = counts.to_vec();
    patterns.push("--patterns");
    passes(&addr, &patterns, "patterns");
    let mut open = counts.to_vec();
    open.extend(["--rate", "400", "--value-size", "100..300"]);
    passes(&addr, &open, "open loop");
}

/// A faulty server's verified run: exit 1, the fault named and counted;
/// unverified, counted only (exit 0).
fn caught(fault: Fault, named: &str, counted: &str) {
    let addr = pubsub_server(fault);
    let (out, stdout) = pubsub_run(&addr, &["--verify"]);
    assert_eq!(out.status.code(), Some(1), "{fault:?}: {stdout}");
    assert!(stdout.contains(named), "{fault:?}: {stdout}");
    assert!(stdout.contains(counted), "{fault:?}: {stdout}");
    // A fresh server: the fault hits its server's message AT once.
    let (out, stdout) = pubsub_run(&pubsub_server(fault), &[]);
    assert_eq!(out.status.code(), Some(0), "{fault:?} unverified: {stdout}");
    assert!(stdout.contains(counted), "{fault:?} unverified: {stdout}");
}

#[test]
fn verify_catches_a_lost_message() {
    caught(
        Fault::Drop,
        "pubsub lost: subscriber 0 never got 1 messages",
        "lost 1, duplicated 0, reordered 0",
    );
}

#[test]
fn verify_catches_a_duplicated_message() {
    caught(
        Fault::Duplicate,
        "pubsub duplicated: subscriber 0",
        "lost 0, duplicated 1, reordered 0",
    );
}

#[test]
fn verify_catches_a_publish_that_misstates_its_reach() {
    caught(
        Fault::Miscount,
        "pubsub reach: PUBLISH to sl:",
        "(1 short, 0 over)",
    );
}

#[test]
fn verify_catches_two_reordered_messages() {
    caught(
        Fault::Swap,
        "pubsub reordered: subscriber 0",
        "lost 0, duplicated 0, reordered 1",
    );
}

/// A server that confirms every subscription and delivers nothing: the
/// publishers run their window, the subscribers drain for the reply
/// timeout, then every message counts as lost.
#[test]
fn a_server_that_never_delivers_loses_every_message_in_bounded_time() {
    let addr = pubsub_server(Fault::Mute);
    let t0 = std::time::Instant::now();
    let (out, stdout) = pubsub_run(&addr, &["--verify", "--subscribers", "2"]);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("pubsub lost"), "{stdout}");
    assert!(stdout.contains("delivered: 0 of "), "{stdout}");
    // 1 s of run and 1 s of drain; a generous hang guard.
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
}

/// A flooding server: the load ends within its window, drain and a
/// slack, in bounded memory, exit 1, saying why.
fn bounded_against(fault: Fault, says: &str) {
    let _turn = heavy_turn();
    let addr = pubsub_server(fault);
    let mut child = Command::new(BIN)
        .args(["load", "resp", "--addr", &addr, "--workload", "pubsub"])
        .args(words("--duration 1s --warmup 0s --reply-timeout 1s"))
        .arg("--verify")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let (code, hwm) = wait_watching_peak(&mut child, Duration::from_secs(30));
    let stdout = reader.join().unwrap();
    assert_eq!(code, Some(1), "{fault:?} (None: it hung): {stdout}");
    assert!(stdout.contains(says), "{fault:?}: {stdout}");
    assert!(hwm < 256 * 1024, "{fault:?}: peak {hwm} KiB");
}

#[test]
fn a_subscriber_flooded_with_messages_no_publisher_sent_ends_bounded() {
    bounded_against(Fault::FloodMessages, "pubsub garbled");
}

#[test]
fn a_subscriber_sent_what_is_not_resp_ends_bounded() {
    bounded_against(Fault::FloodJunk, "this does not look like a resp server");
}

#[test]
fn a_subscriber_sent_an_endless_message_ends_bounded() {
    bounded_against(Fault::FloodBulk, "a reply longer than");
}

/// A server that refuses SUBSCRIBE, or never confirms it: the run does
/// not start (no publisher sends), exit 1, saying what the server did.
#[test]
fn a_subscription_refused_or_never_confirmed_stops_the_run_before_it_starts() {
    let cases = [
        (
            Fault::Refuse,
            "SUBSCRIBE before the run: the server answered -ERR unknown command",
        ),
        (Fault::Unconfirmed, "not done within 5s"),
    ];
    for (fault, says) in cases {
        let t0 = std::time::Instant::now();
        let (out, stdout) = pubsub_run(&pubsub_server(fault), &["--verify"]);
        let all = format!("{stdout}{}", text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{fault:?}: {all}");
        assert!(all.contains(says), "{fault:?}: {all}");
        // The connect timeout is 5 s; a generous hang guard.
        assert!(t0.elapsed() < Duration::from_secs(30), "{fault:?}");
    }
}

#[test]
fn pubsub_usage_errors_name_their_flag() {
    let bad = |args: &[&str], flag: &str| load_usage_error("resp", args, flag);
    bad(&["--workload", "pubsub", "--channels", "0"], "--channels");
    bad(
        &["--workload", "pubsub", "--publishers", "0"],
        "--publishers",
    );
    bad(
        &["--workload", "pubsub", "--subscribers", "0"],
        "--subscribers",
    );
    bad(&["--channels", "3"], "--channels");
    bad(&["--workload", "board", "--patterns"], "--patterns");
    bad(
        &["--workload", "pubsub", "--value-size", "32"],
        "--value-size",
    );
    bad(&["--workload", "pubsub", "--requests", "10"], "--requests");
    bad(
        &["--workload", "pubsub", "--command", "GET __key__"],
        "--command",
    );
    bad(
        &words("--workload pubsub --publishers 4096 --channels 1000"),
        "--publishers",
    );
}

/// Against redis-server: verified runs over channels and patterns,
/// closed and open loop, every message delivered.
#[test]
#[ignore = "needs redis-server (apt-get install redis-server); run: cargo test --workspace -- --ignored"]
fn redis_server_delivers_every_message_verified() {
    let redis = RedisServer::start();
    let addr = redis.addr();
    let counts = ["--publishers", "3", "--subscribers", "4", "--channels", "6"];
    passes(&addr, &counts, "redis channels");
    let mut patterns = counts.to_vec();
    patterns.extend(["--patterns", "--pipeline", "4"]);
    passes(&addr, &patterns, "redis patterns");
    let mut open = counts.to_vec();
    open.extend(["--rate", "1000"]);
    passes(&addr, &open, "redis open loop");
}

/// A subscriber that heard nothing for longer than --reply-timeout when
/// the window closes, with a message published just before the end still
/// on its way: the drain waits for it (a reply timeout from the end), not
/// counting the quiet time before. (It used to be failed at once as
/// stalled, and its message counted lost.) Messages 2.5 s apart, each
/// delivered 0.7 s late: the last, sent at 2.5 s, comes after the 3 s
/// window, 2.3 s after the first: longer than the 2 s reply timeout (so
/// the old count would call it stalled), and 1.8 s before the drain ends
/// (room for a busy machine to deliver it later still).
#[test]
fn a_quiet_subscriber_awaits_a_message_still_on_its_way_at_the_end() {
    let addr = pubsub_server(Fault::Late);
    let line = format!(
        "--addr {addr} --workload pubsub --duration 3s --warmup 0s --reply-timeout 2s \
         --rate 0.4 --subscribers 1 --verify"
    );
    let out = load(&words(&line));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("lost 0, duplicated 0"), "{stdout}");
}

/// Against serverlab's own `serve resp`, under every strategy: a verified
/// run over channels, and one over patterns in an open loop, every
/// message delivered once and in order.
fn serve_resp_delivers(strategy: &str) {
    let server = ServerProc::start(
        "resp",
        &with_threads(strategy, "2", &["--strategy", strategy]),
    );
    let addr = server.addr.to_string();
    let counts = ["--publishers", "3", "--subscribers", "4", "--channels", "6"];
    passes(&addr, &counts, &format!("{strategy} channels"));
    let mut open = counts.to_vec();
    open.extend(["--patterns", "--rate", "1000"]);
    passes(&addr, &open, &format!("{strategy} patterns, open loop"));
}

per_strategy!(load_pubsub_serve_resp, serve_resp_delivers);

/// Two agents on one server (`--agent I/2`), each with publishers,
/// subscribers and channels of its own, verified; `serverlab merge`
/// adds their deliveries, `deliver` histograms and checks.
#[test]
fn agents_split_and_merge_a_pubsub_load() {
    let addr = pubsub_server(Fault::Honest);
    let dir = tempfile::tempdir().unwrap();
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        + Duration::from_secs(2);
    let at = format!("{:.3}", at.as_secs_f64());
    let children: Vec<_> = (0..2)
        .map(|i| {
            Command::new(BIN)
                .args(["load", "resp", "--addr", &addr, "--workload", "pubsub"])
                .args(["--publishers", "2", "--subscribers", "4", "--channels", "2"])
                .args(["--duration", "1s", "--warmup", "0s", "--verify"])
                .args(["--agent", &format!("{i}/2"), "--start-at", &at])
                .args(["--out", dir.path().to_str().unwrap(), "--format", "json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut delivered = 0;
    let mut deliver_ops = 0;
    for (i, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "agent {i}: {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let j = read_json(&dir.path().join(format!("agent-{i}-of-2.json")));
        assert_eq!(field(&j, "publishers"), 1, "agent {i}");
        assert_eq!(field(&j, "subscribers"), 2, "agent {i}");
        assert_eq!(field(&j, "lost"), 0, "agent {i}");
        delivered += field(&j, "delivered");
        let ops = op_counts(&j);
        deliver_ops += ops.iter().find(|(o, _)| o == "deliver").unwrap().1;
    }
    let out = run(&["merge", dir.path().to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "merge: {}", text(&out.stderr));
    let merged: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(delivered > 0);
    assert_eq!(field(&merged, "delivered"), delivered);
    assert_eq!(field(&merged, "expected_deliveries"), delivered);
    assert_eq!(field(&merged, "subscribers"), 4);
    let ops = op_counts(&merged);
    assert_eq!(
        ops.iter().find(|(o, _)| o == "deliver").map(|(_, n)| *n),
        Some(deliver_ops),
        "{ops:?}"
    );
    let v = &merged["results"]["verification"];
    assert!(v["checked"].as_u64() > Some(0), "{v}");
    assert_eq!(v["mismatches"], 0, "{v}");
}
