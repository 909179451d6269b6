//! One connection slot of `load http`: it draws a target by weight and a
//! key, writes the request, frames the response, and counts it per target
//! and status. Keep-alive by default: a connection the server closes
//! (`Connection: close`), or that closes or resets after answering on it,
//! is opened again; one that fails before any answer stays down. With
//! `--no-keepalive` every request has a connection of its own.

use super::response::next_response;
use super::{Http, HttpLoad};
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{Exchange, Received};
use crate::keyspace::KeyWalk;
use std::collections::BTreeMap;
use std::time::Instant;

/// What one target's requests got.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Responses counted in the window.
    pub requests: u64,
    pub statuses: BTreeMap<u16, u64>,
}

/// A request in flight: which target it was.
pub struct Sent {
    target: usize,
}

pub struct HttpClient<'a> {
    cfg: &'a HttpLoad,
    http: &'a Http,
    index: usize,
    rng: fastrand::Rng,
    key: Vec<u8>,
    value: Vec<u8>,
    /// Its own stride through the keys, when they are drawn in sequence.
    walk: KeyWalk,
    /// A connection was opened (keep-alive opens one, and again only
    /// after the server closed it cleanly).
    opened: bool,
    /// The server said it closes this connection: send no more on it,
    /// and open another once it is done.
    closing: bool,
    /// Responses read on the connection now open.
    answered: u64,
    /// A request waited out the reply timeout: open no more (each would
    /// wait as long).
    stalled: bool,
    /// Per target.
    pub(crate) counts: Vec<Counts>,
}

impl<'a> HttpClient<'a> {
    pub(crate) fn new(cfg: &'a HttpLoad, http: &'a Http, index: usize) -> Self {
        HttpClient {
            cfg,
            http,
            index,
            rng: fastrand::Rng::with_seed(
                cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            key: Vec::new(),
            value: Vec::new(),
            walk: KeyWalk::new(index, cfg.connections),
            opened: false,
            closing: false,
            answered: 0,
            stalled: false,
            counts: vec![Counts::default(); cfg.targets.len()],
        }
    }

    fn count(&mut self, target: usize, status: u16) {
        let c = &mut self.counts[target];
        c.requests += 1;
        *c.statuses.entry(status).or_insert(0) += 1;
    }
}

impl Exchange for HttpClient<'_> {
    type Sent = Sent;

    fn connect(&mut self, _now: Instant) -> bool {
        if self.stalled {
            return false;
        }
        if !self.cfg.keepalive {
            return true;
        }
        let again = std::mem::take(&mut self.closing);
        let open = !std::mem::replace(&mut self.opened, true) || again;
        if open {
            self.answered = 0;
        }
        open
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, Sent)> {
        if self.closing {
            return None;
        }
        let http = self.http;
        let target = http.pick(&mut self.rng);
        let key = http.keys.pick_walking(&mut self.rng, &mut self.walk);
        self.key.clear();
        serverlab_proto::number::push_u64(&mut self.key, key as u64);
        let t = &http.targets[target];
        if t.wants_value {
            let nonce = self.rng.u64(..);
            crate::kv::workload::write_value(
                &mut self.value,
                &self.key,
                nonce,
                self.cfg.value_size,
            );
        }
        t.write(wire, &self.key, &self.value, self.cfg.keepalive);
        Some((t.op, Sent { target }))
    }

    fn reply(
        &mut self,
        input: &[u8],
        sent: &Sent,
        rx: Received,
        checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let t = &self.http.targets[sent.target];
        let Some(r) = next_response(input, t.head_request, "HTTP/1.1")? else {
            return Ok(None);
        };
        let (status, len, close) = (r.status, r.len, r.close);
        self.answered += 1;
        if rx.counted {
            self.count(sent.target, status);
        }
        if checks.enabled {
            checks.checked(1);
            if !self.cfg.expect_status.allows(status) {
                checks.mismatch(format!(
                    "{}: status {status}, expected {}",
                    self.cfg.targets[sent.target].name(),
                    self.cfg.expect_status
                ));
            }
        }
        // A keep-alive connection the server closes is opened again;
        // one per request closes anyway.
        self.closing |= close && self.cfg.keepalive;
        Ok(Some(len))
    }

    /// The connection failed. One the server said it would close stays
    /// open to reopening: requests pipelined past its `Connection: close`
    /// are lost with it (HTTP/1.1 says so), and the load goes on. So does
    /// a keep-alive connection that answered and was then closed or reset
    /// without a word: HTTP/1.1 lets a server close one at any time (a
    /// server closing with requests unread resets it, and the reset can
    /// overtake the response that said `Connection: close`). One that
    /// fails before any answer, or waits out the reply timeout, stays down.
    fn failed(&mut self, failure: &Failure, unanswered: Option<&Sent>) -> String {
        self.stalled |= matches!(failure, Failure::Stalled(_));
        let announced = std::mem::take(&mut self.closing);
        let dropped = !announced && self.answered > 0 && dropped_by_server(failure);
        self.opened &= !(announced || dropped);
        let answered = std::mem::take(&mut self.answered);
        let why = if announced {
            " (after a response that said Connection: close)".to_string()
        } else if dropped {
            format!(
                " (after {answered} response{} on it; opened again)",
                if answered == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        match unanswered {
            Some(s) => format!(
                "connection {}, {}: {failure}{why}",
                self.index,
                self.cfg.targets[s.target].name()
            ),
            None => format!("connection {}: {failure}{why}", self.index),
        }
    }

    fn label(&self) -> (&'static str, usize) {
        ("connection", self.index)
    }

    fn closing(&self) -> bool {
        self.closing
    }
}

/// A failure that is the server ending the connection: a close, a reset,
/// a write into one it closed.
fn dropped_by_server(failure: &Failure) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
    match failure {
        Failure::Closed => true,
        Failure::Io(e) => matches!(e.kind(), ConnectionReset | BrokenPipe | ConnectionAborted),
        _ => false,
    }
}
