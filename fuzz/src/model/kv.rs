//! The kv store as the wire contract (docs/protocols/) states it, on a plain map. Heads are
//! found with the proto crate's `scan` run once over the whole remaining
//! stream, which the session ran incrementally over pieces: the two must
//! agree. Replies are read back with the client's response parser and
//! checked for status, body, ETag and `Connection: close`.

use super::{Model, Next};
use crate::session::{Applied, Event, Frame, Transcript};
use serverlab_proto::kv::client::{parse_response, ResponseHead, Tag};
use serverlab_proto::kv::{
    digest, scan, Head, HeadScan, Limits, Method, Reject, RequestError, Target, CONTINUE,
};
use std::collections::HashMap;

pub struct Kv {
    pub limits: Limits,
    store: HashMap<Vec<u8>, Vec<u8>>,
    /// What `next` found: the head and its length, or the rejection.
    head: Option<(Head, usize)>,
    reject: Option<Reject>,
    /// The rejection may go unnoticed if the stream ends (see [`missable`]).
    missable: bool,
}

impl Kv {
    pub fn new(limits: Limits) -> Self {
        Kv {
            limits,
            store: HashMap::new(),
            head: None,
            reject: None,
            missable: false,
        }
    }

    /// The status a request gets, and the value it reads (for GET/HEAD
    /// 200 and 304). Applies writes to the map.
    fn status(&mut self, head: &Head, body: &[u8]) -> (u16, Option<Vec<u8>>) {
        let readonly = matches!(head.method, Method::Get | Method::Head);
        match (&head.target, head.method) {
            (_, Method::Other) => (405, None),
            (Target::Health | Target::Stats, _) if !readonly => (405, None),
            (Target::Health | Target::Stats, _) => (200, None),
            (Target::Reserved, _) => (404, None),
            (Target::NoKey, _) => (400, None),
            (Target::KeyTooLong, _) => (414, None),
            (Target::Key(k), Method::Get | Method::Head) => match self.store.get(k) {
                None => (404, None),
                Some(v)
                    if head
                        .if_none_match
                        .as_ref()
                        .is_some_and(|c| c.matches(&digest(v))) =>
                {
                    (304, Some(v.clone()))
                }
                Some(v) => (200, Some(v.clone())),
            },
            (Target::Key(k), Method::Put | Method::Post) => {
                match self.store.insert(k.clone(), body.to_vec()) {
                    None => (201, Some(body.to_vec())),
                    Some(_) => (200, Some(body.to_vec())),
                }
            }
            (Target::Key(k), Method::Delete) => match self.store.remove(k) {
                Some(_) => (200, None),
                None => (404, None),
            },
        }
    }
}

/// The limits a kv target runs with, by a header byte: the defaults, the
/// smallest the flags allow, and no bodies at all.
pub fn limits(choice: u8) -> Limits {
    match choice % 3 {
        0 => Limits::default(),
        1 => Limits {
            max_uri: 16,
            max_headers: 64,
            max_value: 16,
        },
        _ => Limits {
            max_uri: 64,
            max_headers: 256,
            max_value: 0,
        },
    }
}

/// Bytes of the header section at the front of `fields`, its empty line
/// included; all of them while that line has not come.
fn header_section(fields: &[u8]) -> usize {
    let mut at = 0;
    while at < fields.len() {
        match &fields[at..] {
            [b'\n', ..] => return at + 1,
            [b'\r', b'\n', ..] => return at + 2,
            rest => match rest.iter().position(|&b| b == b'\n') {
                Some(i) => at += i + 1,
                None => break,
            },
        }
    }
    fields.len()
}

/// Whether a session may end without refusing a head that [`scan`] over
/// the whole `rest` rejects. The incremental scan re-checks syntax once per
/// line (bounding its work per head), so an error in a last line that
/// never ended is not seen before the peer closes, and closing without a
/// reply is then right too. Not so for limits (checked on every call) or
/// while the request line arrives (checked on every call).
pub fn missable(rest: &[u8], limits: &Limits, reject: &Reject) -> bool {
    let syntax = matches!(
        reject.error,
        RequestError::Syntax(_) | RequestError::Version | RequestError::TooManyHeaders
    );
    let lead = rest
        .iter()
        .take_while(|&&b| b == b'\r' || b == b'\n')
        .count();
    let Some(last_lf) = rest[lead..].iter().rposition(|&b| b == b'\n') else {
        return false;
    };
    syntax && scan(&rest[..=lead + last_lf], &mut 0, limits) == HeadScan::Incomplete
}

/// Parse `out` as exactly one response to `method`.
fn one_response(out: &[u8], method: Method) -> ResponseHead {
    let r = match parse_response(out, method) {
        Ok(Some(r)) => r,
        other => panic!(
            "not a response: {other:?} in {:?}",
            String::from_utf8_lossy(out)
        ),
    };
    assert_eq!(
        r.len + r.body_len,
        out.len(),
        "not exactly one response: {:?}",
        String::from_utf8_lossy(out)
    );
    r
}

