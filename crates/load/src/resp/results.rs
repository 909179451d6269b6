//! The RESP load's own results, typed below the harness
//! ([`crate::results::resp`]) so that the report and the merge read
//! them without naming this module.

pub use crate::results::resp::{RespResults, Setup};
