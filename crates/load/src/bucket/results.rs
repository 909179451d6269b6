//! The bucket load's own results, typed below the harness
//! ([`crate::results::bucket`]) so that the report and the merge read
//! them without naming this module.

pub use crate::results::bucket::{BucketResults, Counted};
