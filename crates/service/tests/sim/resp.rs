//! The RESP service in the simulated world: its requests are
//! [`workload`](crate::workload)'s, its store is read back through the
//! protocol, in the three databases the requests use.

use crate::reply::{encode, parse_all, show, show_bytes, Reply};
use crate::workload::{Gen, DBS};
use crate::world::{self, peer, Proto, Request};
use serverlab_proto::resp::Limits;
use serverlab_service::resp::{RespConn, RespService};
use serverlab_service::sim;
use serverlab_service::wal::{ApplyError, Wal};
use serverlab_service::{run_all, Service};
use serverlab_store::StoreKind;

/// RESP over one store kind, with DUMP payloads for RESTORE.
pub struct Resp {
    kind: StoreKind,
    payloads: Vec<Vec<u8>>,
}

/// A run of RESP from `seed` (the store kind is the seed's too).
pub fn run(seed: u64, verbose: bool) -> Result<(), String> {
    let kinds = serverlab_store::resp::KINDS;
    let kind = kinds[(seed % kinds.len() as u64) as usize];
    if verbose {
        println!("store {kind}");
    }
    world::run(
        Resp {
            kind,
            payloads: payloads(),
        },
        seed,
        verbose,
    )
}

impl Proto for Resp {
    type Svc = RespService;

    fn service(&self) -> RespService {
        RespService::new(self.kind, Limits::default(), "sim".into()).expect("a RESP store")
    }

    fn replay(svc: &RespService, record: &[u8]) -> Result<(), ApplyError> {
        svc.replay(record)
    }

    fn with_log(svc: RespService, wal: Wal) -> RespService {
        svc.with_log(wal)
    }

    fn replayed(svc: RespService) -> RespService {
        svc.replayed()
    }

    fn next(&self, rng: &mut fastrand::Rng, now: i64, single: bool) -> Vec<Request> {
        let mut g = Gen {
            rng,
            now,
            payloads: &self.payloads,
        };
        let all = if single { vec![g.single()] } else { g.next() };
        all.iter()
            .map(|a| Request {
                wire: encode(a),
                text: show(a),
            })
            .collect()
    }

    /// Every key of the databases the run uses, with its type, value and
    /// deadline; read at a clock before every deadline, so that reading
    /// expires nothing.
    fn dump(svc: &RespService, t: i64) -> String {
        sim::set_clock(Some(1));
        let mut conn = svc.open(peer());
        let mut all = String::new();
        for db in 0..DBS {
            query(svc, &mut conn, &[b"SELECT", db.to_string().as_bytes()]);
            let mut keys = query(svc, &mut conn, &[b"KEYS", b"*"]).bulks();
            keys.sort();
            for k in keys {
                let at = query(svc, &mut conn, &[b"PEXPIRETIME", &k]).int();
                if at.is_some_and(|at| at > 0 && at <= t) {
                    continue;
                }
                let (kind, body) = value(svc, &mut conn, &k);
                all += &format!("db{db} {} {kind:?} {body:?} at {at:?}\n", show_bytes(&k));
            }
        }
        svc.close(conn);
        all
    }

    fn refused(reply: &[u8]) -> bool {
        reply.starts_with(b"-MISCONF")
    }

    fn expire(svc: &RespService) {
        svc.expire_pass();
    }
}

/// A key's type and value (a set's members sorted, a hash's fields).
fn value(svc: &RespService, conn: &mut RespConn, k: &[u8]) -> (Reply, Reply) {
    let kind = query(svc, conn, &[b"TYPE", k]);
    let Reply::Simple(name) = &kind else {
        return (kind.clone(), kind);
    };
    let body = match name.as_str() {
        "string" => query(svc, conn, &[b"GET", k]),
        "list" => query(svc, conn, &[b"LRANGE", k, b"0", b"-1"]),
        "set" => query(svc, conn, &[b"SORT", k, b"ALPHA"]),
        "hash" => {
            let mut pairs: Vec<String> = query(svc, conn, &[b"HGETALL", k])
                .bulks()
                .chunks(2)
                .map(|p| {
                    p.iter()
                        .map(|b| show_bytes(b))
                        .collect::<Vec<_>>()
                        .join("=")
                })
                .collect();
            pairs.sort();
            Reply::Simple(pairs.join(","))
        }
        _ => query(svc, conn, &[b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"]),
    };
    (kind, body)
}

/// One request's reply on `conn`, parsed.
fn query(svc: &RespService, conn: &mut RespConn, args: &[&[u8]]) -> Reply {
    let owned: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
    let mut out = Vec::new();
    run_all(svc, conn, &encode(&owned), &mut out);
    svc.logged(conn);
    let mut r = parse_all(&out).unwrap_or_else(|e| vec![Reply::Error(e)]);
    r.pop().unwrap_or(Reply::Error("no reply".into()))
}

/// DUMP payloads of a value of each type, made on a scratch service.
fn payloads() -> Vec<Vec<u8>> {
    let svc = RespService::new(StoreKind::Sharded, Limits::default(), "sim".into()).unwrap();
    let mut conn = svc.open(peer());
    let setup: &[&[&[u8]]] = &[
        &[b"SET", b"p0", b"dumped"],
        &[b"RPUSH", b"p1", b"x", b"y"],
        &[b"SADD", b"p2", b"m", b"n"],
        &[b"HSET", b"p3", b"f", b"v"],
        &[b"ZADD", b"p4", b"2", b"m"],
    ];
    for c in setup {
        query(&svc, &mut conn, c);
    }
    (0..5)
        .map(
            |i| match query(&svc, &mut conn, &[b"DUMP", format!("p{i}").as_bytes()]) {
                Reply::Bulk(Some(p)) => p,
                other => panic!("DUMP p{i}: {other:?}"),
            },
        )
        .collect()
}
