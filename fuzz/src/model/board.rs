//! The message board as the wire contract (docs/protocols/) states it, on plain collections:
//! ids count from 0 per topic, LIST in creation order, EXIT answered
//! `TERMINATING` and closing when the peer may stop the server.
//!
//! Requests are parsed with the proto crate's parser, which its own fuzz
//! target (`board_request`) checks against the grammar; this model checks
//! what the service and its store do with them.

use super::{line, Model, Next};
use crate::session::{Applied, Event};
use serverlab_proto::board::Request;

pub struct Board {
    pub max_request: usize,
    /// Whether `EXIT` from this session's (loopback) peer stops the server.
    pub exit_allowed: bool,
    /// Topics in creation order, each with its messages.
    topics: Vec<(Vec<u8>, Vec<Vec<u8>>)>,
}

impl Board {
    pub fn new(max_request: usize, exit_allowed: bool) -> Self {
        Board {
            max_request,
            exit_allowed,
            topics: Vec::new(),
        }
    }

    fn topic(&self, name: &[u8]) -> Option<&Vec<Vec<u8>>> {
        self.topics.iter().find(|(t, _)| t == name).map(|(_, m)| m)
    }

    /// The reply's payload, and whether the connection closes.
    fn apply(&mut self, req: Request) -> (Vec<u8>, bool) {
        match req {
            Request::Post { topic, message } => {
                if self.topic(topic).is_none() {
                    self.topics.push((topic.to_vec(), Vec::new()));
                }
                let (_, msgs) = self
                    .topics
                    .iter_mut()
                    .find(|(t, _)| t == topic)
                    .expect("just made");
                msgs.push(message.to_vec());
                ((msgs.len() - 1).to_string().into_bytes(), false)
            }
            Request::Read { topic, id } => {
                let msg = self
                    .topic(topic)
                    .zip(id)
                    .and_then(|(msgs, id)| usize::try_from(id).ok().and_then(|i| msgs.get(i)));
                (msg.cloned().unwrap_or_default(), false)
            }
            Request::Count { topic } => {
                let n = self.topic(topic).map_or(0, Vec::len);
                (n.to_string().into_bytes(), false)
            }
            Request::List => {
                let entries: Vec<Vec<u8>> = self
                    .topics
                    .iter()
                    .map(|(t, _)| [b"@", &t[..]].concat())
                    .collect();
                (entries.join(&b'#'), false)
            }
            Request::Exit if self.exit_allowed => (b"TERMINATING".to_vec(), true),
            Request::Exit | Request::Invalid => (Vec::new(), false),
        }
    }
}

impl Model for Board {
    fn next(&mut self, rest: &[u8]) -> Next {
        line::next(rest, self.max_request)
    }

    fn answer(&mut self, a: &Applied) -> bool {
        let (payload, term) = line::split(a.request);
        let (mut want, closes) = self.apply(Request::parse(payload));
        want.push(term);
        assert_eq!(a.reply, want, "reply to {:?}", a.request);
        closes
    }

    fn refused(&self, refusal: Option<&Event>, _seen: &[u8]) {
        line::refused(refusal)
    }
}
