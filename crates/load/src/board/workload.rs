//! What the board load sends: topic names, message texts and the readers'
//! mix of operations.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The name of topic `i`.
pub fn topic_name(i: usize) -> Vec<u8> {
    format!("t{i}").into_bytes()
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

/// The operations a reader draws from, by weight (`read=90,count=8,list=2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReaderMix {
    pub read: u32,
    pub count: u32,
    pub list: u32,
}

impl Default for ReaderMix {
    /// READ only, like the reference client.
    fn default() -> Self {
        ReaderMix {
            read: 100,
            count: 0,
            list: 0,
        }
    }
}

/// A reader operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderOp {
    Read,
    Count,
    List,
}

impl ReaderMix {
    pub fn pick(&self, rng: &mut fastrand::Rng) -> ReaderOp {
        let r = rng.u32(0..self.read + self.count + self.list);
        if r < self.read {
            ReaderOp::Read
        } else if r < self.read + self.count {
            ReaderOp::Count
        } else {
            ReaderOp::List
        }
    }
}

impl FromStr for ReaderMix {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut mix = ReaderMix {
            read: 0,
            count: 0,
            list: 0,
        };
        for part in s.split(',') {
            let (name, weight) = part.split_once('=').ok_or_else(|| {
                format!("'{part}' is not name=weight (example: read=90,count=8,list=2)")
            })?;
            let weight: u32 = weight
                .trim()
                .parse()
                .map_err(|_| format!("'{weight}' is not a whole-number weight"))?;
            match name.trim() {
                "read" => mix.read = weight,
                "count" => mix.count = weight,
                "list" => mix.list = weight,
                other => {
                    return Err(format!(
                        "unknown reader operation '{other}' (expected read, count, list)"
                    ))
                }
            }
        }
        if mix.read as u64 + mix.count as u64 + mix.list as u64 == 0 {
            return Err("the weights add up to 0".into());
        }
        if mix.read as u64 + mix.count as u64 + mix.list as u64 > u32::MAX as u64 {
            return Err("the weights are too large".into());
        }
        Ok(mix)
    }
}

impl fmt::Display for ReaderMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "read={},count={},list={}",
            self.read, self.count, self.list
        )
    }
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
        assert_eq!(
            "read=90,count=8,list=2".parse(),
            Ok(ReaderMix {
                read: 90,
                count: 8,
                list: 2
            })
        );
        assert_eq!(
            "count=1".parse(),
            Ok(ReaderMix {
                read: 0,
                count: 1,
                list: 0
            })
        );
        assert!("read=0".parse::<ReaderMix>().is_err());
        assert!("write=3".parse::<ReaderMix>().is_err());
        assert!("read".parse::<ReaderMix>().is_err());
        assert!("read=-1".parse::<ReaderMix>().is_err());
    }
}
