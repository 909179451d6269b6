//! The ledger: every write a load sent and every one the server
//! acknowledged, and the check that a restarted server still holds them.
//!
//! The file's lines are `serverlab_util::ledger`'s (the load writes them).
//! Connections write disjoint keys and each
//! connection's replies come in order, so an acknowledgement belongs to
//! the first write of its key and value sent after the last acknowledged
//! one (writes in between were answered but refused, and are never
//! acknowledged), and the last acknowledged value of a key is well
//! defined.
//!
//! After a crash and restart, every key must hold its last acknowledged
//! value, or the value of a later write that was sent but not acknowledged
//! (in flight at the crash: it may or may not have been applied). With an
//! allowed loss window (`everysec`), a key may instead hold an earlier
//! acknowledged value (or none), provided every acknowledged write it
//! misses was acknowledged within the window before the ledger's end; the
//! check counts them and says how far back the oldest one was.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead};
use std::path::Path;
use std::time::Duration;

use crate::Protocol;
use serverlab_proto::ProtocolKind;
pub use serverlab_util::ledger::Ledger;
use serverlab_util::ledger::{parse, Event};
use serverlab_util::Named;

/// One key's writes, in the order they were sent.
#[derive(Default)]
struct Key {
    writes: Vec<Write>,
    /// Where the next acknowledgement is looked for: after the last one.
    next: usize,
}

struct Write {
    /// The value sent (`None`: a delete).
    value: Option<Vec<u8>>,
    /// When it was acknowledged, if it was.
    acked_ms: Option<u64>,
}

impl Key {
    /// The write an acknowledgement of `value` belongs to; `false` if none.
    fn ack(&mut self, value: &Option<Vec<u8>>, ms: u64) -> bool {
        let Some(i) = self.writes[self.next..]
            .iter()
            .position(|w| w.value == *value)
        else {
            return false;
        };
        let i = self.next + i;
        self.writes[i].acked_ms = Some(ms);
        self.next = i + 1;
        true
    }
}

/// A ledger read back.
pub struct Read {
    keys: HashMap<Vec<u8>, Key>,
    /// The last event's time: about when the server was killed.
    end_ms: u64,
}

/// Reads a ledger file.
pub fn read(path: &Path) -> Result<Read, String> {
    let file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut r = Read {
        keys: HashMap::new(),
        end_ms: 0,
    };
    for (n, line) in io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = || {
            format!(
                "{} line {}: not a ledger line: {line:?}",
                path.display(),
                n + 1
            )
        };
        let l = parse(&line).ok_or_else(bad)?;
        r.end_ms = r.end_ms.max(l.ms);
        let k = r.keys.entry(l.key).or_default();
        match l.event {
            Event::Sent => k.writes.push(Write {
                value: l.value,
                acked_ms: None,
            }),
            Event::Acked => {
                if !k.ack(&l.value, l.ms) {
                    return Err(bad());
                }
            }
        }
    }
    Ok(r)
}

/// What the check found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Keys with at least one acknowledged write.
    pub keys: usize,
    /// Acknowledged writes in the ledger.
    pub acked: usize,
    /// Acknowledged writes the server no longer holds, within the allowed
    /// window.
    pub lost: usize,
    /// How long before the ledger's end the oldest lost write was
    /// acknowledged.
    pub lost_back: Duration,
    /// Keys whose value is none that the ledger allows, one line each.
    pub wrong: Vec<String>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.wrong.is_empty()
    }
}

/// How many wrong keys the verdict lists; the rest are counted.
const LISTED: usize = 10;

/// One sentence that is true as a whole: a failure says FAILED and how
/// many keys lost their last acknowledged write, then lists the first
/// [`LISTED`] and says how many it leaves out; a pass says what was
/// checked and what is missing within the allowed window.
impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.passed() {
            return self.fmt_failed(f);
        }
        write!(
            f,
            "{} keys, {} acknowledged writes: ",
            self.keys, self.acked
        )?;
        if self.lost == 0 {
            write!(f, "none missing")
        } else {
            write!(f, "{}", self.missing_within_window())
        }
    }
}

impl Verdict {
    fn missing_within_window(&self) -> String {
        format!(
            "{} missing within the allowed loss, the oldest acknowledged {} ms before the \
             ledger ends",
            self.lost,
            self.lost_back.as_millis()
        )
    }

