//! Entity tags: the MD5 of a value, written `"<32 hex digits>"`, and the
//! `If-None-Match` condition that compares against them.

use super::hex;
use md5::{Digest as _, Md5};

/// The MD5 of a value.
pub type Digest = [u8; 16];

/// Length of an encoded tag: two quotes around 32 hex digits.
pub const ETAG_LEN: usize = 34;

/// MD5 of `value`: the per-write CPU work of the labs this protocol is from.
pub fn digest(value: &[u8]) -> Digest {
    let out = Md5::digest(value);
    let mut d = [0u8; 16];
    d.copy_from_slice(&out);
    d
}

/// The strong entity tag for `d`: `"` + lower-case hex + `"`.
pub fn etag(d: &Digest) -> [u8; ETAG_LEN] {
    let mut out = [b'"'; ETAG_LEN];
    for (i, &b) in d.iter().enumerate() {
        out[1 + 2 * i..3 + 2 * i].copy_from_slice(&hex::lower(b));
    }
    out
}

/// Parse a tag as [`etag`] writes it (a `W/` prefix is allowed: weak
/// comparison). `None` for anything else, which can match no value.
pub fn parse_etag(tag: &[u8]) -> Option<Digest> {
    let tag = tag.strip_prefix(b"W/").unwrap_or(tag);
    let digits = tag.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    // Tags compare octet by octet, so only lower-case hex can be ours.
    if digits.len() != 32
        || !digits
            .iter()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    let mut d = [0u8; 16];
    for (i, pair) in digits.chunks(2).enumerate() {
        d[i] = hex::value(pair[0])? << 4 | hex::value(pair[1])?;
    }
    Some(d)
}

/// An `If-None-Match` condition (RFC 9110 §13.1.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfNoneMatch {
    /// `*`: matches whenever the key holds a value.
    Any,
    /// The tags listed that could be ours; others can never match.
    Tags(Vec<Digest>),
}

impl IfNoneMatch {
    /// Parse one field value: `*`, or a comma-separated list of entity
    /// tags (weak or strong). Tags are read quote to quote, so a comma
    /// inside a foreign tag is harmless; a syntax error ends the list.
    pub fn parse(value: &[u8]) -> IfNoneMatch {
        if value.trim_ascii() == b"*" {
            return IfNoneMatch::Any;
        }
        let mut tags = Vec::new();
        let mut rest = value;
        loop {
            rest = rest.trim_ascii_start();
            while let Some(r) = rest.strip_prefix(b",") {
                rest = r.trim_ascii_start();
            }
            let body = rest.strip_prefix(b"W/").unwrap_or(rest);
            let Some(open) = body.strip_prefix(b"\"") else {
                break;
            };
            let Some(close) = memchr::memchr(b'"', open) else {
                break;
            };
            if let Some(d) = parse_etag(&body[..close + 2]) {
                tags.push(d);
            }
            rest = &open[close + 1..];
        }
        IfNoneMatch::Tags(tags)
    }

    /// Fold in another `If-None-Match` field of the same request.
    pub fn merge(self, other: IfNoneMatch) -> IfNoneMatch {
        match (self, other) {
            (IfNoneMatch::Tags(mut a), IfNoneMatch::Tags(b)) => {
                a.extend(b);
                IfNoneMatch::Tags(a)
            }
            _ => IfNoneMatch::Any,
        }
    }

    /// Whether the current value's digest matches (weak comparison), so a
    /// GET or HEAD answers 304.
    pub fn matches(&self, current: &Digest) -> bool {
        match self {
            IfNoneMatch::Any => true,
            IfNoneMatch::Tags(tags) => tags.contains(current),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_known_answers() {
        // RFC 1321's test suite.
        assert_eq!(&etag(&digest(b"")), b"\"d41d8cd98f00b204e9800998ecf8427e\"");
        assert_eq!(
            &etag(&digest(b"message digest")),
            b"\"f96b697d7cb7938d525a2f31aaf161d0\""
        );
    }

    #[test]
    fn tags_round_trip() {
        let d = digest(b"hello");
        assert_eq!(parse_etag(&etag(&d)), Some(d));
        let mut weak = b"W/".to_vec();
        weak.extend_from_slice(&etag(&d));
        assert_eq!(parse_etag(&weak), Some(d));
        assert_eq!(parse_etag(b"\"abc\""), None);
        assert_eq!(parse_etag(b"5d41402abc4b2a76b9719d911017c592"), None);
    }

    #[test]
    fn if_none_match_lists() {
        let d = digest(b"hello");
        let tag = String::from_utf8(etag(&d).to_vec()).unwrap();
        assert_eq!(IfNoneMatch::parse(b" * "), IfNoneMatch::Any);
        assert!(IfNoneMatch::parse(tag.as_bytes()).matches(&d));
        let list = format!("\"x,y\", W/{tag} ,\"other\"");
        assert!(IfNoneMatch::parse(list.as_bytes()).matches(&d));
        assert!(!IfNoneMatch::parse(b"\"x\", \"y\"").matches(&d));
        assert!(!IfNoneMatch::parse(b"garbage").matches(&d));
        let upper = tag.to_uppercase();
        assert!(
            !IfNoneMatch::parse(upper.as_bytes()).matches(&d),
            "entity tags compare octet by octet"
        );
        let merged = IfNoneMatch::parse(b"\"x\"").merge(IfNoneMatch::parse(tag.as_bytes()));
        assert!(merged.matches(&d));
        assert_eq!(
            IfNoneMatch::parse(b"\"x\"").merge(IfNoneMatch::Any),
            IfNoneMatch::Any
        );
    }
}
