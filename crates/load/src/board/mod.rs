//! The board load: posters that POST and readers that READ (or COUNT and
//! LIST), one persistent connection each, as the CAPS reference client
//! does, with optional pipelining, pacing and full reply verification.
//! The workload (`client.rs`, `shared.rs`) is also `load resp --workload
//! board`'s, spelled in RESP's lists; here it speaks the board's own
//! protocol (`encoding::Lines`).

pub(crate) mod client;
mod counts;
pub(crate) mod encoding;
pub(crate) mod mirror;
pub(crate) mod shared;
pub mod workload;

pub use crate::results::board::{BoardResults, Reads};
pub use counts::send_exit;
pub use workload::ReaderMix;

use crate::endpoint::Endpoint;
use crate::harness::{self, Connections, Finish, Pacing, Plan, Timeouts, Window};
use crate::report::ProtocolResults;
use crate::LoadError;
use client::{BoardClient, Params};
use encoding::Lines;
use serde::Serialize;
use shared::Board;
use std::time::Duration;

/// Operation names, in recorder order.
pub const OPS: [&str; 4] = ["POST", "READ", "COUNT", "LIST"];
pub(crate) const POST: usize = 0;
pub(crate) const READ: usize = 1;
pub(crate) const COUNT: usize = 2;
pub(crate) const LIST: usize = 3;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a setup or final-check request may wait for its reply.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);
/// `--reply-timeout`'s default: how long a connection with requests in
/// flight waits for a whole reply, and replies still in flight when the
/// window closes may take.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// A board load run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct BoardLoad {
    /// The server: a TCP address, or a Unix socket (`unix:/path`).
    pub addr: Endpoint,
    pub posters: usize,
    pub readers: usize,
    pub duration_s: f64,
    /// Pipeline depth and throttle.
    #[serde(flatten)]
    pub pacing: Pacing,
    pub topics: usize,
    pub message_size: usize,
    pub seed: u64,
    pub reader_mix: ReaderMix,
    pub verify: bool,
    /// Which share of a split load this process runs (said in the
    /// report's `agent`, not here: every agent's configuration is the same).
    #[serde(skip)]
    pub agent: harness::Agent,
    pub send_exit: bool,
    /// How long a connection with requests in flight waits for a whole
    /// reply (and replies in flight after the window).
    #[serde(skip)]
    pub reply_timeout: Duration,
    /// `--max-reply`.
    #[serde(skip)]
    pub max_reply: usize,
}

impl BoardLoad {
    pub fn new(addr: impl Into<Endpoint>) -> Self {
        BoardLoad {
            addr: addr.into(),
            posters: 5,
            readers: 5,
            duration_s: 10.0,
            pacing: Pacing::default(),
            topics: 16,
            message_size: 32,
            seed: 1,
            reader_mix: workload::reference_reader_mix(),
            verify: false,
            agent: harness::Agent::SOLO,
            send_exit: false,
            reply_timeout: REPLY_TIMEOUT,
            max_reply: crate::driver::MAX_REPLY,
        }
    }

    /// What a reply can be: a message, or a LIST of the topics this load
    /// made (a name each, at most a few dozen bytes).
    pub fn reply_limit(&self) -> usize {
        let legit = self.message_size.max(self.topics * 64) + 1024;
        crate::driver::reply_limit(legit, self.max_reply)
    }

    fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_s)
    }

    fn params(&self) -> Params {
        Params {
            topics: self.agent.share(self.topics),
            message_size: self.message_size,
            reader_mix: self.reader_mix.clone(),
            seed: self.seed,
            verify: self.verify,
        }
    }
}

impl harness::Protocol for BoardLoad {
    const NAME: &'static str = serverlab_proto::board::NAME;
    const OPS: &'static [&'static str] = &OPS;
    type Shared = Board;
    type Exchange<'a> = BoardClient<'a, Lines>;

    fn plan(&self) -> Plan {
        let timeouts =
            Timeouts::replies_within(CONNECT_TIMEOUT, self.reply_timeout, self.reply_limit());
        harness::plan!(
            self,
            Window::Duration(self.duration()),
            Connections::Persistent,
            timeouts,
            None
        )
    }

    fn shares(&self) -> Vec<(&'static str, usize)> {
        vec![
            (
                "connections (posters and readers)",
                self.posters + self.readers,
            ),
            ("topics", self.topics),
        ]
    }

    fn setup(&self, _errors: &mut Vec<String>) -> Result<Board, LoadError> {
        Ok(Board::new(counts::counts(self)?))
    }

    fn exchanges<'a>(&'a self, board: &'a Board) -> Vec<BoardClient<'a, Lines>> {
        let (topics, agent) = (self.topics, self.agent);
        board.clients(&self.params(), (self.posters, self.readers), || {
            Lines::new(topics, agent)
        })
    }

    fn finish(&self, board: &Board, done: Finish<'_, BoardClient<'_, Lines>>) -> ProtocolResults {
        if self.verify && done.errors.is_empty() {
            let finals = counts::counts(self).map_err(|e| e.to_string());
            board.final_checks("COUNT", finals, done.checks, done.errors);
        }
        if self.send_exit {
            if let Err(e) = send_exit(&self.addr) {
                done.errors.push(format!("EXIT: {e}"));
            }
        }
        let hits = done.exchanges.iter().map(|c| c.hits).sum();
        let misses = done.exchanges.iter().map(|c| c.misses).sum();
        board.results(hits, misses).into()
    }
}
