//! `load http`: any HTTP/1.1 server. Targets (a method, a URL, headers, a
//! body, each with a weight) given as flags or in a targets file in
//! vegeta's formats ([`targets`]); `{key}` and `{value}` in a URL, a
//! header or a body are filled in per request from the key distribution
//! and the value size ([`target::Template`]). Keep-alive connections by
//! default (the server may close one: it is opened again), or a
//! connection per request; pipelined, closed or open loop, as the
//! harness runs every load. Responses are framed by `Content-Length` or
//! chunked coding ([`response`], shared with `load kv`), bounded, and
//! counted per target and status; a status not expected
//! (`--expect-status`, 2xx by default) is an error counted by status, and
//! with `--verify` a mismatch that fails the run.

mod client;
pub mod expect;
pub mod response;
pub mod target;
pub mod targets;

pub use crate::results::http::{HttpResults, TargetResults};
pub use client::HttpClient;
pub use expect::Expect;
pub use target::Target;

use crate::endpoint::Endpoint;
use crate::harness::{self, Connections, Finish, Pacing, Plan, Timeouts};
use crate::kv::workload::KeyPicker;
use crate::kv::KeyDist;
use crate::report::ProtocolResults;
use crate::LoadError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;
use target::Template;

/// As `serverlab load` spells it, and its results' tag.
pub const NAME: &str = "http";

/// Operations: the request's method (any other method is `other`).
pub const OPS: [&str; 8] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "other",
];

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// `--reply-timeout`'s default.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

pub use crate::harness::Stop;

/// A `load http` run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct HttpLoad {
    /// The server: a TCP address, or a Unix socket (`unix:/path`).
    pub addr: Endpoint,
    pub targets: Vec<Target>,
    pub connections: usize,
    pub stop: Stop,
    /// Keep-alive connections (false: a connection per request).
    pub keepalive: bool,
    #[serde(flatten)]
    pub pacing: Pacing,
    /// Keys `{key}` is drawn from (0 to keys - 1), and how.
    pub keys: usize,
    pub key_dist: KeyDist,
    /// Bytes of `{value}`.
    pub value_size: usize,
    pub expect_status: Expect,
    pub seed: u64,
    pub verify: bool,
    #[serde(skip)]
    pub agent: harness::Agent,
    #[serde(skip)]
    pub reply_timeout: Duration,
    /// `--max-reply`: the longest response accepted.
    #[serde(skip)]
    pub max_reply: usize,
}

impl HttpLoad {
    pub fn new(addr: impl Into<Endpoint>, targets: Vec<Target>) -> Self {
        HttpLoad {
            addr: addr.into(),
            targets,
            connections: 10,
            stop: Stop::DurationS(10.0),
            keepalive: true,
            pacing: Pacing::default(),
            keys: 1000,
            key_dist: KeyDist::Uniform,
            value_size: 128,
            expect_status: Expect::default(),
            seed: 1,
            verify: false,
            agent: harness::Agent::SOLO,
            reply_timeout: REPLY_TIMEOUT,
            max_reply: crate::driver::MAX_REPLY,
        }
    }

    /// How long the run takes at least, for a progress display.
    pub fn planned(&self) -> Duration {
        match self.stop {
            Stop::DurationS(s) => Duration::from_secs_f64(s),
            Stop::Requests(_) => Duration::from_secs(10),
        }
    }

    /// The `Host` of a target given as a path alone.
    fn default_host(&self) -> String {
        crate::endpoint::host_of(&self.addr)
    }
}

/// A target made ready to write: its request up to the body with the
/// placeholders found, its body, its operation.
pub(crate) struct Ready {
    head: Template,
    body: Template,
    /// Whether the request says `Content-Length` (a body, or a method
    /// that takes one).
    sized: bool,
    wants_value: bool,
    head_request: bool,
    op: usize,
}

