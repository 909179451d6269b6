//! Reading every bucket with `0,b`, before and after a verifying run:
//! blocking requests outside the measured window.

use super::{BucketLoad, CHECK_TIMEOUT, CONNECT_TIMEOUT};
use crate::conn::FramedConn;
use crate::LoadError;
use serverlab_proto::bucket::{Reply, Request};
use std::net::SocketAddr;

fn connect(addr: SocketAddr) -> Result<FramedConn, LoadError> {
    FramedConn::connect(addr, CONNECT_TIMEOUT).map_err(|source| LoadError::Connect {
        addr,
        error: source,
    })
}

/// Read every bucket with `0,b`: on one connection in keep-alive mode, a
/// connection per bucket otherwise (a server that closes after each reply
/// answers that too).
pub(super) fn read_buckets(cfg: &BucketLoad) -> Result<Vec<u64>, LoadError> {
    let mut kept = None;
    let mut wire = Vec::new();
    (0..cfg.agent_buckets())
        .map(|l| {
            let b = cfg.agent_bucket(l);
            let mut conn = match kept.take() {
                Some(c) => c,
                None => {
                    let c = connect(cfg.addr)?;
                    c.set_read_timeout(Some(CHECK_TIMEOUT))?;
                    c
                }
            };
            wire.clear();
            Request {
                delay: 0,
                bucket: b,
            }
            .encode(&mut wire);
            conn.send(&wire)?;
            let value = match Reply::parse(conn.recv()?) {
                Some(Reply::Value(v)) => v,
                Some(Reply::Err(why)) => {
                    return Err(invalid(format!(
                        "reading bucket {b}: the server answered ERR {} (does it have {} buckets?)",
                        String::from_utf8_lossy(why),
                        cfg.buckets
                    )))
                }
                None => return Err(invalid(format!("reading bucket {b}: not a number"))),
            };
            if cfg.keep_alive {
                kept = Some(conn);
            }
            Ok(value)
        })
        .collect()
}

fn invalid(msg: String) -> LoadError {
    LoadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, msg))
}
