//! The preload: every key written once before the run, on a few
//! connections of the harness's driver; not measured.

use super::reply::next_response;
use super::workload::{write_key, write_value};
use super::KvLoad;
use crate::checks::Checks;
use crate::driver::Failure;
use crate::harness::{self, Connections, Exchange, Pacing, Plan, Received, Window};
use crate::http::Ready;
use crate::{LoadError, Progress};
use serverlab_proto::kv::Method;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Write every key once on up to `concurrency` connections. Returns the
/// first failure, described.
pub(super) fn run(cfg: &KvLoad, host: &str) -> Result<Option<String>, LoadError> {
    let plan = Plan {
        addr: cfg.addr.clone(),
        window: Window::Work,
        connections: Connections::Series { requests: None },
        pacing: Pacing::default(),
        verify: false,
        timeouts: cfg.timeouts(),
        model_note: None,
        seed: cfg.seed,
        agent: harness::Agent::SOLO,
        start_at: None,
        poll: Default::default(),
    };
    let next = AtomicUsize::new(0);
    let requests = super::requests(host);
    let put = &requests[super::Op::Put.index()];
    let clients = (0..cfg.concurrency.clamp(1, cfg.keys.max(1)))
        .map(|_| PreloadClient::new(cfg, &next, put))
        .collect();
    let run = harness::run_clients(&plan, 1, clients, &Progress::default())?;
    Ok(run
        .clients
        .into_iter()
        .find_map(|c| c.errors.kept.into_iter().next()))
}

/// One preload connection: it PUTs keys taken from a shared counter, one
/// at a time, until none is left.
struct PreloadClient<'a> {
    cfg: &'a KvLoad,
    next: &'a AtomicUsize,
    /// The PUT request ([`super::requests`]).
    put: &'a Ready,
    opened: bool,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl<'a> PreloadClient<'a> {
    fn new(cfg: &'a KvLoad, next: &'a AtomicUsize, put: &'a Ready) -> Self {
        PreloadClient {
            cfg,
            next,
            put,
            opened: false,
            key: Vec::new(),
            value: Vec::new(),
        }
    }
}

impl Exchange for PreloadClient<'_> {
    /// The key being written.
    type Sent = usize;

    /// One connection; after a failure the preload has failed.
    fn connect(&mut self, _now: Instant) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    fn request(&mut self, wire: &mut Vec<u8>) -> Option<(usize, usize)> {
        // Relaxed: hands out distinct keys, orders nothing.
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let agent = self.cfg.agent;
        if i >= agent.share(self.cfg.keys) {
            return None;
        }
        // A split load's agent writes its own keys.
        write_key(&mut self.key, agent.global(i));
        let nonce = self.cfg.seed ^ i as u64;
        let size = self.cfg.value_size.for_nonce(nonce);
        write_value(&mut self.value, &self.key, nonce, size);
        self.put.write(wire, &self.key, &self.value, true);
        Some((0, i))
    }

    fn reply(
        &mut self,
        input: &[u8],
        _key: &usize,
        _rx: Received,
        _checks: &mut Checks,
    ) -> Result<Option<usize>, String> {
        let Some(response) = next_response(input, Method::Put)? else {
            return Ok(None);
        };
        match response.head.status {
            200 | 201 if !response.head.close => Ok(Some(response.len)),
            st => Err(format!("status {st}")),
        }
    }

    fn failed(&mut self, failure: &Failure, unanswered: Option<&usize>) -> String {
        match unanswered {
            Some(i) => format!("preload of key{i}: {failure}"),
            None => format!("preload: {failure}"),
        }
    }

    fn label(&self) -> (&'static str, usize) {
        ("preload", 0)
    }
}
