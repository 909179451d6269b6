//! A subscriber's check of exactly-once, in-order delivery: for each
//! stream (one publisher on one channel) the next sequence number due,
//! and the places skipped that may still come. A number past the one due
//! is a gap (the skipped ones count as lost until they come); a skipped
//! one that comes later was reordered (no longer lost); any other number
//! below the one due was delivered before (duplicated). Memory is
//! bounded: at most [`MISSING`] skipped places are remembered per
//! subscriber; past that a gap's places are lost for good, and should one
//! come after all it counts as duplicated.

use std::collections::BTreeSet;

/// Skipped places remembered per subscriber.
pub const MISSING: usize = 65_536;

/// What one arrival was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The number due.
    InOrder,
    /// Past the one due: this many were skipped.
    Gap(u64),
    /// A skipped one, come late.
    Reordered,
    /// Already delivered.
    Duplicated,
}

#[derive(Debug, Default)]
struct Stream {
    next: u64,
    missing: BTreeSet<u64>,
}

/// Every stream of one subscriber.
#[derive(Debug)]
pub struct Order {
    streams: Vec<Stream>,
    remembered: usize,
    /// Skipped places not remembered (lost for good).
    pub forgotten: u64,
    pub duplicated: u64,
    pub reordered: u64,
}

impl Order {
    pub fn new(streams: usize) -> Order {
        Order {
            streams: (0..streams).map(|_| Stream::default()).collect(),
            remembered: 0,
            forgotten: 0,
            duplicated: 0,
            reordered: 0,
        }
    }

    /// Sequence number `seq` arrived on stream `k`.
    pub fn see(&mut self, k: usize, seq: u64) -> Seen {
        let s = &mut self.streams[k];
        if seq == s.next {
            s.next += 1;
            return Seen::InOrder;
        }
        if seq > s.next {
            let skipped = seq - s.next;
            let room = (MISSING - self.remembered) as u64;
            let kept = skipped.min(room);
            s.missing.extend(s.next..s.next + kept);
            self.remembered += kept as usize;
            self.forgotten += skipped - kept;
            s.next = seq + 1;
            return Seen::Gap(skipped);
        }
        if s.missing.remove(&seq) {
            self.remembered -= 1;
            self.reordered += 1;
            Seen::Reordered
        } else {
            self.duplicated += 1;
            Seen::Duplicated
        }
    }

    /// Whether stream `k` has all of the `sent` first numbers.
    pub fn complete(&self, k: usize, sent: u64) -> bool {
        let s = &self.streams[k];
        s.missing.is_empty() && s.next >= sent
    }

    /// Of the `sent` first numbers of stream `k`, how many never came,
    /// and the first of them.
    pub fn lost(&self, k: usize, sent: u64) -> (u64, Option<u64>) {
        let s = &self.streams[k];
        let below = s.missing.range(..sent).count() as u64;
        let tail = sent.saturating_sub(s.next);
        let first = s.missing.first().copied().or((tail > 0).then_some(s.next));
        (below + tail, first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seqs: &[u64]) -> (Order, Vec<Seen>) {
        let mut o = Order::new(2);
        let seen = seqs.iter().map(|&q| o.see(1, q)).collect();
        (o, seen)
    }

    #[test]
    fn in_order_is_complete() {
        let (o, seen) = run(&[0, 1, 2]);
        assert!(seen.iter().all(|s| *s == Seen::InOrder));
        assert!(o.complete(1, 3) && !o.complete(1, 4) && o.complete(0, 0));
        assert_eq!(o.lost(1, 3), (0, None));
        assert_eq!(o.lost(1, 5), (2, Some(3)), "the tail not come is lost");
    }

    #[test]
    fn a_gap_is_lost_a_repeat_duplicated_a_swap_reordered() {
        let (o, seen) = run(&[0, 2, 3]);
        assert_eq!(seen[1], Seen::Gap(1));
        assert_eq!(o.lost(1, 4), (1, Some(1)));
        assert!(!o.complete(1, 4));

        let (o, seen) = run(&[0, 1, 1, 2]);
        assert_eq!(seen[2], Seen::Duplicated);
        assert_eq!((o.duplicated, o.reordered, o.lost(1, 3).0), (1, 0, 0));

        let (o, seen) = run(&[0, 2, 1, 3]);
        assert_eq!(seen[1..3], [Seen::Gap(1), Seen::Reordered]);
        assert_eq!((o.duplicated, o.reordered, o.lost(1, 4).0), (0, 1, 0));
        assert!(o.complete(1, 4));

        // Repeating a reordered one is a duplicate.
        let (o, _) = run(&[1, 0, 0]);
        assert_eq!((o.duplicated, o.reordered), (1, 1));
    }

    #[test]
    fn skipped_places_are_bounded() {
        let mut o = Order::new(1);
        assert_eq!(o.see(0, 1 << 40), Seen::Gap(1 << 40));
        assert_eq!(o.remembered, MISSING);
        assert_eq!(o.forgotten, (1 << 40) - MISSING as u64);
        assert_eq!(o.lost(0, (1 << 40) + 1).0, MISSING as u64);
        // One remembered comes late; one forgotten counts as a duplicate.
        assert_eq!(o.see(0, 5), Seen::Reordered);
        assert_eq!(o.see(0, 1 << 39), Seen::Duplicated);
    }
}