impl Ready {
    pub(crate) fn new(t: &Target, default_host: &str) -> Ready {
        let host = if t.host.is_empty() {
            default_host
        } else {
            &t.host
        };
        let mut head = format!("{} {} HTTP/1.1\r\nHost: {host}\r\n", t.method, t.path);
        for (name, value) in &t.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let head = Template::new(head.as_bytes());
        let body = Template::new(&t.body);
        let takes_body = matches!(t.method.as_str(), "POST" | "PUT" | "PATCH");
        Ready {
            wants_value: head.has_value() || body.has_value(),
            head,
            body,
            sized: !t.body.is_empty() || takes_body,
            head_request: t.method == "HEAD",
            op: OPS
                .iter()
                .position(|m| *m == t.method)
                .unwrap_or(OPS.len() - 1),
        }
    }

    /// Append the request with `key` and `value` filled in.
    pub(crate) fn write(&self, out: &mut Vec<u8>, key: &[u8], value: &[u8], keepalive: bool) {
        self.head.fill(out, key, value);
        if self.sized {
            out.extend_from_slice(b"Content-Length: ");
            let n = self.body.filled_len(key.len(), value.len());
            serverlab_proto::number::push_u64(out, n as u64);
            out.extend_from_slice(b"\r\n");
        }
        if !keepalive {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        self.body.fill(out, key, value);
    }
}

/// What the connections share.
pub struct Http {
    keys: KeyPicker,
    targets: Vec<Ready>,
    /// Cumulative weights.
    cdf: Vec<u64>,
}

impl Http {
    /// A target's index, drawn by weight.
    fn pick(&self, rng: &mut fastrand::Rng) -> usize {
        let total = *self.cdf.last().expect("at least one target");
        let u = rng.u64(0..total);
        self.cdf.partition_point(|&c| c <= u)
    }
}

impl harness::Protocol for HttpLoad {
    const NAME: &'static str = NAME;
    const OPS: &'static [&'static str] = &OPS;
    type Shared = Http;
    type Exchange<'a> = HttpClient<'a>;

    fn plan(&self) -> Plan {
        let (connections, note) = if self.keepalive {
            (Connections::Persistent, "keep-alive")
        } else {
            (Connections::PerRequest, "a connection per request")
        };
        let timeouts =
            Timeouts::replies_within(CONNECT_TIMEOUT, self.reply_timeout, self.max_reply);
        harness::plan!(self, self.stop.window(), connections, timeouts, Some(note))
    }

    fn shares(&self) -> Vec<(&'static str, usize)> {
        vec![("connections", self.connections)]
    }

    /// Fail fast, with a clear message, when nothing listens.
    fn setup(&self, _errors: &mut Vec<String>) -> Result<Http, LoadError> {
        let addr = &self.addr;
        addr.connect(CONNECT_TIMEOUT)
            .map_err(LoadError::connecting(addr))?;
        let host = self.default_host();
        let mut sum = 0;
        Ok(Http {
            keys: KeyPicker::new(self.keys.max(1), self.key_dist),
            targets: self.targets.iter().map(|t| Ready::new(t, &host)).collect(),
            cdf: self
                .targets
                .iter()
                .map(|t| {
                    sum += u64::from(t.weight);
                    sum
                })
                .collect(),
        })
    }

    fn exchanges<'a>(&'a self, http: &'a Http) -> Vec<HttpClient<'a>> {
        (0..self.connections)
            .map(|i| HttpClient::new(self, http, i))
            .collect()
    }

    fn finish(&self, _http: &Http, done: Finish<'_, HttpClient<'_>>) -> ProtocolResults {
        let mut targets: Vec<TargetResults> = self
            .targets
            .iter()
            .map(|t| TargetResults {
                target: t.name(),
                weight: t.weight,
                requests: 0,
                errors: 0,
                statuses: BTreeMap::new(),
            })
            .collect();
        for c in &done.exchanges {
            for (into, from) in targets.iter_mut().zip(&c.counts) {
                into.requests += from.requests;
                for (s, n) in &from.statuses {
                    *into.statuses.entry(*s).or_insert(0) += n;
                }
            }
        }
        let results = HttpResults::of(&self.expect_status, targets);
        // Statuses not expected are errors of the run, which fail it.
        let errors = done.errors;
        errors.extend(results.error_lines());
        results.into()
    }
}
