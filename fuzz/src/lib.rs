//! Shared pieces of the fuzz targets: how a fuzz input is read
//! ([`input`]), the session driver every whole-session target runs
//! ([`session`]), and the reference models its replies are checked
//! against ([`model`]).
//!
//! The targets themselves live in `fuzz_targets/`, one small file each;
//! docs/reliability.md lists them and the invariants they check.

pub mod input;
pub mod model;
pub mod session;
