//! One connection's buffers and protocol state, without I/O.
//!
//! Every strategy drives a connection the same way: [`Session::next`] frames
//! the next buffered request, the strategy performs any [`Delay`] its own
//! way (inline, on a worker thread, or as a timer), then
//! [`Session::execute`] applies it and appends the reply. Replies
//! accumulate in one output buffer and go out when the input runs dry, so
//! pipelined requests are answered in order and in as few writes as
//! possible.

use serverlab_service::{After, Delay, Frame, Service};
use serverlab_util::InputBuf;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Initial input buffer; it grows up to the service's input limit.
const INITIAL_INPUT: usize = 4096;
/// An empty input or output buffer larger than this is released.
const SHRINK_ABOVE: usize = 256 * 1024;
/// Largest single read.
const READ_CHUNK: usize = 64 * 1024;
/// Unwritten output beyond which a strategy should flush before working on.
pub const OUTPUT_HIGH_WATER: usize = 256 * 1024;

/// What the connection needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A request is framed: perform the delay (if any), then `execute`.
    Ready(Option<Delay>),
    /// Flush the output, then read more input.
    NeedInput,
    /// Flush the output, then close.
    Close,
}

pub struct Session<S: Service> {
    conn: Option<S::Conn>,
    input: InputBuf,
    pending: Option<usize>,
    output: Vec<u8>,
    written: usize,
    closing: bool,
    eof: bool,
    /// The service's request timeout, if it has one.
    request_timeout: Option<Duration>,
    /// A request is awaited: `next` asked for input since the last one
    /// was framed.
    awaiting: bool,
    /// When the awaited request's clock started.
    waiting_since: Option<Instant>,
    /// When the socket last refused unwritten replies, with no progress
    /// since.
    stalled_since: Option<Instant>,
}

impl<S: Service> Session<S> {
    pub fn new(svc: &S, peer: SocketAddr) -> Self {
        Session {
            conn: Some(svc.open(peer)),
            input: InputBuf::new(),
            pending: None,
            output: Vec::new(),
            written: 0,
            closing: false,
            eof: false,
            request_timeout: svc.request_timeout(),
            awaiting: false,
            waiting_since: None,
            stalled_since: None,
        }
    }

    fn conn(&mut self) -> &mut S::Conn {
        self.conn.as_mut().expect("session used after finish")
    }

    /// Frame the next buffered request.
    pub fn next(&mut self, svc: &S) -> Step {
        if self.closing {
            return Step::Close;
        }
        debug_assert!(self.pending.is_none(), "execute the framed request first");
        let conn = self.conn.as_mut().expect("session used after finish");
        let input = self.input.data();
        match svc.frame(conn, input, &mut self.output) {
            Frame::Ready(n) => {
                let delay = svc.delay(conn, &input[..n]);
                self.pending = Some(n);
                self.awaiting = false;
                self.waiting_since = None;
                Step::Ready(delay)
            }
            Frame::Incomplete if input.len() >= svc.input_limit() => {
                svc.overflow(conn, &mut self.output);
                self.close_after_flush()
            }
            Frame::Incomplete if self.eof => self.close_after_flush(),
            Frame::Incomplete => {
                self.awaiting = true;
                self.start_request_clock();
                Step::NeedInput
            }
            Frame::Close => self.close_after_flush(),
        }
    }

    /// The request clock runs from when the server is ready for a request
    /// (accepted, or the last one framed) and has written every reply,
    /// whether or not any of the request has arrived: an idle connection
    /// times out like a slow one, but a client slowly reading a large
    /// reply is not charged for it.
    fn start_request_clock(&mut self) {
        if self.awaiting
            && self.waiting_since.is_none()
            && self.request_timeout.is_some()
            && self.unwritten().is_empty()
        {
            self.waiting_since = Some(Instant::now());
        }
    }

    fn close_after_flush(&mut self) -> Step {
        self.closing = true;
        Step::Close
    }

    /// Apply the request `next` framed and append its reply.
    pub fn execute(&mut self, svc: &S) -> After {
        let n = self.pending.take().expect("no framed request");
        let conn = self.conn.as_mut().expect("session used after finish");
        let after = svc.apply(conn, &self.input.data()[..n], &mut self.output);
        self.input.consume(n);
        if after != After::Continue {
            self.closing = true;
        }
        after
    }

    /// The awaited request timed out: let the service reply, then close.
    pub fn time_out(&mut self, svc: &S) {
        let mut out = std::mem::take(&mut self.output);
        svc.timed_out(self.conn(), &mut out);
        self.output = out;
        self.closing = true;
    }

    /// When the request being waited for must be complete, if the service
    /// limits it (kv's header timeout). None while replies are unwritten.
    pub fn deadline(&self) -> Option<Instant> {
        Some(self.waiting_since? + self.request_timeout?)
    }

