//! The kernel's receive timestamps: when the bytes a read returns
//! reached the socket, so that the client's own share of a latency —
//! from there to the moment it stamped the reply answered — is measured
//! ([`crate::certify::client`]). A connection asks for them
//! (`SO_TIMESTAMPNS`, software timestamps, taken as a segment enters
//! the receiving stack) when it is opened, and is read with `recvmsg`,
//! whose control message carries the time of the latest segment the
//! read took. Where the socket gives none (a kernel or a socket type
//! without them) a read is a plain read and the reply goes unstamped.
//!
//! The kernel turns its receive timestamps on for the whole machine
//! when the first socket asks and off when the last that asked closes,
//! each time by patching its own code, deferred to a worker: with a
//! connection per request that would happen between every two requests,
//! and the first segments after each would go untimed. So the first
//! connection to ask also opens a UDP socket that asks and stays open
//! for the life of the process ([`KEEPER`]).
//!
//! Only a sample of the batches of replies is stamped ([`Sampler`]): a
//! read of a sampled batch is a `recvmsg`, any other a plain `read(2)`
//! (cheaper: no message header or control message to copy either way),
//! and only the sampled batches' replies enter the client's share. A
//! reply's chance of being sampled does not depend on its latency, its
//! connection or how many replies came with it, so the share's
//! histograms are an unbiased sample of every reply's.
//!
//! The stamps are wall-clock (`CLOCK_REALTIME`); the client's clocks
//! are monotonic. Each thread converts through an anchor — a monotonic
//! and a wall-clock reading taken together — read again every
//! [`REANCHOR`] stamps, so a step of the wall clock (an NTP step, a
//! manual set) misplaces at most that many.

use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};
use std::cell::Cell;
use std::io::{self, IoSliceMut};
use std::net::UdpSocket;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// On average one batch of replies in this many is stamped (per
/// connection slot): the gap from one sampled batch to the next is drawn
/// uniformly from 1 to `2·EVERY − 1` batches.
pub const EVERY: u32 = 16;

/// What the client is told of the replies it is about to take: not
/// sampled, or sampled, with when the kernel received the latest segment
/// read for them, where it timed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receipt {
    Unsampled,
    Sampled(Option<Instant>),
}

/// Which batches of replies a slot stamps: one in [`EVERY`] on average,
/// at random gaps (uniform over 1 to `2·EVERY − 1`), so that no periodic
/// pattern of the load (connections served in turn, a cycle of
/// operations) lines up with the sample. A batch is the replies one look
/// at the input takes together: every read that fills it is stamped once
/// it is due, and the next gap is drawn once it took a reply. The first
/// batch is sampled, so a short run still measures some. No allocation;
/// a xorshift generator of its own.
#[derive(Debug, Clone)]
pub struct Sampler {
    /// Batches still to pass before the next sampled one (0: due).
    left: u32,
    state: u64,
}

impl Sampler {
    /// A sampler whose gaps are drawn from `seed` (any value).
    pub fn new(seed: u64) -> Self {
        // splitmix64 of the seed: never 0, as xorshift needs.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Sampler {
            left: 0,
            state: (z ^ (z >> 31)) | 1,
        }
    }

    /// A sampler of its own for each slot: seeds taken in turn.
    pub fn fresh() -> Self {
        static SEEDS: AtomicU64 = AtomicU64::new(0);
        Sampler::new(SEEDS.fetch_add(1, Ordering::Relaxed))
    }

    /// Whether the batch being read now is sampled (its reads stamped).
    pub fn due(&self) -> bool {
        crate::certify::PER_REQUEST && self.left == 0
    }

    /// A batch took at least one reply: count it, and after a sampled
    /// one draw the gap to the next.
    pub fn took(&mut self) {
        if self.left > 0 {
            self.left -= 1;
            return;
        }
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        // A gap of 1 + (0..2·EVERY−1) batches: the next sampled one is
        // that many on, so `left` (those in between) is one less.
        self.left = (self.state % u64::from(2 * EVERY - 1)) as u32;
    }
}

/// Stamps converted between two readings of the anchor.
const REANCHOR: u32 = 1024;

/// Room for the control messages a read may bring (one timestamp, 32
/// bytes), aligned as a `cmsghdr`.
#[repr(C, align(8))]
struct Control([u8; 64]);

/// Ask the kernel to time what `socket` receives. A socket that cannot
/// is read without stamps.
pub fn enable(socket: &impl AsFd) {
    if !crate::certify::PER_REQUEST {
        return;
    }
    KEEPER.get_or_init(|| {
        let keeper = UdpSocket::bind("127.0.0.1:0").ok()?;
        setsockopt(&keeper, sockopt::ReceiveTimestampns, &true).ok()?;
        Some(keeper)
    });
    let _ = setsockopt(socket, sockopt::ReceiveTimestampns, &true);
}

