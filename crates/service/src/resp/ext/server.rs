//! The commands about the server beyond the fast path: FLUSHALL,
//! FLUSHDB, SWAPDB, CONFIG (but GET), FUNCTION and CLIENT (but its
//! connection's own subcommands).

use super::Ctx;
use crate::resp::blocking::Unblock;
use crate::resp::Args;
use serverlab_proto::resp::command::DATABASES;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::{reply, Name};

/// Serves `name`.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Ctx, out: &mut Vec<u8>) {
    match name {
        Name::FlushAll => {
            for d in &cx.ks.dbs {
                d.store.clear();
                d.expires.clear();
            }
            cx.svc.watches.touch_db(None);
            cx.log_input();
            reply::ok(out)
        }
        Name::FlushDb => {
            let d = cx.here();
            d.store.clear();
            d.expires.clear();
            cx.svc.watches.touch_db(Some(cx.db));
            cx.log_input();
            reply::ok(out)
        }
        Name::SwapDb => swapdb(a, cx, out),
        Name::Config => config(a, cx, out),
        Name::Function => function(a, cx, out),
        Name::Client => client(a, cx, out),
        _ => unreachable!("{name:?} is not a server command"),
    }
}

/// A database number argument, as Redis checks it.
pub(crate) fn db_index(arg: &[u8]) -> Result<usize, &'static str> {
    match parse_i64(arg) {
        None => Err("ERR invalid first DB index"),
        Some(n) if (0..DATABASES as i64).contains(&n) => Ok(n as usize),
        Some(_) => Err("ERR DB index is out of range"),
    }
}

fn swapdb(a: &Args, cx: &mut Ctx, out: &mut Vec<u8>) {
    let (x, y) = match (parse_i64(a.arg(1)), parse_i64(a.arg(2))) {
        (None, _) => return cx.error(out, "ERR invalid first DB index"),
        (_, None) => return cx.error(out, "ERR invalid second DB index"),
        (Some(x), Some(y)) => (x, y),
    };
    let range = 0..DATABASES as i64;
    if !range.contains(&x) || !range.contains(&y) {
        return cx.error(out, "ERR DB index is out of range");
    }
    cx.ks.dbs.swap(x as usize, y as usize);
    cx.svc.watches.touch_db(Some(x as usize));
    cx.svc.watches.touch_db(Some(y as usize));
    cx.log_input();
    reply::ok(out)
}

/// CONFIG SET name value …: every parameter is accepted and kept (CONFIG
/// GET shows it back); none changes what the server does (those that
/// would are listed in docs/protocols/resp.md). CONFIG RESETSTAT and
/// REWRITE answer OK.
fn config(a: &Args, cx: &mut Ctx, out: &mut Vec<u8>) {
    let sub = a.arg(1).to_ascii_lowercase();
    match &sub[..] {
        b"set" => {
            let n = a.count();
            if n < 4 || n % 2 != 0 {
                return cx.error(
                    out,
                    "ERR wrong number of arguments for 'config|set' command",
                );
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
        b"resetstat" | b"rewrite" if a.count() == 2 => reply::ok(out),
        _ => unknown_subcommand(a, "CONFIG", cx, out),
    }
}

/// FUNCTION FLUSH [ASYNC|SYNC] (there are never functions: OK) and
/// FUNCTION LIST (an empty array).
fn function(a: &Args, cx: &mut Ctx, out: &mut Vec<u8>) {
    let sub = a.arg(1).to_ascii_lowercase();
    match &sub[..] {
        b"flush" if a.count() <= 3 => reply::ok(out),
        b"list" => reply::array(out, 0),
        _ => unknown_subcommand(a, "FUNCTION", cx, out),
    }
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]; the connection's own subcommands
/// are answered on the fast path.
fn client(a: &Args, cx: &mut Ctx, out: &mut Vec<u8>) {
    let sub = a.arg(1).to_ascii_lowercase();
    match &sub[..] {
        b"unblock" if (3..=4).contains(&a.count()) => {
            let Some(id) = parse_i64(a.arg(2)) else {
                return cx.error(out, "ERR value is not an integer or out of range");
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

fn unknown_subcommand(a: &Args, cmd: &str, cx: &Ctx, out: &mut Vec<u8>) {
    let sub = crate::resp::c_str(a.arg(1), 128);
    cx.error(
        out,
        &format!("ERR unknown subcommand '{sub}'. Try {cmd} HELP."),
    );
}
