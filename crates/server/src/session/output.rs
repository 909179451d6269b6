//! A session's output: the replies appended and not yet written, where
//! each whole one ends (what a reset counts as unanswered), and the bounds
//! that keep it small — the high-water marks past which replies are
//! written before more work, the compaction of a written front, and the
//! release of a large buffer once it is written.

use serverlab_service::REPLY_CHUNK;

/// An empty input or output buffer larger than this is released.
pub(super) const SHRINK_ABOVE: usize = 256 * 1024;
/// Unwritten output beyond which replies are written before more work: a
/// connection holds at most this much plus one reply chunk unwritten.
pub const OUTPUT_HIGH_WATER: usize = 256 * 1024;
/// Replies unwritten beyond which they are written before more work, so
/// the record of where each ends (what a reset counts) stays small.
pub(super) const REPLIES_HIGH_WATER: usize = 1024;
/// Written output at the front of the buffer beyond which it is dropped
/// (the unwritten rest moved down), so a client reading slowly but never
/// quite catching up does not make the buffer grow.
pub(super) const COMPACT_ABOVE: usize = REPLY_CHUNK;

/// Replies appended, and how far they are written.
#[derive(Default)]
pub(super) struct Output {
    buf: Vec<u8>,
    written: usize,
    /// Where each whole reply in `buf` not yet wholly written ends: what a
    /// reset counts as unanswered. At most [`REPLIES_HIGH_WATER`].
    ends: Vec<usize>,
    /// A reply is being appended: applied, and not yet whole.
    replying: bool,
}

impl Output {
    /// Replies not yet written.
    pub(super) fn unwritten(&self) -> &[u8] {
        &self.buf[self.written..]
    }

    /// The buffer, for a service to append to: an interim reply, or one
    /// that closes the connection (neither is a reply a reset counts).
    pub(super) fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// The buffer, for a reply (or its next part) to be appended to, with
    /// room for a part made ([`room_for_a_part`]).
    pub(super) fn for_a_reply(&mut self) -> &mut Vec<u8> {
        room_for_a_part(&mut self.buf);
        self.replying = true;
        &mut self.buf
    }

    /// A reply is being appended, and is not whole yet.
    pub(super) fn replying(&self) -> bool {
        self.replying
    }

    /// The reply being appended is whole: note where it ends.
    pub(super) fn reply_ended(&mut self) {
        self.replying = false;
        // An empty reply is answered already.
        if self.buf.len() > self.written {
            self.ends.push(self.buf.len());
        }
    }

    /// Enough is unwritten to write before doing more: the byte mark, or
    /// as many replies (so the record of where they end stays small).
    pub(super) fn over_high_water(&self) -> bool {
        self.buf.len() - self.written >= OUTPUT_HIGH_WATER || self.ends.len() >= REPLIES_HIGH_WATER
    }

    /// Drop the written front once it is large.
    pub(super) fn compact_if_due(&mut self) {
        if self.written < COMPACT_ABOVE {
            return;
        }
        let written = self.written;
        self.buf.drain(..written);
        self.ends.retain(|&e| e > written);
        self.ends.iter_mut().for_each(|e| *e -= written);
        self.written = 0;
    }

    /// `n` bytes of `unwritten` went out; true once everything has.
    pub(super) fn wrote(&mut self, n: usize) -> bool {
        self.written += n;
        if self.written < self.buf.len() {
            // Part of it: forget the replies now wholly written.
            let answered = self.ends.partition_point(|&e| e <= self.written);
            self.ends.drain(..answered);
            return false;
        }
        if self.buf.capacity() > SHRINK_ABOVE {
            // A large reply has gone out: give its buffer back, so an idle
            // connection costs a small buffer, not its largest.
            self.buf = Vec::new();
        } else {
            self.buf.clear();
        }
        self.written = 0;
        self.ends.clear();
        true
    }

    /// Drop everything unwritten (the connection is cut off); how many
    /// applied requests lose some of their reply: whole replies not all
    /// written, and one being appended.
    pub(super) fn drop_unwritten(&mut self) -> usize {
        let whole = self.ends.len() - self.ends.partition_point(|&e| e <= self.written);
        let unanswered = whole + usize::from(self.replying);
        self.ends.clear();
        self.replying = false;
        self.buf.clear();
        self.written = 0;
        unanswered
    }

    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Whole replies not yet wholly written.
    #[cfg(test)]
    pub(super) fn replies_unwritten(&self) -> usize {
        self.ends.len()
    }
}

/// Make room for a reply or a part of one (at most [`REPLY_CHUNK`] but for
/// a single reply or LIST entry larger than that) in a large buffer, by
/// exactly that much: appending would double it, and a buffer held at the
/// mark would then hold twice the mark. Small buffers grow as usual, and a
/// buffer with room is left alone: one comparison per request.
#[inline]
fn room_for_a_part(output: &mut Vec<u8>) {
    if output.len() >= REPLY_CHUNK {
        output.reserve_exact(REPLY_CHUNK);
    }
}
