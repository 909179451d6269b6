//! Small standalone servers, each correct but for one named bug, for
//! showing that `serverlab check` catches that bug and names it. With
//! no bug they are correct servers, and the tests check that they pass:
//! so the bug really is the only difference. Framing and parsing come
//! from serverlab-proto, like any client or server of these protocols;
//! the state and the bugs are here.

use crate::support::fake_server;
use serverlab_proto::board::{parse_list, push_list_entry, Request};
use serverlab_proto::line::{frame, Framed};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// ---------------------------------------------------------------- board

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardBug {
    None,
    /// The id counter is read, then (a moment later) written back + 1,
    /// without holding the lock in between.
    NonAtomicIds,
    /// POST is answered with its id, but the message goes into the
    /// connection's own cache instead of the shared board (a classic
    /// thread-local mistake): only that connection ever reads it back.
    PostNotStored,
    /// READ is served from a copy of the messages refreshed every 100 ms.
    SnapshotReads,
    /// Every reply ends with NUL, even an LF-terminated request's.
    NulRepliesOnly,
    /// LIST in name order instead of creation order.
    ListSorted,
    /// Every 500th POST (of the server's) is answered with the id it
    /// would get, but neither stored nor counted: the next POST to that
    /// topic is answered the same id. A user's test server did this, and
    /// the checker's witness search ran for minutes.
    DropsOneIn500,
    /// After 50 requests on one connection, every reply on it is empty.
    TiresAfter50,
    /// A POST's topic ends at the last # of the request, not the first.
    TopicToLastHash,
}

type Messages = HashMap<(Vec<u8>, u64), Vec<u8>>;

#[derive(Default)]
struct Board {
    /// Topics in creation order.
    order: Vec<Vec<u8>>,
    count: HashMap<Vec<u8>, u64>,
    messages: Messages,
}

impl Board {
    fn store(&mut self, topic: &[u8], id: u64, message: &[u8], stored: bool) {
        if !self.count.contains_key(topic) {
            self.order.push(topic.to_vec());
        }
        self.count.insert(topic.to_vec(), id + 1);
        if stored {
            self.messages.insert((topic.to_vec(), id), message.to_vec());
        }
    }
}

struct BoardServer {
    bug: BoardBug,
    board: Mutex<Board>,
    snapshot: Mutex<Messages>,
    /// POSTs answered so far.
    posts: std::sync::atomic::AtomicU64,
}

/// Start a board server with `bug`; returns its address.
pub fn board(bug: BoardBug) -> String {
    let server = Arc::new(BoardServer {
        bug,
        board: Mutex::new(Board::default()),
        snapshot: Mutex::new(Messages::new()),
        posts: std::sync::atomic::AtomicU64::new(0),
    });
    if bug == BoardBug::SnapshotReads {
        let s = server.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            let copy = s.board.lock().unwrap().messages.clone();
            *s.snapshot.lock().unwrap() = copy;
        });
    }
    fake_server(move |stream| server.connection(stream))
}

