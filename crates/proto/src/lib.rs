//! Wire formats of the serverlab protocols, without I/O.
//!
//! Each protocol module splits a byte stream into frames (`Framed`), parses
//! a frame into a typed request, and encodes replies. "Incomplete" (wait for
//! more bytes) is always distinct from "invalid" (answer with the protocol's
//! error reply). [`for_each_protocol!`] is the one list of them.
#![forbid(unsafe_code)]
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod board;
pub mod bucket;
pub mod echo;
pub mod kv;
pub mod line;
pub mod number;
mod registry;
pub mod resp;

pub use line::{Framed, Terminator};
pub use registry::{OwnServerFlag, ProtocolKind, Served};
