//! DUMP and RESTORE, answered as Redis 7.0.15 answers them, over a
//! payload in serverlab's own format. It is not Redis's RDB encoding: a
//! payload moves between serverlab servers only (Redis refuses ours, and
//! serverlab refuses Redis's, as a payload whose checksum is wrong).
//!
//! A payload is shaped as Redis's is: a type byte, the value, a format
//! version (2 bytes) and a checksum of everything before it (here a
//! CRC-32C, 4 bytes), both little-endian:
//!
//! | type | value |
//! |------|-------|
//! | 0, a string | its bytes |
//! | 1, a list | a count, then each element's bytes, head first |
//! | 2, a set | a count, then each member's bytes, bytewise ascending |
//! | 3, a sorted set | a count, then each member's bytes and its score (an IEEE 754 double, 8 bytes), by score then member |
//! | 4, a hash | a count, then each field's bytes and its value's, by field bytewise |
//!
//! where a count is an unsigned LEB128 number and a string's bytes are
//! its length (LEB128) and then the bytes. Sets and hashes go out in
//! order, so the same value always dumps to the same payload; a sorted
//! set's scores go out exactly (`-0`, subnormals and infinities too).
//!
//! RESTORE refuses a payload whose version is not [`VERSION`] or whose
//! checksum is wrong ("DUMP payload version or checksum are wrong"), and
//! one that passes both but does not decode ("Bad data format", as
//! Redis: a count or a length beyond the bytes left, bytes left over, an
//! unknown type, an empty list or collection, a member or field twice, a
//! NaN score). Decoding allocates no more than the payload's own length
//! justifies: every count is checked against the bytes left before room
//! is made for it.
//!
//! RESTORE is logged in a form that replays exactly: `RESTORE key 0
//! payload REPLACE`, or with a deadline `RESTORE key <ms since the
//! epoch> payload ABSTTL REPLACE` (REPLACE always: the key a replay finds
//! may be one that had expired here unlogged); a REPLACE whose deadline
//! had already passed, which only deleted the key, as `DEL key`. IDLETIME
//! and FREQ are checked as Redis checks them and then have no effect
//! (serverlab keeps no access times or frequencies).

use super::Running;
use crate::resp::keyspace::replace;
use crate::resp::Args;
use serverlab_proto::resp::number::parse_i64;
use serverlab_proto::resp::reply::{NOT_INTEGER, SYNTAX};
use serverlab_proto::resp::{reply, Name};
use serverlab_store::resp::{Coll, Held, Value, ZSet};
use std::collections::{HashMap, HashSet, VecDeque};

type Hash = HashMap<Box<[u8]>, Box<[u8]>>;

/// The payload format's version.
pub(crate) const VERSION: u16 = 1;

const STRING: u8 = 0;
const LIST: u8 = 1;
const SET: u8 = 2;
const ZSET: u8 = 3;
const HASH: u8 = 4;

/// The version and the checksum.
const FOOTER: usize = 2 + 4;

const BUSYKEY: &str = "BUSYKEY Target key name already exists.";
const BAD_FOOTER: &str = "ERR DUMP payload version or checksum are wrong";
const BAD_FORMAT: &str = "ERR Bad data format";

/// DUMP and RESTORE.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    match name {
        Name::Dump => dump(a, cx, out),
        Name::Restore => restore(a, cx, out),
        _ => unreachable!("{name:?} is not DUMP or RESTORE"),
    }
}

fn dump(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let mut payload = None;
    cx.store()
        .peek(a.arg(1), &mut |held| payload = Some(encode(held)));
    match payload {
        Some(p) => reply::bulk(out, &p),
        None => reply::null(out),
    }
}

/// RESTORE's options after the payload.
struct Options {
    replace: bool,
    absttl: bool,
}

