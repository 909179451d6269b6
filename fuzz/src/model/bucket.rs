//! The bucket protocol as the wire contract (docs/protocols/) states it: a line
//! `<delay>,<bucket>` (LF, optional CR before it) of at most `max_line`
//! bytes; a valid line adds its delay to its bucket and is answered with
//! the new value; anything else is answered `ERR <reason>` and closes.

use super::{Model, Next};
use crate::session::{Applied, Event};
use serverlab_service::Delay;
use std::time::Duration;

pub struct Bucket {
    pub max_line: usize,
    pub max_delay: u64,
    pub close_after_reply: bool,
    /// Every bucket's value; delays are in microseconds (the targets'
    /// `--delay-unit us --delay-mode sleep`).
    pub buckets: Vec<u64>,
}

impl Bucket {
    /// The request a line holds, when it is one this server accepts.
    fn valid(&self, line: &[u8]) -> Option<(u64, usize)> {
        let comma = line.iter().position(|&b| b == b',')?;
        let (delay, bucket) = (&line[..comma], &line[comma + 1..]);
        let number = |digits: &[u8]| {
            let all_digits = !digits.is_empty() && digits.iter().all(u8::is_ascii_digit);
            all_digits.then(|| std::str::from_utf8(digits).ok()?.parse::<u64>().ok())?
        };
        let (delay, bucket) = (number(delay)?, number(bucket)?);
        let bucket = usize::try_from(bucket)
            .ok()
            .filter(|&b| b < self.buckets.len())?;
        (delay <= self.max_delay).then_some((delay, bucket))
    }
}

/// Frame the line at the front of `rest`, whose payload (without CR/LF)
/// may be at most `max` bytes: too long as soon as no LF still to come
/// could end it within the limit.
pub fn frame(rest: &[u8], max: usize) -> Next {
    let Some(lf) = rest.iter().position(|&b| b == b'\n') else {
        let shortest = rest.len() - usize::from(rest.last() == Some(&b'\r'));
        return if shortest <= max {
            Next::Wait
        } else {
            Next::Refuse
        };
    };
    let len = lf - usize::from(lf > 0 && rest[lf - 1] == b'\r');
    if len <= max {
        Next::Request(lf + 1)
    } else {
        Next::Refuse
    }
}

/// `ERR <reason>` and its LF.
fn is_err_line(reply: &[u8]) -> bool {
    reply.starts_with(b"ERR ") && reply.iter().position(|&b| b == b'\n') == Some(reply.len() - 1)
}

impl Model for Bucket {
    fn next(&mut self, rest: &[u8]) -> Next {
        frame(rest, self.max_line)
    }

    fn answer(&mut self, a: &Applied) -> bool {
        let line = &a.request[..a.request.len() - 1];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some((delay, bucket)) = self.valid(line) else {
            assert!(
                is_err_line(a.reply),
                "{:?} answered {:?}, not ERR",
                a.request,
                a.reply
            );
            assert_eq!(a.delay, None, "a delay for an invalid line");
            return true;
        };
        self.buckets[bucket] += delay;
        let want = format!("{}\n", self.buckets[bucket]);
        assert_eq!(a.reply, want.as_bytes(), "reply to {:?}", a.request);
        let want_delay = (delay > 0).then(|| Delay::Sleep(Duration::from_micros(delay)));
        assert_eq!(a.delay, want_delay, "the delay of {:?}", a.request);
        self.close_after_reply
    }

    fn refused(&self, refusal: Option<&Event>, _seen: &[u8]) {
        let out = super::framing_refusal(refusal);
        assert!(is_err_line(out), "an over-long line answered {out:?}");
    }
}