impl BoardServer {
    fn connection(&self, mut stream: TcpStream) {
        let mut buf = Vec::new();
        let mut own = Messages::new();
        let mut chunk = [0u8; 65536];
        let mut served = 0;
        loop {
            loop {
                match frame(&buf, 65535) {
                    Framed::Frame { len, used, term } => {
                        served += 1;
                        let mut reply = self.apply(&buf[..len], &mut own);
                        if self.bug == BoardBug::TiresAfter50 && served > 50 {
                            reply.clear();
                        }
                        let term = if self.bug == BoardBug::NulRepliesOnly {
                            0
                        } else {
                            term.byte()
                        };
                        reply.push(term);
                        buf.drain(..used);
                        if stream.write_all(&reply).is_err() {
                            return;
                        }
                    }
                    Framed::Oversize => return,
                    Framed::Incomplete => break,
                }
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    fn apply(&self, frame: &[u8], own: &mut Messages) -> Vec<u8> {
        if let (BoardBug::TopicToLastHash, Some(rest)) = (self.bug, frame.strip_prefix(b"POST@")) {
            if let Some(at) = rest.iter().rposition(|&b| b == b'#') {
                let (topic, message) = (&rest[..at], &rest[at + 1..]);
                return self.post(topic, message, own).to_string().into_bytes();
            }
        }
        match Request::parse(frame) {
            Request::Post { topic, message } => {
                self.post(topic, message, own).to_string().into_bytes()
            }
            Request::Read {
                topic,
                id: Some(id),
            } => {
                let key = (topic.to_vec(), id);
                let found = match self.bug {
                    BoardBug::SnapshotReads => self.snapshot.lock().unwrap().get(&key).cloned(),
                    BoardBug::PostNotStored => own.get(&key).cloned(),
                    _ => self.board.lock().unwrap().messages.get(&key).cloned(),
                };
                found.unwrap_or_default()
            }
            Request::Count { topic } => {
                let n = self.board.lock().unwrap().count.get(topic).copied();
                n.unwrap_or(0).to_string().into_bytes()
            }
            Request::List => {
                let mut topics = self.board.lock().unwrap().order.clone();
                if self.bug == BoardBug::ListSorted {
                    topics.sort();
                }
                let mut out = Vec::new();
                for (i, t) in topics.iter().enumerate() {
                    push_list_entry(&mut out, i == 0, t);
                }
                debug_assert!(parse_list(&out).is_some());
                out
            }
            // EXIT would stop a real server; this one never stops.
            Request::Read { id: None, .. } | Request::Exit | Request::Invalid => Vec::new(),
        }
    }

    fn post(&self, topic: &[u8], message: &[u8], own: &mut Messages) -> u64 {
        match self.bug {
            BoardBug::NonAtomicIds => {
                let id = self
                    .board
                    .lock()
                    .unwrap()
                    .count
                    .get(topic)
                    .copied()
                    .unwrap_or(0);
                std::thread::sleep(Duration::from_micros(200));
                self.board.lock().unwrap().store(topic, id, message, true);
                id
            }
            _ => {
                let mut b = self.board.lock().unwrap();
                let id = b.count.get(topic).copied().unwrap_or(0);
                // Relaxed: counted under the board's lock anyway.
                let n = self
                    .posts
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if self.bug == BoardBug::DropsOneIn500 && n % 500 == 499 {
                    return id;
                }
                let stored = self.bug != BoardBug::PostNotStored;
                b.store(topic, id, message, stored);
                if !stored {
                    own.insert((topic.to_vec(), id), message.to_vec());
                }
                id
            }
        }
    }
}

// --------------------------------------------------------------- bucket

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketBug {
    None,
    /// The add reads the bucket before its delay and writes value + delay
    /// after it, so adds that overlap overwrite each other.
    LostUpdate,
}

/// Start a bucket server with `buckets` buckets, delays in ms.
pub fn bucket(bug: BucketBug, buckets: u64) -> String {
    let values = Arc::new(Mutex::new(vec![0u64; buckets as usize]));
    fake_server(move |stream| bucket_connection(bug, &values, stream))
}

fn bucket_connection(bug: BucketBug, values: &Mutex<Vec<u64>>, mut stream: TcpStream) {
    use serverlab_proto::bucket::{frame, Line};
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match frame(&buf, 64) {
            Line::Ready { len, used } => {
                let reply = bucket_apply(bug, values, &buf[..len]);
                buf.drain(..used);
                let (line, close) = match reply {
                    Ok(line) => (line, false),
                    Err(line) => (line, true),
                };
                if stream.write_all(line.as_bytes()).is_err() || close {
                    return;
                }
                continue;
            }
            Line::TooLong => {
                let _ = stream.write_all(b"ERR line over 64 bytes\n");
                return;
            }
            Line::Incomplete => {}
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The reply line, or an `ERR` line after which the connection closes.
fn bucket_apply(bug: BucketBug, values: &Mutex<Vec<u64>>, line: &[u8]) -> Result<String, String> {
    let req = serverlab_proto::bucket::Request::parse(line).map_err(|e| format!("ERR {e}\n"))?;
    let n = values.lock().unwrap().len() as u64;
    if req.bucket >= n {
        return Err(format!(
            "ERR bucket {} out of range 0-{}\n",
            req.bucket,
            n - 1
        ));
    }
    if req.delay > 60 {
        return Err(format!("ERR delay {} over the maximum 60\n", req.delay));
    }
    let b = req.bucket as usize;
    let delay = Duration::from_millis(req.delay);
    let value = match bug {
        BucketBug::None => {
            std::thread::sleep(delay);
            let mut v = values.lock().unwrap();
            v[b] += req.delay;
            v[b]
        }
        BucketBug::LostUpdate => {
            let before = values.lock().unwrap()[b];
            std::thread::sleep(delay);
            values.lock().unwrap()[b] = before + req.delay;
            before + req.delay
        }
    };
    Ok(format!("{value}\n"))
}

// ------------------------------------------------------------------- kv

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvBug {
    None,
    /// The first [`STALE_READS`] GETs and HEADs after a write is answered
    /// still see the value before it (a read cache invalidated late).
    /// Counted in reads, not in wall time: a checker slowed by a busy
    /// machine meets the stale value all the same.
    StaleAfterPut,
    /// The ETag is a hash of the value, consistently, but not its MD5.
    EtagNotMd5,
}

/// A key's value, and (for the stale-read bug) the one before it.
/// How many reads after a write see the value before it
/// ([`KvBug::StaleAfterPut`]).
const STALE_READS: u32 = 2;

#[derive(Clone)]
struct Entry {
    value: Option<Vec<u8>>,
    previous: Option<Vec<u8>>,
    /// Reads still to see `previous` (with [`KvBug::StaleAfterPut`]).
    stale_reads: u32,
}

struct KvServer {
    bug: KvBug,
    store: Mutex<HashMap<Vec<u8>, Entry>>,
}

/// Start a kv server with `bug`; returns its address.
pub fn kv(bug: KvBug) -> String {
    let server = Arc::new(KvServer {
        bug,
        store: Mutex::new(HashMap::new()),
    });
    fake_server(move |stream| server.connection(stream))
}

impl KvServer {
    fn connection(&self, mut stream: TcpStream) {
        use serverlab_proto::kv::{scan, HeadScan, Limits};
        let (mut buf, mut scanned, mut chunk) = (Vec::new(), 0, [0u8; 65536]);
        loop {
            match scan(&buf, &mut scanned, &Limits::default()) {
                HeadScan::Complete { head, len } if buf.len() >= len + head.content_length => {
                    let body: Vec<u8> = buf.drain(..len + head.content_length).skip(len).collect();
                    scanned = 0;
                    let (out, keep) = self.apply(&head, &body);
                    if stream.write_all(&out).is_err() || !keep {
                        return;
                    }
                    continue;
                }
                HeadScan::Reject(r) => {
                    let close = serverlab_proto::kv::Connection::Close;
                    let _ = stream.write_all(&respond(
                        r.status(),
                        None,
                        b"rejected\n",
                        true,
                        None,
                        close,
                    ));
                    return;
                }
                _ => {}
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    fn tag(&self, value: &[u8]) -> [u8; 16] {
        match self.bug {
            // Another hash, of the right shape: the MD5 of the value salted.
            KvBug::EtagNotMd5 => serverlab_proto::kv::digest(&[b"salt", value].concat()),
            _ => serverlab_proto::kv::digest(value),
        }
    }

    /// The value a read sees now.
    fn visible(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut store = self.store.lock().unwrap();
        let e = store.get_mut(key)?;
        if self.bug == KvBug::StaleAfterPut && e.stale_reads > 0 {
            e.stale_reads -= 1;
            e.previous.clone()
        } else {
            e.value.clone()
        }
    }

    fn write(&self, key: &[u8], value: Option<Vec<u8>>) -> bool {
        let mut store = self.store.lock().unwrap();
        let previous = store.get(key).and_then(|e| e.value.clone());
        let existed = previous.is_some();
        store.insert(
            key.to_vec(),
            Entry {
                value,
                previous,
                stale_reads: STALE_READS,
            },
        );
        existed
    }

    /// The response and whether the connection stays open.
    fn apply(&self, head: &serverlab_proto::kv::Head, body: &[u8]) -> (Vec<u8>, bool) {
        use serverlab_proto::kv::{Connection, Method, Status, Target, Version, ALLOW_KEY};
        let conn = match (head.keep_alive, head.version) {
            (false, _) => Connection::Close,
            (true, Version::Http10) => Connection::KeepAlive,
            (true, Version::Http11) => Connection::Persistent,
        };
        let plain = |status| respond(status, None, b"", true, None, conn);
        let Target::Key(key) = &head.target else {
            return (plain(Status::NotFound), head.keep_alive);
        };
        let out = match head.method {
            Method::Get | Method::Head => match self.visible(key) {
                Some(v) => {
                    let tag = self.tag(&v);
                    let hit = head.if_none_match.as_ref().is_some_and(|c| c.matches(&tag));
                    let status = if hit { Status::NotModified } else { Status::Ok };
                    let send = head.method == Method::Get && !hit;
                    respond(status, Some(&tag), &v, send, None, conn)
                }
                None => plain(Status::NotFound),
            },
            Method::Put | Method::Post => {
                let tag = self.tag(body);
                let existed = self.write(key, Some(body.to_vec()));
                let status = if existed { Status::Ok } else { Status::Created };
                respond(status, Some(&tag), b"", true, None, conn)
            }
            Method::Delete => plain(if self.write(key, None) {
                Status::Ok
            } else {
                Status::NotFound
            }),
            Method::Other => respond(
                Status::MethodNotAllowed,
                None,
                b"",
                true,
                Some(ALLOW_KEY),
                conn,
            ),
        };
        (out, head.keep_alive)
    }
}

fn respond(
    status: serverlab_proto::kv::Status,
    etag: Option<&[u8; 16]>,
    body: &[u8],
    send_body: bool,
    allow: Option<&'static str>,
    connection: serverlab_proto::kv::Connection,
) -> Vec<u8> {
    use serverlab_proto::kv::{imf_fixdate, Response};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let date = imf_fixdate(now);
    let mut r = Response::new(status, &date, body);
    r.etag = etag;
    r.send_body = send_body;
    r.allow = allow;
    r.connection = connection;
    let mut out = Vec::new();
    r.encode(&mut out);
    out
}
