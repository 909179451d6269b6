//! The board load: posters that POST and readers that READ (or COUNT and
//! LIST), one persistent connection each, as the CAPS reference client
//! does, with optional pipelining, pacing and full reply verification.

mod client;
mod counts;
mod mirror;
mod results;
pub mod workload;

pub use counts::send_exit;
pub use results::{BoardResults, Reads};
pub use workload::ReaderMix;

use crate::harness::{self, Connections, Finish, Pacing, Plan, Timeouts, Window};
use crate::report::ProtocolResults;
use crate::LoadError;
use client::{BoardClient, Role};
use mirror::Mirror;
use serde::Serialize;
use std::net::SocketAddr;
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
/// How long replies still in flight when the window closes may take.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A board load run's settings.
#[derive(Debug, Clone, Serialize)]
pub struct BoardLoad {
    pub addr: SocketAddr,
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
    pub send_exit: bool,
}

impl BoardLoad {
    pub fn new(addr: SocketAddr) -> Self {
        BoardLoad {
            addr,
            posters: 5,
            readers: 5,
            duration_s: 10.0,
            pacing: Pacing::default(),
            topics: 16,
            message_size: 32,
            seed: 1,
            reader_mix: workload::reference_reader_mix(),
            verify: false,
            send_exit: false,
        }
    }

    fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_s)
    }
}

/// What the clients share: each topic's count before the run, and what
/// the posters have been told since.
pub struct Board {
    bases: Vec<u64>,
    mirror: Mirror,
}

impl harness::Protocol for BoardLoad {
    const NAME: &'static str = "board";
    const OPS: &'static [&'static str] = &OPS;
    type Shared = Board;
    type Exchange<'a> = BoardClient<'a>;

    fn plan(&self) -> Plan {
        Plan {
            addr: self.addr,
            window: Window::Duration(self.duration()),
            connections: Connections::Persistent,
            pacing: self.pacing.clone(),
            verify: self.verify,
            timeouts: Timeouts {
                connect: CONNECT_TIMEOUT,
                reply: None,
                drain: Some(DRAIN_TIMEOUT),
            },
            model_note: None,
            seed: self.seed,
        }
    }

    fn setup(&self, _errors: &mut Vec<String>) -> Result<Board, LoadError> {
        let bases = counts::counts(self.addr, self.topics)?;
        Ok(Board {
            mirror: Mirror::new(bases.clone()),
            bases,
        })
    }

    fn exchanges<'a>(&'a self, board: &'a Board) -> Vec<BoardClient<'a>> {
        let posters = (0..self.posters).map(|i| (Role::Poster, i));
        let readers = (0..self.readers).map(|i| (Role::Reader, i));
        posters
            .chain(readers)
            .map(|(role, index)| BoardClient::new(self, &board.mirror, role, index))
            .collect()
    }

    fn finish(&self, board: &Board, done: Finish<'_, BoardClient<'_>>) -> ProtocolResults {
        if self.verify && done.errors.is_empty() {
            counts::final_checks(self, &board.mirror, &board.bases, done.checks, done.errors);
        }
        if self.send_exit {
            if let Err(e) = send_exit(self.addr) {
                done.errors.push(format!("EXIT: {e}"));
            }
        }
        let hits = done.exchanges.iter().map(|c| c.hits).sum();
        let misses = done.exchanges.iter().map(|c| c.misses).sum();
        BoardResults {
            reads: Reads::of(hits, misses),
            posts_acknowledged: (0..self.topics).map(|t| board.mirror.acked(t)).sum(),
        }
        .into()
    }
}
