//! The RESP load: any server that speaks Redis's protocol (serverlab's
//! `serve resp`, redis-server, …). Persistent connections, closed or open
//! loop as the harness runs them, each sending either a command mix over
//! keys (`--mix get=80,set=20`, uniform or Zipf keys) or, with
//! `--workload board`, the CAPS board mapped onto lists (posters RPUSH,
//! readers LINDEX and LLEN). With `verify` every reply is checked: a
//! connection owns its keys (so it knows what each must hold, pipelined or
//! not) and shares read-only keys written before the run; board replies
//! are checked against the acknowledged posts.

mod board;
mod client;
pub mod commands;
mod keys;
mod mirror;
mod setup;
pub mod workload;

pub use crate::results::resp::{RespResults, Setup};
pub use commands::{Auth, Command};
pub use workload::{KeyPattern, ListOp, Mix, Op, StrOp, Workload, OPS};

use crate::board::client::Params;
use crate::board::shared::Board;
use crate::board::ReaderMix;
use crate::endpoint::Endpoint;
use crate::harness::{self, Connections, Finish, Pacing, Plan, Timeouts};
use crate::keyspace::ValueSize;
use crate::report::ProtocolResults;
use crate::LoadError;
use board::Lists;
use client::RespClient;
use keys::KeysClient;
use serde::Serialize;
use std::time::{Duration, Instant};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// `--reply-timeout`'s default: how long a connection with requests in
/// flight waits for a whole reply, and replies still in flight when the
/// window closes may take.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// What the keys workload's `--verify` leaves out: writes that race.
pub const NOT_CHECKED: &str = "writes racing on one key: each connection writes only keys of \
     its own (the shared ones are read-only), so a server that loses one of two racing writes \
     passes; `serverlab check resp` checks those";

pub use crate::harness::Stop;

/// A RESP load run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct RespLoad {
    /// The server: a TCP address, or a Unix socket (`unix:/path`).
    pub addr: Endpoint,
    pub workload: Workload,
    /// Connections of the keys workload (redis-benchmark's `-c`).
    pub connections: usize,
    pub stop: Stop,
    /// Pipeline depth and the load model.
    #[serde(flatten)]
    pub pacing: Pacing,
    pub mix: Mix,
    /// Distinct keys of each kind (strings, counters, lists).
    pub keys: usize,
    pub key_pattern: KeyPattern,
    /// Bytes per value written: one size, a range or a weighted list.
    pub value_size: ValueSize,
    /// Commands of the user's own (`--command`), sent instead of `mix`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<Command>,
    /// `AUTH` on every connection before the run (the password never
    /// written out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<Auth>,
    /// `SELECT` of this database on every connection before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<u32>,
    /// Read-only keys written before a verified run, read by every connection.
    pub shared_keys: usize,
    /// Write every string key once before the run.
    pub preload: bool,
    /// The board workload: posters, readers, topics, message size, what readers send.
    pub posters: usize,
    pub readers: usize,
    pub topics: usize,
    pub message_size: usize,
    pub reader_mix: ReaderMix,
    pub seed: u64,
    pub verify: bool,
    /// Which share of a split load this process runs (said in the
    /// report's `agent`, not here: every agent's configuration is the same).
    #[serde(skip)]
    pub agent: harness::Agent,
    /// How long a connection with requests in flight waits for a whole
    /// reply (and the setup for all of its replies).
    #[serde(skip)]
    pub reply_timeout: Duration,
    /// `--max-reply`.
    #[serde(skip)]
    pub max_reply: usize,
    /// `--ledger`: every string write sent and acknowledged (verifying only:
    /// connections own their keys).
    #[serde(skip)]
    pub ledger: Option<std::sync::Arc<serverlab_util::ledger::Ledger>>,
}

impl RespLoad {
    pub fn new(addr: impl Into<Endpoint>) -> Self {
        RespLoad {
            addr: addr.into(),
            workload: Workload::Keys,
            connections: 50,
            stop: Stop::DurationS(10.0),
            pacing: Pacing::default(),
            mix: workload::default_mix(),
            keys: 100_000,
            key_pattern: KeyPattern(crate::kv::KeyDist::Uniform),
            value_size: ValueSize::Fixed(64),
            commands: Vec::new(),
            auth: None,
            db: None,
            shared_keys: 100,
            preload: false,
            posters: 5,
            readers: 5,
            topics: 16,
            message_size: 32,
            reader_mix: crate::board::workload::reference_reader_mix(),
            seed: 1,
            verify: false,
            agent: harness::Agent::SOLO,
            reply_timeout: REPLY_TIMEOUT,
            max_reply: crate::driver::MAX_REPLY,
            ledger: None,
        }
    }

    /// Clients at once: connections, or posters + readers.
    pub fn clients(&self) -> usize {
        match self.workload {
            Workload::Keys => self.connections,
            Workload::Board => self.posters + self.readers,
        }
    }

    /// The smallest `value_size` that `verify` can check.
    pub fn min_verified_value_size(&self) -> usize {
        let longest = workload::key(workload::Space::Shared, self.keys.max(self.shared_keys));
        crate::kv::workload::min_checked_size(longest.len())
    }

    /// The board workload's settings.
    fn board_params(&self) -> Params {
        Params {
            topics: self.agent.share(self.topics),
            message_size: self.message_size,
            reader_mix: self.reader_mix.clone(),
            seed: self.seed,
            verify: self.verify,
        }
    }

