//! A connection's session driven by hand, without sockets or threads: the
//! very `Session` every strategy runs, for code outside this crate that
//! plays the socket itself (the fuzz targets in `fuzz/`, which feed it
//! random bytes split at random points and check what comes out).
//!
//! It is a thin public face over the crate's own session: each call is the
//! session's, and [`need`](HandSession::need) answers the very [`Io`] a
//! strategy is asked to carry out. The
//! server it belongs to has no connection cap to evict at and no write
//! timeout (a fuzzer has no time to wait); its graceful stop can be
//! triggered ([`HandSession::stop_server`]) to drive the drain.

pub use crate::session::Io;
use crate::session::Session;
use crate::{accept, idle, Ctx, Shutdown};
use serverlab_service::{Peer, Service};
use std::sync::Arc;
use std::time::Instant;

/// One connection of a server of its own, driven by hand.
pub struct HandSession<S: Service> {
    sess: Session<S>,
    shutdown: Shutdown,
}

impl<S: Service> HandSession<S> {
    /// A connection from `peer` to a server of `svc` that serves it alone.
    pub fn new(svc: Arc<S>, peer: impl Into<Peer>) -> Self {
        let shutdown = Shutdown::new();
        let ctx = Arc::new(Ctx {
            svc,
            shutdown: shutdown.clone(),
            max_connections: u64::MAX,
            write_timeout: None,
            threads: 1,
            cpus: None,
            idle: idle::IdleTable::default(),
            accept: accept::Acceptor::new(),
            room: Default::default(),
            uring_sqpoll: false,
        });
        ctx.conns().admit_over_max();
        HandSession {
            sess: Session::new(&ctx, peer),
            shutdown,
        }
    }

    /// Yield after `budget` requests applied without the input running
    /// dry, as the pools do.
    pub fn with_budget(self, budget: usize) -> Self {
        HandSession {
            sess: self.sess.with_budget(budget),
            shutdown: self.shutdown,
        }
    }

    /// What to do next (the session's `next`).
    pub fn need(&mut self) -> Io {
        self.sess.next()
    }

    pub fn read_buf(&mut self) -> &mut [u8] {
        self.sess.read_buf()
    }

    pub fn filled(&mut self, n: usize) {
        self.sess.filled(n)
    }

    pub fn set_eof(&mut self) {
        self.sess.set_eof()
    }

    pub fn unwritten(&self) -> &[u8] {
        self.sess.unwritten()
    }

    pub fn wrote(&mut self, n: usize) {
        self.sess.wrote(n)
    }

    pub fn write_blocked(&mut self) {
        self.sess.write_blocked()
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.sess.deadline()
    }

    /// Begin the server's graceful stop (as SIGTERM does): the session
    /// answers what it has read and closes.
    pub fn stop_server(&self) {
        self.shutdown.trigger()
    }

    /// Whether the server is stopping (a request such as board `EXIT`
    /// stops it, or [`HandSession::stop_server`]).
    pub fn stopping(&self) -> bool {
        self.shutdown.is_triggered()
    }

    /// The connection is closed: the service's state is handed back.
    pub fn finish(&mut self) {
        self.sess.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_service::echo::EchoService;

    fn echo() -> HandSession<EchoService> {
        HandSession::new(
            Arc::new(EchoService::new(64)),
            "127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap(),
        )
    }

    fn feed(s: &mut HandSession<EchoService>, bytes: &[u8]) {
        let buf = s.read_buf();
        buf[..bytes.len()].copy_from_slice(bytes);
        s.filled(bytes.len());
    }

    #[test]
    fn a_request_read_by_hand_is_answered_and_the_end_closes() {
        let mut s = echo();
        assert!(matches!(s.need(), Io::Read { .. }));
        feed(&mut s, b"abc\n");
        assert_eq!(s.need(), Io::Write);
        assert_eq!(s.unwritten(), b"cba\n");
        s.wrote(4);
        assert!(matches!(s.need(), Io::Read { .. }));
        s.set_eof();
        assert_eq!(s.need(), Io::Close);
        s.finish();
    }

    #[test]
    fn a_stopped_server_answers_what_it_read_then_closes() {
        let mut s = echo();
        feed(&mut s, b"ab\ncd");
        s.stop_server();
        assert!(s.stopping());
        assert_eq!(s.need(), Io::Write, "what was read is answered");
        assert_eq!(s.unwritten(), b"ba\n");
        s.wrote(3);
        assert_eq!(
            s.need(),
            Io::ShutdownWrite,
            "stopping: nothing more is read, the connection closes (lingering)"
        );
        assert!(
            matches!(s.need(), Io::Read { .. }),
            "lingering: what still arrives is read and discarded"
        );
        s.set_eof();
        assert_eq!(s.need(), Io::Close);
    }
}
