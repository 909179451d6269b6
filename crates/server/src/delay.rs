//! Performing a request's delay so that it can be abandoned: in slices,
//! between which it looks whether the client is still there and whether
//! the stop has passed its drain limit. A delay for a client that has gone
//! is work nobody will read (a 60-unit delay in seconds is a minute of a
//! core, per request buffered); a delay the stop would wait for holds the
//! stop past its limit.
//!
//! Looking costs one `poll` per slice (a spin or CPU-work delay) — nothing
//! beside the delay itself. A sleep waits in that `poll`, which a hang-up
//! or an error on the socket ends at once.

use crate::io::gone;
use crate::shutdown::{Phase, Shutdown};
use serverlab_service::{work, Delay};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// How often a spinning delay looks up.
const SPIN_SLICE: Duration = Duration::from_millis(2);
/// How long a sleeping delay waits in one `poll` (it wakes at once when the
/// socket hangs up; the slice bounds only how late it sees the drain limit).
const SLEEP_SLICE_MS: u16 = 50;
/// Iterations of CPU work between looks (about 2 ms here).
const WORK_SLICE: u64 = 1 << 20;

/// Perform `delay` on this thread for the connection on `socket`. False:
/// abandoned part way, because the connection is gone both ways (see
/// [`gone`]) or the stop passed its drain limit.
pub(crate) fn perform(delay: Delay, socket: &impl AsFd, shutdown: &Shutdown) -> bool {
    perform_with(delay, |ms| gone(socket, ms), shutdown)
}

/// [`perform`], with `gone(wait_ms)` saying whether the client has gone,
/// waiting up to `wait_ms` for it (a sleep waits there).
pub(crate) fn perform_with(delay: Delay, gone: impl Fn(u16) -> bool, shutdown: &Shutdown) -> bool {
    let go_on = || shutdown.phase() != Phase::Aborting && !gone(0);
    match delay {
        Delay::Spin(d) => spin(d, go_on),
        Delay::Sleep(d) => sleep(d, gone, shutdown),
        Delay::Work(n) => cpu_work(n, go_on),
    }
}

/// Busy-wait on the monotonic clock, looking up every slice.
fn spin(d: Duration, mut go_on: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    let mut look = start + SPIN_SLICE;
    loop {
        let now = Instant::now();
        if now.duration_since(start) >= d {
            return true;
        }
        if now >= look {
            if !go_on() {
                return false;
            }
            look = now + SPIN_SLICE;
        }
        std::hint::spin_loop();
    }
}

/// Wait without using CPU, in `poll` on the socket.
fn sleep(d: Duration, gone: impl Fn(u16) -> bool, shutdown: &Shutdown) -> bool {
    let end = Instant::now() + d;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        if shutdown.phase() == Phase::Aborting {
            return false;
        }
        // Round up: a poll of 0 ms would spin through the last millisecond.
        let ms = left
            .as_micros()
            .div_ceil(1000)
            .min(u128::from(SLEEP_SLICE_MS)) as u16;
        if gone(ms) {
            return false;
        }
    }
}

/// `n` iterations of the fixed CPU work, looking up every slice.
fn cpu_work(n: u64, mut go_on: impl FnMut() -> bool) -> bool {
    let mut left = n;
    while left > 0 {
        let k = left.min(WORK_SLICE);
        std::hint::black_box(work(k));
        left -= k;
        if left > 0 && !go_on() {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (l.accept().unwrap().0, c)
    }

    /// Every mode runs its whole delay while the client is there, and
    /// gives up within a slice once the connection is gone both ways.
    #[test]
    fn delays_run_while_the_client_is_there_and_stop_when_it_is_gone() {
        let stop = Shutdown::new();
        let modes = [
            Delay::Spin(Duration::from_millis(30)),
            Delay::Sleep(Duration::from_millis(30)),
            Delay::Work(WORK_SLICE * 3),
        ];
        for d in modes {
            let (server, _client) = pair();
            assert!(perform(d, &server, &stop), "{d:?}");
        }
        for d in [
            Delay::Spin(Duration::from_secs(20)),
            Delay::Sleep(Duration::from_secs(20)),
            Delay::Work(u64::MAX),
        ] {
            let (server, client) = pair();
            let s = server.try_clone().unwrap();
            let t0 = Instant::now();
            let closer = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                // What thread-per-connection's abort does; a client that
                // closed and then got a reply resets it the same way.
                s.shutdown(std::net::Shutdown::Both).unwrap();
            });
            assert!(!perform(d, &server, &stop), "{d:?}");
            assert!(t0.elapsed() < Duration::from_secs(5), "{d:?}");
            closer.join().unwrap();
            drop(client);
        }
    }

    /// A peer that only half-closed may still read: its delay runs on.
    #[test]
    fn a_half_closed_peer_is_not_gone() {
        let (server, client) = pair();
        client.shutdown(std::net::Shutdown::Write).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!gone(&server, 0));
        assert!(perform(
            Delay::Sleep(Duration::from_millis(10)),
            &server,
            &Shutdown::new()
        ));
    }

    /// Past the drain limit every delay is given up.
    #[test]
    fn the_abort_stops_a_delay() {
        let (server, _client) = pair();
        let stop = Shutdown::new();
        stop.abort();
        for d in [
            Delay::Spin(Duration::from_secs(20)),
            Delay::Sleep(Duration::from_secs(20)),
            Delay::Work(u64::MAX),
        ] {
            assert!(!perform(d, &server, &stop), "{d:?}");
        }
    }

    /// A client that closed entirely resets the connection once a reply
    /// reaches it: from then on it is gone.
    #[test]
    fn a_closed_client_is_gone_after_a_reply() {
        use std::io::Write;
        let (mut server, client) = pair();
        drop(client);
        std::thread::sleep(Duration::from_millis(20));
        assert!(!gone(&server, 0), "a FIN alone could be a half-close");
        server.write_all(b"reply\n").unwrap();
        assert!(gone(&server, 1000), "the reset arrived");
    }
}