impl Options {
    /// As Redis reads them: IDLETIME and FREQ exclude each other (the
    /// second is a syntax error), their numbers are checked at once.
    fn parse(a: &Args) -> Result<Options, &'static str> {
        let mut o = Options {
            replace: false,
            absttl: false,
        };
        let (mut idle, mut freq) = (false, false);
        let n = a.count();
        let mut j = 4;
        while j < n {
            let more = n - j - 1;
            let word = a.arg(j);
            let is = |w: &str| word.eq_ignore_ascii_case(w.as_bytes());
            if is("replace") {
                o.replace = true;
            } else if is("absttl") {
                o.absttl = true;
            } else if is("idletime") && more >= 1 && !freq {
                let v = parse_i64(a.arg(j + 1)).ok_or(NOT_INTEGER)?;
                if v < 0 {
                    return Err("ERR Invalid IDLETIME value, must be >= 0");
                }
                idle = true;
                j += 1;
            } else if is("freq") && more >= 1 && !idle {
                let v = parse_i64(a.arg(j + 1)).ok_or(NOT_INTEGER)?;
                if !(0..=255).contains(&v) {
                    return Err("ERR Invalid FREQ value, must be >= 0 and <= 255");
                }
                freq = true;
                j += 1;
            } else {
                return Err(SYNTAX);
            }
            j += 1;
        }
        Ok(o)
    }
}

/// RESTORE, its checks in Redis's order: the options, the key (BUSYKEY
/// without REPLACE), the TTL, the payload's footer, its contents.
fn restore(a: &Args, cx: &mut Running, out: &mut Vec<u8>) {
    let o = match Options::parse(a) {
        Ok(o) => o,
        Err(msg) => return cx.error(out, msg),
    };
    let key = a.arg(1);
    if !o.replace && cx.store().exists(key) {
        return cx.error(out, BUSYKEY);
    }
    let Some(ttl) = parse_i64(a.arg(2)) else {
        return cx.error(out, NOT_INTEGER);
    };
    if ttl < 0 {
        return cx.error(out, "ERR Invalid TTL value, must be >= 0");
    }
    let payload = a.arg(3);
    let value = match decode(payload) {
        Ok(v) => v,
        Err(Bad::Footer) => return cx.error(out, BAD_FOOTER),
        Err(Bad::Format) => return cx.error(out, BAD_FORMAT),
    };
    let deleted = o.replace && replace(cx, key, None);
    // Redis adds in C's 64-bit arithmetic: a TTL too large wraps to a
    // deadline long past.
    let when = if ttl != 0 && !o.absttl {
        ttl.wrapping_add(cx.now)
    } else {
        ttl
    };
    if ttl != 0 && when <= cx.now && !cx.svc.replaying() {
        if deleted {
            cx.here().expires.remove(key);
            cx.log(&[b"DEL", key]);
        }
        return reply::ok(out);
    }
    replace(cx, key, Some(value));
    if ttl == 0 {
        cx.here().expires.remove(key);
        cx.log(&[b"RESTORE", key, b"0", payload, b"REPLACE"]);
    } else {
        cx.here().expires.set(key, when);
        let when = when.to_string();
        cx.log(&[
            b"RESTORE",
            key,
            when.as_bytes(),
            payload,
            b"ABSTTL",
            b"REPLACE",
        ]);
    }
    reply::ok(out)
}

