//! A compacting input buffer: bytes arrive at the end, whole messages are
//! consumed from the front, and the unconsumed rest moves back to the
//! start only when room is needed. Every reader of a byte stream (the
//! server's sessions, the load's connections) uses it.

/// Unconsumed bytes are `buf[start..end]`; `buf[end..]` is room to read into.
#[derive(Debug, Default)]
pub struct InputBuf {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl InputBuf {
    pub fn new() -> Self {
        Self::default()
    }

    /// The bytes not yet consumed.
    pub fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// How many bytes are not yet consumed.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The bytes allocated, consumed or not.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The first `n` unconsumed bytes are done with.
    pub fn consume(&mut self, n: usize) {
        assert!(n <= self.len(), "consumed more than was read");
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Make at least `want` bytes of room at the end: first by moving the
    /// unconsumed bytes to the front, then by growing.
    pub fn reserve(&mut self, want: usize) {
        if self.buf.len() - self.end >= want {
            return;
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < want {
            self.buf.resize(self.end + want, 0);
        }
    }

    /// The room at the end, to read into; then call [`InputBuf::filled`].
    pub fn spare(&mut self) -> &mut [u8] {
        &mut self.buf[self.end..]
    }

    /// `n` bytes were read into [`InputBuf::spare`].
    pub fn filled(&mut self, n: usize) {
        assert!(n <= self.buf.len() - self.end, "filled past the room");
        self.end += n;
    }

    /// Give the allocation back if nothing is unconsumed and it is larger
    /// than `above`: a connection that once took a large message should
    /// not keep its buffer while idle.
    pub fn release_if_idle(&mut self, above: usize) {
        if self.is_empty() && self.buf.len() > above {
            *self = InputBuf::default();
        }
    }

    /// Forget every byte.
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn push(b: &mut InputBuf, bytes: &[u8]) {
        b.reserve(bytes.len());
        b.spare()[..bytes.len()].copy_from_slice(bytes);
        b.filled(bytes.len());
    }

    #[test]
    fn compacts_before_growing() {
        let mut b = InputBuf::new();
        push(&mut b, b"abcdef");
        b.consume(4);
        assert_eq!(b.data(), b"ef");
        let cap = b.capacity();
        b.reserve(4);
        assert_eq!(b.capacity(), cap, "moved to the front, not grown");
        assert_eq!(b.data(), b"ef");
        b.consume(2);
        assert!(b.is_empty());
        b.release_if_idle(2);
        assert_eq!(b.capacity(), 0);
    }

    proptest! {
        /// Whatever is pushed and consumed, the data is the stream's
        /// unconsumed suffix, and the buffer never grows past the largest
        /// backlog plus the largest reservation.
        #[test]
        fn behaves_like_a_queue(steps in prop::collection::vec((1usize..64, 0usize..80), 1..200)) {
            let mut b = InputBuf::new();
            let mut model: std::collections::VecDeque<u8> = Default::default();
            let (mut next, mut most) = (0u8, 0usize);
            for (write, take) in steps {
                let bytes: Vec<u8> = (0..write).map(|_| { next = next.wrapping_add(1); next }).collect();
                push(&mut b, &bytes);
                model.extend(&bytes);
                most = most.max(b.len());
                let take = take.min(b.len());
                b.consume(take);
                model.drain(..take);
                let want: Vec<u8> = model.iter().copied().collect();
                prop_assert_eq!(b.data(), want.as_slice());
                prop_assert!(b.capacity() <= most + 64, "{} > {} + 64", b.capacity(), most);
            }
        }
    }
}
