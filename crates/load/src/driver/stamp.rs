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
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Stamps converted between two readings of the anchor.
const REANCHOR: u32 = 1024;

/// Room for the control messages a read may bring (one timestamp, 32
/// bytes), aligned as a `cmsghdr`.
#[repr(C, align(8))]
struct Control([u8; 64]);

/// Ask the kernel to time what `socket` receives. A socket that cannot
/// is read without stamps.
pub fn enable(socket: &impl AsFd) {
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
}
