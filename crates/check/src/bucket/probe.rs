//! Finding how many buckets a server has, when the user did not say:
//! `0,b` on a throw-away connection answers a value if bucket b exists
//! and an error (or a close) if not. Doubling, then bisection: about
//! 2·log2(N) probes.

use crate::wire::{show, Conn, Got};
use serverlab_proto::bucket::Reply;
use std::net::SocketAddr;
use std::time::Duration;

/// Whether bucket `b` exists.
fn exists(addr: SocketAddr, timeout: Duration, b: u64) -> Result<bool, String> {
    let mut c = Conn::open(addr, timeout)
        .map_err(|e| format!("cannot connect to probe the buckets: {e}"))?;
    let wire = format!("0,{b}\n");
    c.send(wire.as_bytes());
    let got = c.read(Duration::ZERO, super::talk::line_end);
    match &got {
        Got::Reply(r) => match Reply::parse(r.strip_suffix(b"\n").unwrap_or(r)) {
            Some(Reply::Value(_)) => Ok(true),
            Some(Reply::Err(_)) => Ok(false),
            None => Err(format!(
                "{} answered {}: not a bucket server? (pass --buckets N to skip probing)",
                show(wire.as_bytes()),
                got.show()
            )),
        },
        Got::Closed(_) => Ok(false),
        Got::TooLong => Err(format!(
            "{} answered {} while probing the buckets",
            show(wire.as_bytes()),
            got.show()
        )),
        Got::Timeout(_) => Err(format!(
            "{} got no reply within the timeout while probing the buckets",
            show(wire.as_bytes())
        )),
    }
}

/// The number of buckets: the first b for which `0,b` is refused.
pub fn count(addr: SocketAddr, timeout: Duration) -> Result<u64, String> {
    if !exists(addr, timeout, 0)? {
        return Err("the server refused bucket 0: not a bucket server?".into());
    }
    // Invariant: bucket `lo` exists; bucket `hi` does not (once found).
    let mut lo = 0u64;
    let mut hi = 1u64;
    while exists(addr, timeout, hi)? {
        lo = hi;
        hi = hi
            .checked_mul(2)
            .ok_or("the server accepts every bucket up to 2^63")?;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if exists(addr, timeout, mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi)
}
