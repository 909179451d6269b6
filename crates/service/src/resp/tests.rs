use super::*;
use crate::run_all;
use serverlab_proto::resp::client;
use serverlab_proto::resp::Name;
use serverlab_store::StoreKind;

fn service() -> RespService {
    RespService::new(StoreKind::Sharded, Limits::default(), "test".into()).unwrap()
}

fn peer() -> SocketAddr {
    "127.0.0.1:1".parse().unwrap()
}

/// The replies to `cmds`, sent as arrays on one connection.
fn replies(svc: &RespService, cmds: &[&[&str]]) -> String {
    let mut wire = Vec::new();
    for c in cmds {
        let args: Vec<&[u8]> = c.iter().map(|a| a.as_bytes()).collect();
        client::command(&mut wire, &args);
    }
    let mut conn = svc.open(peer());
    let mut out = Vec::new();
    let ran = run_all(svc, &mut conn, &wire, &mut out);
    assert_eq!(ran.applied.len(), cmds.len());
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn strings_and_counters() {
    let svc = service();
    let got = replies(
        &svc,
        &[
            &["PING"],
            &["ping", "hi"],
            &["ECHO", "x y"],
            &["GET", "k"],
            &["SET", "k", "v"],
            &["GET", "k"],
            &["SET", "k", "w", "NX"],
            &["SET", "k", "w", "XX"],
            &["SET", "new", "w", "XX"],
            &["EXISTS", "k", "k", "new"],
            &["INCR", "n"],
            &["INCRBY", "n", "41"],
            &["DECR", "n"],
            &["DECRBY", "n", "-2"],
            &["INCR", "k"],
            &["MSET", "a", "1", "b", "2"],
            &["MGET", "a", "nope", "b"],
            &["DEL", "a", "b", "nope"],
            &["DBSIZE"],
            &["FLUSHALL"],
            &["DBSIZE"],
        ],
    );
    assert_eq!(
        got,
        "+PONG\r\n$2\r\nhi\r\n$3\r\nx y\r\n$-1\r\n+OK\r\n$1\r\nv\r\n$-1\r\n+OK\r\n$-1\r\n:2\r\n\
         :1\r\n:42\r\n:41\r\n:43\r\n-ERR value is not an integer or out of range\r\n+OK\r\n\
         *3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n:2\r\n:2\r\n+OK\r\n:0\r\n"
    );
}

/// The key before the index, as Redis 7.0.15 answers: LINDEX of a
/// missing key is nil and of a string WRONGTYPE whatever the index says;
/// LPOP's count that is not a number is "out of range"; HELLO of any
/// version but 2 is NOPROTO in Redis's words.
#[test]
fn redis_reads_the_key_before_the_argument() {
    let svc = service();
    let got = replies(
        &svc,
        &[
            &["LINDEX", "missing", "abc"],
            &["SET", "s", "v"],
            &["LINDEX", "s", "abc"],
            &["RPUSH", "l", "a"],
            &["LINDEX", "l", "abc"],
            &["LPOP", "missing", "abc"],
            &["HELLO", "4"],
            &["HELLO", "3"],
            &["HELLO", "abc"],
        ],
    );
    assert_eq!(
        got,
        "$-1\r\n+OK\r\n\
         -WRONGTYPE Operation against a key holding the wrong kind of value\r\n:1\r\n\
         -ERR value is not an integer or out of range\r\n\
         -ERR value is out of range, must be positive\r\n\
         -NOPROTO unsupported protocol version\r\n-NOPROTO unsupported protocol version\r\n\
         -ERR Protocol version is not an integer or out of range\r\n"
    );
}

#[test]
fn lists_and_wrongtype() {
    let svc = service();
    let got = replies(
        &svc,
        &[
            &["RPUSH", "l", "a", "b", "c"],
            &["LPUSH", "l", "z"],
            &["LLEN", "l"],
            &["LINDEX", "l", "-1"],
            &["LINDEX", "l", "9"],
            &["LRANGE", "l", "0", "-1"],
            &["LRANGE", "l", "5", "9"],
            &["LPOP", "l"],
            &["RPOP", "l", "5"],
            &["LPOP", "l"],
            &["LPOP", "l", "2"],
            &["SET", "s", "v"],
            &["GET", "s"],
            &["RPUSH", "s", "x"],
            &["RPUSH", "l2", "x"],
            &["GET", "l2"],
            &["MGET", "l2", "s"],
        ],
    );
    let wt = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    assert_eq!(
        got,
        format!(
            ":3\r\n:4\r\n:4\r\n$1\r\nc\r\n$-1\r\n*4\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n\
             *0\r\n$1\r\nz\r\n*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n$-1\r\n*-1\r\n+OK\r\n$1\r\nv\r\n\
             {wt}:1\r\n{wt}*2\r\n$-1\r\n$1\r\nv\r\n"
        )
    );
    assert_eq!(svc.report()["errors"]["wrongtype"], 2);
}

#[test]
fn redis_error_replies() {
    let svc = service();
    let got = replies(
        &svc,
        &[
            &["FOO", "a", "b c"],
            &["foo"],
            &["GET"],
            &["CLIENT", "SETNAME"],
            &["CONFIG", "NOPE"],
            &["SET", "k", "v", "NX", "XX"],
            &["SELECT", "16"],
            &["SELECT", "0"],
            &["LPOP", "k", "-1"],
        ],
    );
    assert_eq!(
        got,
        "-ERR unknown command 'FOO', with args beginning with: 'a' 'b c' \r\n\
         -ERR unknown command 'foo', with args beginning with: \r\n\
         -ERR wrong number of arguments for 'get' command\r\n\
         -ERR wrong number of arguments for 'client|setname' command\r\n\
         -ERR unknown subcommand 'NOPE'. Try CONFIG HELP.\r\n\
         -ERR syntax error\r\n-ERR DB index is out of range\r\n+OK\r\n\
         -ERR value is out of range, must be positive\r\n"
    );
    let long = "x".repeat(200);
    let got = replies(&svc, &[&["nope", &long, "more"]]);
    assert_eq!(
        got.len(),
        "-ERR unknown command 'nope', with args beginning with: ".len() + 2 + 126 + 3 + 2
    );
}

#[test]
fn admin_commands() {
    let svc = service();
    let got = replies(
        &svc,
        &[
            &["CONFIG", "GET", "save"],
            &["CONFIG", "GET", "appendonly"],
            &["CONFIG", "GET", "nosuch"],
            &["COMMAND", "COUNT"],
            &["COMMAND", "DOCS"],
            &["CLIENT", "GETNAME"],
            &["CLIENT", "SETNAME", "me"],
            &["CLIENT", "GETNAME"],
            &["CLIENT", "SETINFO", "lib-name", "redis-py"],
        ],
    );
    let count = Name::ALL.len() - 1; // all but QUIT
    assert_eq!(
        got,
        format!(
            "*2\r\n$4\r\nsave\r\n$0\r\n\r\n*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n*0\r\n:{count}\r\n\
             *0\r\n$-1\r\n+OK\r\n$2\r\nme\r\n+OK\r\n"
        )
    );
    let info = replies(&svc, &[&["SET", "k", "v"], &["INFO"]]);
    for needle in [
        "# Server\r\nredis_version:",
        "# Clients\r\nconnected_clients:",
        "# Stats\r\n",
        "total_commands_processed:",
        "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n",
        "used_memory_rss:",
    ] {
        assert!(info.contains(needle), "{needle}: {info}");
    }
    let only = replies(&svc, &[&["INFO", "keyspace"]]);
    assert!(
        only.contains("# Keyspace") && !only.contains("# Server"),
        "{only}"
    );
    let all = replies(&svc, &[&["COMMAND"]]);
    assert!(
        all.starts_with(&format!("*{count}\r\n*10\r\n$4\r\nping\r\n:-1\r\n")),
        "{all}"
    );
}

#[test]
fn inline_pipelines_and_protocol_errors() {
    let svc = service();
    let mut conn = svc.open(peer());
    let mut out = Vec::new();
    let ran = run_all(
        &svc,
        &mut conn,
        b"SET k \"a b\"\r\n\r\nGET k\nQUIT\r\nGET k\r\n",
        &mut out,
    );
    assert_eq!(out, b"+OK\r\n$3\r\na b\r\n+OK\r\n");
    assert!(ran.closed(), "QUIT closes");
    let mut conn = svc.open(peer());
    let mut out = Vec::new();
    let ran = run_all(&svc, &mut conn, b"PING\r\n*1\r\n$x\r\n", &mut out);
    assert_eq!(
        out,
        b"+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"
    );
    assert!(ran.frame_closed);
    assert_eq!(svc.report()["protocol_errors"]["bad_bulk_length"], 1);
}

/// `apply` acts on what `frame` parsed: given other bytes of the same
/// length, it reads its arguments from them at the framed positions.
#[test]
fn apply_uses_what_frame_parsed() {
    let svc = service();
    let mut conn = svc.open(peer());
    let mut out = Vec::new();
    let wire = b"*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n";
    let Frame::Ready { len, request } = svc.frame(&mut conn, wire, &mut out) else {
        panic!("a whole request")
    };
    assert_eq!(len, wire.len());
    let other = b"*2\r\n$4\r\nXXXX\r\n$3\r\nxyz\r\n";
    svc.apply(&mut conn, request, other, &mut out);
    assert_eq!(out, b"$3\r\nxyz\r\n", "ECHO as framed, of the bytes given");
}

/// A fresh directory under the system's temporary one.
fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("serverlab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn writes_are_logged_and_replay_to_the_same_data_reads_are_not() {
    use serverlab_wal::{Durability, Options, Wal};
    let dir = scratch_dir("resp-replay");
    let wal = Wal::open(&dir, Options::new(Durability::Os), |_| Ok(())).unwrap();
    let svc = service().with_log(wal);
    replies(
        &svc,
        &[
            &["SET", "s", "1"],
            &["INCRBY", "s", "41"],
            &["RPUSH", "l", "a", "b", "c"],
            &["LPOP", "l"],
            &["MSET", "m", "x", "gone", "y"],
            &["DEL", "gone"],
            &["GET", "s"],
            &["LRANGE", "l", "0", "-1"],
        ],
    );
    assert_eq!(
        svc.wal().unwrap().stats().records,
        6,
        "the two reads are not logged"
    );
    drop(svc);

    let again = service();
    let wal = Wal::open(&dir, Options::new(Durability::Os), |r| again.replay(r)).unwrap();
    assert_eq!(wal.recovery().records(), 6);
    let got = replies(
        &again,
        &[
            &["GET", "s"],
            &["LRANGE", "l", "0", "-1"],
            &["GET", "m"],
            &["EXISTS", "gone"],
        ],
    );
    assert_eq!(
        got,
        "$2\r\n42\r\n*2\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nx\r\n:0\r\n"
    );
    drop(wal);
    let _ = std::fs::remove_dir_all(dir);
}

/// Waits until `wal` has finished a compaction, then reopens `dir` into a
/// fresh service (a compaction still running holds the directory).
fn reopened_after_compaction(
    svc: RespService,
    dir: &std::path::Path,
    opts: &serverlab_wal::Options,
) -> (RespService, serverlab_wal::Wal) {
    use serverlab_wal::{Error, Wal};
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while svc.wal().unwrap().stats().compactions == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no compaction finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(svc);
    let again = service();
    let wal = loop {
        match Wal::open(dir, opts.clone(), |r| again.replay(r)) {
            Ok(wal) => break wal,
            Err(Error::InUse { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            Err(e) => panic!("{e}"),
        }
    };
    (again, wal)
}

/// Records that do not overwrite (INCRBY, pushes, pops) replay to the same
/// state across a compaction: the snapshot is the state exactly at the cut.
#[test]
fn a_due_compaction_snapshots_the_exact_state_and_replays_to_it() {
    use serverlab_wal::{Durability, Options, Wal};
    let dir = scratch_dir("resp-compact");
    let mut opts = Options::new(Durability::Os);
    opts.compaction_floor = 2048;
    let wal = Wal::open(&dir, opts.clone(), |_| Ok(())).unwrap();
    let svc = service().with_log(wal);
    for round in 0..200 {
        let value = format!("value-{round}");
        let n = round.to_string();
        replies(
            &svc,
            &[
                &["SET", "s", &value],
                &["INCRBY", "counter", "3"],
                &["RPUSH", "list", &n, "pad"],
                &["LPOP", "list"],
                &["SET", &format!("k{}", round % 7), &value],
            ],
        );
    }
    let (again, wal) = reopened_after_compaction(svc, &dir, &opts);
    assert!(wal.recovery().snapshot.is_some(), "{}", wal.recovery());
    let got = replies(
        &again,
        &[
            &["GET", "s"],
            &["GET", "counter"],
            &["LLEN", "list"],
            &["LINDEX", "list", "0"],
            &["LINDEX", "list", "-1"],
            &["GET", "k3"],
        ],
    );
    // 200 rounds each push two and pop one: 200 left, the pushes of
    // rounds 100 to 199 ("100", "pad", …, "199", "pad").
    assert_eq!(
        got,
        "$9\r\nvalue-199\r\n$3\r\n600\r\n:200\r\n$3\r\n100\r\n$3\r\npad\r\n$9\r\nvalue-199\r\n"
    );
    drop(wal);
    let _ = std::fs::remove_dir_all(dir);
}

/// The state a test reads back: each key's string or list, and the count.
fn dump(svc: &RespService) -> String {
    replies(
        svc,
        &[
            &["GET", "s"],
            &["GET", "n"],
            &["LRANGE", "l", "0", "-1"],
            &["LRANGE", "r", "0", "-1"],
            &["GET", "m1"],
            &["GET", "gone"],
            &["DBSIZE"],
        ],
    )
}

#[test]
fn writes_in_flight_when_the_fsync_fails_are_taken_back_under_every_store() {
    use serverlab_wal::{Durability, Options, Wal};
    for kind in serverlab_store::resp::KINDS {
        let dir = scratch_dir(&format!("resp-undo-{kind}"));
        let mut opts = Options::new(Durability::Always);
        // One fsync for each of the three setup commands, then EIO.
        opts.fail_syncs_after = Some(3);
        opts.fsync_delay = std::time::Duration::from_millis(200);
        let wal = Wal::open(&dir, opts, |_| Ok(())).unwrap();
        let svc = RespService::new(kind, Limits::default(), "test".into())
            .unwrap()
            .with_log(wal);
        // Commits that succeed, one at a time: the state a failure must
        // come back to.
        let setup: &[&[&str]] = &[
            &["MSET", "s", "before", "n", "10", "gone", "here"],
            &["RPUSH", "l", "a", "b", "c"],
            &["RPUSH", "r", "x", "y"],
        ];
        let mut conn = svc.open(peer());
        for c in setup {
            let mut wire = Vec::new();
            let args: Vec<&[u8]> = c.iter().map(|a| a.as_bytes()).collect();
            client::command(&mut wire, &args);
            run_all(&svc, &mut conn, &wire, &mut Vec::new());
            let Some(Logged::Ticket(t)) = svc.logged(&mut conn) else {
                panic!("no ticket")
            };
            svc.wal().unwrap().wait(t).unwrap();
        }
        let before = dump(&svc);
        // Every kind of write, in flight together while the next fsync
        // (200 ms, then EIO) runs.
        let got = replies(
            &svc,
            &[
                &["SET", "s", "after"],
                &["INCRBY", "n", "5"],
                &["LPUSH", "l", "z1", "z2"],
                &["RPOP", "r"],
                &["LPOP", "l", "2"],
                &["LPOP", "l", "0"],
                &["RPOP", "r", "0"],
                &["MSET", "m1", "v", "s", "again"],
                &["DEL", "gone", "l"],
                &["RPUSH", "l", "fresh"],
                &["FLUSHALL"],
                &["SET", "s", "last"],
            ],
        );
        assert!(got.starts_with("+OK\r\n:15\r\n"), "{kind}: {got}");
        let wal = svc.wal().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while wal.failure().is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "the fsync never failed"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(
            dump(&svc),
            before,
            "{kind}: the failed writes stayed in the store"
        );
        let refused = replies(&svc, &[&["SET", "s", "x"], &["GET", "s"]]);
        assert!(
            refused.starts_with("-MISCONF the write-ahead log failed: fdatasync of "),
            "{kind}: {refused}"
        );
        assert!(refused.ends_with("$6\r\nbefore\r\n"), "{kind}: {refused}");
        let info = replies(&svc, &[&["INFO", "persistence"]]);
        assert!(info.contains("aof_last_write_status:err"), "{info}");
        assert!(
            info.contains("serverlab_log_failure:fdatasync of "),
            "{info}"
        );
        drop(svc);
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The op asked of a timed request is the family the report counts it
/// under (INCR as `incrby`); an unknown command is `rejected`, an empty
/// request `empty`. The store's size is its keys.
#[test]
fn timed_requests_are_recorded_by_the_family_counted() {
    let svc = service();
    svc.common().times.time_every_request();
    let mut conn = svc.open(peer());
    let mut out = Vec::new();
    let wire = b"SET a 1\r\nINCR a\r\nINCRBY a 2\r\n*0\r\nNOPE\r\nGET a\r\n";
    run_all(&svc, &mut conn, wire, &mut out);
    let by_op: Vec<(&str, u64)> = svc
        .common()
        .times
        .cumulative_by_op(&[1])
        .into_iter()
        .map(|(op, c)| (RespService::OPS[op], c.count))
        .collect();
    assert_eq!(
        by_op,
        vec![
            ("get", 1),
            ("set", 1),
            ("incrby", 2),
            ("rejected", 1),
            ("empty", 1)
        ]
    );
    let r = svc.report();
    assert_eq!(
        (
            r["requests"]["incrby"].as_u64(),
            r["requests"]["rejected"].as_u64()
        ),
        (Some(2), Some(1))
    );
    assert_eq!(svc.store_size(), Some(("keys", 1)));
}

/// A string grown in place reserves as Redis's `sdsMakeRoomFor` does
/// (what it needs and as much again, at most 1 MiB more), not double:
/// one byte appended to a 4 MiB string does not take 8 MiB; a string
/// made by the command (the key absent) takes what it needs, no more.
#[test]
fn a_string_grown_in_place_reserves_at_most_a_mebibyte_more() {
    let svc = service();
    let mib = 1usize << 20;
    // The capacity of k's string: `want` (an allocator may round up).
    let reserved = |svc: &RespService, want: usize| {
        let ks = svc.keyspace.read().unwrap();
        let mut cap = 0;
        let _ = ks.dbs[0]
            .store
            .edit(b"k", false, &mut |s| cap = s.capacity());
        assert!((want..=want + want / 8).contains(&cap), "{cap}, not {want}");
    };
    let at = (4 * mib - 1).to_string();
    let out = replies(&svc, &[&["SETRANGE", "k", &at, "x"]]);
    assert_eq!(out, format!(":{}\r\n", 4 * mib));
    reserved(&svc, 4 * mib);
    let out = replies(&svc, &[&["APPEND", "k", "y"]]);
    assert_eq!(out, format!(":{}\r\n", 4 * mib + 1));
    reserved(&svc, 5 * mib + 1);
    let at = (6 * mib).to_string();
    let out = replies(&svc, &[&["SETRANGE", "k", &at, "z"]]);
    assert_eq!(out, format!(":{}\r\n", 6 * mib + 1));
    reserved(&svc, 7 * mib + 1);
    // Small strings: what they need and as much again.
    let out = replies(&svc, &[&["DEL", "k"], &["APPEND", "k", "0123456789"]]);
    assert_eq!(out, ":1\r\n:10\r\n");
    reserved(&svc, 10);
    assert_eq!(replies(&svc, &[&["APPEND", "k", "!"]]), ":11\r\n");
    reserved(&svc, 22);
    let bit = (8 * mib + 7).to_string();
    assert_eq!(replies(&svc, &[&["SETBIT", "k", &bit, "1"]]), ":0\r\n");
    reserved(&svc, 2 * mib + 1);
}

/// Under `always`, a string grown in place whose record never commits
/// is taken back, and what its growth reserved goes with it: a short
/// string does not keep the megabytes a refused SETRANGE made room for.
#[test]
fn a_string_growth_taken_back_gives_its_room_back() {
    use serverlab_wal::{Committer, Durability, Options, Wal};
    let dir = std::env::temp_dir().join(format!("serverlab-room-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut opts = Options::new(Durability::Always);
    // Commits when the test asks; every `fsync` after the first fails.
    opts.committer = Committer::Caller;
    opts.fail_syncs_after = Some(1);
    let wal = Wal::open(&dir, opts, |_| Ok(())).unwrap();
    let svc = service().with_log(wal);
    assert_eq!(replies(&svc, &[&["SET", "k", "hello"]]), "+OK\r\n");
    svc.wal().unwrap().commit_pending();
    let at = (4usize << 20).to_string();
    let out = replies(&svc, &[&["SETRANGE", "k", &at, "x"]]);
    assert_eq!(out, format!(":{}\r\n", (4 << 20) + 1));
    svc.wal().unwrap().commit_pending();
    assert!(svc.wal().unwrap().failure().is_some());
    assert_eq!(replies(&svc, &[&["GET", "k"]]), "$5\r\nhello\r\n");
    let ks = svc.keyspace.read().unwrap();
    let mut cap = 0;
    let _ = ks.dbs[0]
        .store
        .edit(b"k", false, &mut |s| cap = s.capacity());
    assert!(cap < 64, "{cap}");
    drop(ks);
    drop(svc);
    let _ = std::fs::remove_dir_all(dir);
}

/// CLIENT LIST ID naming one connection past --max-query bytes of lines
/// is refused with the error that says so, not built whole.
#[test]
fn client_list_by_id_is_bounded_by_max_query() {
    let limits = Limits {
        max_query: 4096,
        ..Limits::default()
    };
    let svc = RespService::new(StoreKind::Sharded, limits, "test".into()).unwrap();
    let mut many = vec!["CLIENT", "LIST", "ID"];
    many.extend(std::iter::repeat_n("1", 100));
    let got = replies(&svc, &[&["CLIENT", "LIST", "ID", "1"], &many]);
    assert!(got.starts_with("$"), "{got}");
    assert!(
        got.ends_with("-ERR the reply would pass --max-query (4096 bytes)\r\n"),
        "{got}"
    );
}
