//! The kv service: HTTP/1.1 requests applied to a [`KvStore`].
//!
//! `frame` finds a request head (see [`serverlab_proto::kv::scan`]),
//! parses it, and waits for the body its `Content-Length` names (keeping
//! the parsed head in the connection only while the body arrives); it then
//! returns the head as the request, and `apply` answers it with the body.
//! A
//! request the server stops reading (malformed, over a limit, chunked) is
//! answered from `frame` with `Connection: close`, and the connection
//! closes. The MD5 of every written value (its ETag) is computed here,
//! before the store is touched, so no lock is held during it.
//!
//! A GET body larger than [`REPLY_CHUNK`] is not copied whole: the reply
//! holds the store's value (an `Arc`, so a later PUT or DELETE does not
//! disturb it) and [`Service::more`] copies it out a chunk at a time as the
//! connection's output drains.

mod log;
mod stats;

use crate::durable::{Refused, Touch, Undo};
use crate::{After, Common, Durable, Frame, Logged, Service, REPLY_CHUNK};
use serverlab_proto::kv::{
    digest, imf_fixdate, scan, Connection, Head, HeadScan, Limits, Method, Reject, RequestError,
    Response, Status, Target, Version, ALLOW_KEY, ALLOW_RESERVED, CONTINUE, DATE_LEN,
};
use serverlab_store::kv::{KvStore, Put, Value};
use serverlab_wal::{ApplyError, Wal};
use stats::KvCounters;
pub use stats::{KvRequests, KvStats};
use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The kv server's settings (`--max-uri`, `--max-headers`, `--max-value`,
/// `--header-timeout`).
#[derive(Debug, Clone, Copy)]
pub struct KvConfig {
    pub limits: Limits,
    /// How long a connection may take to deliver a whole request, counted
    /// from when the server is ready for it (accepted, or the previous
    /// request taken and its reply written): 408 and close beyond.
    pub header_timeout: Duration,
}

impl Default for KvConfig {
    fn default() -> Self {
        KvConfig {
            limits: Limits::default(),
            header_timeout: serverlab_proto::kv::HEADER_TIMEOUT,
        }
    }
}

pub struct KvService {
    store: Arc<dyn KvStore>,
    cfg: KvConfig,
    stats: KvCounters,
    common: Common,
    /// The write-ahead log (`--durability` other than `none`).
    log: Option<Durable>,
}

/// Per connection: how far `frame` has got with the request arriving.
#[derive(Default)]
pub struct KvConn {
    /// Head-search progress (see [`scan`]).
    scanned: usize,
    /// A complete head, parsed, while its body arrives.
    awaiting_body: Option<AwaitingBody>,
    /// A GET body being sent: the value, and how much of it is appended.
    sending: Option<(Arc<Value>, usize)>,
    /// What the writes applied since the session last asked came to.
    logged: Option<Logged>,
}

struct AwaitingBody {
    head: Head,
    head_len: usize,
    /// `100 Continue` already sent.
    continued: bool,
}

/// A whole request: its parsed head, and where its body starts. Only
/// [`KvService`]'s `frame` builds one.
#[derive(Debug)]
pub struct KvRequest {
    head: Head,
    head_len: usize,
}

const VALUE_TYPE: &str = "application/octet-stream";
const TEXT_TYPE: &str = "text/plain; charset=utf-8";
const JSON_TYPE: &str = "application/json";

impl KvService {
    pub fn new(store: Arc<dyn KvStore>, cfg: KvConfig) -> Self {
        KvService {
            store,
            cfg,
            stats: KvCounters::default(),
            common: Common::default(),
            log: None,
        }
    }

    /// Applies one record of a log being replayed (see
    /// [`Wal::open`](serverlab_wal::Wal::open)).
    pub fn replay(&self, record: &[u8]) -> Result<(), ApplyError> {
        log::replay(&*self.store, record)
    }

    /// Logs every write from now on into `wal`, opened (and replayed into
    /// this service) by the caller.
    pub fn with_log(mut self, wal: Wal) -> Self {
        self.log = Some(Durable::new(wal));
        self
    }

