//! RESP's publish/subscribe over real sockets: every command's replies
//! byte for byte (against serverlab alone under every strategy and
//! store, and the same script against redis-server 7.0.15, ignored
//! here); under every strategy, 100 subscribers each get every message of
//! several publishers exactly once and in each publisher's order, a
//! subscriber that stops reading is cut off at `--pubsub-limit` while the
//! others keep receiving, and a subscribed connection is refused other
//! commands as Redis refuses them.

use crate::resp::{cmd, resp_stores, Raw};
use crate::resp_interop::RedisServer;
use crate::support::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const ONLY: &str =
    "only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context";

fn refused(name: &str) -> String {
    format!("-ERR Can't execute '{name}': {ONLY}\r\n")
}

fn confirm(word: &str, name: Option<&str>, n: usize) -> String {
    let name = name.map_or("$-1\r\n".to_string(), |c| {
        format!("${}\r\n{c}\r\n", c.len())
    });
    format!("*3\r\n${}\r\n{word}\r\n{name}:{n}\r\n", word.len())
}

fn message(ch: &str, m: &str) -> String {
    format!(
        "*3\r\n$7\r\nmessage\r\n${}\r\n{ch}\r\n${}\r\n{m}\r\n",
        ch.len(),
        m.len()
    )
}

fn pmessage(p: &str, ch: &str, m: &str) -> String {
    format!(
        "*4\r\n$8\r\npmessage\r\n${}\r\n{p}\r\n${}\r\n{ch}\r\n${}\r\n{m}\r\n",
        p.len(),
        ch.len(),
        m.len()
    )
}

