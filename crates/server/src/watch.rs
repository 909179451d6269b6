//! An accept loop on a mio listener (the reactor's event loop,
//! thread-per-connection's acceptor): accepting what is pending, and
//! watching the listener only while that can do something.
//!
//! The listener is edge-triggered: each readiness event is answered by
//! accepting until the backlog is drained (`Ctx::accept`). If the backlog
//! could not be drained (out of descriptors, `accept.rs`), no new event
//! may come, so the loop accepts again after a pause unasked. If the
//! server is full (`room.rs`), the listener is deregistered, so pending
//! connections do not wake the loop, and accepting resumes when a
//! connection closes (the room wakes the loop) or after `FULL_RECHECK`
//! (a connection may have turned idle, evictable). Registering it again
//! reports it ready if connections are pending.

use crate::accept::{Accepted, FULL_RECHECK};
use crate::listen::{Listener, MioListener};
use crate::Ctx;
use mio::{Interest, Registry, Token};
use serverlab_service::{Peer, Service};
use std::io;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// How the loop goes on after accepting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// The backlog is drained: wait for the listener's next readiness.
    Wait,
    /// Accept again after this long, unasked.
    RetryIn(Duration),
    /// The server is full: stop watching the listener.
    Full,
}

/// A loop's listener, and how the loop watches it.
pub(crate) struct Watched {
    listener: MioListener,
    token: Token,
    /// Registered with the loop's poll (not while full).
    registered: bool,
    /// The server was full at the last accept.
    full: bool,
    /// When to accept again without a readiness event.
    retry: Option<Instant>,
}

impl Watched {
    /// Watch `listener` (non-blocking) under `token`.
    pub(crate) fn new(listener: Listener, registry: &Registry, token: Token) -> io::Result<Self> {
        let mut listener = MioListener::new(listener)?;
        registry.register(&mut listener, token, Interest::READABLE)?;
        Ok(Watched {
            listener,
            token,
            registered: true,
            full: false,
            retry: None,
        })
    }

    /// Accept every pending connection, handing each admitted one to
    /// `serve` (whose failure closes it, counted), until the backlog is
    /// drained, nothing can be done for a while, or the server is full;
    /// then watch the listener, or not, accordingly.
    pub(crate) fn accept<S: Service>(
        &mut self,
        registry: &Registry,
        ctx: &Ctx<S>,
        serve: impl FnMut(mio::net::TcpStream, Peer) -> io::Result<()>,
    ) {
        let next = accept_all(&self.listener, ctx, serve);
        let now = Instant::now();
        self.full = next == Next::Full;
        self.retry = match next {
            Next::Wait => None,
            Next::RetryIn(d) => Some(now + d),
            Next::Full => Some(now + FULL_RECHECK),
        };
        let on = !self.full;
        if on != self.registered {
            if let Err(e) = self.watch(registry, on) {
                // Unwatched, it is accepted on unasked.
                ctx.accept
                    .note(&format!("cannot (de)register the listener: {e}; retrying"));
                self.retry = Some(now + crate::accept::BACKOFF);
            }
        }
    }

    /// Register the listener (`on`) or deregister it.
    fn watch(&mut self, registry: &Registry, on: bool) -> io::Result<()> {
        if on {
            registry.register(&mut self.listener, self.token, Interest::READABLE)?;
        } else {
            registry.deregister(&mut self.listener)?;
        }
        self.registered = on;
        Ok(())
    }

    /// How long the loop may wait before it must accept unasked.
    pub(crate) fn timeout(&self, now: Instant) -> Option<Duration> {
        self.retry.map(|t| t.saturating_duration_since(now))
    }

    /// Whether to accept now without a readiness event: the retry is due,
    /// or the server was full and the loop was woken (perhaps by a close).
    pub(crate) fn due(&self, now: Instant, woken: bool) -> bool {
        self.retry.is_some_and(|t| t <= now) || (self.full && woken)
    }

    /// Stop watching the listener, and close it.
    pub(crate) fn close(mut self, registry: &Registry) {
        if self.registered {
            let _ = registry.deregister(&mut self.listener);
        }
    }
}

/// Accept until the backlog is drained, nothing can be done for a while,
/// or the server is full.
fn accept_all<S: Service>(
    listener: &MioListener,
    ctx: &Ctx<S>,
    mut serve: impl FnMut(mio::net::TcpStream, Peer) -> io::Result<()>,
) -> Next {
    loop {
        match ctx.accept(listener.as_fd(), || listener.accept()) {
            Accepted::Serve(stream, peer) => {
                if let Err(e) = serve(stream, peer) {
                    ctx.cannot_serve(peer, &e);
                }
            }
            Accepted::Again => {}
            Accepted::Drained => return Next::Wait,
            Accepted::RetryIn(d) => return Next::RetryIn(d),
            // Unless a connection closed meanwhile: then accept again.
            Accepted::Full if ctx.wait_for_room() => return Next::Full,
            Accepted::Full => {}
        }
    }
}
