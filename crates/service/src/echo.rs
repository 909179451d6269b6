//! The echo service: board framing, reply = the request reversed. No state,
//! no other work: the transport ceiling the board is measured against.

use crate::protocol_stats::{ErrorCount, FrameLimits, ProtocolStats};
use crate::stats::Counters;
use crate::{After, Common, Frame, Service};
use serverlab_proto::echo;
use serverlab_proto::line::{self, Framed};
use serverlab_proto::Terminator;

/// The one operation.
const ECHO: &str = "echo";

const REQUESTS: usize = 0;
const OVERSIZE: usize = 1;

pub struct EchoService {
    max_request: usize,
    stats: Counters<2>,
    common: Common,
}

/// A framed echo request: its payload's length and its terminator. Only
/// [`EchoService`]'s `frame` builds one.
#[derive(Debug)]
pub struct EchoRequest {
    payload: usize,
    term: Terminator,
}

/// The echo server's own statistics.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EchoStats {
    /// Requests answered.
    pub requests: u64,
    pub limits: FrameLimits,
}

impl ProtocolStats for EchoStats {
    fn requests(&self) -> Vec<(&'static str, u64)> {
        vec![(ECHO, self.requests)]
    }

    fn errors(&self) -> Vec<ErrorCount> {
        vec![self.limits.errors()]
    }
}

impl EchoService {
    pub fn new(max_request: usize) -> Self {
        EchoService {
            max_request,
            stats: Counters::default(),
            common: Common::default(),
        }
    }
}

impl Service for EchoService {
    type Conn = ();
    type Request = EchoRequest;

    fn open(&self, _peer: impl Into<crate::Peer>) {}

    fn input_limit(&self) -> usize {
        self.max_request + 1
    }

    fn frame(&self, _conn: &mut (), input: &[u8], _out: &mut Vec<u8>) -> Frame<EchoRequest> {
        match line::frame(input, self.max_request) {
            Framed::Incomplete => Frame::Incomplete,
            Framed::Frame { len, used, term } => Frame::Ready {
                len: used,
                request: EchoRequest { payload: len, term },
            },
            Framed::Oversize => {
                self.stats.add(OVERSIZE, 1);
                Frame::Close
            }
        }
    }

    fn apply(&self, _conn: &mut (), req: EchoRequest, input: &[u8], out: &mut Vec<u8>) -> After {
        self.stats.add(REQUESTS, 1);
        echo::reply(out, &input[..req.payload], req.term);
        After::Continue
    }

    fn common(&self) -> &Common {
        &self.common
    }

    const OPS: &'static [&'static str] = &[ECHO];

    fn op(&self, _conn: &(), _request: &EchoRequest) -> usize {
        0
    }

    type Stats = EchoStats;

    fn stats(&self) -> EchoStats {
        EchoStats {
            requests: self.stats.get(REQUESTS),
            limits: FrameLimits {
                oversize_frames: self.stats.get(OVERSIZE),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverses_each_frame_with_its_terminator() {
        let svc = EchoService::new(100);
        let mut out = Vec::new();
        let ran = crate::run_all(&svc, &mut (), b"abc\0xy\r\nz\nrest", &mut out);
        assert_eq!(out, b"cba\0yx\nz\n");
        assert_eq!(ran.applied.len(), 3);
        assert!(!ran.closed());
        assert_eq!(svc.report()["requests"], 3);
    }

    /// `apply` acts on what `frame` found and never frames again: given
    /// other bytes of the same length, it reverses the framed payload's
    /// length of them and ends the reply with the framed terminator.
    #[test]
    fn apply_uses_the_frame_frame_found() {
        let svc = EchoService::new(100);
        let mut out = Vec::new();
        let Frame::Ready { len, request } = svc.frame(&mut (), b"ab\r\n", &mut out) else {
            panic!("a whole request");
        };
        assert_eq!(len, 4);
        svc.apply(&mut (), request, b"xy\0\0", &mut out);
        assert_eq!(out, b"yx\n", "payload 2 bytes, LF terminator, as framed");
    }
}