/// The commands and their exact replies, as redis-server 7.0.15 gives
/// them (no reply here depends on the order of a hash table's walk: at
/// most one channel is unsubscribed at once by an UNSUBSCRIBE of all).
fn script(addr: SocketAddr) {
    let mut s = Raw::connect(addr);
    let mut p = Raw::connect(addr);
    // Nothing subscribed: an unsubscribe of all says so.
    p.expect(&cmd(&["UNSUBSCRIBE"]), &confirm("unsubscribe", None, 0));
    p.expect(&cmd(&["PUNSUBSCRIBE"]), &confirm("punsubscribe", None, 0));
    p.expect(
        &cmd(&["UNSUBSCRIBE", "x"]),
        &confirm("unsubscribe", Some("x"), 0),
    );
    p.expect(&cmd(&["PUBLISH", "news", "hi"]), ":0\r\n");
    p.expect(&cmd(&["PUBSUB", "NUMSUB"]), "*0\r\n");
    p.expect(&cmd(&["PUBSUB", "CHANNELS"]), "*0\r\n");
    p.expect(&cmd(&["PUBSUB", "NUMPAT"]), ":0\r\n");
    p.expect(
        &cmd(&["SUBSCRIBE"]),
        "-ERR wrong number of arguments for 'subscribe' command\r\n",
    );
    p.expect(
        &cmd(&["PUBLISH", "a"]),
        "-ERR wrong number of arguments for 'publish' command\r\n",
    );
    p.expect(
        &cmd(&["PUBSUB"]),
        "-ERR wrong number of arguments for 'pubsub' command\r\n",
    );
    p.expect(
        &cmd(&["PUBSUB", "foo"]),
        "-ERR unknown subcommand 'foo'. Try PUBSUB HELP.\r\n",
    );
    p.expect(
        &cmd(&["PUBSUB", "NUMPAT", "x"]),
        "-ERR wrong number of arguments for 'pubsub|numpat' command\r\n",
    );
    p.expect(
        &cmd(&["PUBSUB", "CHANNELS", "a", "b"]),
        "-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.\r\n",
    );
    p.expect(
        &cmd(&["PSUBSCRIBE"]),
        "-ERR wrong number of arguments for 'psubscribe' command\r\n",
    );
    p.expect(
        &cmd(&["PUBLISH", "a", "b", "c"]),
        "-ERR wrong number of arguments for 'publish' command\r\n",
    );
    p.expect(&cmd(&["PUBSUB", "SHARDCHANNELS"]), "*0\r\n");
    p.expect(
        &cmd(&["PUBSUB", "SHARDNUMSUB", "a", "b"]),
        "*4\r\n$1\r\na\r\n:0\r\n$1\r\nb\r\n:0\r\n",
    );
    p.send(&cmd(&["PUBSUB", "HELP"]));
    let help = text(&p.reply());
    assert!(help.starts_with("*14\r\n+PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CHANNELS [<pattern>]\r\n"), "{help}");
    assert!(
        help.ends_with("+HELP\r\n+    Prints this help.\r\n"),
        "{help}"
    );
    // Subscribe: each name confirmed with the count of subscriptions.
    s.expect(
        &cmd(&["SUBSCRIBE", "news", "news"]),
        &(confirm("subscribe", Some("news"), 1) + &confirm("subscribe", Some("news"), 1)),
    );
    s.expect(
        &cmd(&["PSUBSCRIBE", "n?ws", "x[a-c]*"]),
        &(confirm("psubscribe", Some("n?ws"), 2) + &confirm("psubscribe", Some("x[a-c]*"), 3)),
    );
    p.expect(
        &cmd(&["PUBSUB", "NUMSUB", "news", "none"]),
        "*4\r\n$4\r\nnews\r\n:1\r\n$4\r\nnone\r\n:0\r\n",
    );
    p.expect(&cmd(&["PUBSUB", "NUMPAT"]), ":2\r\n");
    p.expect(&cmd(&["PUBSUB", "CHANNELS", "n*"]), "*1\r\n$4\r\nnews\r\n");
    p.expect(&cmd(&["PUBSUB", "CHANNELS", "z*"]), "*0\r\n");
    // A message to the channel and to each pattern it matches.
    p.expect(&cmd(&["PUBLISH", "news", "hello"]), ":2\r\n");
    let want = message("news", "hello") + &pmessage("n?ws", "news", "hello");
    assert_eq!(text(&s.read_n(want.len())), want);
    p.expect(&cmd(&["PUBLISH", "xb1", ""]), ":1\r\n");
    let want = pmessage("x[a-c]*", "xb1", "");
    assert_eq!(text(&s.read_n(want.len())), want);
    p.expect(&cmd(&["PUBLISH", "xd", "no"]), ":0\r\n");
    p.expect(&cmd(&["PUBLISH", "NEWS", "case counts"]), ":0\r\n");
    // Subscribe mode: PING is a message; other commands are refused.
    s.expect(&cmd(&["PING"]), "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    s.expect(&cmd(&["PING", "x"]), "*2\r\n$4\r\npong\r\n$1\r\nx\r\n");
    s.expect(&cmd(&["GET", "k"]), &refused("get"));
    s.expect(&cmd(&["CLIENT", "ID"]), &refused("client|id"));
    s.expect(&cmd(&["PUBLISH", "a", "b"]), &refused("publish"));
    s.expect(&cmd(&["PUBSUB", "NUMPAT"]), &refused("pubsub|numpat"));
    s.expect(&cmd(&["MULTI"]), &refused("multi"));
    s.expect(
        &cmd(&["EXEC"]),
        &format!("-EXECABORT Transaction discarded because of: Can't execute 'exec': {ONLY}\r\n"),
    );
    s.expect(
        &cmd(&["GET"]),
        "-ERR wrong number of arguments for 'get' command\r\n",
    );
    s.expect(
        &cmd(&["NOSUCH", "x"]),
        "-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n",
    );
    s.expect(b"PING hi\r\n", "*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");
    // Unsubscribing: by name (one not subscribed is still answered),
    // then all of a kind.
    s.expect(
        &cmd(&["UNSUBSCRIBE", "news", "other"]),
        &(confirm("unsubscribe", Some("news"), 2) + &confirm("unsubscribe", Some("other"), 2)),
    );
    s.expect(&cmd(&["UNSUBSCRIBE"]), &confirm("unsubscribe", None, 2));
    s.expect(
        &cmd(&["PUNSUBSCRIBE", "n?ws"]),
        &confirm("punsubscribe", Some("n?ws"), 1),
    );
    s.expect(
        &cmd(&["PUNSUBSCRIBE"]),
        &confirm("punsubscribe", Some("x[a-c]*"), 0),
    );
    // Out of subscribe mode.
    s.expect(&cmd(&["PING"]), "+PONG\r\n");
    s.expect(&cmd(&["GET", "k"]), "$-1\r\n");
    // SUBSCRIBE in a transaction runs at EXEC; what follows it there
    // runs in subscribe mode.
    s.expect(&cmd(&["MULTI"]), "+OK\r\n");
    s.expect(&cmd(&["SUBSCRIBE", "m"]), "+QUEUED\r\n");
    s.expect(&cmd(&["PING"]), "+QUEUED\r\n");
    s.expect(
        &cmd(&["EXEC"]),
        &format!(
            "*2\r\n{}*2\r\n$4\r\npong\r\n$0\r\n\r\n",
            confirm("subscribe", Some("m"), 1)
        ),
    );
    s.expect(&cmd(&["GET", "x"]), &refused("get"));
    // RESET leaves subscribe mode.
    s.expect(&cmd(&["RESET"]), "+RESET\r\n");
    s.expect(&cmd(&["GET", "x"]), "$-1\r\n");
    p.expect(&cmd(&["PUBLISH", "m", "gone"]), ":0\r\n");
    // QUIT in subscribe mode.
    s.expect(
        &cmd(&["SUBSCRIBE", "q"]),
        &confirm("subscribe", Some("q"), 1),
    );
    s.expect(&cmd(&["QUIT"]), "+OK\r\n");
    assert!(s.closed());
    // A closed subscriber is no longer counted.
    let gone = poll_until(Duration::from_secs(30), Duration::from_millis(20), || {
        p.send(&cmd(&["PUBSUB", "NUMSUB", "q"]));
        text(&p.reply()) == "*2\r\n$1\r\nq\r\n:0\r\n"
    });
    assert!(gone, "the closed subscriber stayed");
}

#[test]
fn pubsub_replies_byte_for_byte_under_every_strategy() {
    every_strategy_at_once("resp", script);
}

#[test]
fn pubsub_replies_byte_for_byte_under_every_store() {
    for store in resp_stores() {
        let server = ServerProc::start("resp", &["--store", store]);
        script(server.addr);
    }
}

#[test]
#[ignore = "needs redis-server 7.0.15"]
fn pubsub_script_is_redis_server_s() {
    let redis = RedisServer::start();
    script(redis.addr().parse().unwrap());
}

/// 100 subscribers (half to the channel, half to a pattern matching it)
/// and 4 publishers at once: each subscriber gets each message once, and
/// each publisher's in the order it published them.
fn exactly_once_in_order(addr: SocketAddr) {
    const SUBS: usize = 100;
    const PUBS: usize = 4;
    const EACH: usize = 50;
    let mut subs: Vec<Raw> = (0..SUBS).map(|_| Raw::connect(addr)).collect();
    for (i, s) in subs.iter_mut().enumerate() {
        if i % 2 == 0 {
            s.expect(
                &cmd(&["SUBSCRIBE", "feed"]),
                &confirm("subscribe", Some("feed"), 1),
            );
        } else {
            s.expect(
                &cmd(&["PSUBSCRIBE", "fe*"]),
                &confirm("psubscribe", Some("fe*"), 1),
            );
        }
    }
    std::thread::scope(|sc| {
        for p in 0..PUBS {
            sc.spawn(move || {
                let mut c = Raw::connect(addr);
                for m in 0..EACH {
                    c.expect(
                        &cmd(&["PUBLISH", "feed", &format!("{p}:{m}")]),
                        &format!(":{SUBS}\r\n"),
                    );
                }
            });
        }
    });
    for (i, s) in subs.iter_mut().enumerate() {
        let mut next = [0usize; PUBS];
        for _ in 0..PUBS * EACH {
            let r = text(&s.reply());
            let body = r.rsplit("\r\n").nth(1).expect("a message");
            let (p, m) = body.split_once(':').expect("publisher:message");
            let (p, m): (usize, usize) = (p.parse().unwrap(), m.parse().unwrap());
            assert_eq!(
                m, next[p],
                "subscriber {i}: publisher {p}'s messages in order, once"
            );
            next[p] += 1;
        }
        // Nothing more: each once.
        s.expect(&cmd(&["PING"]), "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    }
}

#[test]
fn every_message_reaches_every_subscriber_once_in_order_under_every_strategy() {
    for strategy in strategies() {
        let server = ServerProc::start("resp", &["--strategy", strategy]);
        exactly_once_in_order(server.addr);
    }
}

/// A subscriber that stops reading is cut off once it falls past the
/// hard limit; another, reading, gets every message meanwhile; the cut is
/// counted in the metrics.
fn slow_subscriber_is_cut(strategy: &str) {
    let server = ServerProc::start(
        "resp",
        &words(&format!(
            "--strategy {strategy} --pubsub-limit 256KiB,0,0 --metrics 127.0.0.1:0"
        )),
    );
    let addr = server.addr;
    let mut slow = Raw::connect(addr);
    slow.expect(
        &cmd(&["SUBSCRIBE", "c"]),
        &confirm("subscribe", Some("c"), 1),
    );
    let mut fast = Raw::connect(addr);
    fast.expect(
        &cmd(&["SUBSCRIBE", "c"]),
        &confirm("subscribe", Some("c"), 1),
    );
    let mut p = Raw::connect(addr);
    let body = "x".repeat(16 * 1024);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut sent = 0;
    // What the reading subscriber has read: the publisher keeps within a
    // few messages of it, so that it never falls behind however slowly
    // this machine runs it.
    let read = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|sc| {
        let reader = sc.spawn(|| {
            // Until the publisher's last message, marked `end`.
            loop {
                let r = text(&fast.reply());
                if r.ends_with("$3\r\nend\r\n") {
                    return read.load(std::sync::atomic::Ordering::SeqCst);
                }
                assert!(r.starts_with("*3\r\n$7\r\nmessage\r\n"), "{r:.60}");
                read.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        loop {
            while read.load(std::sync::atomic::Ordering::SeqCst) + 4 < sent {
                assert!(Instant::now() < deadline, "the reading subscriber stalled");
                std::thread::sleep(Duration::from_millis(1));
            }
            p.send(&cmd(&["PUBLISH", "c", &body]));
            sent += 1;
            // The slow one leaves the registry once cut off and closed.
            if text(&p.reply()) == ":1\r\n" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the slow subscriber was never cut off"
            );
        }
        p.expect(&cmd(&["PUBLISH", "c", "end"]), ":1\r\n");
        let got = reader.join().unwrap();
        // It got every message (the last publish reached only it).
        assert_eq!(got, sent, "the reading subscriber lost messages");
    });
    // The cut one is closed: what it still reads ends.
    slow.stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut slow.stream, &mut sink);
    let metrics = crate::metrics::scrape(crate::metrics::metrics_at(&server));
    let cut = crate::metrics::sample(
        &metrics,
        "serverlab_resp_pubsub_slow_subscribers_disconnected_total",
        &[],
    );
    assert_eq!(cut, Some(1.0), "{metrics}");
}

#[test]
fn a_subscriber_that_stops_reading_is_cut_off_under_every_strategy() {
    for strategy in strategies() {
        slow_subscriber_is_cut(strategy);
    }
}

/// A subscriber that stops reading leaves its thread, task or ring
/// waiting for its socket to take more, not spinning: each message
/// published meanwhile wakes it once. (Under thread-per-connection a wake
/// used to stay in the wake-up pair, so every later wait for the socket
/// ended at once: a core spent until the socket drained or the write
/// timeout.) Beside CPU hogs the spin would get less CPU, never the fixed
/// code more, so a busy machine cannot fail this.
#[test]
fn a_subscriber_behind_a_full_socket_costs_no_cpu_under_every_strategy() {
    for strategy in strategies() {
        let server = ServerProc::start("resp", &["--strategy", strategy]);
        let mut slow = Raw::connect(server.addr);
        slow.expect(
            &cmd(&["SUBSCRIBE", "c"]),
            &confirm("subscribe", Some("c"), 1),
        );
        let mut p = Raw::connect(server.addr);
        // 16 MiB: far past what the sockets hold, within the 32 MiB limit.
        let body = "x".repeat(64 * 1024);
        for _ in 0..256 {
            p.expect(&cmd(&["PUBLISH", "c", &body]), ":1\r\n");
        }
        let before = crate::hostile_flow::cpu_time(server.pid());
        for _ in 0..20 {
            p.expect(&cmd(&["PUBLISH", "c", "wake"]), ":1\r\n");
            std::thread::sleep(Duration::from_millis(100));
        }
        let spent = crate::hostile_flow::cpu_time(server.pid()) - before;
        assert!(
            spent < Duration::from_millis(400),
            "{strategy}: the server used {spent:?} of CPU in 2 s with one subscriber behind"
        );
        drop(slow);
    }
}

/// At the connection cap a new connection evicts the one waiting longest
/// for a request, but never a subscriber: it waits for messages, and
/// evicting it would lose them.
#[test]
fn a_subscriber_is_not_evicted_at_the_connection_cap_under_every_strategy() {
    for strategy in strategies() {
        let server = ServerProc::start("resp", &["--strategy", strategy, "--max-connections", "2"]);
        let mut sub = Raw::connect(server.addr);
        sub.expect(
            &cmd(&["SUBSCRIBE", "c"]),
            &confirm("subscribe", Some("c"), 1),
        );
        let mut idle = Raw::connect(server.addr);
        idle.expect(&cmd(&["PING"]), "+PONG\r\n");
        // The third evicts the idle one, though the subscriber has waited
        // longer.
        let mut p = Raw::connect(server.addr);
        p.expect(&cmd(&["PUBLISH", "c", "m"]), ":1\r\n");
        let want = message("c", "m");
        assert_eq!(text(&sub.read_n(want.len())), want, "{strategy}");
        assert!(idle.closed(), "{strategy}: the idle connection stayed");
    }
}

#[test]
fn a_bad_pubsub_limit_names_itself() {
    for bad in ["1,2", "32MiB,8MiB,x", "lots,1,1", "1,2,3,4"] {
        usage_error(&["serve", "resp", "--pubsub-limit", bad], "--pubsub-limit");
    }
}