impl Model for Kv {
    fn next(&mut self, rest: &[u8]) -> Next {
        self.head = None;
        match scan(rest, &mut 0, &self.limits) {
            HeadScan::Incomplete => Next::Wait,
            HeadScan::Reject(r) => {
                self.reject = Some(r);
                self.missable = missable(rest, &self.limits, &r);
                Next::Refuse
            }
            HeadScan::Complete { head, len } => {
                let total = len + head.content_length;
                self.head = Some((head, len));
                if rest.len() >= total {
                    Next::Request(total)
                } else {
                    Next::Wait
                }
            }
        }
    }

    fn answer(&mut self, a: &Applied) -> bool {
        let (head, len) = self.head.take().expect("a head was framed");
        let (status, value) = self.status(&head, &a.request[len..]);
        let r = one_response(a.reply, head.method);
        let what = format!(
            "{:?} answered {:?}",
            String::from_utf8_lossy(a.request),
            String::from_utf8_lossy(a.reply)
        );
        assert_eq!(r.status, status, "{what}");
        assert_eq!(r.close, !head.keep_alive, "{what}");
        if let Some(v) = value {
            assert_eq!(r.etag, Tag::Digest(digest(&v)), "{what}");
            if status == 200 && head.method == Method::Get {
                assert_eq!(&a.reply[r.len..], &v[..], "{what}");
            }
        }
        r.close
    }

    fn refused(&self, refusal: Option<&Event>, seen: &[u8]) {
        let reject = self.reject.expect("a rejection was framed");
        if refusal.is_none() && self.missable {
            return;
        }
        let out = super::framing_refusal(refusal);
        // A response to HEAD has no body, once the method is known; more
        // than 64 bytes of empty lines before it are refused unread
        // (docs/protocols/kv.md).
        let lead = seen
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        let head = lead <= 64 && seen[lead..].starts_with(b"HEAD ");
        let r = one_response(out, if head { Method::Head } else { Method::Get });
        assert!(r.close, "a refusal without Connection: close");
        let reasons = reasons(seen, &self.limits);
        assert!(
            reasons.contains(&r.status),
            "refused {:?} with {}, not one of {reasons:?} (whole: {reject:?})",
            String::from_utf8_lossy(seen),
            r.status
        );
    }
}

/// The statuses that may refuse a head of which `seen` has arrived: what
/// one scan of it reports, and the size limits it has passed. A head can
/// break several rules at once, and which is noticed first depends on how
/// it was split into reads (syntax is re-checked once per line, sizes on
/// every read); any rule that holds is a right answer.
fn reasons(seen: &[u8], limits: &Limits) -> Vec<u16> {
    let mut reasons = Vec::new();
    if let HeadScan::Reject(r) = scan(seen, &mut 0, limits) {
        reasons.push(r.status().code());
    }
    let lead = seen
        .iter()
        .take_while(|&&b| b == b'\r' || b == b'\n')
        .count();
    let rest = &seen[lead..];
    let line_end = rest
        .iter()
        .position(|&b| b == b'\n')
        .map_or(rest.len(), |i| i + 1);
    let target = rest[..line_end]
        .split(|&b| b == b' ')
        .nth(1)
        .unwrap_or_default();
    if line_end > limits.max_line() || target.len() > limits.max_uri {
        reasons.push(414);
    }
    // The header section so far: up to its empty line, if it came.
    let fields = &rest[line_end..];
    if header_section(fields) > limits.max_headers + 2 {
        reasons.push(431);
    }
    reasons
}

/// What only kv does: an interim `100 Continue`, sent at most once per
/// request that expects it, before its final response; a timeout answered
/// `408` with `Connection: close`.
pub fn check_interim(t: &Transcript, limits: &Limits) {
    let mut continued = false;
    for e in &t.events {
        match e {
            Event::Framed {
                frame: Frame::Incomplete,
                out,
            } => {
                assert_eq!(out, CONTINUE, "an interim reply other than 100 Continue");
                assert!(!continued, "100 Continue twice for one request");
                continued = true;
            }
            Event::Applied { request, .. } if continued => {
                let HeadScan::Complete { head, .. } = scan(request, &mut 0, limits) else {
                    panic!("applied a request without a head: {request:?}");
                };
                assert!(
                    head.expect_continue,
                    "100 Continue for a request that did not ask"
                );
                continued = false;
            }
            Event::TimedOut { out } => {
                // Without its body when a HEAD was pending.
                let r = match parse_response(out, Method::Head) {
                    Ok(Some(r)) => r,
                    other => panic!("a timeout answered {other:?}"),
                };
                assert_eq!((r.status, r.close), (408, true));
                let body = out.len() - r.len;
                assert!(
                    body == 0 || Some(body as u64) == r.content_length,
                    "{out:?}"
                );
            }
            Event::Framed { frame, out } => {
                assert!(
                    *frame == Frame::Close || out.is_empty(),
                    "{frame:?} appended {out:?}"
                );
            }
            _ => {}
        }
    }
}
