//! Work a request asks the server to do before it replies.

use std::time::{Duration, Instant};

/// A delay before a reply, as the bucket protocol's delay modes define it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delay {
    /// Busy-loop on a monotonic clock until this much wall time passed.
    Spin(Duration),
    /// Wait without using CPU.
    Sleep(Duration),
    /// This many iterations of a fixed CPU-bound loop.
    Work(u64),
}

impl Delay {
    /// Perform the delay on the calling thread.
    pub fn block(self) {
        match self {
            Delay::Spin(d) => spin(d),
            Delay::Sleep(d) => std::thread::sleep(d),
            Delay::Work(n) => {
                std::hint::black_box(work(n));
            }
        }
    }
}

fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// A fixed amount of CPU work: `n` rounds of an xorshift step, which the
/// compiler cannot fold away. Returns the state so callers can black-box it.
pub fn work(n: u64) -> u64 {
    let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}