/// The payload of a value.
pub(crate) fn encode(held: Held) -> Vec<u8> {
    let mut p = Vec::new();
    match held {
        Held::Str(s) => {
            p.push(STRING);
            put_bytes(&mut p, s);
        }
        Held::List(l) => {
            p.push(LIST);
            put_len(&mut p, l.len());
            l.iter().for_each(|e| put_bytes(&mut p, e));
        }
        Held::Coll(Coll::Set(s)) => {
            p.push(SET);
            let mut members: Vec<&[u8]> = s.iter().map(|m| &**m).collect();
            members.sort_unstable();
            put_len(&mut p, members.len());
            members.iter().for_each(|m| put_bytes(&mut p, m));
        }
        Held::Coll(Coll::ZSet(z)) => {
            p.push(ZSET);
            put_len(&mut p, z.len());
            for (m, score) in z.iter() {
                put_bytes(&mut p, m);
                p.extend_from_slice(&score.to_le_bytes());
            }
        }
        Held::Coll(Coll::Hash(h)) => {
            p.push(HASH);
            let mut pairs: Vec<(&[u8], &[u8])> = h.iter().map(|(f, v)| (&**f, &**v)).collect();
            pairs.sort_unstable();
            put_len(&mut p, pairs.len());
            for (f, v) in pairs {
                put_bytes(&mut p, f);
                put_bytes(&mut p, v);
            }
        }
    }
    p.extend_from_slice(&VERSION.to_le_bytes());
    let crc = crc32c::crc32c(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

fn put_len(p: &mut Vec<u8>, n: usize) {
    let mut n = n as u64;
    while n >= 0x80 {
        p.push(n as u8 | 0x80);
        n >>= 7;
    }
    p.push(n as u8);
}

fn put_bytes(p: &mut Vec<u8>, b: &[u8]) {
    put_len(p, b.len());
    p.extend_from_slice(b);
}

/// Why a payload is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bad {
    /// Too short for its footer, another version, or a wrong checksum.
    Footer,
    /// Its footer is right but its contents are no value.
    Format,
}

/// The value a payload holds.
pub(crate) fn decode(payload: &[u8]) -> Result<Value, Bad> {
    let body = verified(payload).ok_or(Bad::Footer)?;
    let mut r = Reader { rest: body };
    let value = r.value().ok_or(Bad::Format)?;
    if !r.rest.is_empty() || value.is_empty() {
        return Err(Bad::Format);
    }
    Ok(value)
}

/// The payload without its footer, if the footer is right.
fn verified(payload: &[u8]) -> Option<&[u8]> {
    let at = payload.len().checked_sub(FOOTER)?;
    let (signed, crc) = payload.split_at(at + 2);
    let version = u16::from_le_bytes([payload[at], payload[at + 1]]);
    let crc = u32::from_le_bytes(crc.try_into().ok()?);
    (version == VERSION && crc32c::crc32c(signed) == crc).then_some(&payload[..at])
}

/// Reads a payload's body; `None` for anything that does not fit.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn value(&mut self) -> Option<Value> {
        let (&kind, rest) = self.rest.split_first()?;
        self.rest = rest;
        Some(match kind {
            STRING => Value::Str(self.bytes()?.to_vec()),
            LIST => Value::List(self.list()?),
            SET => Value::Coll(Coll::Set(self.set()?)),
            ZSET => Value::Coll(Coll::ZSet(self.zset()?)),
            HASH => Value::Coll(Coll::Hash(self.hash()?)),
            _ => return None,
        })
    }

    /// An unsigned LEB128 number of at most 64 bits.
    fn number(&mut self) -> Option<u64> {
        let mut n = 0u64;
        for (i, &b) in self.rest.iter().enumerate().take(10) {
            let bits = u64::from(b & 0x7f);
            if i == 9 && b > 1 {
                return None;
            }
            n |= bits << (7 * i);
            if b & 0x80 == 0 {
                self.rest = &self.rest[i + 1..];
                return Some(n);
            }
        }
        None
    }

    /// A count of things of at least `each` bytes: no more than the
    /// bytes left could hold.
    fn count(&mut self, each: usize) -> Option<usize> {
        let n = usize::try_from(self.number()?).ok()?;
        (n <= self.rest.len() / each).then_some(n)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.number()?).ok()?;
        if n > self.rest.len() {
            return None;
        }
        let (b, rest) = self.rest.split_at(n);
        self.rest = rest;
        Some(b)
    }

    fn boxed(&mut self) -> Option<Box<[u8]>> {
        self.bytes().map(Box::from)
    }

    fn list(&mut self) -> Option<VecDeque<Box<[u8]>>> {
        let n = self.count(1)?;
        let mut l = VecDeque::with_capacity(n);
        for _ in 0..n {
            l.push_back(self.boxed()?);
        }
        Some(l)
    }

    fn set(&mut self) -> Option<HashSet<Box<[u8]>>> {
        let n = self.count(1)?;
        let mut s = HashSet::with_capacity(n);
        for _ in 0..n {
            if !s.insert(self.boxed()?) {
                return None;
            }
        }
        Some(s)
    }

    fn zset(&mut self) -> Option<ZSet> {
        let n = self.count(1 + 8)?;
        let mut z = ZSet::default();
        for _ in 0..n {
            let member = self.bytes()?;
            let (score, rest) = self.rest.split_first_chunk::<8>()?;
            self.rest = rest;
            let score = f64::from_le_bytes(*score);
            if score.is_nan() || !z.insert(member, score) {
                return None;
            }
        }
        Some(z)
    }

    fn hash(&mut self) -> Option<Hash> {
        let n = self.count(2)?;
        let mut h = HashMap::with_capacity(n);
        for _ in 0..n {
            let field = self.boxed()?;
            if h.insert(field, self.boxed()?).is_some() {
                return None;
            }
        }
        Some(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(v: &Value) -> Held<'_> {
        match v {
            Value::Str(s) => Held::Str(s),
            Value::List(l) => Held::List(l),
            Value::Coll(c) => Held::Coll(c),
        }
    }

    fn boxed(items: &[&[u8]]) -> Vec<Box<[u8]>> {
        items.iter().map(|b| Box::<[u8]>::from(*b)).collect()
    }

    /// One value of every type, with the awkward cases: empty and binary
    /// strings, a long element (a two-byte length), scores that only an
    /// exact copy keeps.
    fn every_type() -> Vec<Value> {
        let long = vec![b'x'; 300];
        let mut z = ZSet::default();
        for (m, s) in [
            (&b"a"[..], 1.5),
            (b"neg0", -0.0),
            (b"sub", 5e-324),
            (b"tenth", 0.1),
            (b"inf", f64::INFINITY),
            (b"-inf", f64::NEG_INFINITY),
            (b"", 3.0),
        ] {
            z.insert(m, s);
        }
        vec![
            Value::Str(Vec::new()),
            Value::Str(b"\0\r\n\xff binary".to_vec()),
            Value::Str(long.clone()),
            Value::List(boxed(&[b"", b"a", &long, b"a"]).into()),
            Value::Coll(Coll::Set(
                boxed(&[b"1", b"", b"\xff", &long]).into_iter().collect(),
            )),
            Value::Coll(Coll::ZSet(z)),
            Value::Coll(Coll::Hash(
                boxed(&[b"f", b"", b"\0"])
                    .into_iter()
                    .zip(boxed(&[b"", b"v", &long]))
                    .collect(),
            )),
        ]
    }

    /// Scores compared by their bits (`==` takes `-0` for `0`).
    fn bits(v: &Value) -> Vec<(Vec<u8>, u64)> {
        match v {
            Value::Coll(Coll::ZSet(z)) => {
                z.iter().map(|(m, s)| (m.to_vec(), s.to_bits())).collect()
            }
            _ => Vec::new(),
        }
    }

    /// `body` as a payload with a right footer.
    fn signed(body: &[u8]) -> Vec<u8> {
        let mut p = body.to_vec();
        p.extend_from_slice(&VERSION.to_le_bytes());
        let crc = crc32c::crc32c(&p);
        p.extend_from_slice(&crc.to_le_bytes());
        p
    }

    #[test]
    fn every_type_round_trips_exactly_and_dumps_the_same_each_time() {
        for v in every_type() {
            let p = encode(held(&v));
            let back = decode(&p).unwrap_or_else(|e| panic!("{v:?}: {e:?}"));
            assert_eq!(back, v);
            assert_eq!(bits(&back), bits(&v));
            assert_eq!(encode(held(&back)), p, "{v:?}: one payload per value");
        }
    }

    #[test]
    fn the_format_is_as_documented() {
        let p = encode(Held::Str(b"hi"));
        assert_eq!(&p[..4], &[STRING, 2, b'h', b'i']);
        assert_eq!(&p[4..6], &VERSION.to_le_bytes());
        assert_eq!(&p[6..], &crc32c::crc32c(&p[..6]).to_le_bytes());
        let list: VecDeque<Box<[u8]>> = boxed(&[&[7u8; 200]]).into();
        let p = encode(Held::List(&list));
        assert_eq!(&p[..4], &[LIST, 1, 0xc8, 0x01]);
    }

    #[test]
    fn every_flipped_bit_and_every_cut_is_refused() {
        for v in every_type() {
            let p = encode(held(&v));
            for i in 0..p.len() * 8 {
                let mut q = p.clone();
                q[i / 8] ^= 1 << (i % 8);
                assert_eq!(decode(&q), Err(Bad::Footer), "{v:?}: bit {i}");
            }
            for n in 0..p.len() {
                assert!(decode(&p[..n]).is_err(), "{v:?}: cut to {n}");
                let mut longer = p.clone();
                longer.insert(n, 0);
                assert!(decode(&longer).is_err(), "{v:?}: a byte at {n}");
            }
        }
    }

    #[test]
    fn another_version_is_refused_even_when_signed() {
        let mut p = vec![STRING, 1, b'x'];
        p.extend_from_slice(&(VERSION + 1).to_le_bytes());
        let crc = crc32c::crc32c(&p);
        p.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(decode(&p), Err(Bad::Footer));
        assert_eq!(decode(&[]), Err(Bad::Footer));
        assert_eq!(decode(&[0; FOOTER - 1]), Err(Bad::Footer));
    }

    #[test]
    fn signed_bodies_that_are_no_value_are_bad_format() {
        let huge = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        let mut cases: Vec<Vec<u8>> = vec![
            vec![],                                // no type
            vec![9, 0],                            // unknown type
            vec![STRING],                          // no length
            vec![STRING, 5, b'a'],                 // a length past the end
            vec![STRING, 1, b'a', b'b'],           // a byte left over
            vec![STRING, 0x80],                    // a length cut short
            vec![LIST, 0],                         // an empty list
            vec![SET, 0],                          // an empty set
            vec![ZSET, 0],                         // an empty sorted set
            vec![HASH, 0],                         // an empty hash
            vec![LIST, 3, 0, 0],                   // fewer elements than counted
            vec![SET, 2, 1, b'a', 1, b'a'],        // a member twice
            vec![HASH, 2, 1, b'f', 0, 1, b'f', 0], // a field twice
            vec![HASH, 1, 1, b'f'],                // a field without a value
            vec![ZSET, 1, 1, b'm', 0, 0, 0],       // a score cut short
            vec![
                STRING, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ], // 11 bytes
            vec![
                STRING, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02,
            ], // past 64 bits
        ];
        for kind in [STRING, LIST, SET, ZSET, HASH] {
            let mut c = vec![kind];
            c.extend_from_slice(&huge);
            cases.push(c);
        }
        let mut nan = vec![ZSET, 1, 1, b'm'];
        nan.extend_from_slice(&f64::NAN.to_le_bytes());
        cases.push(nan);
        let mut twice = vec![ZSET, 2];
        for s in [1.0f64, 2.0] {
            twice.extend_from_slice(&[1, b'm']);
            twice.extend_from_slice(&s.to_le_bytes());
        }
        cases.push(twice);
        for body in cases {
            assert_eq!(decode(&signed(&body)), Err(Bad::Format), "{body:?}");
        }
    }

    #[test]
    fn counts_are_held_to_the_bytes_left() {
        let mut r = Reader {
            rest: &[5, 1, 2, 3, 4, 5],
        };
        assert_eq!(r.count(1), Some(5));
        let mut r = Reader {
            rest: &[6, 1, 2, 3, 4, 5],
        };
        assert_eq!(r.count(1), None);
        let mut r = Reader {
            rest: &[1, 0, 0, 0, 0, 0, 0, 0],
        };
        assert_eq!(r.count(9), None);
    }

    /// Any bytes, signed or not: an error or a value, never a panic.
    #[test]
    fn hostile_payloads_never_panic() {
        let mut rng = fastrand::Rng::with_seed(32);
        let seeds: Vec<Vec<u8>> = every_type().iter().map(|v| encode(held(v))).collect();
        for _ in 0..20_000 {
            let mut body: Vec<u8> = if rng.bool() {
                (0..rng.usize(0..40)).map(|_| rng.u8(..)).collect()
            } else {
                let s = &seeds[rng.usize(..seeds.len())];
                let mut b = s[..s.len() - FOOTER].to_vec();
                for _ in 0..rng.usize(1..4) {
                    if b.is_empty() {
                        break;
                    }
                    let i = rng.usize(..b.len());
                    b[i] = rng.u8(..);
                }
                b
            };
            if rng.bool() {
                body.truncate(rng.usize(0..=body.len()));
            }
            if let Ok(v) = decode(&signed(&body)) {
                assert!(!v.is_empty());
                assert_eq!(decode(&encode(held(&v))), Ok(v));
            }
            let _ = decode(&body);
        }
    }
}