    fn fmt_failed(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let wrong = self.wrong.len();
        write!(
            f,
            "FAILED: {wrong} of {} keys lost their last acknowledged write (of {} acknowledged \
             writes",
            self.keys, self.acked
        )?;
        if self.lost > 0 {
            write!(f, "; besides, {}", self.missing_within_window())?;
        }
        let shown = wrong.min(LISTED);
        if shown == wrong {
            write!(f, "); the keys wrong:")?;
        } else {
            write!(f, "); the keys wrong, the first {shown}:")?;
        }
        for w in self.wrong.iter().take(shown) {
            write!(f, "\n  {w}")?;
        }
        if wrong > shown {
            write!(f, "\n  and {} more", wrong - shown)?;
        }
        Ok(())
    }
}

/// Checks the server's values (`get` fetches one: `None` for absent)
/// against the ledger; acknowledged writes may be missing only when
/// acknowledged within `allow_loss` before the ledger's end.
pub fn check(
    ledger: &Read,
    allow_loss: Duration,
    mut get: impl FnMut(&[u8]) -> io::Result<Option<Vec<u8>>>,
) -> io::Result<Verdict> {
    let mut v = Verdict::default();
    let mut keys: Vec<_> = ledger.keys.iter().filter(|(_, k)| k.next > 0).collect();
    keys.sort_by(|a, b| a.0.cmp(b.0));
    for (key, k) in keys {
        let w = &k.writes;
        let acked =
            |range: std::ops::Range<usize>| w[range].iter().filter(|x| x.acked_ms.is_some());
        v.keys += 1;
        v.acked += acked(0..w.len()).count();
        let got = get(key)?;
        // The last acknowledged write, or one sent after it.
        let last = k.next - 1;
        if w[last..].iter().any(|x| x.value == got) {
            continue;
        }
        // An older value (or none before the first write): the
        // acknowledged writes after it are lost; allowed only within the
        // window.
        let held = w[..last].iter().rposition(|x| x.value == got);
        let first_lost = held.map_or(0, |i| i + 1);
        let oldest = acked(first_lost..last + 1)
            .find_map(|x| x.acked_ms)
            .expect("the last acknowledged write is in the range");
        let back = Duration::from_millis(ledger.end_ms.saturating_sub(oldest));
        if (held.is_some() || got.is_none()) && back <= allow_loss && !allow_loss.is_zero() {
            v.lost += acked(first_lost..last + 1).count();
            v.lost_back = v.lost_back.max(back);
        } else {
            v.wrong.push(format!(
                "{}: holds {}, last acknowledged {}",
                String::from_utf8_lossy(key),
                shown(&got),
                shown(&w[last].value)
            ));
        }
    }
    Ok(v)
}

fn shown(v: &Option<Vec<u8>>) -> String {
    match v {
        None => "nothing".into(),
        Some(b) if b.len() > 40 => format!("{:?}…", String::from_utf8_lossy(&b[..40])),
        Some(b) => format!("{:?}", String::from_utf8_lossy(b)),
    }
}

/// Which protocol a restarted server is asked in: one of the registry's
/// (`serverlab_proto::for_each_protocol!`) whose checker says how to ask
/// for a key ([`Protocol::LEDGER_GET`]); see [`sources`].
pub type Source = ProtocolKind;

/// How a server is asked for one key's value through the checker's
/// connection: the value, `None` where it holds none.
pub type LedgerGet = fn(&mut crate::wire::Conn, &[u8]) -> io::Result<Option<Vec<u8>>>;

/// How a server of `protocol` is asked for a key, if it holds keys.
fn getter(protocol: ProtocolKind) -> Option<LedgerGet> {
    macro_rules! getter {
        ([] $($snake:ident: $variant:ident),* $(,)?) => {
            match protocol {
                $(ProtocolKind::$variant => <crate::$snake::$variant as Protocol>::LEDGER_GET,)*
            }
        };
    }
    serverlab_proto::for_each_protocol!(getter)
}

/// The protocols a ledger can be checked in: those whose servers hold the
/// keys a load's writes set.
pub fn sources() -> Vec<ProtocolKind> {
    ProtocolKind::ALL
        .iter()
        .copied()
        .filter(|&p| getter(p).is_some())
        .collect()
}

