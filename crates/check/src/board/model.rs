//! The board's sequential model, one topic at a time.
//!
//! The state is just the topic's message count. Every message the checker
//! posts is unique, and every POST's reply (its id) is known, so which
//! message sits at which id is fixed by the replies: READ@t#k answering
//! message m is right exactly when m's POST was answered k and the topic
//! already holds more than k messages. That keeps the state one number,
//! which is what makes the search fast.

use crate::lin::Model;
use crate::wire::show;

/// One operation on one topic, with its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// POST of `msg`, answered `id` (`None`: the reply was not a number).
    Post {
        msg: String,
        id: Result<u64, Vec<u8>>,
    },
    /// READ of `id`, answered `got`.
    Read { id: u64, got: ReadReply },
    /// COUNT, answered `n` (`Err`: not a number).
    Count(Result<u64, Vec<u8>>),
    /// A LIST, seen from this topic: whether it listed it (`Err`: the
    /// reply was not a list).
    Listed(Result<bool, Vec<u8>>),
}

/// What a READ answered, in terms of the POSTs of its topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadReply {
    Empty,
    /// The message a POST sent; that POST was answered `id`.
    Posted {
        msg: String,
        id: u64,
    },
    /// Bytes no POST of this topic sent (or whose POST got no id).
    Foreign(Vec<u8>),
}

/// One topic's model.
pub struct Topic {
    pub name: String,
}

impl Model for Topic {
    type State = u64;
    type Op = Op;

    fn init(&self) -> u64 {
        0
    }

    fn step(&self, &count: &u64, op: &Op) -> Option<u64> {
        match op {
            Op::Post { id: Ok(id), .. } => (*id == count).then_some(count + 1),
            Op::Read {
                got: ReadReply::Empty,
                id,
            } => (*id >= count).then_some(count),
            Op::Read {
                got: ReadReply::Posted { id: posted, .. },
                id,
            } => (posted == id && *id < count).then_some(count),
            Op::Count(Ok(n)) => (*n == count).then_some(count),
            Op::Listed(Ok(listed)) => (*listed == (count > 0)).then_some(count),
            Op::Post { id: Err(_), .. }
            | Op::Count(Err(_))
            | Op::Listed(Err(_))
            | Op::Read {
                got: ReadReply::Foreign(_),
                ..
            } => None,
        }
    }

    fn describe_op(&self, op: &Op) -> String {
        let t = &self.name;
        match op {
            Op::Post { msg, id: Ok(id) } => format!("POST@{t}#{msg} answered {id}"),
            Op::Post { msg, id: Err(b) } => {
                format!("POST@{t}#{msg} answered {} (not an id)", show(b))
            }
            Op::Read { id, got } => format!("READ@{t}#{id} answered {}", read_reply(got)),
            Op::Count(Ok(n)) => format!("COUNT@{t} answered {n}"),
            Op::Count(Err(b)) => format!("COUNT@{t} answered {} (not a number)", show(b)),
            Op::Listed(Ok(true)) => format!("LIST answered with {t} in it"),
            Op::Listed(Ok(false)) => format!("LIST answered without {t}"),
            Op::Listed(Err(b)) => format!("LIST answered {} (not a list)", show(b)),
        }
    }

    fn describe_state(&self, count: &u64) -> String {
        match count {
            0 => format!("topic {} had no messages", self.name),
            1 => format!("topic {} held 1 message (id 0)", self.name),
            n => format!("topic {} held {n} messages (ids 0-{})", self.name, n - 1),
        }
    }
}

fn read_reply(got: &ReadReply) -> String {
    match got {
        ReadReply::Empty => "nothing (empty)".into(),
        ReadReply::Posted { msg, id } => {
            format!("\"{msg}\" (the message whose POST was answered {id})")
        }
        ReadReply::Foreign(b) => format!("{} (no POST to this topic sent it)", show(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lin::{check, Budget, Operation, Outcome};

    fn op(call: u64, ret: u64, op: Op) -> Operation<Op> {
        Operation {
            client: call as usize,
            call,
            ret,
            op,
        }
    }

    fn post(id: u64) -> Op {
        Op::Post {
            msg: format!("m{id}"),
            id: Ok(id),
        }
    }

    fn verdict(ops: &[Operation<Op>]) -> bool {
        let t = Topic { name: "t".into() };
        check(&t, ops, Budget::steps(1_000_000)) == Outcome::Linearizable
    }

    #[test]
    fn a_list_must_show_a_topic_whose_first_post_was_answered() {
        // LIST sent after POST answered 0: it must list the topic.
        assert!(!verdict(&[
            op(0, 1, post(0)),
            op(2, 3, Op::Listed(Ok(false)))
        ]));
        assert!(verdict(&[
            op(0, 1, post(0)),
            op(2, 3, Op::Listed(Ok(true)))
        ]));
        // Overlapping the POST: either answer is right.
        assert!(verdict(&[
            op(0, 5, post(0)),
            op(2, 3, Op::Listed(Ok(false)))
        ]));
        assert!(verdict(&[
            op(0, 5, post(0)),
            op(2, 3, Op::Listed(Ok(true)))
        ]));
        // Before the POST was sent: the topic cannot be there yet.
        assert!(!verdict(&[
            op(0, 1, Op::Listed(Ok(true))),
            op(2, 3, post(0))
        ]));
    }

    #[test]
    fn reads_see_exactly_the_message_posted_with_that_id() {
        let read = |id, got| Op::Read { id, got };
        let posted = |id| ReadReply::Posted {
            msg: format!("m{id}"),
            id,
        };
        let base = [op(0, 1, post(0)), op(2, 3, post(1))];
        let with = |r: Op| [base.to_vec(), vec![op(4, 5, r)]].concat();
        assert!(verdict(&with(read(1, posted(1)))));
        assert!(!verdict(&with(read(1, posted(0)))), "another id's message");
        assert!(!verdict(&with(read(1, ReadReply::Empty))), "a stale read");
        assert!(verdict(&with(read(2, ReadReply::Empty))));
        assert!(!verdict(&with(read(0, ReadReply::Foreign(b"x".to_vec())))));
        assert!(!verdict(&with(Op::Count(Ok(1)))));
        assert!(verdict(&with(Op::Count(Ok(2)))));
    }
}
