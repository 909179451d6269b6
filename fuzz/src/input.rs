//! Reading a fuzz input: a few leading header bytes choose settings
//! (limits, stores, split seed), the rest is the byte stream under test.
//!
//! Settings come from plain bytes, not a derived structure, so a seed file
//! is readable: its first bytes, then protocol text as a client sends it.

/// A fuzz input being taken apart from the front.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    /// The next header byte; 0 once the input is used up.
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// One of `choices`, picked by the next header byte.
    pub fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[usize::from(self.byte()) % choices.len()]
    }

    /// A size limit from the next header byte: 0 to 254 bytes, or none
    /// at all (`usize::MAX`) for 255, so the edge of the range is tried.
    pub fn limit(&mut self) -> usize {
        match self.byte() {
            255 => usize::MAX,
            b => usize::from(b),
        }
    }

    /// Everything not yet taken.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// Where a stream is split into reads and how much of each write goes
/// out: a small PRNG (xorshift64*) seeded from the input, so a crash
/// replays exactly and the fuzzer explores splits by mutating the seed.
pub struct Plan {
    state: u64,
}

impl Plan {
    pub fn new(seed: u8) -> Self {
        // Any non-zero state works; spread the seed over the word.
        Plan {
            state: (u64::from(seed) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// How many bytes the next read delivers (at most what is offered):
    /// single bytes often, so every split point of a short request is
    /// tried; sometimes everything at once.
    pub fn read_len(&mut self, offered: usize) -> usize {
        let n = match self.below(8) {
            0..=2 => 1,
            3 => 1 + self.below(4),
            4 => 1 + self.below(64),
            5 => 1 + self.below(4096),
            _ => usize::MAX,
        };
        n.min(offered)
    }

    /// How many of `pending` bytes one write takes: 0 is a socket that
    /// would block.
    pub fn write_len(&mut self, pending: usize) -> usize {
        match self.below(6) {
            0 => 0,
            1 => 1.min(pending),
            2 => self.below(pending as u64 + 1),
            _ => pending,
        }
    }
}