/// A restarted server, asked for keys' values one at a time through the
/// checker's own connection: each reply bounded by [`crate::wire::MAX_REPLY`]
/// and by the timeout in all (bytes that trickle in do not stretch it),
/// framed by the same readers as the checker's cases.
pub struct Server {
    conn: crate::wire::Conn,
    get: LedgerGet,
}

impl Server {
    /// A connection to `addr`, asking in `source`; an error, before
    /// connecting, for a protocol whose servers hold no keys.
    pub fn open(
        addr: std::net::SocketAddr,
        source: Source,
        timeout: Duration,
    ) -> io::Result<Server> {
        let get = getter(source).ok_or_else(|| {
            let names: Vec<&str> = sources().into_iter().map(Named::name).collect();
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a {source} server holds no keys to check a ledger against (one of {} does)",
                    names.join(", ")
                ),
            )
        })?;
        Ok(Server {
            conn: crate::wire::Conn::open(addr, timeout)?,
            get,
        })
    }

    /// The value the server holds for `key`; `None` where it has none.
    pub fn get(&mut self, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
        (self.get)(&mut self.conn, key)
    }
}

/// kv's `GET /<key>`: the body of a 200, `None` for a 404.
pub(crate) fn kv_get(conn: &mut crate::wire::Conn, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
    use crate::kv::http;
    use serverlab_proto::kv::Method;
    conn.send(&http::request(Method::Get, key, None, "ledger"));
    match http::read(conn, Method::Get, Duration::ZERO) {
        http::Read::Resp(r) if r.status == 200 => Ok(Some(r.body)),
        http::Read::Resp(r) if r.status == 404 => Ok(None),
        http::Read::Resp(r) => Err(bad(format!("GET answered {}", r.show()))),
        http::Read::Bad(why) => Err(bad(format!("GET answered {why}"))),
    }
}

