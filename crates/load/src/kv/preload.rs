//! The preload: every key written once before the run, on a few
//! connections of the event-loop driver; not measured.

use super::reply::next_response;
use super::workload::{write_key, write_value};
use super::KvLoad;
use crate::driver::{Client, Failure};
use serverlab_proto::kv::client::encode_request;
use serverlab_proto::kv::Method;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// One preload connection: it PUTs keys taken from a shared counter, one
/// at a time, until none is left.
pub(crate) struct PreloadClient<'a> {
    cfg: &'a KvLoad,
    next: &'a AtomicUsize,
    host: &'a str,
    opened: bool,
    /// The key being written.
    pending: Option<usize>,
    /// No key is left.
    exhausted: bool,
    key: Vec<u8>,
    value: Vec<u8>,
    pub(crate) error: Option<String>,
}

impl<'a> PreloadClient<'a> {
    pub(crate) fn new(cfg: &'a KvLoad, next: &'a AtomicUsize, host: &'a str) -> Self {
        PreloadClient {
            cfg,
            next,
            host,
            opened: false,
            pending: None,
            exhausted: false,
            key: Vec::new(),
            value: Vec::new(),
            error: None,
        }
    }
}

impl Client for PreloadClient<'_> {
    /// One connection; after a failure the preload has failed.
    fn connect(&mut self, _now: Instant) -> bool {
        !std::mem::replace(&mut self.opened, true)
    }

    fn fill(&mut self, wire: &mut Vec<u8>, _now: Instant) -> usize {
        if self.pending.is_some() || self.exhausted {
            return 0;
        }
        // Relaxed: hands out distinct keys, orders nothing.
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= self.cfg.keys {
            self.exhausted = true;
            return 0;
        }
        write_key(&mut self.key, i);
        write_value(
            &mut self.value,
            &self.key,
            self.cfg.seed ^ i as u64,
            self.cfg.value_size,
        );
        encode_request(
            wire,
            Method::Put,
            &self.key,
            Some(&self.value),
            self.host,
            false,
        );
        self.pending = Some(i);
        1
    }

    fn take(&mut self, input: &[u8], _now: Instant) -> Result<Option<usize>, String> {
        if self.pending.is_none() {
            return Err("a response to no request".into());
        }
        let Some(response) = next_response(input, Method::Put)? else {
            return Ok(None);
        };
        match response.head.status {
            200 | 201 if !response.head.close => {}
            st => return Err(format!("status {st}")),
        }
        self.pending = None;
        Ok(Some(response.len))
    }

    fn in_flight(&self) -> usize {
        usize::from(self.pending.is_some())
    }

    fn connection_done(&self) -> bool {
        self.exhausted && self.pending.is_none()
    }

    fn failed(&mut self, failure: Failure, _now: Instant) {
        self.error = Some(match self.pending {
            Some(i) => format!("preload of key{i}: {failure}"),
            None => format!("preload: {failure}"),
        });
    }
}
