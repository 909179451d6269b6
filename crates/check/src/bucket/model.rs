//! The bucket's sequential model: one counter, which each request adds
//! its delay to, answering the new value (`0,b` adds nothing: a read).

use crate::lin::Model;
use crate::wire::show;

/// One request on one bucket, with its reply (`Err`: not a value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub delay: u64,
    pub got: Result<u64, Vec<u8>>,
}

pub struct Counter {
    pub bucket: u64,
    /// Its value when the phase began.
    pub start: u64,
}

impl Model for Counter {
    type State = u64;
    type Op = Op;

    fn init(&self) -> u64 {
        self.start
    }

    fn step(&self, &value: &u64, op: &Op) -> Option<u64> {
        let next = value.wrapping_add(op.delay);
        (op.got == Ok(next)).then_some(next)
    }

    fn describe_op(&self, op: &Op) -> String {
        let b = self.bucket;
        let what = if op.delay == 0 {
            format!("0,{b} (a read)")
        } else {
            format!("{},{b} (add {})", op.delay, op.delay)
        };
        match &op.got {
            Ok(v) => format!("{what} answered {v}"),
            Err(bytes) => format!("{what} answered {} (not a value)", show(bytes)),
        }
    }

    fn describe_state(&self, value: &u64) -> String {
        format!("bucket {} held {value}", self.bucket)
    }
}
