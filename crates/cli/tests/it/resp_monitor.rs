//! RESP's CLIENT LIST, CLIENT INFO and MONITOR over real sockets, under
//! every strategy and store: a monitor is sent each command the others
//! run, in Redis 7.0's line (`+secs.micros [db addr] "arg"…`, escaped as
//! Redis escapes it), a transaction's commands when EXEC runs them, not
//! the refused or administrative ones; RESET and QUIT end it; a monitor
//! that stops reading is cut off at `--pubsub-limit` as a subscriber is;
//! CLIENT LIST shows each connection with its flags (O, P, x, N).

use crate::resp::{cmd, resp_stores, Raw};
use crate::resp_interop::RedisServer;
use crate::support::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The next monitor line, checked against `[db addr] args` after its
/// timestamp (`secs.micros`, six digits of micros).
fn line(m: &mut Raw, rest: &str) {
    let got = text(&m.reply());
    let body = got
        .strip_prefix('+')
        .and_then(|l| l.strip_suffix("\r\n"))
        .unwrap_or_else(|| panic!("not a monitor line: {got:?}"));
    let (stamp, tail) = body.split_once(' ').expect("a timestamp");
    let (secs, micros) = stamp.split_once('.').expect("secs.micros");
    assert!(secs.parse::<u64>().is_ok() && micros.len() == 6, "{got:?}");
    assert!(micros.bytes().all(|b| b.is_ascii_digit()), "{got:?}");
    assert_eq!(tail, rest, "{got:?}");
}

/// The field `name=` of a CLIENT LIST line.
fn field<'a>(l: &'a str, name: &str) -> &'a str {
    l.split(' ')
        .find_map(|f| f.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {l:?}"))
}

/// CLIENT LIST's line of the connection numbered `id`.
fn listed(c: &mut Raw, id: &str) -> Option<String> {
    let list = c.bulk(&cmd(&["CLIENT", "LIST"]));
    list.lines()
        .find(|l| field(l, "id") == id)
        .map(str::to_owned)
}

