//! The board load's own results, typed below the harness
//! ([`crate::results::board`]) so that the report and the merge read
//! them without naming this module.

pub use crate::results::board::{BoardResults, Reads};
