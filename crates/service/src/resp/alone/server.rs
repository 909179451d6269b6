//! The commands about the server beyond the fast path: FLUSHALL,
//! FLUSHDB, SWAPDB, CONFIG (but GET), FUNCTION and CLIENT (but its
//! connection's own subcommands), OBJECT, MEMORY USAGE, TIME.

use super::Running;
use crate::resp::blocking::Unblock;
use crate::resp::notify;
use crate::resp::Args;
use serverlab_proto::resp::command::DATABASES;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::{reply, Name};

/// Serves `name`.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    match name {
        Name::FlushAll => {
            let ks = &*cx.ks;
            cx.svc
                .watches
                .touch_db(None, |d, k| ks.dbs[d].store.exists(k));
            for n in 0..cx.ks.dbs.len() {
                flush(cx, n);
            }
            cx.log_input();
            reply::ok(out)
        }
        Name::FlushDb => {
            let ks = &*cx.ks;
            cx.svc
                .watches
                .touch_db(Some(cx.db), |d, k| ks.dbs[d].store.exists(k));
            flush(cx, cx.db);
            cx.log_input();
            reply::ok(out)
        }
        Name::SwapDb => swapdb(a, cx, out),
        Name::Config => config(a, cx, out),
        Name::Function => function(a, cx, out),
        Name::Client => client(a, cx, out),
        Name::Object => object(a, cx, out),
        Name::Memory => memory(a, cx, out),
        Name::Time => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            reply::array(out, 2);
            reply::bulk(out, now.as_secs().to_string().as_bytes());
            reply::bulk(out, now.subsec_micros().to_string().as_bytes());
        }
        _ => unreachable!("{name:?} is not a server command"),
    }
}

/// Empties database `n`. Under a log that takes writes back, by putting
/// an empty store in its place: the one it replaces is kept, whole, by
/// the journal (which kept every database's before the command ran), to
/// be put back if the log refuses, in O(1) whatever it holds.
fn flush(cx: &mut Running, n: usize) {
    if cx.keeps() {
        cx.ks.dbs[n] = cx.ks.fresh();
    } else {
        let d = &cx.ks.dbs[n];
        d.store.clear();
        d.expires.clear();
    }
}

fn swapdb(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let (x, y) = match (parse_i64(a.arg(1)), parse_i64(a.arg(2))) {
        (None, _) => return cx.error(out, "ERR invalid first DB index"),
        (_, None) => return cx.error(out, "ERR invalid second DB index"),
        (Some(x), Some(y)) => (x, y),
    };
    let range = 0..DATABASES as i64;
    if !range.contains(&x) || !range.contains(&y) {
        return cx.error(out, reply::DB_INDEX);
    }
    let (x, y) = (x as usize, y as usize);
    let ks = &*cx.ks;
    let either = |_: usize, k: &[u8]| ks.dbs[x].store.exists(k) || ks.dbs[y].store.exists(k);
    cx.svc.watches.touch_db(Some(x), either);
    cx.svc.watches.touch_db(Some(y), either);
    cx.ks.dbs.swap(x, y);
    cx.log_input();
    reply::ok(out)
}

/// CONFIG SET name value …: every parameter is accepted and kept (CONFIG
/// GET shows it back); none changes what the server does (those that
/// would are listed in docs/protocols/resp.md). CONFIG RESETSTAT starts
/// INFO's commandstats, errorstats and `total_error_replies` again from
/// 0; REWRITE answers OK.
fn config(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let sub = a.arg(1).to_ascii_lowercase();
    match &sub[..] {
        b"set" => {
            let n = a.count();
            if n < 4 || !n.is_multiple_of(2) {
                return cx.error(out, &reply::wrong_arity("config|set"));
            }
            // Redis refuses the whole CONFIG SET if a value is refused.
            let mut events = None;
            for i in (2..n).step_by(2) {
                if a.arg(i).eq_ignore_ascii_case(b"notify-keyspace-events") {
                    match notify::parse(a.arg(i + 1)) {
                        Some(flags) => events = Some(flags),
                        None => return cx.error(out, &config_refused(a.arg(i), notify::INVALID)),
                    }
                }
            }
            if let Some(flags) = events {
                cx.svc.pubsub.set_events(flags);
            }
            let mut kept = cx.svc.config.lock();
            let mut i = 2;
            while i + 1 < n {
                let name = String::from_utf8_lossy(a.arg(i)).to_ascii_lowercase();
                let value = String::from_utf8_lossy(a.arg(i + 1)).into_owned();
                kept.retain(|(k, _)| *k != name);
                kept.push((name, value));
                i += 2;
            }
            reply::ok(out)
        }
        b"resetstat" if a.count() == 2 => {
            cx.svc.stats.reset_info();
            reply::ok(out)
        }
        b"rewrite" if a.count() == 2 => reply::ok(out),
        _ => unknown_subcommand(a, "CONFIG", cx, out),
    }
}

/// CONFIG SET's error for a value of `name` refused for `why`.
fn config_refused(name: &[u8], why: &str) -> String {
    format!(
        "ERR CONFIG SET failed (possibly related to argument '{}') - {why}",
        String::from_utf8_lossy(name)
    )
}

