//! `serverlab check`: conformance cases and linearizability checking of
//! any server that speaks a serverlab protocol, as a client over TCP.

pub mod lin;
