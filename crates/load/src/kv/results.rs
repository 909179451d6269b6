//! The kv load's own results, typed below the harness
//! ([`crate::results::kv`]) so that the report and the merge read them
//! without naming this module.

pub use crate::results::kv::{KvResults, Preload, SessionTimes, Sessions};
