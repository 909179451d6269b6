//! The message-board service: CAPS requests applied to a [`BoardStore`].
//!
//! A LIST, or a READ of a message, larger than [`REPLY_CHUNK`] is appended
//! a chunk at a time ([`Service::more`]) as the connection's output drains,
//! straight from the store: the server holds at most a chunk of it beyond
//! what the socket has not taken, so the board's memory grows with what
//! clients post and with nothing else (docs/protocols/board.md).

use crate::protocol_stats::{Counts, ErrorCount, FrameLimits, ProtocolStats};
use crate::stats::Counters;
use crate::{After, Common, Frame, Peer, Service, REPLY_CHUNK};
use serverlab_proto::board::{self, Kind, Parsed, Request};
use serverlab_proto::line::{self, Framed};
use serverlab_proto::Terminator;
use serverlab_store::board::BoardStore;
use std::sync::Arc;

/// Who may stop the server with `EXIT` (`--exit-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitPolicy {
    /// Peers on this machine only (the default): a loopback address, or
    /// any client of a Unix socket.
    Loopback,
    /// Any peer: the reference server's behaviour.
    Any,
    /// Nobody: `EXIT` is an invalid request.
    Never,
}

impl serverlab_util::Named for ExitPolicy {
    const WHAT: &'static str = "exit policy";
    const ALL: &'static [ExitPolicy] = &[ExitPolicy::Loopback, ExitPolicy::Any, ExitPolicy::Never];

    fn name(self) -> &'static str {
        match self {
            ExitPolicy::Loopback => "loopback",
            ExitPolicy::Any => "any",
            ExitPolicy::Never => "never",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            ExitPolicy::Loopback => {
                "EXIT from a loopback peer (or over a Unix socket) stops the server"
            }
            ExitPolicy::Any => "any peer may stop the server (the reference server)",
            ExitPolicy::Never => "EXIT is an invalid request",
        }
    }
}

impl ExitPolicy {
    fn allows(self, peer: Peer) -> bool {
        match self {
            ExitPolicy::Loopback => peer.is_local(),
            ExitPolicy::Any => true,
            ExitPolicy::Never => false,
        }
    }
}

serverlab_util::named_enum_impls!(ExitPolicy);

// Counter slots: one per request kind, then these.
const READ_MISSES: usize = Kind::ALL.len();
const EXIT_REFUSED: usize = READ_MISSES + 1;
const OVERSIZE: usize = READ_MISSES + 2;
const SLOTS: usize = READ_MISSES + 3;

/// The board server's own statistics.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BoardStats {
    /// Requests by kind (`Kind::ALL`'s names; a refused EXIT counts as
    /// `invalid`).
    pub requests: Counts,
    /// READs of a message that does not exist.
    pub read_misses: u64,
    /// EXITs from a peer the exit policy refuses.
    pub exit_refused: u64,
    pub limits: FrameLimits,
}

impl ProtocolStats for BoardStats {
    fn requests(&self) -> Vec<(&'static str, u64)> {
        self.requests.0.clone()
    }

    fn errors(&self) -> Vec<ErrorCount> {
        let of = |kind: Kind, reason: &str, count| ErrorCount {
            op: KIND_NAMES[kind_slot(kind)],
            reason: reason.into(),
            count,
        };
        vec![
            of(Kind::Read, "no_such_message", self.read_misses),
            of(Kind::Exit, "exit_refused", self.exit_refused),
            self.limits.errors(),
        ]
    }
}

pub struct BoardService {
    store: Arc<dyn BoardStore>,
    max_request: usize,
    exit_policy: ExitPolicy,
    stats: Counters<SLOTS>,
    common: Common,
}

/// A framed board request, parsed: what it asks (with its topic and
/// message as positions in the frame), the payload's length and the
/// terminator its reply ends with. Only [`BoardService`]'s `frame` builds
/// one.
#[derive(Debug)]
pub struct BoardRequest {
    parsed: Parsed,
    payload: usize,
    term: Terminator,
}

/// Per connection: whether this peer may stop the server, and the rest of
/// a reply too large to append at once.
pub struct BoardConn {
    exit_allowed: bool,
    unfinished: Option<Unfinished>,
}

/// A reply `apply` began and [`Service::more`] continues.
struct Unfinished {
    rest: Rest,
    /// Its request's terminator, which ends it.
    term: Terminator,
}

/// What is left of a large reply: positions in the store, not a copy.
enum Rest {
    /// LIST entries `next..end` (`end`: the topics when LIST was applied).
    List { next: usize, end: usize },
    /// Message `id` of `topic`, from its byte `at`.
    Read {
        topic: Box<[u8]>,
        id: u64,
        at: usize,
    },
}

