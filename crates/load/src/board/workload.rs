//! What the board load sends: topic names, message texts and the readers'
//! mix of operations.

use crate::harness::Agent;
use serverlab_util::{Mix, Named};

/// The name of topic `i`.
pub fn topic_name(i: usize) -> Vec<u8> {
    format!("t{i}").into_bytes()
}

/// The whole run's numbers of the topics `agent` owns, of `topics` in
/// all: every one, unless the load is split.
pub fn agent_topics(topics: usize, agent: Agent) -> impl Iterator<Item = usize> {
    (0..agent.share(topics)).map(move |t| agent.global(t))
}

/// Identifies one posted message: which poster, and its sequence number.
pub fn message_code(poster: usize, seq: u64) -> u64 {
    ((poster as u64) << 40) | seq
}

/// The exact text of message `code`, `size` bytes long (at least 1).
/// Deterministic, so a checker can rebuild it instead of storing it.
pub fn write_message(out: &mut Vec<u8>, code: u64, size: usize) {
    let size = size.max(1);
    let start = out.len();
    let head = format!("p{}-{}:", code >> 40, code & ((1 << 40) - 1));
    out.extend_from_slice(&head.as_bytes()[..head.len().min(size)]);
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 @#";
    let mut x = code.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while out.len() - start < size {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(ALPHABET[(x % ALPHABET.len() as u64) as usize]);
    }
}

/// A reader operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderOp {
    Read,
    Count,
    List,
}

impl Named for ReaderOp {
    const WHAT: &'static str = "reader operation";
    const ALL: &'static [ReaderOp] = &[ReaderOp::Read, ReaderOp::Count, ReaderOp::List];
    fn name(self) -> &'static str {
        match self {
            ReaderOp::Read => "read",
            ReaderOp::Count => "count",
            ReaderOp::List => "list",
        }
    }
}

/// The operations a reader draws from, by weight (`read=90,count=8,list=2`).
pub type ReaderMix = Mix<ReaderOp>;

/// READ only, like the reference client.
pub fn reference_reader_mix() -> ReaderMix {
    Mix::only(ReaderOp::Read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_proto::board::valid_message;

    #[test]
    fn messages_are_valid_and_sized() {
        for size in [1, 2, 5, 32, 1000] {
            for code in [0, 1, message_code(3, 77), message_code(200, (1 << 40) - 1)] {
                let mut m = Vec::new();
                write_message(&mut m, code, size);
                assert_eq!(m.len(), size);
                assert!(valid_message(&m));
            }
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_message(&mut a, message_code(1, 2), 40);
        write_message(&mut b, message_code(2, 1), 40);
        assert_ne!(a, b);
    }

    #[test]
    fn mix_parses() {
        let mix: ReaderMix = "read=90,count=8,list=2".parse().unwrap();
        let weights: Vec<u32> = ReaderOp::ALL.iter().map(|&op| mix.weight(op)).collect();
        assert_eq!(weights, [90, 8, 2]);
        let mix: ReaderMix = "count=1".parse().unwrap();
        assert_eq!(mix.ops().collect::<Vec<_>>(), [ReaderOp::Count]);
        assert_eq!(reference_reader_mix().to_string(), "read=1");
        assert!("read=0".parse::<ReaderMix>().is_err());
        assert!("write=3".parse::<ReaderMix>().is_err());
        assert!("read".parse::<ReaderMix>().is_err());
        assert!("read=-1".parse::<ReaderMix>().is_err());
    }
}
