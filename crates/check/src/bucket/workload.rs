//! The bucket's concurrency workload: reads and short adds over a few
//! buckets, so clients collide; one partition per bucket.

use super::model::{Counter, Op};
use super::talk::{line_end, request};
use crate::concurrency::{Part, Record, Workload};
use crate::wire::{show, Conn, Got};
use serverlab_proto::bucket::{DelayUnit, Reply};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Buckets the clients share (fewer if the server has fewer).
pub const SHARED: usize = 4;

#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// Index into `Load::buckets`.
    pub slot: usize,
    pub delay: u64,
}

pub struct Load {
    pub buckets: Vec<u64>,
    pub unit: DelayUnit,
    /// The longest delay a request asks for.
    pub max_delay: u64,
    /// One request per connection, as the assignment's client.
    pub fresh_connections: bool,
    addr: SocketAddr,
}

/// A client's connection: kept, or opened per request.
pub enum Link {
    Kept(Conn),
    PerRequest(Duration),
}

impl From<Conn> for Link {
    fn from(conn: Conn) -> Link {
        Link::Kept(conn)
    }
}

impl Load {
    pub fn new(
        buckets: Vec<u64>,
        unit: DelayUnit,
        server_max: u64,
        fresh: bool,
        addr: SocketAddr,
    ) -> Load {
        // Short delays: a second at most in the assignment's unit, a few
        // ms or tens of µs otherwise; never over the server's limit.
        let max_delay = match unit {
            DelayUnit::Seconds => 1,
            DelayUnit::Millis => 2,
            DelayUnit::Micros => 50,
        }
        .min(server_max);
        Load {
            buckets,
            unit,
            max_delay,
            fresh_connections: fresh,
            addr,
        }
    }

    /// One partition per bucket, starting from the values read before.
    pub fn partition(
        &self,
        start: &[u64],
        history: &[Record<Call, Vec<u8>>],
    ) -> Vec<Part<Counter>> {
        let mut parts: Vec<Part<Counter>> = self
            .buckets
            .iter()
            .zip(start)
            .map(|(&bucket, &start)| Part {
                name: format!("bucket {bucket}"),
                model: Counter { bucket, start },
                ops: Vec::new(),
            })
            .collect();
        for r in history {
            let got = match Reply::parse(&r.reply) {
                Some(Reply::Value(v)) => Ok(v),
                _ => Err(r.reply.clone()),
            };
            parts[r.call.slot].ops.push(r.op(Op {
                delay: r.call.delay,
                got,
            }));
        }
        parts
    }
}

impl Workload for Load {
    type Conn = Link;
    type Call = Call;
    /// The reply line without its LF.
    type Reply = Vec<u8>;

    fn connect(&self, addr: SocketAddr, timeout: Duration) -> std::io::Result<Link> {
        if self.fresh_connections {
            return Ok(Link::PerRequest(timeout));
        }
        Conn::open(addr, timeout).map(Link::from)
    }

    fn next(&self, rng: &mut fastrand::Rng, _client: usize, _seq: u64) -> Call {
        let slot = rng.usize(..self.buckets.len());
        // Reads are four in ten: they pin down the values between adds.
        let delay = if rng.u8(..10) < 4 {
            0
        } else {
            rng.u64(1..=self.max_delay.max(1))
        };
        Call { slot, delay }
    }

    fn perform(&self, link: &mut Link, call: &Call) -> Result<Vec<u8>, String> {
        let wire = request(call.delay, self.buckets[call.slot]);
        let mut fresh;
        let conn = match link {
            Link::Kept(c) => c,
            Link::PerRequest(timeout) => {
                fresh =
                    Conn::open(self.addr, *timeout).map_err(|e| format!("cannot connect: {e}"))?;
                &mut fresh
            }
        };
        let sent = Instant::now();
        conn.send(&wire);
        let delay = self.unit.duration(call.delay);
        match conn.read(delay, line_end) {
            // Sooner than its delay: the server did not wait it (or
            // answered before it was asked), whatever it answered.
            Got::Reply(_) if sent.elapsed() < delay => Err(format!(
                "the reply to {} came after {:.1} ms, before its delay of {} ms could pass",
                show(&wire),
                sent.elapsed().as_secs_f64() * 1e3,
                delay.as_millis()
            )),
            Got::Reply(mut r) => {
                conn.nothing_unasked()?;
                r.pop();
                Ok(r)
            }
            got => Err(format!("no reply to {}: {}", show(&wire), got.show())),
        }
    }
}