    /// Space to read into: never lets unconsumed input exceed the limit.
    /// Empty only when the limit is reached (then `next` reports overflow).
    /// The buffer starts small and grows with the data it must hold.
    pub fn read_buf(&mut self, svc: &S) -> &mut [u8] {
        // A large request has been answered: give its buffer back, so an
        // idle connection costs a small buffer, not its largest.
        self.input.release_if_idle(SHRINK_ABOVE);
        let unconsumed = self.input.len();
        let room = svc.input_limit().saturating_sub(unconsumed);
        let want = room.min(unconsumed.max(INITIAL_INPUT)).min(READ_CHUNK);
        self.input.reserve(want);
        let spare = self.input.spare();
        let free = spare.len().min(room);
        &mut spare[..free]
    }

    /// `n` bytes were read into `read_buf`.
    pub fn filled(&mut self, n: usize) {
        self.input.filled(n);
    }

    /// The peer closed its side: no more input will come.
    pub fn set_eof(&mut self) {
        self.eof = true;
    }

    /// The server is closing while the peer may still be sending: close
    /// lingering, or the peer may lose the last replies to a reset.
    pub fn should_linger(&self) -> bool {
        self.closing && !self.eof
    }

    pub fn eof(&self) -> bool {
        self.eof
    }

    /// Replies not yet written.
    pub fn unwritten(&self) -> &[u8] {
        &self.output[self.written..]
    }

    /// `n` bytes of `unwritten` went out.
    pub fn wrote(&mut self, n: usize) {
        if n > 0 {
            self.stalled_since = None;
        }
        self.written += n;
        if self.written == self.output.len() {
            if self.output.capacity() > SHRINK_ABOVE {
                // A large reply has gone out: give its buffer back, so an
                // idle connection costs a small buffer, not its largest.
                self.output = Vec::new();
            } else {
                self.output.clear();
            }
            self.written = 0;
            self.start_request_clock();
        }
    }

    /// The socket would take no more of the unwritten replies: the stall
    /// clock starts, unless it already runs.
    pub fn write_blocked(&mut self) {
        if self.stalled_since.is_none() && !self.unwritten().is_empty() {
            self.stalled_since = Some(Instant::now());
        }
    }

    /// When the unwritten replies, stalled since the socket last refused
    /// them, must be given up on, if `limit` is set (`--write-timeout`).
    pub fn write_deadline(&self, limit: Option<Duration>) -> Option<Instant> {
        if self.unwritten().is_empty() {
            return None;
        }
        Some(self.stalled_since? + limit?)
    }

    /// Whether to flush before doing more work.
    pub fn over_high_water(&self) -> bool {
        self.output.len() - self.written >= OUTPUT_HIGH_WATER
    }

