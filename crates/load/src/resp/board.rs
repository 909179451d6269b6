//! The board workload spelled in RESP's lists (`load resp --workload
//! board`): a POST is an RPUSH to the topic's list (the new length is the
//! id + 1), a READ an LINDEX, a COUNT an LLEN; there is no LIST (readers
//! READ instead). What is asked and checked is the board load's own
//! ([`crate::board::client`]).

use super::workload::{topic_key, ListOp, Op};
use crate::board::client::Expect;
use crate::board::encoding::{lossy, Answer, Ask, Encoding};
use serverlab_proto::resp::client::{self, Reply};

/// One client's RESP spelling of the board, and its count of error and
/// nil replies.
pub struct Lists {
    topics: Vec<Vec<u8>>,
    /// What its connection says before the run (`AUTH`, `SELECT`).
    pub(crate) greeting: super::commands::Greeting,
    pub(crate) error_replies: u64,
    pub(crate) nulls: u64,
}

impl Lists {
    /// The board's `topics`, of which `agent` owns its share.
    pub fn new(topics: usize, agent: crate::harness::Agent) -> Self {
        Lists {
            topics: crate::board::workload::agent_topics(topics, agent)
                .map(topic_key)
                .collect(),
            greeting: Default::default(),
            error_replies: 0,
            nulls: 0,
        }
    }

    /// Its connection says `greeting` before the run.
    pub fn greeting(mut self, greeting: super::commands::Greeting) -> Self {
        self.greeting = greeting;
        self
    }

    /// The reply's meaning for `expect`.
    fn answer<'r>(reply: Reply<'r>, expect: &Expect) -> Answer<'r> {
        match (expect, reply) {
            (Expect::Post { .. }, Reply::Int(n)) if n >= 1 => Answer::Number(Some(n as u64 - 1)),
            (Expect::Count { .. }, Reply::Int(n)) if n >= 0 => Answer::Number(Some(n as u64)),
            (Expect::Post { .. } | Expect::Count { .. }, _) => Answer::Number(None),
            (Expect::Read { .. }, Reply::Bulk(Some(m))) => Answer::Found(m),
            (Expect::Read { .. }, Reply::Bulk(None)) => Answer::Missing,
            (Expect::Read { .. }, _) => Answer::Neither,
            (Expect::List { .. }, _) => Answer::Topics(None),
        }
    }
}

impl Encoding for Lists {
    fn encode(&mut self, ask: Ask, wire: &mut Vec<u8>) -> usize {
        let op = match ask {
            Ask::Post { topic, message } => {
                client::command(wire, &[b"RPUSH", &self.topics[topic], message]);
                ListOp::RPush
            }
            Ask::Read { topic, id } => {
                let id = id.to_string();
                client::command(wire, &[b"LINDEX", &self.topics[topic], id.as_bytes()]);
                ListOp::LIndex
            }
            Ask::Count { topic } => {
                client::command(wire, &[b"LLEN", &self.topics[topic]]);
                ListOp::LLen
            }
        };
        Op::List(op).index()
    }

    /// Redis has no LIST of lists that hold messages.
    fn list(&mut self, _wire: &mut Vec<u8>) -> Option<usize> {
        None
    }

    fn decode<'r>(
        &mut self,
        input: &'r [u8],
        expect: &Expect,
    ) -> Result<Option<(Answer<'r>, usize)>, String> {
        let Some((reply, len)) = client::parse(input).map_err(|e| super::not_resp(&e, input))?
        else {
            return Ok(None);
        };
        match reply {
            Reply::Error(_) => self.error_replies += 1,
            Reply::Bulk(None) => self.nulls += 1,
            _ => {}
        }
        Ok(Some((Lists::answer(reply, expect), len)))
    }

    fn topic(&self, t: usize) -> &[u8] {
        &self.topics[t]
    }

    fn describe(&self, expect: &Expect) -> String {
        match *expect {
            Expect::Post { topic, .. } => format!("RPUSH board:t{topic}"),
            Expect::Read { topic, id, .. } => format!("LINDEX board:t{topic} {id}"),
            Expect::Count { topic, .. } => format!("LLEN board:t{topic}"),
            Expect::List { .. } => "LIST".into(),
        }
    }

    fn show(&self, reply: &[u8]) -> String {
        match client::parse(reply) {
            Ok(Some((r, _))) => r.show(),
            _ => format!("{:?}", lossy(reply)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::encoding::Lines;
    use crate::harness::Agent;

    /// The two encodings read the same answers from their own replies:
    /// RPUSH's length is the id + 1, LINDEX's nil is a READ's miss.
    #[test]
    fn lists_answer_as_the_board_does() {
        let post = Expect::Post { topic: 0, code: 0 };
        let read = Expect::Read {
            topic: 0,
            id: 0,
            code: None,
        };
        let count = Expect::Count { topic: 0, floor: 0 };
        let (mut lists, mut lines) = (Lists::new(1, Agent::SOLO), Lines::new(1, Agent::SOLO));
        let cases: [(&Expect, &[u8], &[u8], Answer); 6] = [
            (&post, b":6\r\n", b"5\0", Answer::Number(Some(5))),
            (&post, b"-ERR x\r\n", b"x\0", Answer::Number(None)),
            (&count, b":0\r\n", b"0\0", Answer::Number(Some(0))),
            (&read, b"$2\r\nhi\r\n", b"hi\0", Answer::Found(b"hi")),
            (&read, b"$-1\r\n", b"\0", Answer::Missing),
            (&read, b"-ERR x\r\n", b"READ@t0#0\0", Answer::Neither),
        ];
        for (expect, resp, line, want) in cases {
            let got = lists.decode(resp, expect).unwrap();
            assert_eq!(got, Some((want, resp.len())), "{resp:?}");
            assert_eq!(
                lines.decode(line, expect).unwrap().unwrap().0,
                got.unwrap().0
            );
        }
        assert_eq!((lists.error_replies, lists.nulls), (2, 1));
        assert_eq!(lists.decode(b"$2\r\nhi", &read), Ok(None));
        assert!(lists.decode(b"$2\r\nhiXY", &read).is_err());
        let mut wire = Vec::new();
        assert_eq!(lists.list(&mut wire), None);
        let op = lists.encode(Ask::Read { topic: 0, id: 7 }, &mut wire);
        assert_eq!(super::super::OPS[op], "LINDEX");
        assert_eq!(wire, b"*3\r\n$6\r\nLINDEX\r\n$8\r\nboard:t0\r\n$1\r\n7\r\n");
    }
}