/// A kind's counter slot (and op): its place in `Kind::ALL`.
fn kind_slot(kind: Kind) -> usize {
    Kind::ALL
        .iter()
        .position(|&k| k == kind)
        .expect("every kind has a slot")
}

/// `Kind::ALL`'s names, in its order (a test checks them).
const KIND_NAMES: [&str; Kind::ALL.len()] = ["POST", "READ", "COUNT", "LIST", "EXIT", "invalid"];

impl BoardService {
    pub fn new(store: Arc<dyn BoardStore>, max_request: usize, exit_policy: ExitPolicy) -> Self {
        BoardService {
            store,
            max_request,
            exit_policy,
            stats: Counters::default(),
            common: Common::default(),
        }
    }

    fn count(&self, kind: Kind) {
        self.stats.add(kind_slot(kind), 1);
    }

    /// Topics in the store, read when asked (a scrape): the store's count,
    /// under its read lock where it has one.
    pub fn topics(&self) -> usize {
        self.store.topics()
    }

    fn read(
        &self,
        conn: &mut BoardConn,
        topic: &[u8],
        id: Option<u64>,
        out: &mut Vec<u8>,
        term: Terminator,
    ) {
        let Some((id, len)) =
            id.and_then(|id| Some((id, self.store.read_part(topic, id, 0, REPLY_CHUNK, out)?)))
        else {
            self.stats.add(READ_MISSES, 1);
            out.push(term.byte());
            return;
        };
        let rest = (len > REPLY_CHUNK).then(|| Rest::Read {
            topic: topic.into(),
            id,
            at: REPLY_CHUNK,
        });
        finish_or_keep(conn, rest, term, out);
    }

    fn list(&self, conn: &mut BoardConn, out: &mut Vec<u8>, term: Terminator) {
        let end = self.store.topics();
        let next = self.store.list_part(0, end, REPLY_CHUNK, out);
        finish_or_keep(
            conn,
            (next < end).then_some(Rest::List { next, end }),
            term,
            out,
        );
    }

    /// Append the next chunk of an unfinished reply.
    #[inline(never)]
    fn continue_reply(&self, conn: &mut BoardConn, u: Unfinished, out: &mut Vec<u8>) {
        let rest = match u.rest {
            Rest::List { next, end } => {
                let next = self.store.list_part(next, end, REPLY_CHUNK, out);
                (next < end).then_some(Rest::List { next, end })
            }
            Rest::Read { topic, id, at } => {
                // Messages never change: the rest is there (0: gone, which
                // cannot happen, ends the reply rather than loop).
                let len = self.store.read_part(&topic, id, at, REPLY_CHUNK, out);
                let at = at + REPLY_CHUNK;
                (at < len.unwrap_or(0)).then_some(Rest::Read { topic, id, at })
            }
        };
        finish_or_keep(conn, rest, u.term, out);
    }
}

/// End the reply with its terminator, or keep what is left of it for
/// [`Service::more`].
fn finish_or_keep(conn: &mut BoardConn, rest: Option<Rest>, term: Terminator, out: &mut Vec<u8>) {
    match rest {
        Some(rest) => conn.unfinished = Some(Unfinished { rest, term }),
        None => out.push(term.byte()),
    }
}

impl Service for BoardService {
    type Conn = BoardConn;
    type Request = BoardRequest;

    fn open(&self, peer: impl Into<Peer>) -> BoardConn {
        BoardConn {
            exit_allowed: self.exit_policy.allows(peer.into()),
            unfinished: None,
        }
    }

    fn input_limit(&self) -> usize {
        self.max_request + 1
    }

    fn frame(
        &self,
        _conn: &mut BoardConn,
        input: &[u8],
        _out: &mut Vec<u8>,
    ) -> Frame<BoardRequest> {
        match line::frame(input, self.max_request) {
            Framed::Incomplete => Frame::Incomplete,
            Framed::Frame { len, used, term } => Frame::Ready {
                len: used,
                request: BoardRequest {
                    parsed: Parsed::parse(&input[..len]),
                    payload: len,
                    term,
                },
            },
            Framed::Oversize => {
                self.stats.add(OVERSIZE, 1);
                Frame::Close
            }
        }
    }