    /// Hand the protocol state back to the service.
    pub fn finish(&mut self, svc: &S) {
        if let Some(conn) = self.conn.take() {
            svc.close(conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverlab_service::echo::EchoService;

    fn feed<S: Service>(s: &mut Session<S>, svc: &S, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let buf = s.read_buf(svc);
            let n = buf.len().min(bytes.len());
            assert!(n > 0, "no room");
            buf[..n].copy_from_slice(&bytes[..n]);
            s.filled(n);
            bytes = &bytes[n..];
        }
    }

    fn drain(s: &mut Session<EchoService>, svc: &EchoService) -> Step {
        loop {
            match s.next(svc) {
                Step::Ready(_) => {
                    s.execute(svc);
                }
                other => return other,
            }
        }
    }

    #[test]
    fn split_and_pipelined_frames() {
        let svc = EchoService::new(100);
        let mut s = Session::new(&svc, "127.0.0.1:1".parse().unwrap());
        feed(&mut s, &svc, b"ab");
        assert_eq!(drain(&mut s, &svc), Step::NeedInput);
        feed(&mut s, &svc, b"c\0xy\nz");
        assert_eq!(drain(&mut s, &svc), Step::NeedInput);
        assert_eq!(s.unwritten(), b"cba\0yx\n");
        let n = s.unwritten().len();
        s.wrote(n);
        s.set_eof();
        assert_eq!(drain(&mut s, &svc), Step::Close);
    }

    #[test]
    fn never_buffers_past_the_limit() {
        let svc = EchoService::new(10);
        let mut s = Session::new(&svc, "127.0.0.1:1".parse().unwrap());
        feed(&mut s, &svc, b"0123456789");
        assert_eq!(drain(&mut s, &svc), Step::NeedInput);
        assert_eq!(s.read_buf(&svc).len(), 1);
        feed(&mut s, &svc, b"x");
        assert!(s.read_buf(&svc).is_empty());
        assert_eq!(drain(&mut s, &svc), Step::Close);
    }

    #[test]
    fn the_request_clock_runs_while_idle() {
        use serverlab_service::kv::{KvConfig, KvService};
        let store = serverlab_store::kv::new(serverlab_store::StoreKind::Mutex);
        let svc = KvService::new(store, KvConfig::default());
        let mut s = Session::new(&svc, "127.0.0.1:1".parse().unwrap());
        assert_eq!(s.deadline(), None);
        assert_eq!(s.next(&svc), Step::NeedInput);
        let first = s.deadline().expect("nothing sent yet, and a deadline");
        feed(&mut s, &svc, b"GET /_/health HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(s.next(&svc), Step::Ready(None));
        assert_eq!(s.deadline(), None, "a framed request stops the clock");
        s.execute(&svc);
        assert_eq!(s.next(&svc), Step::NeedInput);
        assert_eq!(s.deadline(), None, "not while the reply is unwritten");
        let n = s.unwritten().len();
        s.wrote(n - 1);
        assert_eq!(s.deadline(), None, "not while part of it is unwritten");
        s.wrote(1);
        let second = s.deadline().expect("idle keep-alive has a deadline");
        assert!(second >= first);
    }

    #[test]
    fn the_write_clock_runs_only_while_replies_are_stalled() {
        let svc = EchoService::new(100);
        let limit = Some(Duration::from_secs(30));
        let mut s = Session::new(&svc, "127.0.0.1:1".parse().unwrap());
        s.write_blocked();
        assert_eq!(s.write_deadline(limit), None, "nothing to write");
        feed(&mut s, &svc, b"abcd\0");
        assert_eq!(drain(&mut s, &svc), Step::NeedInput);
        assert_eq!(s.write_deadline(limit), None, "not refused yet");
        s.write_blocked();
        let first = s.write_deadline(limit).expect("stalled");
        assert_eq!(s.write_deadline(None), None, "no limit");
        s.write_blocked();
        assert_eq!(s.write_deadline(limit), Some(first), "still the same stall");
        s.wrote(0);
        assert_eq!(s.write_deadline(limit), Some(first), "no progress");
        s.wrote(2);
        assert_eq!(s.write_deadline(limit), None, "progress stops the clock");
        s.write_blocked();
        assert!(s.write_deadline(limit).expect("stalled again") >= first);
        s.wrote(3);
        assert_eq!(s.write_deadline(limit), None, "all written");
    }

    #[test]
    fn no_request_clock_without_a_request_timeout() {
        let svc = EchoService::new(100);
        let mut s = Session::new(&svc, "127.0.0.1:1".parse().unwrap());
        feed(&mut s, &svc, b"ab\0");
        assert_eq!(drain(&mut s, &svc), Step::NeedInput);
        s.wrote(3);
        assert_eq!(s.deadline(), None);
    }

    #[test]
    fn buffer_shrinks_after_a_large_request() {
        let svc = EchoService::new(2 << 20);
        let mut s = Session::new(&svc, "127.0.0.1:1".parse().unwrap());
        let mut big = vec![b'a'; 1 << 20];
        big.push(0);
        feed(&mut s, &svc, &big);
        assert_eq!(drain(&mut s, &svc), Step::NeedInput);
        assert!(s.input.capacity() > 1 << 20);
        let n = s.unwritten().len();
        s.wrote(n);
        assert!(s.read_buf(&svc).len() <= INITIAL_INPUT);
        assert!(s.input.capacity() <= INITIAL_INPUT);
    }

    #[test]
    fn output_is_released_once_a_large_reply_is_written() {
        let svc = EchoService::new(2 << 20);
        let mut s = Session::new(&svc, "127.0.0.1:1".parse().unwrap());
        let mut big = vec![b'a'; 1 << 20];
        big.push(0);
        feed(&mut s, &svc, &big);
        assert_eq!(drain(&mut s, &svc), Step::NeedInput);
        let n = s.unwritten().len();
        s.wrote(n - 1);
        assert!(s.output.capacity() > 1 << 20, "kept while partly written");
        s.wrote(1);
        assert!(s.unwritten().is_empty());
        assert!(s.output.capacity() <= SHRINK_ABOVE);
        // Small replies keep their buffer: no allocation per reply.
        feed(&mut s, &svc, b"abc\0");
        assert_eq!(drain(&mut s, &svc), Step::NeedInput);
        s.wrote(4);
        assert!(s.output.capacity() >= 4);
    }

    #[test]
    fn large_input_grows_and_compacts() {
        let svc = EchoService::new(200_000);
        let mut s = Session::new(&svc, "127.0.0.1:1".parse().unwrap());
        let mut big = vec![b'a'; 150_000];
        big.push(0);
        for _ in 0..3 {
            feed(&mut s, &svc, &big);
            assert_eq!(drain(&mut s, &svc), Step::NeedInput);
            assert_eq!(s.unwritten().len(), big.len());
            let n = s.unwritten().len();
            s.wrote(n);
        }
    }
}