/// FUNCTION FLUSH [ASYNC|SYNC] (there are never functions: OK) and
/// FUNCTION LIST (an empty array).
fn function(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let sub = a.arg(1).to_ascii_lowercase();
    match &sub[..] {
        b"flush" if a.count() <= 3 => reply::ok(out),
        b"list" => reply::array(out, 0),
        _ => unknown_subcommand(a, "FUNCTION", cx, out),
    }
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]; the connection's own subcommands
/// are answered on the fast path.
fn client(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let sub = a.arg(1).to_ascii_lowercase();
    match &sub[..] {
        b"unblock" if (3..=4).contains(&a.count()) => {
            let Some(id) = parse_i64(a.arg(2)) else {
                return cx.error(out, reply::NOT_INTEGER);
            };
            let how = match a.try_arg(3).map(|w| w.to_ascii_lowercase()) {
                None => Unblock::Timeout,
                Some(w) if w == b"timeout" => Unblock::Timeout,
                Some(w) if w == b"error" => Unblock::Error,
                Some(_) => {
                    return cx.error(out, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
                }
            };
            let was = u64::try_from(id).is_ok_and(|id| cx.svc.blocked.unblock(id, how));
            reply::int(out, i64::from(was))
        }
        _ => unknown_subcommand(a, "CLIENT", cx, out),
    }
}

/// OBJECT REFCOUNT (1: serverlab shares no values), ENCODING (the
/// encoding Redis 7.0 would give the value: serverlab keeps one
/// representation per type, and says what Redis's would be), IDLETIME (0:
/// no access times are kept), FREQ (an error, as Redis without an LFU
/// policy).
fn object(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let sub = a.arg(1).to_ascii_lowercase();
    if !matches!(&sub[..], b"refcount" | b"encoding" | b"idletime" | b"freq") || a.count() != 3 {
        return unknown_subcommand(a, "OBJECT", cx, out);
    }
    let Some(v) = cx.store().cloned(a.arg(2)) else {
        return reply::null(out);
    };
    match &sub[..] {
        b"refcount" => reply::int(out, 1),
        b"idletime" => reply::int(out, 0),
        b"freq" => cx.error(
            out,
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please \
             note that when switching between policies at runtime LRU and LFU data will take \
             some time to adjust.",
        ),
        _ => reply::bulk(out, redis_encoding(&v).as_bytes()),
    }
}

/// MEMORY USAGE key [SAMPLES count]: the estimate of the key's bytes in
/// serverlab's representation (see [`super::usage`]), `$-1` for no such
/// key; its options read first, as Redis reads them.
fn memory(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    if !a.arg(1).eq_ignore_ascii_case(b"usage") {
        return unknown_subcommand(a, "MEMORY", cx, out);
    }
    if a.count() < 3 {
        return cx.error(out, &reply::wrong_arity("memory|usage"));
    }
    let mut samples = super::usage::DEFAULT_SAMPLES;
    let mut j = 3;
    while j < a.count() {
        if !a.arg(j).eq_ignore_ascii_case(b"samples") || j + 1 >= a.count() {
            return cx.error(out, reply::SYNTAX);
        }
        samples = match parse_i64(a.arg(j + 1)) {
            None => return cx.error(out, reply::NOT_INTEGER),
            Some(n) if n < 0 => return cx.error(out, reply::SYNTAX),
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        };
        j += 2;
    }
    let key = a.arg(2);
    let mut usage = None;
    cx.store().peek(key, &mut |held| {
        usage = Some(super::usage::estimate(key, held, samples))
    });
    match usage {
        Some(n) => reply::int(out, n as i64),
        None => reply::null(out),
    }
}

/// The encoding Redis 7.0 gives a value of this shape with its default
/// thresholds (`*-max-listpack-entries 128`, `*-max-listpack-value 64`,
/// `set-max-intset-entries 512`, `list-max-listpack-size -2`: 8 KiB).
pub(crate) fn redis_encoding(v: &serverlab_store::resp::Value) -> &'static str {
    use serverlab_store::resp::{Coll, Value};
    let small = |n: usize, longest: usize| n <= 128 && longest <= 64;
    match v {
        Value::Str(s) if s.len() <= 20 && parse_i64(s).is_some() => "int",
        Value::Str(s) if s.len() <= 44 => "embstr",
        Value::Str(_) => "raw",
        Value::List(l) => {
            let bytes: usize = l.iter().map(|e| e.len() + 11).sum();
            if bytes <= 8 << 10 {
                "listpack"
            } else {
                "quicklist"
            }
        }
        Value::Coll(Coll::Set(s)) => {
            if s.len() <= 512 && s.iter().all(|m| parse_i64(m).is_some()) {
                "intset"
            } else {
                "hashtable"
            }
        }
        Value::Coll(Coll::Hash(h)) => {
            let longest = h
                .iter()
                .map(|(f, v)| f.len().max(v.len()))
                .max()
                .unwrap_or(0);
            if small(h.len(), longest) {
                "listpack"
            } else {
                "hashtable"
            }
        }
        Value::Coll(Coll::ZSet(z)) => {
            let longest = z.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
            if small(z.len(), longest) {
                "listpack"
            } else {
                "skiplist"
            }
        }
    }
}

fn unknown_subcommand(a: &Args, cmd: &str, cx: &Running, out: &mut Vec<u8>) {
    let sub = crate::resp::c_str(a.arg(1), 128);
    cx.error(
        out,
        &format!("ERR unknown subcommand '{sub}'. Try {cmd} HELP."),
    );
}
