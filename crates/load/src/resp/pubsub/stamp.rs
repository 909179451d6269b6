//! What every pub/sub message carries: a stamp of who sent it, where,
//! in which place and when, then a filler to its size. The stamp is
//! fixed-width ASCII (readable in a capture), the filler a function of
//! each byte's place, so a subscriber checks a message on its own:
//!
//! `ps:PPPPPPPP:CCCCCCCC:SSSSSSSSSSSSSSSS:TTTTTTTTTTTTTTTT:LLLLLLLL;abc…`
//!
//! in hex: the publisher, the channel (local to the agent), the
//! publisher's sequence number on that channel (from 0), the send time
//! (nanoseconds since the load's clock started) and the whole message's
//! length.

/// A stamp's length: the smallest message.
pub const STAMP: usize = 64;
const PREFIX: &[u8] = b"ps:";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub publisher: u32,
    pub channel: u32,
    pub seq: u64,
    pub sent_ns: u64,
    /// The whole message's length (at least [`STAMP`]).
    pub len: u32,
}

fn hex(out: &mut Vec<u8>, v: u64, digits: u32) {
    for i in (0..digits).rev() {
        let d = ((v >> (4 * i)) & 0xf) as u8;
        out.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
    }
}

fn unhex(b: &[u8]) -> Option<u64> {
    b.iter().try_fold(0u64, |v, &c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        Some(v << 4 | u64::from(d))
    })
}

/// The filler byte at place `i` of a message.
fn filler(i: usize) -> u8 {
    b'a' + (i % 26) as u8
}

/// Append the message `s` stamps: the stamp, then filler to `s.len`.
pub fn write(out: &mut Vec<u8>, s: &Stamp) {
    let start = out.len();
    out.extend_from_slice(PREFIX);
    hex(out, s.publisher.into(), 8);
    out.push(b':');
    hex(out, s.channel.into(), 8);
    out.push(b':');
    hex(out, s.seq, 16);
    out.push(b':');
    hex(out, s.sent_ns, 16);
    out.push(b':');
    hex(out, s.len.into(), 8);
    out.push(b';');
    debug_assert_eq!(out.len() - start, STAMP);
    let len = (s.len as usize).max(STAMP);
    out.extend((STAMP..len).map(filler));
}

/// The stamp of `msg`, which must be whole: its length as stamped, its
/// filler intact. Else what is wrong with it.
pub fn read(msg: &[u8]) -> Result<Stamp, String> {
    if msg.len() < STAMP || !msg.starts_with(PREFIX) || msg[STAMP - 1] != b';' {
        return Err("not a message of this load (no stamp)".into());
    }
    let field = |at: usize, digits: usize| -> Result<u64, String> {
        let sep = msg[at + digits];
        match unhex(&msg[at..at + digits]) {
            Some(v) if sep == b':' || sep == b';' => Ok(v),
            _ => Err("a stamp that does not read".into()),
        }
    };
    let s = Stamp {
        publisher: field(3, 8)? as u32,
        channel: field(12, 8)? as u32,
        seq: field(21, 16)?,
        sent_ns: field(38, 16)?,
        len: field(55, 8)? as u32,
    };
    if s.len as usize != msg.len() {
        return Err(format!(
            "{} bytes long, stamped {} (cut or grown)",
            msg.len(),
            s.len
        ));
    }
    if let Some(i) = (STAMP..msg.len()).find(|&i| msg[i] != filler(i)) {
        return Err(format!("its byte {i} is not what was sent (corrupted)"));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(len: u32) -> Stamp {
        Stamp {
            publisher: 7,
            channel: 0x1234,
            seq: u64::MAX - 1,
            sent_ns: 123_456_789,
            len,
        }
    }

    #[test]
    fn a_stamp_reads_back_whole() {
        for len in [64, 65, 100, 4096] {
            let mut m = b"xx".to_vec();
            write(&mut m, &stamp(len));
            assert_eq!(m.len(), 2 + len as usize);
            assert_eq!(read(&m[2..]), Ok(stamp(len)));
        }
        let mut m = Vec::new();
        write(&mut m, &stamp(64));
        assert_eq!(
            &m[..],
            b"ps:00000007:00001234:fffffffffffffffe:00000000075bcd15:00000040;"
        );
    }

    #[test]
    fn a_damaged_message_is_refused() {
        let mut m = Vec::new();
        write(&mut m, &stamp(100));
        assert!(read(&m[..99]).unwrap_err().contains("cut"));
        let mut longer = m.clone();
        longer.push(b'a');
        assert!(read(&longer).unwrap_err().contains("cut or grown"));
        let mut flipped = m.clone();
        flipped[80] ^= 1;
        assert!(read(&flipped).unwrap_err().contains("byte 80"));
        let mut bad_hex = m.clone();
        bad_hex[5] = b'g';
        assert!(read(&bad_hex).unwrap_err().contains("does not read"));
        assert!(read(b"hello").unwrap_err().contains("no stamp"));
        assert!(read(&[b'p'; 64]).is_err());
    }
}