    /// Logs a write, then applies it (under the log's order, when there
    /// is a log), and notes what its record came to on the connection;
    /// refused, unapplied, once the log has failed. `record` says whether
    /// there is a record (false: nothing changes); what `key` held before
    /// is kept until the record commits, to put back if it never does.
    fn write<T>(
        &self,
        conn: &mut KvConn,
        key: &[u8],
        record: impl FnOnce(&mut Vec<u8>) -> bool,
        apply: impl FnOnce() -> T,
    ) -> Result<T, Refused> {
        let Some(log) = &self.log else {
            return Ok(apply());
        };
        let undo = || -> Undo {
            let (store, key) = (Arc::clone(&self.store), Box::<[u8]>::from(key));
            let before = store.get(&key);
            Box::new(move || match before {
                Some(v) => drop(store.put(&key, v)),
                None => drop(store.delete(&key)),
            })
        };
        let (done, logged) = log.write(Touch::Key(key), record, undo, apply)?;
        conn.logged = Logged::merge(conn.logged, logged);
        log::compact_if_due(log, &self.store);
        Ok(done)
    }

    /// `503 Service Unavailable` for a write the failed log refused (`413`
    /// for one record over the log's limit); the connection stays open.
    fn refused(&self, reply: &mut Reply, r: &Refused) -> Status {
        match r {
            Refused::Failed(why) => {
                let msg = format!(
                    "{why}; writes are refused, reads serve the writes acknowledged before it\n"
                );
                reply.text(Status::ServiceUnavailable, &msg)
            }
            Refused::TooLong(why) => reply.text(Status::ContentTooLarge, &format!("{why}\n")),
        }
    }

    /// Answer a request the server stopped reading, and close.
    fn reject(&self, r: Reject, out: &mut Vec<u8>) {
        let status = r.status();
        self.stats.status(status);
        let date = now_date();
        let body = format!("{}\n", r.error);
        let mut res = Response::new(status, &date, body.as_bytes());
        res.content_type = Some(TEXT_TYPE);
        res.connection = Connection::Close;
        res.send_body = !r.head_only;
        res.encode(out);
    }

    /// Append the response to one applied request; returns its status.
    fn answer(&self, conn: &mut KvConn, head: &Head, body: &[u8], out: &mut Vec<u8>) -> Status {
        let mut reply = Reply::new(head, out);
        let reserved = matches!(head.target, Target::Health | Target::Stats);
        if head.method == Method::Other {
            return reply.not_allowed(if reserved { ALLOW_RESERVED } else { ALLOW_KEY });
        }
        let readonly = matches!(head.method, Method::Get | Method::Head);
        match &head.target {
            Target::Health | Target::Stats if !readonly => reply.not_allowed(ALLOW_RESERVED),
            Target::Health => reply.text(Status::Ok, "ok"),
            Target::Stats => self.stats_json(&mut reply),
            Target::Reserved => reply.text(Status::NotFound, "not found\n"),
            Target::NoKey => reply.text(
                Status::BadRequest,
                "no key: the path is /<key>, 1 to 1024 bytes\n",
            ),
            Target::KeyTooLong => reply.text(Status::UriTooLong, "a key is at most 1024 bytes\n"),
            Target::Key(key) => match head.method {
                Method::Get | Method::Head => {
                    self.read(conn, key, |c| self.get(c, head, key, &mut reply))
                }
                Method::Put | Method::Post => self.put(conn, key, body, &mut reply),
                Method::Delete => self.delete(conn, key, &mut reply),
                Method::Other => unreachable!("answered above"),
            },
        }
    }

    fn stats_json(&self, reply: &mut Reply) -> Status {
        let snapshot = self.stats().snapshot(&self.common);
        let mut json = serde_json::to_vec_pretty(&snapshot).expect("statistics serialize");
        json.push(b'\n');
        let date = reply.date;
        let mut r = Response::new(Status::Ok, &date, &json);
        r.content_type = Some(JSON_TYPE);
        reply.send(r)
    }

    /// Runs a read and notes on the connection what its reply waits for
    /// (the commit of the last write it may have seen, under `always`).
    fn read(
        &self,
        conn: &mut KvConn,
        key: &[u8],
        read: impl FnOnce(&mut KvConn) -> Status,
    ) -> Status {
        let Some(log) = &self.log else {
            return read(conn);
        };
        let (status, wait) = log.read(Touch::Key(key), || read(&mut *conn));
        conn.logged = Logged::merge(conn.logged, wait);
        status
    }

