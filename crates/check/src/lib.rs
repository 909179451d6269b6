//! `serverlab check`: conformance cases and linearizability checking of
//! any server that speaks a serverlab protocol, as a client over TCP.
//!
//! Each protocol is one module implementing [`Protocol`]: its cases, its
//! sequential model, its workload. The rest is shared: [`run`] chooses
//! and runs the cases and the concurrency phase, [`lin`] checks
//! histories, [`report`] and [`text`] present the result.
#![forbid(unsafe_code)]
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod board;
pub mod bucket;
pub mod case;
pub mod concurrency;
pub mod error;
pub mod identify;
pub mod keyed;
pub mod kv;
pub mod ledger;
pub mod lin;
pub mod protocol;
pub mod report;
pub mod resp;
pub mod run;
pub mod text;
pub mod wire;

pub use board::Board;
pub use bucket::Bucket;
pub use error::CheckError;
pub use kv::Kv;
pub use protocol::Protocol;
pub use report::Report;
pub use resp::Resp;
pub use run::{run, Event, Options};
