//! Reading every bucket with `0,b`, before and after a verifying run:
//! blocking requests outside the measured window.

use super::{BucketLoad, CHECK_TIMEOUT, CONNECT_TIMEOUT};
use crate::conn::FramedConn;
use crate::LoadError;
use serverlab_proto::bucket::{Reply, Request};

/// A connection for reads outside the run, bounded as they are.
fn connect(cfg: &BucketLoad) -> Result<FramedConn, LoadError> {
    let addr = &cfg.addr;
    let mut conn =
        FramedConn::connect(addr, CONNECT_TIMEOUT).map_err(LoadError::connecting(addr))?;
    conn.set_deadline(CHECK_TIMEOUT.min(cfg.reply_timeout()));
    conn.set_max_reply(cfg.reply_limit());
    Ok(conn)
}

/// Read every bucket with `0,b`: on one connection in keep-alive mode, a
/// connection per bucket otherwise (a server that closes after each reply
/// answers that too).
pub(super) fn read_buckets(cfg: &BucketLoad) -> Result<Vec<u64>, LoadError> {
    let mut kept = None;
    (0..cfg.agent_buckets())
        .map(|l| {
            let mut conn = match kept.take() {
                Some(c) => c,
                None => connect(cfg)?,
            };
            let Some(value) = read_on(&mut conn, cfg.agent_bucket(l))? else {
                return Err(count_mismatch(cfg)?);
            };
            if cfg.keep_alive {
                kept = Some(conn);
            }
            Ok(value)
        })
        .collect()
}

/// Before the run: does the server have this load's `--buckets`? Reads
/// its last bucket on a connection of its own; an ERR there finds how
/// many it has (reading buckets, harmless, by bisection) and says it in
/// one line with the flag to pass, instead of one error per connection.
pub(super) fn check_bucket_count(cfg: &BucketLoad) -> Result<(), LoadError> {
    if read_one(cfg, cfg.buckets.saturating_sub(1))?.is_some() {
        return Ok(());
    }
    Err(count_mismatch(cfg)?)
}

/// A bucket below `cfg.buckets` was refused: how many the server has,
/// found by bisection, said as the error to stop the load with.
fn count_mismatch(cfg: &BucketLoad) -> Result<LoadError, LoadError> {
    let (mut lo, mut hi) = (0, cfg.buckets.saturating_sub(1));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match read_one(cfg, mid)? {
            Some(_) => lo = mid + 1,
            None => hi = mid,
        }
    }
    Ok(invalid(if lo == 0 {
        "the server refused to read bucket 0 (`0,0`): is it a bucket server?".to_string()
    } else {
        format!(
            "the server has {lo} buckets and this load draws from {}: pass --buckets {lo}",
            cfg.buckets
        )
    }))
}

/// Bucket `b`'s value on a connection of its own; None if the server
/// answered ERR.
fn read_one(cfg: &BucketLoad, b: u64) -> Result<Option<u64>, LoadError> {
    read_on(&mut connect(cfg)?, b)
}

/// Bucket `b`'s value, read on `conn`; None if the server answered ERR.
/// A reply that is no bucket reply is said as a run without --verify
/// says it, so the advice is the same.
fn read_on(conn: &mut FramedConn, b: u64) -> Result<Option<u64>, LoadError> {
    let mut wire = Vec::new();
    Request {
        delay: 0,
        bucket: b,
    }
    .encode(&mut wire);
    conn.send(&wire)?;
    let line = conn.recv()?;
    match Reply::parse(line) {
        Some(Reply::Value(v)) => Ok(Some(v)),
        Some(Reply::Err(_)) => Ok(None),
        None => Err(LoadError::WrongProtocol {
            protocol: serverlab_proto::bucket::NAME,
            sent: crate::quoted(line),
        }),
    }
}

fn invalid(msg: String) -> LoadError {
    LoadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, msg))
}