    /// GET or HEAD of a key. A body over [`REPLY_CHUNK`] is appended a
    /// chunk at a time (see [`Service::more`]).
    fn get(&self, conn: &mut KvConn, head: &Head, key: &[u8], reply: &mut Reply) -> Status {
        let Some(v) = self.store.get(key) else {
            self.stats.miss();
            return reply.text(Status::NotFound, "not found\n");
        };
        let unchanged = head
            .if_none_match
            .as_ref()
            .is_some_and(|c| c.matches(&v.digest));
        let status = if unchanged {
            Status::NotModified
        } else {
            Status::Ok
        };
        let date = reply.date;
        let streamed = reply.send_body && !unchanged && v.bytes.len() > REPLY_CHUNK;
        let mut r = Response::new(status, &date, &v.bytes);
        r.etag = Some(&v.digest);
        r.content_type = Some(VALUE_TYPE);
        r.send_body = !unchanged && !streamed;
        let status = reply.send(r);
        if streamed {
            reply.out.extend_from_slice(&v.bytes[..REPLY_CHUNK]);
            conn.sending = Some((v, REPLY_CHUNK));
        }
        status
    }

    /// PUT or POST: store the body. Its MD5 is computed before the store
    /// is touched, so no lock is held during it.
    fn put(&self, conn: &mut KvConn, key: &[u8], body: &[u8], reply: &mut Reply) -> Status {
        let d = digest(body);
        let value = Arc::new(Value {
            bytes: body.into(),
            digest: d,
        });
        let put = self.write(
            conn,
            key,
            |rec| {
                log::put(key, body, rec);
                true
            },
            || self.store.put(key, value),
        );
        let status = match put {
            Ok(Put::Created) => Status::Created,
            Ok(Put::Replaced) => Status::Ok,
            Err(r) => return self.refused(reply, &r),
        };
        let date = reply.date;
        let mut r = Response::new(status, &date, b"");
        r.etag = Some(&d);
        reply.send(r)
    }

    fn delete(&self, conn: &mut KvConn, key: &[u8], reply: &mut Reply) -> Status {
        let deleted = self.write(
            conn,
            key,
            |rec| {
                // Under the write order: nobody else can create it now.
                log::delete(key, rec);
                self.store.get(key).is_some()
            },
            || self.store.delete(key),
        );
        let deleted = match deleted {
            Ok(d) => d,
            Err(r) => return self.refused(reply, &r),
        };
        if deleted {
            let date = reply.date;
            reply.send(Response::new(Status::Ok, &date, b""))
        } else {
            self.stats.miss();
            reply.text(Status::NotFound, "not found\n")
        }
    }
}

/// What every response to one applied request shares: its `Date`, what it
/// says about the connection, whether a body may be sent (not for HEAD),
/// and where it goes.
struct Reply<'a> {
    date: [u8; DATE_LEN],
    connection: Connection,
    send_body: bool,
    out: &'a mut Vec<u8>,
}

impl<'a> Reply<'a> {
    fn new(head: &Head, out: &'a mut Vec<u8>) -> Self {
        let connection = match (head.keep_alive, head.version) {
            (false, _) => Connection::Close,
            (true, Version::Http10) => Connection::KeepAlive,
            (true, Version::Http11) => Connection::Persistent,
        };
        Reply {
            date: now_date(),
            connection,
            send_body: head.method != Method::Head,
            out,
        }
    }

    /// Encode `r` as this request's response; returns its status.
    fn send(&mut self, mut r: Response) -> Status {
        r.connection = self.connection;
        r.send_body &= self.send_body;
        r.encode(self.out);
        r.status
    }

    /// A plain-text response.
    fn text(&mut self, status: Status, msg: &str) -> Status {
        let date = self.date;
        let mut r = Response::new(status, &date, msg.as_bytes());
        r.content_type = Some(TEXT_TYPE);
        self.send(r)
    }

    /// `405` with the methods that are allowed.
    fn not_allowed(&mut self, allow: &'static str) -> Status {
        let date = self.date;
        let mut r = Response::new(Status::MethodNotAllowed, &date, b"method not allowed\n");
        r.content_type = Some(TEXT_TYPE);
        r.allow = Some(allow);
        self.send(r)
    }
}

impl Service for KvService {
    type Conn = KvConn;
    type Request = KvRequest;

