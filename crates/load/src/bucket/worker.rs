//! One client connection slot of the bucket load, in a closed loop: send a
//! request, wait for its reply, repeat; a new TCP connection per request
//! (the assignment's client) or one for all (keep-alive).

use super::ledger::Ack;
use super::{BucketLoad, CONNECT_TIMEOUT, OPS};
use crate::conn::FramedConn;
use crate::env::thread_cpu_time;
use crate::record::Recorder;
use crate::Progress;
use serverlab_proto::bucket::{Reply, Request};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const ADD: usize = 0;
const READ: usize = 1;
const _: () = assert!(OPS.len() == 2);

/// When the run stops issuing requests.
pub(crate) enum Budget {
    /// This many requests are left to claim, across all workers.
    Requests(AtomicU64),
    /// Issue until then.
    Until(Instant),
}

impl Budget {
    /// Claim the right to send one more request.
    fn claim(&self) -> bool {
        match self {
            // Relaxed: a counter that hands out tickets; nothing else is
            // published through it.
            Budget::Requests(left) => left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok(),
            Budget::Until(deadline) => Instant::now() < *deadline,
        }
    }
}

pub(crate) struct WorkerResult {
    pub(crate) index: usize,
    pub(crate) rec: Recorder,
    /// Delay units of the requests the recorder counted.
    pub(crate) counted_units: u64,
    /// TCP connections opened.
    pub(crate) opened: u64,
    /// Every acknowledged request (only when verifying).
    pub(crate) acks: Vec<Ack>,
    pub(crate) error: Option<String>,
    /// When this worker received its last reply.
    pub(crate) finished: Instant,
    /// CPU time this worker's thread used: (user, system) seconds.
    pub(crate) cpu: (f64, f64),
}

struct State<'a> {
    cfg: &'a BucketLoad,
    index: usize,
    rng: fastrand::Rng,
    rec: Recorder,
    counted_units: u64,
    opened: u64,
    acks: Vec<Ack>,
    unreported: u64,
    finished: Instant,
}

pub(crate) fn run(
    cfg: &BucketLoad,
    index: usize,
    conn: Option<FramedConn>,
    budget: &Budget,
    start: Instant,
    window: Option<std::time::Duration>,
    progress: &Progress,
) -> WorkerResult {
    let cpu0 = thread_cpu_time();
    let mut st = State {
        cfg,
        index,
        rng: fastrand::Rng::with_seed(
            cfg.seed ^ (0xB0C_E700 + index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ),
        rec: Recorder::new(OPS.len(), start, window),
        counted_units: 0,
        opened: 0,
        acks: Vec::new(),
        unreported: 0,
        finished: start,
    };
    let error = drive(&mut st, conn, budget, progress)
        .err()
        .map(|e| format!("connection {index}: {e}"));
    progress.add(st.unreported);
    let cpu1 = thread_cpu_time();
    WorkerResult {
        index: st.index,
        rec: st.rec,
        counted_units: st.counted_units,
        opened: st.opened,
        acks: st.acks,
        error,
        finished: st.finished,
        cpu: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
    }
}

fn drive(
    st: &mut State,
    mut kept: Option<FramedConn>,
    budget: &Budget,
    progress: &Progress,
) -> Result<(), String> {
    let mut wire = Vec::with_capacity(48);
    while budget.claim() {
        let req = Request {
            delay: st.cfg.delay.pick(&mut st.rng),
            bucket: st.rng.u64(0..st.cfg.buckets),
        };
        wire.clear();
        req.encode(&mut wire);
        // A new connection's setup is part of its request's latency, as
        // the assignment's client experiences it.
        let sent = Instant::now();
        let mut fresh = None;
        let conn = match kept.as_mut() {
            Some(c) => c,
            None => {
                st.opened += 1;
                let c = FramedConn::connect(st.cfg.addr, CONNECT_TIMEOUT)
                    .map_err(|e| format!("cannot connect to {}: {e}", st.cfg.addr))?;
                fresh.insert(c)
            }
        };
        let value = exchange(conn, &wire, req)?;
        let done = Instant::now();
        st.finished = done;
        drop(fresh);
        let op = if req.delay == 0 { READ } else { ADD };
        if st.rec.record(op, sent, done) {
            st.counted_units += req.delay;
            st.unreported += 1;
        }
        if st.cfg.verify {
            st.acks.push(Ack {
                bucket: req.bucket,
                delta: req.delay,
                value,
            });
        }
        if st.unreported >= 64 {
            progress.add(st.unreported);
            st.unreported = 0;
        }
    }
    Ok(())
}

/// Send one request and read its reply, which must be a value.
fn exchange(conn: &mut FramedConn, wire: &[u8], req: Request) -> Result<u64, String> {
    let shown = || format!("{},{}", req.delay, req.bucket);
    let failed = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            format!(
                "the server closed the connection before answering {}",
                shown()
            )
        } else {
            format!("{} got no reply: {e}", shown())
        }
    };
    conn.send(wire).map_err(failed)?;
    let reply = conn.recv().map_err(failed)?;
    match Reply::parse(reply) {
        Some(Reply::Value(v)) => Ok(v),
        Some(Reply::Err(reason)) => Err(format!(
            "the server answered ERR {} to {}",
            String::from_utf8_lossy(reason),
            shown()
        )),
        None => Err(format!(
            "the server answered {:?} to {}, not a number",
            String::from_utf8_lossy(&reply[..reply.len().min(80)]),
            shown()
        )),
    }
}