    fn apply(
        &self,
        conn: &mut BoardConn,
        req: BoardRequest,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> After {
        let term = req.term;
        let mut parsed = req.parsed;
        if parsed == Parsed::Exit && !conn.exit_allowed {
            self.stats.add(EXIT_REFUSED, 1);
            parsed = Parsed::Invalid;
        }
        let request = parsed.resolve(&input[..req.payload]);
        self.count(request.kind());
        match request {
            Request::Post { topic, message } => {
                board::reply_number(out, self.store.post(topic, message), term)
            }
            Request::Read { topic, id } => self.read(conn, topic, id, out, term),
            Request::Count { topic } => board::reply_number(out, self.store.count(topic), term),
            Request::List => self.list(conn, out, term),
            Request::Exit => {
                board::reply_bytes(out, board::TERMINATING, term);
                return After::Shutdown;
            }
            Request::Invalid => out.push(term.byte()),
        }
        After::Continue
    }

    #[inline]
    fn more(&self, conn: &mut BoardConn, out: &mut Vec<u8>) -> bool {
        match conn.unfinished.take() {
            None => false,
            Some(u) => {
                self.continue_reply(conn, u, out);
                true
            }
        }
    }

    fn common(&self) -> &Common {
        &self.common
    }

    /// The request kinds, as the report counts them (`Kind::ALL`'s names;
    /// a refused EXIT counts as `invalid`).
    const OPS: &'static [&'static str] = &KIND_NAMES;

    fn op(&self, conn: &BoardConn, req: &BoardRequest) -> usize {
        let kind = match req.parsed {
            Parsed::Post { .. } => Kind::Post,
            Parsed::Read { .. } => Kind::Read,
            Parsed::Count { .. } => Kind::Count,
            Parsed::List => Kind::List,
            Parsed::Exit if conn.exit_allowed => Kind::Exit,
            Parsed::Exit | Parsed::Invalid => Kind::Invalid,
        };
        kind_slot(kind)
    }

    fn store_size(&self) -> Option<(&'static str, u64)> {
        Some(("topics", self.topics() as u64))
    }

    type Stats = BoardStats;

