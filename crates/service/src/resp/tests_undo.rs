//! Writes taken back when their record never commits (`always`), driven
//! deterministically: the log commits only when the test asks
//! (`Committer::Caller`) and every `fsync` after the first fails
//! (`fail_syncs_after`), so a write applied and not yet committed is
//! exactly the one the failure leaves, and no timing decides it.

use super::*;
use crate::run_all;
use serverlab_proto::resp::client;
use serverlab_proto::resp::name::Access;
use serverlab_proto::resp::Name;
use serverlab_wal::{Committer, Durability, Options, Wal};

fn peer() -> SocketAddr {
    "127.0.0.1:1".parse().unwrap()
}

/// A service of store `kind` logging under `always` into a fresh
/// directory; its log commits when asked, and only its first `fsync`
/// succeeds.
fn failing(kind: StoreKind, name: &str) -> (RespService, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("serverlab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut opts = Options::new(Durability::Always);
    opts.committer = Committer::Caller;
    opts.fail_syncs_after = Some(1);
    let wal = Wal::open(&dir, opts, |_| Ok(())).unwrap();
    let svc = RespService::new(kind, Limits::default(), "test".into())
        .unwrap()
        .with_log(wal);
    (svc, dir)
}

/// The replies to `cmds` on `conn`.
fn on(svc: &RespService, conn: &mut RespConn, cmds: &[Vec<Vec<u8>>]) -> String {
    let mut wire = Vec::new();
    for c in cmds {
        let args: Vec<&[u8]> = c.iter().map(|a| &a[..]).collect();
        client::command(&mut wire, &args);
    }
    let mut out = Vec::new();
    let ran = run_all(svc, conn, &wire, &mut out);
    assert_eq!(ran.applied.len(), cmds.len());
    String::from_utf8_lossy(&out).into_owned()
}

fn cmd(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

fn run(svc: &RespService, cmds: &[&[&str]]) -> String {
    let cmds: Vec<_> = cmds.iter().map(|c| cmd(c)).collect();
    on(svc, &mut svc.open(peer()), &cmds)
}

/// Everything a test compares, read back through the protocol: in
/// databases 0 to 2, every key, its type, its contents (members and
/// fields sorted) and its deadline.
fn state(svc: &RespService) -> String {
    let mut conn = svc.open(peer());
    let mut all = String::new();
    for db in 0..3 {
        on(svc, &mut conn, &[cmd(&["SELECT", &db.to_string()])]);
        let keys = on(svc, &mut conn, &[cmd(&["KEYS", "*"])]);
        all += &format!("db {db}: {keys}");
        for key in keys.split("\r\n").skip(2).step_by(2) {
            let kind = on(svc, &mut conn, &[cmd(&["TYPE", key])]);
            let read: &[&str] = match kind.trim() {
                "+string" => &["GET", key],
                "+list" => &["LRANGE", key, "0", "-1"],
                "+set" => &["SORT", key, "ALPHA"],
                "+hash" => &["HGETALL", key],
                _ => &["ZRANGE", key, "0", "-1", "WITHSCORES"],
            };
            let mut body = on(svc, &mut conn, &[cmd(read)]);
            if kind.trim() == "+hash" {
                let mut lines: Vec<&str> = body.split("\r\n").skip(1).collect();
                let mut pairs: Vec<String> = lines.chunks_mut(4).map(|c| c.join("|")).collect();
                pairs.sort();
                body = pairs.join(",");
            }
            let at = on(svc, &mut conn, &[cmd(&["PEXPIRETIME", key])]);
            all += &format!("{key} {kind}{body} deadline {at}");
        }
    }
    all
}

/// Commits what is pending: the first time it succeeds, then it fails.
fn commit(svc: &RespService) {
    let wal = svc.wal().unwrap();
    wal.commit_pending();
}

/// A state with a value of every type, some with deadlines, and a key
/// in database 1; committed.
const SETUP: &[&[&str]] = &[
    &["SADD", "s", "a", "b", "c"],
    &["HSET", "h", "f1", "v1", "f2", "v2", "cnt", "5"],
    &["RPUSH", "l", "a", "b", "c", "d"],
    &["RPUSH", "l2", "x"],
    &["ZADD", "z", "1", "m1", "2", "m2"],
    &["SET", "str", "hello"],
    &["SET", "n", "10"],
    &["SET", "t", "timed"],
    &["PEXPIREAT", "t", "99999999999999"],
    &["PEXPIREAT", "s", "99999999999990"],
    &["SELECT", "1"],
    &["SET", "o", "other"],
    &["SELECT", "0"],
];

/// One command of every write in the command table (by name), each
/// changing something of [`SETUP`].
fn samples() -> Vec<(Name, Vec<Vec<&'static str>>)> {
    use Name::*;
    let one = |n: Name, c: &[&'static str]| (n, vec![c.to_vec()]);
    vec![
        one(Set, &["SET", "t", "new"]),
        one(Del, &["DEL", "s", "l", "t"]),
        one(Incr, &["INCR", "n"]),
        one(Decr, &["DECR", "n"]),
        one(IncrBy, &["INCRBY", "n", "5"]),
        one(DecrBy, &["DECRBY", "n", "5"]),
        one(MSet, &["MSET", "str", "a", "t", "b", "new", "c"]),
        one(LPush, &["LPUSH", "l", "x", "y"]),
        one(RPush, &["RPUSH", "l", "x"]),
        one(LPop, &["LPOP", "l", "2"]),
        one(RPop, &["RPOP", "l2"]),
        one(FlushAll, &["FLUSHALL"]),
        one(FlushDb, &["FLUSHDB"]),
        one(GetEx, &["GETEX", "t", "PERSIST"]),
        one(GetDel, &["GETDEL", "str"]),
        one(GetSet, &["GETSET", "str", "q"]),
        one(SetNx, &["SETNX", "newk", "v"]),
        one(SetEx, &["SETEX", "str", "100", "v"]),
        one(PSetEx, &["PSETEX", "t", "100000", "v"]),
        one(MSetNx, &["MSETNX", "a", "1", "b", "2"]),
        one(SetRange, &["SETRANGE", "str", "2", "XY"]),
        one(Append, &["APPEND", "str", "!!"]),
        one(IncrByFloat, &["INCRBYFLOAT", "n", "1.5"]),
        one(SetBit, &["SETBIT", "str", "3", "1"]),
        one(LMove, &["LMOVE", "l", "l2", "LEFT", "RIGHT"]),
        one(RPopLPush, &["RPOPLPUSH", "l2", "fresh"]),
        one(LRem, &["LREM", "l", "0", "a"]),
        one(LMPop, &["LMPOP", "2", "nope", "l", "RIGHT", "COUNT", "2"]),
        one(LSet, &["LSET", "l", "1", "X"]),
        one(LTrim, &["LTRIM", "l", "1", "2"]),
        one(LInsert, &["LINSERT", "l", "BEFORE", "b", "q"]),
        one(LPushX, &["LPUSHX", "l", "q", "r"]),
        one(RPushX, &["RPUSHX", "l2", "q"]),
        one(BLPop, &["BLPOP", "nope", "l", "0"]),
        one(BRPop, &["BRPOP", "l2", "0"]),
        one(BLMove, &["BLMOVE", "l", "l", "RIGHT", "LEFT", "0"]),
        one(BRPopLPush, &["BRPOPLPUSH", "l2", "l", "0"]),
        one(BLMPop, &["BLMPOP", "0", "1", "l", "LEFT", "COUNT", "3"]),
        one(Rename, &["RENAME", "t", "str"]),
        one(RenameNx, &["RENAMENX", "s", "fresh"]),
        one(Copy, &["COPY", "h", "str", "REPLACE"]),
        one(Move, &["MOVE", "t", "2"]),
        one(Unlink, &["UNLINK", "s", "h"]),
        one(Expire, &["EXPIRE", "str", "100"]),
        one(PExpire, &["PEXPIRE", "t", "-5"]),
        one(ExpireAt, &["EXPIREAT", "str", "1"]),
        one(PExpireAt, &["PEXPIREAT", "t", "99999999999"]),
        one(Persist, &["PERSIST", "t"]),
        one(SwapDb, &["SWAPDB", "0", "1"]),
        (
            Exec,
            vec![
                vec!["MULTI"],
                vec!["SADD", "s", "z"],
                vec!["LPUSH", "l", "q"],
                vec!["SET", "t", "1"],
                vec!["FLUSHDB"],
                vec!["SET", "after", "flush"],
                vec!["EXEC"],
            ],
        ),
        one(Sort, &["SORT", "l", "ALPHA", "DESC", "STORE", "str"]),
        // The payload is made below (it is binary).
        one(Restore, &["RESTORE", "str", "0", "PAYLOAD", "REPLACE"]),
        one(SAdd, &["SADD", "s", "c", "d", "x", "d"]),
        one(SRem, &["SREM", "s", "a", "b", "c", "zz"]),
        one(SPop, &["SPOP", "s", "2"]),
        one(SMove, &["SMOVE", "s", "fresh", "a"]),
        one(SInterStore, &["SINTERSTORE", "str", "s", "s"]),
        one(SUnionStore, &["SUNIONSTORE", "s", "s", "nope"]),
        one(SDiffStore, &["SDIFFSTORE", "l", "s", "nope"]),
        one(HSet, &["HSET", "h", "f1", "X", "f3", "Y", "f1", "Z"]),
        one(HMSet, &["HMSET", "h", "f2", "X", "f4", "Y"]),
        one(HDel, &["HDEL", "h", "f1", "f2", "cnt", "nope"]),
        one(HIncrBy, &["HINCRBY", "h", "cnt", "3"]),
        one(HSetNx, &["HSETNX", "h", "f9", "v9"]),
        one(HIncrByFloat, &["HINCRBYFLOAT", "h", "cnt", "0.5"]),
        one(ZAdd, &["ZADD", "z", "5", "m1", "7", "m9"]),
        one(ZRem, &["ZREM", "z", "m1"]),
        one(ZPopMin, &["ZPOPMIN", "z", "5"]),
        one(ZPopMax, &["ZPOPMAX", "z"]),
        one(ZIncrBy, &["ZINCRBY", "z", "2.5", "m1"]),
        one(ZRangeStore, &["ZRANGESTORE", "str", "z", "0", "-1"]),
        one(ZRemRangeByScore, &["ZREMRANGEBYSCORE", "z", "(1", "+inf"]),
        one(ZRemRangeByRank, &["ZREMRANGEBYRANK", "z", "0", "-1"]),
        one(ZRemRangeByLex, &["ZREMRANGEBYLEX", "z", "-", "[m1"]),
        one(ZMPop, &["ZMPOP", "2", "nope", "z", "MAX", "COUNT", "5"]),
        one(
            ZUnionStore,
            &["ZUNIONSTORE", "z", "2", "z", "s", "WEIGHTS", "2", "3"],
        ),
        one(ZInterStore, &["ZINTERSTORE", "l", "2", "z", "z"]),
        one(ZDiffStore, &["ZDIFFSTORE", "str", "2", "z", "nope"]),
        one(BZPopMin, &["BZPOPMIN", "nope", "z", "0"]),
        one(BZPopMax, &["BZPOPMAX", "z", "0"]),
        one(BZMPop, &["BZMPOP", "0", "1", "z", "MIN", "COUNT", "2"]),
        one(
            GeoAdd,
            &["GEOADD", "z", "CH", "13.36", "38.11", "m1", "15", "37", "g"],
        ),
    ]
}

/// Every write of the command table, applied and then refused by a
/// failed `fsync`, leaves the store as it was, deadlines and other
/// databases included. FUNCTION (FLUSH, there being no functions)
/// changes nothing and is left out; the table must name every other.
#[test]
fn every_write_in_the_table_is_taken_back_when_its_fsync_fails() {
    let samples = samples();
    for name in Name::ALL {
        let covered = samples.iter().any(|(n, _)| *n == name);
        let write = name.facts().access == Access::Write;
        assert_eq!(
            covered,
            write && name != Name::Function,
            "{name:?}: every write but FUNCTION has a sample, and only writes"
        );
    }
    let payload = super::alone::dump::encode(serverlab_store::resp::Held::Str(b"restored"));
    let mut kept = Vec::new();
    for kind in serverlab_store::resp::KINDS {
        for (name, cmds) in &samples {
            if !taken_back(kind, *name, cmds, &payload) {
                kept.push((kind, *name));
            }
        }
    }
    assert!(kept.is_empty(), "not taken back: {kept:?}");
}

/// The undos that keep only what a write changed, each case of them:
/// an APPEND, SETRANGE or SETBIT on a short string, a long one and an
/// absent key (the old length and bytes put back, or the key removed);
/// LREM from either end, LTRIM of either end or of everything, LINSERT
/// at either end; SET, MSET (one key twice) and DEL moving out a list, a
/// set and a long string; UNLINK, GETDEL and RESTORE over values of every
/// kind. Each is applied to [`SETUP`] under every store, refused by a
/// failed `fsync`, and must leave the state as it was.
#[test]
fn each_precise_undo_puts_back_exactly_what_changed() {
    use Name::*;
    let long: &'static str = Box::leak("0123456789".repeat(100).into_boxed_str());
    // A transaction: `cmds` between MULTI and EXEC.
    let multi = |cmds: &[&[&'static str]]| -> Vec<Vec<&'static str>> {
        let mut all = vec![vec!["MULTI"]];
        all.extend(cmds.iter().map(|c| c.to_vec()));
        all.push(vec!["EXEC"]);
        all
    };
    let one = |n: Name, c: &[&'static str]| (n, vec![c.to_vec()]);
    let mut cases = vec![
        one(Append, &["APPEND", "fresh", "abc"]),
        one(SetRange, &["SETRANGE", "str", "9", "XY"]),
        one(SetRange, &["SETRANGE", "fresh", "3", "ab"]),
        one(SetBit, &["SETBIT", "str", "100", "1"]),
        one(SetBit, &["SETBIT", "fresh", "7", "1"]),
        one(SetBit, &["SETBIT", "str", "0", "1"]),
        one(IncrByFloat, &["INCRBYFLOAT", "fresh", "2.5"]),
        one(Set, &["SET", "fresh", "v", "EX", "100"]),
        one(Set, &["SET", "s", "v", "KEEPTTL"]),
        one(GetDel, &["GETDEL", "t"]),
        one(GetEx, &["GETEX", "t", "PXAT", "1"]),
        one(Unlink, &["UNLINK", "l", "z", "n", "nope"]),
        one(Restore, &["RESTORE", "fresh", "0", "PAYLOAD"]),
        one(Restore, &["RESTORE", "l", "0", "PAYLOAD", "REPLACE"]),
        one(LTrim, &["LTRIM", "l", "9", "10"]),
        one(LTrim, &["LTRIM", "l", "0", "0"]),
        one(LTrim, &["LTRIM", "l", "-2", "-1"]),
        one(LInsert, &["LINSERT", "l", "AFTER", "d", "q"]),
        one(LInsert, &["LINSERT", "l", "BEFORE", "a", "q"]),
        one(Set, &["SET", "l", "x"]),
        one(Del, &["DEL", "s", "h", "l", "nope"]),
        one(MSet, &["MSET", "n", "1", "z", "2", "n", "3", "new", "4"]),
        one(Incr, &["INCR", "fresh"]),
        one(HSetNx, &["HSETNX", "fresh", "f", "v"]),
        one(HIncrByFloat, &["HINCRBYFLOAT", "h", "new", "2.5"]),
        // A STORE whose empty result deletes its destination.
        one(SInterStore, &["SINTERSTORE", "s", "s", "nope"]),
        one(SDiffStore, &["SDIFFSTORE", "h", "s", "s"]),
    ];
    // On a long string (kept apart from its key), with a deadline.
    let long_cases = [
        one(Append, &["APPEND", "long", "!!"]),
        one(SetRange, &["SETRANGE", "long", "998", "abcd"]),
        one(SetRange, &["SETRANGE", "long", "3", "abcd"]),
        one(SetBit, &["SETBIT", "long", "9000", "1"]),
        one(Set, &["SET", "long", "short"]),
        one(Del, &["DEL", "long"]),
        one(GetSet, &["GETSET", "long", "short"]),
        one(Unlink, &["UNLINK", "long"]),
    ];
    let set_long: &[&'static str] = &["SET", "long", long];
    let timed: &[&'static str] = &["PEXPIREAT", "long", "99999999999990"];
    for c in [
        &[
            &["RPUSH", "l", "a", "b", "a", "c", "a"][..],
            &["LREM", "l", "-2", "a"],
        ][..],
        &[&["RPUSH", "l", "a", "b", "a"], &["LREM", "l", "2", "a"]],
        &[&["RPUSH", "l", "a"], &["LREM", "l", "0", "a"]],
        &[&["LREM", "l", "0", "b"]],
        // SMOVE emptying its source into a set that has the member (which
        // changes nothing but the source, so one more write follows); to
        // itself, to a new set and back.
        &[
            &["SADD", "one", "a"],
            &["SMOVE", "one", "s", "a"],
            &["SADD", "s", "more"],
        ],
        &[
            &["SMOVE", "s", "s", "a"],
            &["SMOVE", "s", "t2", "b"],
            &["SMOVE", "t2", "s", "b"],
            &["SMOVE", "s", "t2", "c"],
        ],
    ] {
        cases.push((Exec, multi(c)));
    }
    let payload = super::alone::dump::encode(serverlab_store::resp::Held::Str(b"restored"));
    let mut kept = Vec::new();
    for kind in serverlab_store::resp::KINDS {
        for (name, cmds) in &cases {
            if !taken_back(kind, *name, cmds, &payload) {
                kept.push((kind, cmds.clone()));
            }
        }
        for (name, cmds) in &long_cases {
            if !taken_back_after(&[set_long, timed], kind, *name, cmds, &payload) {
                kept.push((kind, cmds.clone()));
            }
        }
    }
    assert!(kept.is_empty(), "not taken back: {kept:?}");
}

/// Whether `cmds`, applied to [`SETUP`] under store `kind` and then
/// refused by a failed `fsync`, leave the state as it was (they must
/// change it first).
fn taken_back(kind: StoreKind, name: Name, cmds: &[Vec<&str>], payload: &[u8]) -> bool {
    taken_back_after(&[], kind, name, cmds, payload)
}

/// As [`taken_back`], with `more` run (and committed) after [`SETUP`].
fn taken_back_after(
    more: &[&[&str]],
    kind: StoreKind,
    name: Name,
    cmds: &[Vec<&str>],
    payload: &[u8],
) -> bool {
    let (svc, dir) = failing(kind, &format!("undo-{kind}-{name:?}"));
    run(&svc, SETUP);
    run(&svc, more);
    commit(&svc);
    assert!(svc.wal().unwrap().failure().is_none(), "{name:?}");
    let before = state(&svc);
    let cmds: Vec<Vec<Vec<u8>>> = cmds
        .iter()
        .map(|c| {
            c.iter()
                .map(|a| match *a {
                    "PAYLOAD" => payload.to_vec(),
                    a => a.as_bytes().to_vec(),
                })
                .collect()
        })
        .collect();
    let first = String::from_utf8_lossy(&cmds[0][0]).to_ascii_uppercase();
    if name != Name::Exec {
        assert_eq!(Name::from_upper(first.as_bytes()), Some(name));
    }
    let got = on(&svc, &mut svc.open(peer()), &cmds);
    assert!(!got.starts_with('-'), "{kind} {name:?}: {got}");
    assert_ne!(
        state(&svc),
        before,
        "{kind} {name:?} changed nothing: {got}"
    );
    commit(&svc);
    assert!(svc.wal().unwrap().failure().is_some(), "{kind} {name:?}");
    let after = state(&svc);
    if after != before {
        eprintln!("{kind} {name:?}: before\n{before}\nafter\n{after}");
    }
    drop(svc);
    let _ = std::fs::remove_dir_all(dir);
    after == before
}

/// The probe's case: a write the failed `fsync` left unacknowledged is
/// not brought back by a later write that the log refuses (which, run
/// alone, applies before it asks the log), under every store, for a set,
/// a list and a counter, and a transaction.
#[test]
fn a_refused_write_does_not_bring_back_an_unacknowledged_one() {
    for kind in serverlab_store::resp::KINDS {
        let (svc, dir) = failing(kind, &format!("undo-probe-{kind}"));
        run(
            &svc,
            &[
                &["SADD", "S", "m0"],
                &["RPUSH", "L", "a"],
                &["SET", "n", "7"],
            ],
        );
        commit(&svc);
        run(
            &svc,
            &[&["SADD", "S", "m7"], &["RPUSH", "L", "b"], &["INCR", "n"]],
        );
        commit(&svc);
        assert!(svc.wal().unwrap().failure().is_some());
        let refused = run(
            &svc,
            &[
                &["SADD", "S", "other"],
                &["LMOVE", "L", "L2", "LEFT", "RIGHT"],
                &["MULTI"],
                &["INCR", "n"],
                &["EXEC"],
            ],
        );
        assert_eq!(refused.matches("-MISCONF").count(), 3, "{kind}: {refused}");
        let mut reader = svc.open(peer());
        let reads: Vec<_> = [
            &["SMEMBERS", "S"][..],
            &["LRANGE", "L", "0", "-1"],
            &["EXISTS", "L2"],
            &["GET", "n"],
        ]
        .iter()
        .map(|c| cmd(c))
        .collect();
        let got = on(&svc, &mut reader, &reads);
        // What is on disk is served at once (a wait would never end).
        assert_eq!(svc.logged(&mut reader), None, "{kind}");
        assert_eq!(
            got, "*1\r\n$2\r\nm0\r\n*1\r\n$1\r\na\r\n:0\r\n$1\r\n7\r\n",
            "{kind}: the unacknowledged writes are back"
        );
        drop(svc);
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A read run alone (SMEMBERS, a transaction's reads) of a key whose
/// last write is not yet committed waits for that write's commit, as a
/// read on the fast path does: its reply is never sent if the commit
/// fails.
#[test]
fn a_read_run_alone_waits_for_the_write_it_saw() {
    let (svc, dir) = failing(StoreKind::Sharded, "undo-read-waits");
    run(&svc, &[&["SADD", "S", "m0"]]);
    commit(&svc);
    let mut writer = svc.open(peer());
    on(&svc, &mut writer, &[cmd(&["SADD", "S", "m7"])]);
    let Some(written) = svc.logged(&mut writer) else {
        panic!("the write has a ticket")
    };
    let reads: &[&[&str]] = &[
        &["SMEMBERS", "S"],
        &["SCARD", "S"],
        &["TYPE", "S"],
        &["KEYS", "*"],
        &["SORT", "S", "ALPHA"],
    ];
    for read in reads {
        let mut reader = svc.open(peer());
        on(&svc, &mut reader, &[cmd(read)]);
        assert_eq!(svc.logged(&mut reader), Some(written), "{read:?}");
    }
    let mut reader = svc.open(peer());
    on(
        &svc,
        &mut reader,
        &[
            cmd(&["MULTI"]),
            cmd(&["SISMEMBER", "S", "m7"]),
            cmd(&["EXEC"]),
        ],
    );
    assert_eq!(svc.logged(&mut reader), Some(written), "a transaction");
    // A key nobody wrote waits for nothing.
    let mut other = svc.open(peer());
    on(&svc, &mut other, &[cmd(&["SMEMBERS", "elsewhere"])]);
    assert_eq!(svc.logged(&mut other), None);
    drop(svc);
    let _ = std::fs::remove_dir_all(dir);
}

/// A blocking pop served by the push that fed it, while it waited: the
/// push and the pop are one step of the writer, logged together, and a
/// failed `fsync` takes back both (the list comes back empty, and the
/// served pop's reply waits for the commit that failed).
#[test]
fn a_served_blocking_pop_is_taken_back_with_the_push_that_served_it() {
    let (svc, dir) = failing(StoreKind::Sharded, "undo-served-pop");
    run(&svc, &[&["SET", "before", "1"]]);
    commit(&svc);
    let before = state(&svc);
    let mut popper = svc.open(peer());
    let mut wire = Vec::new();
    client::command(&mut wire, &[b"BLPOP", b"q", b"0"]);
    let Frame::Ready { len, request } = svc.frame(&mut popper, &wire, &mut Vec::new()) else {
        panic!("BLPOP frames")
    };
    assert!(
        svc.wait(&mut popper, &request, &wire[..len], None)
            .is_some(),
        "the pop waits: q is empty"
    );
    let pushed = run(&svc, &[&["RPUSH", "q", "x", "y"]]);
    assert_eq!(pushed, ":2\r\n");
    assert_eq!(
        run(&svc, &[&["LRANGE", "q", "0", "-1"]]),
        "*1\r\n$1\r\ny\r\n"
    );
    // Its next look finds its reply, waiting for the writer's commit.
    assert!(svc
        .wait(&mut popper, &request, &wire[..len], None)
        .is_none());
    let Some(Logged::Ticket(t)) = svc.logged(&mut popper) else {
        panic!("the served pop waits for the push's commit")
    };
    commit(&svc);
    assert!(svc.wal().unwrap().wait(t).is_err(), "its commit failed");
    assert_eq!(state(&svc), before, "the push and the served pop stayed");
    drop(svc);
    let _ = std::fs::remove_dir_all(dir);
}
