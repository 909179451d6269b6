//! What takes a RESP write back out of the store when its record never
//! commits (a failed `fsync` under `always`; see [`crate::durable`]).
//!
//! Each is made under the lock that orders writes, just before the write
//! is applied, so it sees exactly the state the write changes: SET, MSET,
//! DEL and INCRBY keep what each key held; a push keeps how many it adds
//! (and pops them back off); a pop keeps the elements it will take (and
//! pushes them back on). Undos run newest first, so each finds the state
//! its write left. (The commands beyond the fast path keep what they
//! change their own way: [`super::ext`].)

use super::Args;
use serverlab_proto::resp::command::{Cmd, ListCmd, StrCmd};
use serverlab_proto::resp::End;
use serverlab_store::resp::{RespStore, Value};
use std::sync::Arc;

use crate::durable::Undo;

/// How to take back `cmd`, about to be applied to `store`.
pub(super) fn of(store: &Arc<dyn RespStore>, cmd: &Cmd, a: &Args) -> Undo {
    let keys: Vec<&[u8]> = match cmd {
        Cmd::Str(StrCmd::Set { key, .. } | StrCmd::IncrBy { key, .. }) => vec![a.get(*key)],
        Cmd::Str(StrCmd::Del) => a.from(1).collect(),
        Cmd::Str(StrCmd::MSet) => a.from(1).step_by(2).collect(),
        Cmd::List(ListCmd::Push { end, key }) => {
            return push(store, *end, a.get(*key), a.count() - 2)
        }
        Cmd::List(ListCmd::Pop { end, key, count }) => {
            return pop(store, *end, a.get(*key), count.unwrap_or(1))
        }
        _ => Vec::new(),
    };
    let before: Vec<(Box<[u8]>, Option<Value>)> = keys
        .into_iter()
        .map(|k| (k.into(), store.cloned(k)))
        .collect();
    let store = Arc::clone(store);
    Box::new(move || {
        before.into_iter().rev().for_each(|(k, v)| match v {
            Some(v) => store.put(&k, v),
            None => {
                store.del(&k);
            }
        });
    })
}

/// A push of `n` values: pop `n` back off the same end (nothing, if the
/// key holds a string and the push will fail).
fn push(store: &Arc<dyn RespStore>, end: End, key: &[u8], n: usize) -> Undo {
    let store = Arc::clone(store);
    let is_list = store.llen(key).is_ok();
    let key: Box<[u8]> = key.into();
    Box::new(move || {
        if is_list {
            let _ = store.pop(&key, end, n);
        }
    })
}

/// A pop of up to `count`: the elements it will take, pushed back on the
/// same end in the order that restores the list.
fn pop(store: &Arc<dyn RespStore>, end: End, key: &[u8], count: usize) -> Undo {
    if count == 0 {
        // `LPOP key 0` takes nothing (and the range below would be all).
        return Box::new(|| {});
    }
    let n = i64::try_from(count).unwrap_or(i64::MAX);
    let (start, stop) = match end {
        End::Left => (0, n.saturating_sub(1)),
        End::Right => (n.saturating_neg(), -1),
    };
    let mut taken: Vec<Box<[u8]>> = Vec::new();
    let _ = store.lrange(key, start, stop, &mut |_, it| {
        taken.extend(it.map(Box::from))
    });
    if end == End::Left {
        // LPUSH puts each in turn at the head: the last taken goes first.
        taken.reverse();
    }
    let store = Arc::clone(store);
    let key: Box<[u8]> = key.into();
    Box::new(move || {
        if !taken.is_empty() {
            let _ = store.push(&key, end, &mut taken.iter().map(|i| &**i));
        }
    })
}