/// A socket that keeps the kernel's receive timestamps on while the
/// process lives (see the module's comment).
static KEEPER: OnceLock<Option<UdpSocket>> = OnceLock::new();

/// Read into `buf` as `read(2)` does: the bytes read (0 at the end of
/// the stream) and, when the kernel gave it, when the latest of them
/// reached the socket.
pub fn read(socket: &impl AsRawFd, buf: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
    let mut control = Control([0; 64]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut control.0),
        MsgFlags::empty(),
    )
    .map_err(io::Error::from)?;
    let mut at = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                at = instant_of(ts.tv_sec() as i128 * 1_000_000_000 + ts.tv_nsec() as i128);
            }
        }
    }
    Ok((msg.bytes, at))
}

thread_local! {
    /// The thread's anchor: a monotonic instant, the wall clock then
    /// (ns since the epoch), and stamps converted since.
    static ANCHOR: Cell<Option<(Instant, i128, u32)>> = const { Cell::new(None) };
}

/// Wall-clock ns since the epoch, now.
fn wall_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// The monotonic instant of a wall-clock time (ns since the epoch).
fn instant_of(wall: i128) -> Option<Instant> {
    let (mono, at, _) = ANCHOR.with(|a| {
        let anchor = match a.get() {
            Some((m, w, k)) if k < REANCHOR => (m, w, k + 1),
            _ => (Instant::now(), wall_ns(), 0),
        };
        a.set(Some(anchor));
        anchor
    });
    let after = wall - at;
    let by = Duration::from_nanos(after.unsigned_abs().min(u64::MAX as u128) as u64);
    if after >= 0 {
        mono.checked_add(by)
    } else {
        mono.checked_sub(by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_read_brings_the_kernels_time_of_receipt_on_the_clients_clock() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        enable(&client);
        let (mut server, _) = listener.accept().unwrap();
        // The kernel turns its timestamps on in a worker of its own, a
        // moment after the first socket asks: give it that moment.
        std::thread::sleep(Duration::from_millis(50));
        let before = Instant::now();
        server.write_all(b"pong\n").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let after = Instant::now();
        let mut buf = [0u8; 16];
        let (n, at) = read(&client, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"pong\n");
        let at = at.expect("loopback TCP gives software receive timestamps");
        // It arrived during the write, well before the read 20 ms later
        // (a little slack for the anchor's two clock readings).
        let slack = Duration::from_micros(100);
        assert!(at + slack >= before && at <= after, "{:?}", at - before);
        assert!(after - at >= Duration::from_millis(19), "{:?}", after - at);
        // Without asking, no stamp.
        let plain = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut s2, _) = listener.accept().unwrap();
        s2.write_all(b"x").unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(read(&plain, &mut buf).unwrap(), (1, None));
        drop(s2);
        assert_eq!(read(&plain, &mut buf).unwrap(), (0, None));
    }

    /// The sampled batches of `n`, in order, by a sampler from `seed`.
    fn sampled(seed: u64, n: usize) -> Vec<usize> {
        let mut s = Sampler::new(seed);
        (0..n)
            .filter(|_| {
                let due = s.due();
                s.took();
                due
            })
            .collect()
    }

    #[test]
    fn one_batch_in_every_is_sampled_at_gaps_from_1_to_twice_every_less_1() {
        let n = 160_000;
        let picked = sampled(7, n);
        assert_eq!(picked[0], 0, "the first batch is sampled");
        let gaps: Vec<usize> = picked.windows(2).map(|w| w[1] - w[0]).collect();
        let top = 2 * EVERY as usize - 1;
        assert_eq!(gaps.iter().min(), Some(&1));
        assert_eq!(gaps.iter().max(), Some(&top));
        // Every gap from 1 to 31 is drawn, each about equally often
        // (1/31 of 10,000 gaps: 323, binomial sd 18; the generator is
        // seeded, so this is a fixed sequence, not a chance).
        for g in 1..=top {
            let k = gaps.iter().filter(|&&x| x == g).count();
            assert!((250..400).contains(&k), "gap {g}: {k} times");
        }
        // One in EVERY on average.
        let mean = gaps.iter().sum::<usize>() as f64 / gaps.len() as f64;
        assert!((mean - f64::from(EVERY)).abs() < 0.3, "{mean}");
        // Seeds give different sequences.
        assert_ne!(sampled(8, 1000), sampled(7, 1000));
    }

    /// Batches that take turns (four connections served in order by one
    /// loop, or a cycle of four operations) are sampled alike: no turn is
    /// left out or favoured, as a fixed stride of 16 would (always the
    /// same one).
    #[test]
    fn batches_taking_turns_are_sampled_alike() {
        let picked = sampled(3, 64_000);
        let mut per_turn = [0usize; 4];
        for i in &picked {
            per_turn[i % 4] += 1;
        }
        let each = picked.len() as f64 / 4.0;
        for k in per_turn {
            assert!((k as f64 - each).abs() < each * 0.1, "{per_turn:?}");
        }
    }
}
