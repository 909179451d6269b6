//! The whole-session driver: a server [`Session`] over a real service,
//! driven exactly as the strategies drive it (crates/server: frame,
//! execute, flush, read), fed a byte stream split at planned points, with
//! writes that go out in planned pieces. A spy between the session and the
//! service records what the service framed, applied and answered.
//!
//! Everything that knows the Session/Service API is in this file, so a
//! change of that API (issue 9: `frame` returning a parsed request) is
//! adapted here once, not in every target.
//!
//! Checked for every protocol (a failed check panics: a fuzz crash):
//! - the service never sees more unconsumed input than its input limit,
//!   and a session asking for input always has room to read it;
//! - every applied request gets a reply (at least one byte);
//! - the requests applied are the stream's bytes, in order, none skipped
//!   or repeated;
//! - the client receives exactly what the service appended, in order;
//! - nothing is applied after a request that closes the connection, and
//!   the session closes early only for a reason (a closing request, a
//!   refused frame, an overflow, a timeout), otherwise it reads to the end;
//! - the session always makes progress (a bounded number of steps).

use crate::input::Plan;
use serverlab_server::session::{Session, Step};
use serverlab_service::{After, Delay, Frame, Service};
use std::net::SocketAddr;
use std::sync::Mutex;

/// What the service did, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `frame` appended bytes (an interim reply such as kv's `100
    /// Continue`), or refused the input (`Frame::Close`, with any error
    /// reply it appended).
    Framed { frame: Frame, out: Vec<u8> },
    /// A request was applied: its exact bytes, the delay the service asked
    /// for before it, its reply, and what the connection does next.
    Applied {
        request: Vec<u8>,
        delay: Option<Delay>,
        reply: Vec<u8>,
        after: After,
    },
    /// The input reached the limit without a whole request.
    Overflow { out: Vec<u8> },
    /// The request timeout passed.
    TimedOut { out: Vec<u8> },
}

impl Event {
    /// The bytes this event appended to the connection's output.
    pub fn out(&self) -> &[u8] {
        match self {
            Event::Framed { out, .. } | Event::Overflow { out } | Event::TimedOut { out } => out,
            Event::Applied { reply, .. } => reply,
        }
    }

    /// Whether the connection closes after this event.
    pub fn closes(&self) -> bool {
        match self {
            Event::Framed { frame, .. } => *frame == Frame::Close,
            Event::Applied { after, .. } => *after != After::Continue,
            Event::Overflow { .. } | Event::TimedOut { .. } => true,
        }
    }
}

/// One applied request, as [`Event::Applied`] records it.
#[derive(Debug, Clone, Copy)]
pub struct Applied<'a> {
    pub request: &'a [u8],
    pub delay: Option<Delay>,
    pub reply: &'a [u8],
    pub after: After,
}

/// One session's run.
#[derive(Debug)]
pub struct Transcript {
    pub events: Vec<Event>,
    /// Every byte the client received.
    pub wire: Vec<u8>,
    /// Bytes of the stream the session read before it closed.
    pub fed: usize,
}

impl Transcript {
    /// The applied requests, in order.
    pub fn applied(&self) -> impl Iterator<Item = Applied<'_>> {
        self.events.iter().filter_map(|e| match e {
            Event::Applied {
                request,
                delay,
                reply,
                after,
            } => Some(Applied {
                request,
                delay: *delay,
                reply,
                after: *after,
            }),
            _ => None,
        })
    }

    pub fn timed_out(&self) -> bool {
        matches!(self.events.last(), Some(Event::TimedOut { .. }))
    }

    /// The last event, when it refused the input or ran out of room.
    pub fn refusal(&self) -> Option<&Event> {
        self.events.last().filter(|e| {
            matches!(
                e,
                Event::Framed {
                    frame: Frame::Close,
                    ..
                } | Event::Overflow { .. }
            )
        })
    }
}

/// The peer every session comes from: loopback, as in the tests.
pub const PEER: &str = "127.0.0.1:40000";

/// Run one session of `svc` over `stream`, split as `plan` says, and check
/// the invariants above.
pub fn drive<S: Service>(svc: S, stream: &[u8], plan: &mut Plan) -> Transcript {
    let spy = Spy::new(svc);
    let peer: SocketAddr = PEER.parse().expect("a socket address");
    let mut sess = Session::new(&spy, peer);
    let mut wire = Vec::new();
    let mut fed = 0;
    // Each step applies a request (at least one byte), reads at least one
    // byte, or ends the input or the session.
    for _ in 0..2 * stream.len() + 8 {
        match sess.next(&spy) {
            Step::Ready(_) => {
                sess.execute(&spy);
                // Strategies flush past the high-water mark, or when their
                // budget runs out: as often as not, partly.
                if sess.over_high_water() || plan.one_in(4) {
                    write_some(&mut sess, &mut wire, plan);
                }
            }
            Step::NeedInput => {
                write_all(&mut sess, &mut wire, plan);
                if sess.deadline().is_some() && plan.one_in(64) {
                    sess.time_out(&spy);
                } else if fed == stream.len() {
                    sess.set_eof();
                } else {
                    fed += read(&mut sess, &spy, &stream[fed..], plan);
                }
            }
            Step::Close => {
                write_all(&mut sess, &mut wire, plan);
                sess.finish(&spy);
                let events = spy.log.into_inner().expect("no panic held the log").events;
                let t = Transcript { events, wire, fed };
                check(&t, stream);
                return t;
            }
        }
    }
    panic!(
        "the session made no progress: {} of {} bytes read",
        fed,
        stream.len()
    );
}