    fn stats(&self) -> BoardStats {
        let requests = KIND_NAMES
            .iter()
            .enumerate()
            .map(|(i, &name)| (name, self.stats.get(i)))
            .collect();
        BoardStats {
            requests: Counts(requests),
            read_misses: self.stats.get(READ_MISSES),
            exit_refused: self.stats.get(EXIT_REFUSED),
            limits: FrameLimits {
                oversize_frames: self.stats.get(OVERSIZE),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(svc: &BoardService, peer: &str, wire: &[u8]) -> (Vec<u8>, Vec<After>) {
        let mut conn = svc.open(peer.parse::<std::net::SocketAddr>().unwrap());
        let mut out = Vec::new();
        let ran = crate::run_all(svc, &mut conn, wire, &mut out);
        (out, ran.afters())
    }

    fn board(policy: ExitPolicy) -> BoardService {
        BoardService::new(
            serverlab_store::board::new(serverlab_store::StoreKind::Mutex),
            100,
            policy,
        )
    }

    #[test]
    fn the_ops_are_the_kinds_names() {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, KIND_NAMES);
    }

    /// The op asked of a timed request is the kind apply counts it
    /// under, a refused EXIT as `invalid`; the store's size is its topics.
    #[test]
    fn timed_requests_are_recorded_by_the_kind_counted() {
        let svc = board(ExitPolicy::Loopback);
        svc.common().times.time_every_request();
        run(
            &svc,
            "10.0.0.1:1",
            b"POST@a#m\0POST@b#m\0READ@a#0\0LIST\0EXIT\0",
        );
        let by_op: Vec<(&str, u64)> = svc
            .common()
            .times
            .cumulative_by_op(&[1])
            .into_iter()
            .map(|(op, c)| (BoardService::OPS[op], c.count))
            .collect();
        assert_eq!(
            by_op,
            vec![("POST", 2), ("READ", 1), ("LIST", 1), ("invalid", 1)]
        );
        assert_eq!(svc.report()["requests"]["invalid"], 1);
        assert_eq!(svc.store_size(), Some(("topics", 2)));
    }

    #[test]
    fn replies_use_the_request_terminator() {
        let svc = board(ExitPolicy::Loopback);
        let (out, _) = run(
            &svc,
            "127.0.0.1:1",
            b"POST@t#m\0POST@t#n\nREAD@t#1\r\nCOUNT@t\0LIST\nnope\0",
        );
        assert_eq!(out, b"0\x001\nn\n2\x00@t\n\x00");
    }

    #[test]
    fn exit_policy() {
        let cases = [
            (ExitPolicy::Loopback, "127.0.0.1:1", true),
            (ExitPolicy::Loopback, "[::1]:1", true),
            (ExitPolicy::Loopback, "10.0.0.1:1", false),
            (ExitPolicy::Any, "10.0.0.1:1", true),
            (ExitPolicy::Never, "127.0.0.1:1", false),
        ];
        for (policy, peer, stops) in cases {
            let svc = board(policy);
            let (out, afters) = run(&svc, peer, b"EXIT\0");
            if stops {
                assert_eq!(
                    (out, afters),
                    (b"TERMINATING\0".to_vec(), vec![After::Shutdown])
                );
            } else {
                assert_eq!((out, afters), (b"\0".to_vec(), vec![After::Continue]));
            }
        }
    }

    /// A Unix-socket client is on this machine: EXIT from one stops the
    /// server under the loopback policy, as from a loopback peer.
    #[test]
    fn a_unix_socket_client_is_local() {
        for (policy, stops) in [(ExitPolicy::Loopback, true), (ExitPolicy::Never, false)] {
            let svc = board(policy);
            let mut conn = svc.open(Peer::Unix);
            let mut out = Vec::new();
            let ran = crate::run_all(&svc, &mut conn, b"EXIT\0", &mut out);
            assert_eq!(ran.afters() == vec![After::Shutdown], stops, "{policy:?}");
        }
    }

    #[test]
    fn oversize_closes() {
        let svc = board(ExitPolicy::Never);
        let mut conn = svc.open("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap());
        assert!(matches!(
            svc.frame(&mut conn, &[b'a'; 101], &mut Vec::new()),
            Frame::Close
        ));
        assert!(matches!(
            svc.frame(&mut conn, &[b'a'; 100], &mut Vec::new()),
            Frame::Incomplete
        ));
    }

    /// A LIST or READ larger than a chunk is appended a chunk at a time
    /// through `more`; the whole is what the store holds, terminated.
    #[test]
    fn large_replies_come_in_chunks() {
        let svc = board(ExitPolicy::Never);
        let svc = BoardService {
            max_request: 1 << 20,
            ..svc
        };
        let message = vec![b'm'; 3 * REPLY_CHUNK + 5];
        let mut post = b"POST@t#".to_vec();
        post.extend_from_slice(&message);
        post.push(0);
        for i in 0..100 {
            let mut p = format!("POST@{i:03}").into_bytes();
            p.resize(2000, b'n');
            p.extend_from_slice(b"#x\n");
            post.extend_from_slice(&p);
        }
        let (out, _) = run(&svc, "127.0.0.1:1", &post);
        assert_eq!(out.iter().filter(|&&b| b == 0 || b == b'\n').count(), 101);
        let mut conn = svc.open("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap());
        for (req, want) in [
            (&b"READ@t#0\0"[..], message.len() + 1),
            (b"LIST\n", 2 + 100 * 1997 + 1),
        ] {
            let mut out = Vec::new();
            let Frame::Ready { len, request } = svc.frame(&mut conn, req, &mut out) else {
                panic!("a whole request");
            };
            svc.apply(&mut conn, request, &req[..len], &mut out);
            assert!(out.len() <= REPLY_CHUNK + 1997, "{}", out.len());
            let mut parts = 1;
            while svc.more(&mut conn, &mut out) {
                parts += 1;
            }
            assert!(parts >= 3, "{parts}");
            assert_eq!(out.len(), want);
            assert_eq!(out.last(), req.last(), "ends with the request's terminator");
        }
        let mut list = Vec::new();
        svc.store.list(&mut list);
        let (whole, _) = run(&svc, "127.0.0.1:1", b"LIST\0READ@t#0\0");
        assert!(whole[..list.len()] == list[..] && whole[list.len()] == 0);
        assert!(whole[list.len() + 1..whole.len() - 1] == message[..]);
    }

    /// `apply` acts on what `frame` parsed and never parses again: given
    /// other bytes of the same length, it still posts (taking the topic and
    /// message from the positions `frame` found), where parsing those bytes
    /// would have made a READ. The request type has private fields, so no
    /// caller can make one but `frame`, and no fallback is needed.
    #[test]
    fn apply_uses_the_parse_frame_made() {
        let svc = board(ExitPolicy::Never);
        let mut conn = svc.open("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap());
        let mut out = Vec::new();
        let Frame::Ready { len, request } = svc.frame(&mut conn, b"POST@t#m\0", &mut out) else {
            panic!("a whole request");
        };
        assert_eq!(len, 9);
        let after = svc.apply(&mut conn, request, b"READ@t#0\0", &mut out);
        assert_eq!((after, out), (After::Continue, b"0\0".to_vec()));
        let mut message = Vec::new();
        assert!(svc.store.read(b"t", 0, &mut message));
        assert_eq!(message, b"0", "the message at the framed position");
        assert_eq!(svc.report()["requests"]["POST"], 1);
        assert_eq!(svc.report()["requests"]["READ"], 0);
    }
}
