//! The echo service: board framing, reply = the request reversed. No state,
//! no other work: the transport ceiling the board is measured against.

use crate::{line, After, Frame, Service};
use serde_json::json;
use serverlab_proto::echo;
use std::net::SocketAddr;

use crate::stats::Counters;

const REQUESTS: usize = 0;
const OVERSIZE: usize = 1;

pub struct EchoService {
    max_request: usize,
    stats: Counters<2>,
}

impl EchoService {
    pub fn new(max_request: usize) -> Self {
        EchoService {
            max_request,
            stats: Counters::default(),
        }
    }
}

impl Service for EchoService {
    type Conn = ();

    fn open(&self, _peer: SocketAddr) {}

    fn input_limit(&self) -> usize {
        self.max_request + 1
    }

    fn frame(&self, _conn: &mut (), input: &[u8], _out: &mut Vec<u8>) -> Frame {
        line::frame(input, self.max_request, || self.stats.add(OVERSIZE, 1))
    }

    fn apply(&self, _conn: &mut (), request: &[u8], out: &mut Vec<u8>) -> After {
        self.stats.add(REQUESTS, 1);
        let (payload, term) = line::split(request);
        echo::reply(out, payload, term);
        After::Continue
    }

    fn report(&self) -> serde_json::Value {
        json!({
            "requests": self.stats.get(REQUESTS),
            "limits": { "oversize_frames": self.stats.get(OVERSIZE) },
        })
    }
}