    /// What a reply can be: an LRANGE of values, a board message, an
    /// MGET, or an error line.
    pub fn reply_limit(&self) -> usize {
        let element = self.value_size.max().max(self.message_size) + 32;
        let legit = element * (workload::RANGE as usize).max(workload::MULTI) + 1024;
        crate::driver::reply_limit(legit, self.max_reply)
    }

    /// How long the run takes at least, for a progress display.
    pub fn planned(&self) -> Duration {
        match self.stop {
            Stop::DurationS(s) => Duration::from_secs_f64(s),
            Stop::Requests(_) => Duration::from_secs(10),
        }
    }
}

/// What the clients share.
pub struct Resp {
    board: Option<Board>,
    setup: Option<Setup>,
}

impl harness::Protocol for RespLoad {
    const NAME: &'static str = serverlab_proto::resp::NAME;
    const OPS: &'static [&'static str] = &OPS;
    type Shared = Resp;
    type Exchange<'a> = RespClient<'a>;

    /// The data commands, or the user's own (`--command`) by name: a run
    /// sends one or the other, and names each operation once.
    fn ops(&self) -> Vec<&str> {
        if self.commands.is_empty() {
            OPS.to_vec()
        } else {
            self.commands.iter().map(|c| c.name.as_str()).collect()
        }
    }

    fn plan(&self) -> Plan {
        let timeouts =
            Timeouts::replies_within(CONNECT_TIMEOUT, self.reply_timeout, self.reply_limit());
        let connections = Connections::Persistent;
        harness::plan!(self, self.stop.window(), connections, timeouts, None)
    }

    fn shares(&self) -> Vec<(&'static str, usize)> {
        match self.workload {
            Workload::Keys if self.verify => {
                vec![("connections", self.connections), ("keys", self.keys)]
            }
            Workload::Keys => vec![("connections", self.connections)],
            Workload::Board => vec![
                (
                    "connections (posters and readers)",
                    self.posters + self.readers,
                ),
                ("topics", self.topics),
            ],
        }
    }

    fn setup(&self, errors: &mut Vec<String>) -> Result<Resp, LoadError> {
        match self.workload {
            Workload::Keys => {
                let t0 = Instant::now();
                let written = setup::keys(self, errors)?;
                Ok(Resp {
                    board: None,
                    setup: (written > 0).then(|| Setup {
                        keys_written: written as u64,
                        time_s: t0.elapsed().as_secs_f64(),
                    }),
                })
            }
            Workload::Board => {
                let bases = match setup::topic_lengths(self)? {
                    Ok(b) => b,
                    Err(e) => {
                        errors.push(e);
                        vec![0; self.agent.share(self.topics)]
                    }
                };
                Ok(Resp {
                    board: Some(Board::new(bases)),
                    setup: None,
                })
            }
        }
    }

    fn exchanges<'a>(&'a self, run: &'a Resp) -> Vec<RespClient<'a>> {
        match &run.board {
            None => (0..self.connections)
                .map(|i| RespClient::Keys(KeysClient::new(self, i)))
                .collect(),
            Some(board) => {
                let (topics, agent) = (self.topics, self.agent);
                let clients = (self.posters, self.readers);
                let greeting = commands::Greeting::new(self.auth.as_ref(), self.db);
                let encoding = || Lists::new(topics, agent).greeting(greeting.clone());
                let clients = board.clients(&self.board_params(), clients, encoding);
                clients.into_iter().map(RespClient::Board).collect()
            }
        }
    }

    fn finish(&self, run: &Resp, done: Finish<'_, RespClient<'_>>) -> ProtocolResults {
        let sum = |pairs: &mut dyn Iterator<Item = (u64, u64)>| {
            pairs.fold((0, 0), |(a, b), (x, y)| (a + x, b + y))
        };
        let clients = || done.exchanges.iter();
        let (error_replies, null_replies) = sum(&mut clients().map(|c| c.errors_and_nulls()));
        let mut error_prefixes = std::collections::BTreeMap::new();
        for c in clients() {
            for (p, n) in c.error_prefixes() {
                *error_prefixes.entry(p.clone()).or_insert(0) += n;
            }
        }
        let (hits, misses) = sum(&mut clients().map(|c| c.hits_and_misses()));
        if self.verify && self.workload == Workload::Keys {
            done.checks.not_checked(NOT_CHECKED);
        }
        let board = run.board.as_ref().map(|b| {
            if self.verify && done.errors.is_empty() {
                let finals = match setup::topic_lengths(self) {
                    Ok(finals) => finals,
                    Err(e) => Err(e.to_string()),
                };
                b.final_checks("LLEN", finals, done.checks, done.errors);
            }
            b.results(hits, misses)
        });
        let workload = if self.commands.is_empty() {
            self.workload.to_string()
        } else {
            "commands".into()
        };
        RespResults {
            workload,
            error_replies,
            error_prefixes,
            null_replies,
            setup: run.setup.clone(),
            board,
        }
        .into()
    }
}

/// Bytes that are not RESP, said as every load says a server of another
/// protocol: "this does not look like a resp server" (the command line
/// adds which address to check), what was wrong, what it sent and, where
/// it is plain, which kind of server sends that.
fn not_resp(e: &serverlab_proto::resp::client::ReplyError, sent: &[u8]) -> String {
    let like = if sent.starts_with(b"HTTP/") {
        ", as an HTTP server such as kv does"
    } else if !sent.contains(&b'\r') && matches!(sent.last(), Some(b'\0' | b'\n')) {
        ", replies ended by NUL or LF as a board, bucket or echo server sends"
    } else {
        ""
    };
    format!(
        "this does not look like a resp server ({e}; it sent {}{like})",
        crate::quoted(sent)
    )
}
