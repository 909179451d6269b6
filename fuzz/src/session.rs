//! The whole-session driver: the server's own connection session
//! (`serverlab_server::by_hand`, the `Session` every strategy runs) over a
//! real service, fed a byte stream split at planned points, with writes
//! that go out in planned pieces, and carrying out every I/O it asks for
//! as a strategy would. A spy between the session and the service records
//! what the service framed, applied and answered.
//!
//! Everything that knows the Session/Service API is in this file, so a
//! change of that API is adapted here once, not in every target.
//!
//! Now and then, as planned: a pool's budget (the session yields), a
//! header timeout (the spy makes the service's request timeout expire), a
//! graceful stop of the server part way (from then on the session reads
//! nothing more, and must answer every request it has read).
//!
//! Checked for every protocol (a failed check panics: a fuzz crash):
//! - the service never sees more unconsumed input than its input limit,
//!   and a session asking for input always has room to read it;
//! - every applied request gets a reply (at least one byte), but those
//!   the model says ask for nothing (`model::check` checks it);
//! - the requests applied are the stream's bytes, in order, none skipped
//!   or repeated;
//! - the client receives exactly what the service appended, in order;
//! - nothing is applied after a request that closes the connection, and
//!   the session closes early only for a reason (a closing request, a
//!   refused frame, an overflow, a timeout), otherwise it reads all that
//!   arrived — a graceful stop included: it answers what it took;
//! - no reset (there is no write timeout, and no abort);
//! - the session always makes progress (a bounded number of steps that
//!   neither read, write nor apply).

use crate::input::Plan;
use serverlab_server::by_hand::{HandSession, Io};
use serverlab_service::{After, Common, Delay, Service};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What `frame` found, without the parsed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    Incomplete,
    Ready(usize),
    Close,
}

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
    /// Bytes of the stream that arrived: all of it, unless the server was
    /// stopped part way (then what had arrived by the stop is all the
    /// session may read).
    pub arrived: usize,
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

/// The client side of one session: the stream, and what it got back.
struct Client<'a> {
    stream: &'a [u8],
    /// Bytes the session read and kept (not those it discarded lingering).
    fed: usize,
    /// Bytes read in all, discarded ones included.
    read: usize,
    /// Bytes of the stream that have arrived (see [`Transcript::arrived`]).
    arrived: usize,
    wire: Vec<u8>,
    lingering: bool,
}

/// Run one session of `svc` over `stream`, split as `plan` says, and check
/// the invariants above.
pub fn drive<S: Service>(svc: S, stream: &[u8], plan: &mut Plan) -> Transcript {
    let spy = Arc::new(Spy::new(svc));
    let peer: SocketAddr = PEER.parse().expect("a socket address");
    let mut sess = HandSession::new(spy.clone(), peer);
    if plan.one_in(4) {
        sess = sess.with_budget(1 + plan.below(4));
    }
    let mut c = Client {
        stream,
        fed: 0,
        read: 0,
        arrived: stream.len(),
        wire: Vec::new(),
        lingering: false,
    };
    // Steps that neither read, wrote nor applied: the session must not
    // spin. Each yield follows an applied request, each blocked write is
    // one the plan chose (one in six).
    let mut idle_steps = 4 * stream.len() + 64;
    loop {
        let progressed = match sess.need() {
            // Recorded by the spy, not performed: no time to wait.
            Io::Delay(_) | Io::Wait(_) => true,
            Io::Write => write_some(&mut sess, &mut c.wire, plan),
            Io::Read { deadline } => {
                if !c.lingering && deadline.is_some() && plan.one_in(64) {
                    // The header timeout passes: `need` deals with it.
                    spy.expired.store(true, Ordering::Relaxed);
                    false
                } else {
                    if !sess.stopping() && plan.one_in(128) {
                        // SIGTERM: a stopping server reads nothing more and
                        // answers what it has read.
                        sess.stop_server();
                        c.arrived = c.read;
                    }
                    read(&mut sess, &spy, &mut c, plan);
                    true
                }
            }
            Io::ShutdownWrite => {
                c.lingering = true;
                true
            }
            Io::Yield => false,
            Io::Close => break,
            Io::Reset => panic!("a reset, with no write timeout and no abort"),
            // The fuzzed services run without a write-ahead log, so no
            // reply ever waits for a commit.
            Io::Commit(_) => panic!("a commit, with no write-ahead log"),
        };
        if !progressed {
            idle_steps = idle_steps.checked_sub(1).unwrap_or_else(|| {
                panic!(
                    "the session spins: {} of {} bytes read",
                    c.fed,
                    stream.len()
                )
            });
        }
    }
    sess.finish();
    let events = std::mem::take(&mut spy.log.lock().expect("no panic held the log").events);
    let t = Transcript {
        events,
        wire: c.wire,
        fed: c.fed,
        arrived: c.arrived,
    };
    check(&t, stream);
    t
}