/// One read of up to `offered` bytes, as much as the session has room for.
fn read<S: Service>(
    sess: &mut Session<Spy<S>>,
    spy: &Spy<S>,
    offered: &[u8],
    plan: &mut Plan,
) -> usize {
    let unconsumed = spy.unconsumed();
    let limit = spy.input_limit();
    let buf = sess.read_buf(spy);
    assert!(
        !buf.is_empty(),
        "the session asks for input with no room to read it"
    );
    assert!(
        unconsumed + buf.len() <= limit,
        "room to read {} bytes on top of {unconsumed} unconsumed, past the input limit {limit}",
        buf.len()
    );
    let n = plan.read_len(offered.len()).min(buf.len());
    buf[..n].copy_from_slice(&offered[..n]);
    sess.filled(n);
    spy.log.lock().expect("log").fed += n;
    n
}

/// Write some of the pending output, maybe none (the socket is full).
fn write_some<S: Service>(sess: &mut Session<S>, wire: &mut Vec<u8>, plan: &mut Plan) {
    let n = plan.write_len(sess.unwritten().len());
    if n == 0 {
        sess.write_blocked();
        return;
    }
    wire.extend_from_slice(&sess.unwritten()[..n]);
    sess.wrote(n);
}

/// Write all pending output, in pieces.
fn write_all<S: Service>(sess: &mut Session<S>, wire: &mut Vec<u8>, plan: &mut Plan) {
    while !sess.unwritten().is_empty() {
        write_some(sess, wire, plan);
    }
}

/// The checks every protocol's session must pass.
fn check(t: &Transcript, stream: &[u8]) {
    let appended: Vec<u8> = t.events.iter().flat_map(|e| e.out().to_vec()).collect();
    assert!(
        t.wire == appended,
        "the client received other bytes than the service appended"
    );
    let mut at = 0;
    for a in t.applied() {
        assert!(
            !a.reply.is_empty(),
            "a request got no reply: {:?}",
            a.request
        );
        assert!(
            stream[at..].starts_with(a.request),
            "applied {:?}, but the stream at {at} holds other bytes",
            a.request
        );
        at += a.request.len();
    }
    assert!(at <= t.fed, "applied bytes never read");
    if let Some(i) = t.events.iter().position(Event::closes) {
        assert_eq!(
            i + 1,
            t.events.len(),
            "events after the connection closed: {:?}",
            &t.events[i..]
        );
    } else {
        assert_eq!(
            t.fed,
            stream.len(),
            "the session closed early for no reason"
        );
    }
}

/// The service under test, recording what it is asked and answers.
struct Spy<S> {
    inner: S,
    log: Mutex<Log>,
}

#[derive(Default)]
struct Log {
    events: Vec<Event>,
    /// Bytes read into the session, and bytes of them applied.
    fed: usize,
    consumed: usize,
    /// The delay asked for the request framed last.
    delay: Option<Delay>,
}

impl<S> Spy<S> {
    fn new(inner: S) -> Self {
        Spy {
            inner,
            log: Mutex::new(Log::default()),
        }
    }

    fn unconsumed(&self) -> usize {
        let log = self.log.lock().expect("log");
        log.fed - log.consumed
    }

    fn record(&self, event: Event) {
        self.log.lock().expect("log").events.push(event);
    }
}

impl<S: Service> Service for Spy<S> {
    type Conn = S::Conn;

    fn open(&self, peer: SocketAddr) -> S::Conn {
        self.inner.open(peer)
    }

    fn input_limit(&self) -> usize {
        self.inner.input_limit()
    }

    fn frame(&self, conn: &mut S::Conn, input: &[u8], out: &mut Vec<u8>) -> Frame {
        let limit = self.inner.input_limit();
        assert!(
            input.len() <= limit,
            "{} bytes buffered, over the input limit {limit}",
            input.len()
        );
        assert_eq!(
            input.len(),
            self.unconsumed(),
            "the service is shown other than the unconsumed input"
        );
        let before = out.len();
        let frame = self.inner.frame(conn, input, out);
        if let Frame::Ready(n) = frame {
            assert!(
                0 < n && n <= input.len(),
                "framed {n} of {} bytes",
                input.len()
            );
        }
        if out.len() > before || frame == Frame::Close {
            let out = out[before..].to_vec();
            self.record(Event::Framed { frame, out });
        }
        frame
    }

    fn delay(&self, conn: &mut S::Conn, request: &[u8]) -> Option<Delay> {
        // Recorded, not performed: the fuzzer has no time to wait.
        let delay = self.inner.delay(conn, request);
        self.log.lock().expect("log").delay = delay;
        delay
    }

    fn apply(&self, conn: &mut S::Conn, request: &[u8], out: &mut Vec<u8>) -> After {
        let before = out.len();
        let after = self.inner.apply(conn, request, out);
        let mut log = self.log.lock().expect("log");
        log.consumed += request.len();
        let delay = log.delay.take();
        log.events.push(Event::Applied {
            request: request.to_vec(),
            delay,
            reply: out[before..].to_vec(),
            after,
        });
        after
    }

    fn overflow(&self, conn: &mut S::Conn, out: &mut Vec<u8>) {
        let before = out.len();
        self.inner.overflow(conn, out);
        self.record(Event::Overflow {
            out: out[before..].to_vec(),
        });
    }

    fn request_timeout(&self) -> Option<std::time::Duration> {
        self.inner.request_timeout()
    }

    fn timed_out(&self, conn: &mut S::Conn, out: &mut Vec<u8>) {
        let before = out.len();
        self.inner.timed_out(conn, out);
        self.record(Event::TimedOut {
            out: out[before..].to_vec(),
        });
    }

    fn close(&self, conn: S::Conn) {
        self.inner.close(conn)
    }

    fn report(&self) -> serde_json::Value {
        self.inner.report()
    }
}