fn monitor_script(addr: SocketAddr) {
    let mut m = Raw::connect(addr);
    let mut c = Raw::connect(addr);
    let me = c.stream.local_addr().unwrap().to_string();
    m.expect(&cmd(&["MONITOR"]), "+OK\r\n");
    // A second MONITOR is answered nothing, as Redis's: the PING's reply
    // comes next (its own line after it).
    m.expect(&cmd(&["MONITOR"]), "");
    m.expect(&cmd(&["PING"]), "+PONG\r\n");
    let mon = m.stream.local_addr().unwrap().to_string();
    line(&mut m, &format!("[0 {mon}] \"PING\""));
    c.expect(&cmd(&["SET", "k", "a b\"\\\n\r\t\x01"]), "+OK\r\n");
    line(
        &mut m,
        &format!("[0 {me}] \"SET\" \"k\" \"a b\\\"\\\\\\n\\r\\t\\x01\""),
    );
    // Refused before they run, administrative: not shown.
    c.send(&cmd(&["NOSUCH", "x"]));
    c.reply();
    c.send(&cmd(&["GET"]));
    c.reply();
    c.send(&cmd(&["CONFIG", "GET", "maxmemory"]));
    c.reply();
    c.send(&cmd(&["CLIENT", "LIST"]));
    c.reply();
    // A transaction: MULTI, then its commands when EXEC runs them (each
    // with the database it left), then EXEC.
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["INCR", "n"]), "+QUEUED\r\n");
    c.expect(&cmd(&["SELECT", "2"]), "+QUEUED\r\n");
    c.expect(&cmd(&["EXEC"]), "*2\r\n:1\r\n+OK\r\n");
    line(&mut m, &format!("[0 {me}] \"MULTI\""));
    line(&mut m, &format!("[0 {me}] \"INCR\" \"n\""));
    line(&mut m, &format!("[2 {me}] \"SELECT\" \"2\""));
    line(&mut m, &format!("[2 {me}] \"EXEC\""));
    // CLIENT LIST: the monitor's flags O, the caller's N and its name.
    c.expect(&cmd(&["CLIENT", "SETNAME", "caller"]), "+OK\r\n");
    line(
        &mut m,
        &format!("[2 {me}] \"CLIENT\" \"SETNAME\" \"caller\""),
    );
    c.send(&cmd(&["CLIENT", "ID"]));
    let id = text(&c.reply());
    let id = id.trim_start_matches(':').trim_end();
    line(&mut m, &format!("[2 {me}] \"CLIENT\" \"ID\""));
    let list = c.bulk(&cmd(&["CLIENT", "LIST"]));
    let mine = list.lines().find(|l| field(l, "id") == id).expect("listed");
    assert_eq!(field(mine, "addr"), me);
    assert_eq!(field(mine, "name"), "caller");
    assert_eq!(field(mine, "flags"), "N");
    assert_eq!(field(mine, "db"), "2");
    assert_eq!(field(mine, "cmd"), "client|list");
    assert_eq!(field(mine, "multi"), "-1");
    let theirs = list
        .lines()
        .find(|l| field(l, "addr") == mon)
        .expect("listed");
    assert_eq!(field(theirs, "flags"), "O");
    assert_eq!(field(theirs, "cmd"), "ping");
    assert_eq!(list.lines().count(), 2, "{list}");
    let info = c.bulk(&cmd(&["CLIENT", "INFO"]));
    line(&mut m, &format!("[2 {me}] \"CLIENT\" \"INFO\""));
    assert_eq!(field(&info, "cmd"), "client|info");
    assert_eq!(field(&info, "id"), id);
    let by_id = c.bulk(&cmd(&["CLIENT", "LIST", "ID", id, "999999"]));
    assert_eq!(by_id.lines().count(), 1, "{by_id}");
    assert_eq!(field(&by_id, "id"), id);
    c.expect(
        &cmd(&["CLIENT", "LIST", "ID", "x"]),
        "-ERR Invalid client ID\r\n",
    );
    // A subscriber is P (and type pubsub); a transaction's client x.
    let mut s = Raw::connect(addr);
    s.send(&cmd(&["SUBSCRIBE", "ch"]));
    s.reply();
    let sid = s.stream.local_addr().unwrap().to_string();
    line(&mut m, &format!("[0 {sid}] \"SUBSCRIBE\" \"ch\""));
    let subs = c.bulk(&cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]));
    assert_eq!(subs.lines().count(), 1, "{subs}");
    assert_eq!(field(&subs, "flags"), "P");
    assert_eq!(field(&subs, "sub"), "1");
    c.expect(&cmd(&["MULTI"]), "+OK\r\n");
    c.expect(&cmd(&["GET", "k"]), "+QUEUED\r\n");
    line(&mut m, &format!("[2 {me}] \"MULTI\""));
    let mut other = Raw::connect(addr);
    let l = listed(&mut other, id).expect("listed");
    assert_eq!((field(&l, "flags"), field(&l, "multi")), ("x", "1"));
    // MONITOR in a transaction is refused when EXEC runs it.
    c.expect(&cmd(&["MONITOR"]), "+QUEUED\r\n");
    c.expect(
        &cmd(&["EXEC"]),
        "*2\r\n$-1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n",
    );
    line(&mut m, &format!("[2 {me}] \"GET\" \"k\""));
    line(&mut m, &format!("[2 {me}] \"EXEC\""));
    // RESET ends the monitor: no line for it, none after, flags N.
    m.expect(&cmd(&["RESET"]), "+RESET\r\n");
    c.expect(&cmd(&["PING"]), "+PONG\r\n");
    m.expect(&cmd(&["PING"]), "+PONG\r\n");
    assert!(!c.bulk(&cmd(&["CLIENT", "LIST"])).contains("flags=O"));
    // QUIT, on a monitor, closes it (and it leaves the list).
    m.expect(&cmd(&["MONITOR"]), "+OK\r\n");
    m.expect(&cmd(&["QUIT"]), "+OK\r\n");
    assert!(m.closed());
    let gone = poll_until(Duration::from_secs(60), Duration::from_millis(20), || {
        !c.bulk(&cmd(&["CLIENT", "LIST"])).contains("flags=O")
    });
    assert!(gone, "the monitor stayed listed");
}

#[test]
fn monitor_and_client_list_under_every_strategy() {
    every_strategy_at_once("resp", monitor_script);
}

#[test]
fn monitor_and_client_list_under_every_store() {
    for store in resp_stores() {
        let server = ServerProc::start("resp", &["--store", store]);
        monitor_script(server.addr);
    }
}

#[test]
#[ignore = "needs redis-server 7.0.15"]
fn monitor_script_is_redis_server_s() {
    let redis = RedisServer::start();
    monitor_script(redis.addr().parse().unwrap());
}

/// A monitor that stops reading is cut off once its lines pass the hard
/// limit, and leaves CLIENT LIST; the writer is never held up.
fn slow_monitor_is_cut(strategy: &str) {
    let server = ServerProc::start(
        "resp",
        &words(&format!("--strategy {strategy} --pubsub-limit 256KiB,0,0")),
    );
    let mut m = Raw::connect(server.addr);
    m.expect(&cmd(&["MONITOR"]), "+OK\r\n");
    let mut c = Raw::connect(server.addr);
    let body = "x".repeat(16 * 1024);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut n = 0;
    while c.bulk(&cmd(&["CLIENT", "LIST"])).contains("flags=O") {
        for _ in 0..16 {
            c.expect(&cmd(&["SET", "k", &body]), "+OK\r\n");
            n += 1;
        }
        assert!(
            Instant::now() < deadline,
            "the monitor was never cut off ({n} SETs)"
        );
    }
    m.stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut m.stream, &mut sink);
}

#[test]
fn a_monitor_that_stops_reading_is_cut_off_under_every_strategy() {
    for strategy in strategies() {
        slow_monitor_is_cut(strategy);
    }
}