/// resp's `GET key`: a bulk string, `None` for nil.
pub(crate) fn resp_get(conn: &mut crate::wire::Conn, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
    use serverlab_proto::resp::client::{parse, Reply};
    conn.send(&crate::resp::talk::cmd(&[b"GET", key]));
    let got = crate::resp::talk::read(conn);
    let reply = got
        .reply()
        .ok_or_else(|| bad(format!("GET answered {}", got.show())))?;
    match parse(reply) {
        Ok(Some((Reply::Bulk(value), _))) => Ok(value.map(<[u8]>::to_vec)),
        _ => Err(bad(format!("GET answered {}", got.show()))),
    }
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(lines: &str) -> Read {
        let path = std::env::temp_dir().join(format!("ledger-test-{}", fastrand::u64(..)));
        std::fs::write(&path, lines).unwrap();
        let r = read(&path).unwrap();
        let _ = std::fs::remove_file(path);
        r
    }

    fn verdict(r: &Read, allow: Duration, held: Option<&[u8]>) -> Verdict {
        check(r, allow, |_| Ok(held.map(<[u8]>::to_vec))).unwrap()
    }

    // Key "k" (6b): v1 (7631) acked at 1000, v2 (7632) acked at 3000,
    // v3 (7633) sent and never acknowledged; the ledger ends at 3500.
    const LINES: &str = "S 900 6b 7631\nA 1000 6b 7631\nS 2900 6b 7632\nA 3000 6b 7632\n\
                         S 3500 6b 7633\n";

    #[test]
    fn the_last_acknowledged_or_a_later_sent_value_passes() {
        let r = ledger(LINES);
        assert!(verdict(&r, Duration::ZERO, Some(b"v2")).passed());
        assert!(verdict(&r, Duration::ZERO, Some(b"v3")).passed());
        let lost = verdict(&r, Duration::ZERO, Some(b"v1"));
        assert_eq!(lost.wrong.len(), 1, "{lost}");
        assert!(!verdict(&r, Duration::ZERO, None).passed());
        assert!(!verdict(&r, Duration::from_secs(10), Some(b"other")).passed());
    }

    #[test]
    fn losses_within_the_window_are_counted_older_ones_fail() {
        let r = ledger(LINES);
        let v = verdict(&r, Duration::from_secs(1), Some(b"v1"));
        assert!(v.passed(), "{v}");
        assert_eq!((v.lost, v.lost_back), (1, Duration::from_millis(500)));
        assert!(
            !verdict(&r, Duration::from_secs(1), None).passed(),
            "v1 was 2.5 s back"
        );
        let v = verdict(&r, Duration::from_secs(3), None);
        assert_eq!((v.lost, v.passed()), (2, true));
    }

    #[test]
    fn a_failed_verdict_is_one_sentence_and_counts_what_it_leaves_out() {
        let mut v = Verdict {
            keys: 30,
            acked: 90,
            ..Verdict::default()
        };
        assert_eq!(
            v.to_string(),
            "30 keys, 90 acknowledged writes: none missing"
        );
        v.wrong = (0..12).map(|i| format!("k{i}: holds nothing")).collect();
        let said = v.to_string();
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(
            lines[0],
            "FAILED: 12 of 30 keys lost their last acknowledged write (of 90 acknowledged \
             writes); the keys wrong, the first 10:"
        );
        assert_eq!(lines.len(), 12, "{said}");
        assert_eq!(lines[11], "  and 2 more");
        v.wrong.truncate(3);
        let said = v.to_string();
        assert!(
            said.lines().next().unwrap().ends_with("the keys wrong:"),
            "{said}"
        );
        assert!(!said.contains("more"), "{said}");
    }

    /// A write the server answered but refused (an error reply, a 4xx) is
    /// never acknowledged; the key's later writes still are.
    #[test]
    fn a_refused_write_between_acknowledged_ones_is_passed_over() {
        let r = ledger(
            "S 900 6b 7631\nA 1000 6b 7631\nS 1100 6b 7678\nS 1200 6b 7632\nA 1300 6b 7632\n",
        );
        let v = verdict(&r, Duration::ZERO, Some(b"v2"));
        assert!(v.passed(), "{v}");
        assert_eq!(v.acked, 2);
        assert!(!verdict(&r, Duration::ZERO, Some(b"v1")).passed());
        // An acknowledgement must follow its write.
        let path = std::env::temp_dir().join(format!("ledger-order-{}", fastrand::u64(..)));
        std::fs::write(&path, "S 1 6b 7631\nA 2 6b 7631\nA 3 6b 7631\n").unwrap();
        assert!(read(&path).is_err(), "one write acknowledged twice");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn an_acknowledgement_of_nothing_sent_is_refused() {
        let path = std::env::temp_dir().join(format!("ledger-bad-{}", fastrand::u64(..)));
        std::fs::write(&path, "A 1 6b 7631\n").unwrap();
        assert!(read(&path).is_err());
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn written_ledgers_read_back() {
        let path = std::env::temp_dir().join(format!("ledger-rw-{}", fastrand::u64(..)));
        let l = Ledger::create(&path).unwrap();
        l.sent(b"a", Some(b"\x00\xff"));
        l.acked(b"a", Some(b"\x00\xff"));
        l.sent(b"a", None);
        l.acked(b"a", None);
        drop(l);
        let r = read(&path).unwrap();
        assert!(verdict(&r, Duration::ZERO, None).passed());
        assert!(!verdict(&r, Duration::ZERO, Some(b"\x00\xff")).passed());
        let _ = std::fs::remove_file(path);
    }

    /// The ledger's protocols are the registry's that hold keys: kv and
    /// resp, not board or bucket, which are refused before connecting.
    #[test]
    fn a_ledger_is_checked_in_the_protocols_that_hold_keys() {
        assert_eq!(sources(), [ProtocolKind::Kv, ProtocolKind::Resp]);
        let nowhere = std::net::SocketAddr::from(([127, 0, 0, 1], 1));
        for p in [ProtocolKind::Board, ProtocolKind::Bucket] {
            let e = Server::open(nowhere, p, Duration::from_millis(10))
                .err()
                .unwrap_or_else(|| panic!("{p} opened"));
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{p}: {e}");
            assert!(e.to_string().contains("one of kv, resp"), "{p}: {e}");
        }
    }

    /// A server that claims a huge body and then trickles it: the check's
    /// read ends at its timeout with an error, holding at most its limit.
    #[test]
    fn a_hostile_server_cannot_hold_the_ledger_check() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n");
            for _ in 0..100 {
                if s.write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut server = Server::open(addr, Source::Kv, Duration::from_millis(500)).unwrap();
        let started = std::time::Instant::now();
        assert!(server.get(b"k").is_err());
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}