/// One read: part of what has arrived, as much as the session has room
/// for, or the end of the stream when all has been read. Lingering, the
/// bytes are discarded.
fn read<S: Service>(sess: &mut HandSession<Spy<S>>, spy: &Spy<S>, c: &mut Client, plan: &mut Plan) {
    if c.read == c.arrived {
        sess.set_eof();
        return;
    }
    let unconsumed = spy.unconsumed();
    let limit = spy.input_limit();
    let buf = sess.read_buf();
    assert!(
        !buf.is_empty(),
        "the session asks for input with no room to read it"
    );
    if !c.lingering {
        assert!(
            unconsumed + buf.len() <= limit,
            "room to read {} bytes on top of {unconsumed} unconsumed, past the input limit {limit}",
            buf.len()
        );
    }
    let offered = &c.stream[c.read..c.arrived];
    let n = plan.read_len(offered.len()).min(buf.len());
    buf[..n].copy_from_slice(&offered[..n]);
    sess.filled(n);
    c.read += n;
    if !c.lingering {
        c.fed += n;
        spy.log.lock().expect("log").fed += n;
    }
}

/// Write some of the pending output, maybe none (the socket is full);
/// whether any went out.
fn write_some<S: Service>(sess: &mut HandSession<S>, wire: &mut Vec<u8>, plan: &mut Plan) -> bool {
    let n = plan.write_len(sess.unwritten().len());
    if n == 0 {
        sess.write_blocked();
        return false;
    }
    wire.extend_from_slice(&sess.unwritten()[..n]);
    sess.wrote(n);
    true
}

/// The checks every protocol's session must pass.
fn check(t: &Transcript, stream: &[u8]) {
    let stream = &stream[..t.arrived];
    let appended: Vec<u8> = t.events.iter().flat_map(|e| e.out().to_vec()).collect();
    assert!(
        t.wire == appended,
        "the client received other bytes than the service appended"
    );
    let mut at = 0;
    for a in t.applied() {
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
            "the session closed early for no reason (or read past what arrived)"
        );
    }
}

/// The service under test, recording what it is asked and answers.
struct Spy<S> {
    inner: S,
    log: Mutex<Log>,
    /// The driver made the request timeout pass (see `request_timeout`).
    expired: AtomicBool,
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
            expired: AtomicBool::new(false),
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
    type Request = S::Request;

    fn open(&self, peer: impl Into<serverlab_service::Peer>) -> S::Conn {
        self.inner.open(peer)
    }

    fn input_limit(&self) -> usize {
        self.inner.input_limit()
    }

    const OPS: &'static [&'static str] = S::OPS;

    fn op(&self, conn: &S::Conn, request: &S::Request) -> usize {
        self.inner.op(conn, request)
    }

    fn store_size(&self) -> Option<(&'static str, u64)> {
        self.inner.store_size()
    }

    fn frame(
        &self,
        conn: &mut S::Conn,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> serverlab_service::Frame<S::Request> {
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
        let framed = self.inner.frame(conn, input, out);
        let frame = match framed {
            serverlab_service::Frame::Incomplete => Frame::Incomplete,
            serverlab_service::Frame::Ready { len, .. } => Frame::Ready(len),
            serverlab_service::Frame::Close => Frame::Close,
        };
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
        framed
    }

    /// Never waits: the fuzzer has no time, so a blocking pop is applied
    /// at once (and answers as its timeout would if its lists are
    /// empty).
    fn wait(
        &self,
        _conn: &mut S::Conn,
        _request: &S::Request,
        _input: &[u8],
        _waker: Option<&std::task::Waker>,
    ) -> Option<Delay> {
        None
    }

    fn delay(&self, conn: &mut S::Conn, request: &S::Request) -> Option<Delay> {
        // Recorded, not performed: the fuzzer has no time to wait.
        let delay = self.inner.delay(conn, request);
        self.log.lock().expect("log").delay = delay;
        delay
    }

    fn apply(
        &self,
        conn: &mut S::Conn,
        request: S::Request,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> After {
        let before = out.len();
        let after = self.inner.apply(conn, request, input, out);
        let mut log = self.log.lock().expect("log");
        log.consumed += input.len();
        let delay = log.delay.take();
        log.events.push(Event::Applied {
            request: input.to_vec(),
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

    /// The service's timeout, made long (an hour) so wall-clock time
    /// never fires it, or zero once the driver made it pass.
    fn request_timeout(&self) -> Option<Duration> {
        self.inner.request_timeout().map(|_| {
            if self.expired.load(Ordering::Relaxed) {
                Duration::ZERO
            } else {
                Duration::from_secs(3600)
            }
        })
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

    fn common(&self) -> &Common {
        self.inner.common()
    }

    type Stats = S::Stats;

    fn stats(&self) -> S::Stats {
        self.inner.stats()
    }
}
