//! The echo protocol: board framing, the reply is the payload reversed
//! and the request's terminator.

use super::{line, Model, Next};
use crate::session::{Applied, Event};

pub struct Echo {
    pub max_request: usize,
}

impl Model for Echo {
    fn next(&mut self, rest: &[u8]) -> Next {
        line::next(rest, self.max_request)
    }

    fn answer(&mut self, a: &Applied) -> bool {
        let (payload, term) = line::split(a.request);
        let mut want: Vec<u8> = payload.iter().rev().copied().collect();
        want.push(term);
        assert_eq!(a.reply, want, "echo of {:?}", a.request);
        false
    }

    fn refused(&self, refusal: Option<&Event>, _seen: &[u8]) {
        line::refused(refusal)
    }
}