    fn open(&self, _peer: impl Into<crate::Peer>) -> KvConn {
        KvConn::default()
    }

    fn input_limit(&self) -> usize {
        self.cfg.limits.max_request()
    }

    fn frame(&self, conn: &mut KvConn, input: &[u8], out: &mut Vec<u8>) -> Frame<KvRequest> {
        let mut wait = match conn.awaiting_body.take() {
            Some(wait) => wait,
            None => match scan(input, &mut conn.scanned, &self.cfg.limits) {
                HeadScan::Incomplete => return Frame::Incomplete,
                HeadScan::Reject(r) => {
                    self.reject(r, out);
                    return Frame::Close;
                }
                HeadScan::Complete { head, len } => {
                    conn.scanned = 0;
                    AwaitingBody {
                        head,
                        head_len: len,
                        continued: false,
                    }
                }
            },
        };
        let total = wait.head_len + wait.head.content_length;
        if input.len() >= total {
            return Frame::Ready {
                len: total,
                request: KvRequest {
                    head: wait.head,
                    head_len: wait.head_len,
                },
            };
        }
        if wait.head.expect_continue && !wait.continued {
            // Flushed before the strategy waits for the body.
            out.extend_from_slice(CONTINUE);
            wait.continued = true;
        }
        conn.awaiting_body = Some(wait);
        Frame::Incomplete
    }

    fn apply(&self, conn: &mut KvConn, req: KvRequest, input: &[u8], out: &mut Vec<u8>) -> After {
        let status = self.answer(conn, &req.head, &input[req.head_len..], out);
        self.stats.request(req.head.method, status);
        if req.head.keep_alive {
            After::Continue
        } else {
            After::Close
        }
    }

    #[inline]
    fn more(&self, conn: &mut KvConn, out: &mut Vec<u8>) -> bool {
        let Some((value, at)) = conn.sending.take() else {
            return false;
        };
        let end = value.bytes.len().min(at + REPLY_CHUNK);
        out.extend_from_slice(&value.bytes[at..end]);
        if end < value.bytes.len() {
            conn.sending = Some((value, end));
        }
        true
    }

    /// Not reached with the input limit above (a head or body that would
    /// pass it is rejected first); answered as a malformed request.
    fn overflow(&self, _conn: &mut KvConn, out: &mut Vec<u8>) {
        self.reject(RequestError::TooLarge.into(), out);
    }

    fn request_timeout(&self) -> Option<Duration> {
        Some(self.cfg.header_timeout)
    }

    fn timed_out(&self, conn: &mut KvConn, out: &mut Vec<u8>) {
        let head_only = conn
            .awaiting_body
            .as_ref()
            .is_some_and(|w| w.head.method == Method::Head);
        self.reject(
            Reject {
                error: RequestError::Timeout,
                head_only,
            },
            out,
        );
    }

    fn common(&self) -> &Common {
        &self.common
    }

    fn wal(&self) -> Option<&Wal> {
        self.log.as_ref().map(|l| &**l.wal())
    }

    fn logged(&self, conn: &mut KvConn) -> Option<Logged> {
        conn.logged.take()
    }

    type Stats = KvStats;

    fn stats(&self) -> KvStats {
        let mut stats = self.stats.stats(self.store.len());
        stats.durability = self.log.as_ref().map(|log| log.stats());
        stats
    }

    /// The methods, as the report counts them (`Method::ALL`'s names).
    const OPS: &'static [&'static str] = &stats::METHOD_NAMES;

    fn op(&self, _conn: &KvConn, req: &KvRequest) -> usize {
        stats::method_slot(req.head.method)
    }

    fn store_size(&self) -> Option<(&'static str, u64)> {
        Some(("keys", self.store.len() as u64))
    }
}

/// The current `Date`, formatted at most once a second per thread.
fn now_date() -> [u8; DATE_LEN] {
    thread_local! {
        static CACHE: Cell<(u64, [u8; DATE_LEN])> = const { Cell::new((u64::MAX, [0; DATE_LEN])) };
    }
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    CACHE.with(|c| {
        let (at, text) = c.get();
        if at == secs {
            return text;
        }
        let text = imf_fixdate(secs);
        c.set((secs, text));
        text
    })
}

#[cfg(test)]
mod tests;
