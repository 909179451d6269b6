//! The request target: which key (percent-decoded) or which of the server's
//! own resources under `/_/` a request names.

use super::hex;

/// Longest key, in bytes after percent-decoding.
pub const MAX_KEY: usize = 1024;

/// What a request target names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A key of 1..=MAX_KEY bytes.
    Key(Vec<u8>),
    /// `/_/health`.
    Health,
    /// `/_/stats`.
    Stats,
    /// Any other path under `/_/`: reserved, never a key.
    Reserved,
    /// `/`: a well-formed target that names no key.
    NoKey,
    /// A key longer than MAX_KEY bytes.
    KeyTooLong,
}

/// A target that is not a valid origin- or absolute-form URI path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("the request target is not a path starting with '/'")]
    NotAPath,
    #[error("a '%' is not followed by two hex digits")]
    BadPercent,
    #[error("a '#' (fragment) in the request target")]
    Fragment,
}

impl Target {
    /// Classify a request target as httparse returns it. Origin form
    /// (`/key?query`) and absolute form (`http://host/key`) are accepted;
    /// the query is ignored; the path after the first `/` is
    /// percent-decoded into the key.
    pub fn parse(raw: &str) -> Result<Target, TargetError> {
        let path = origin_path(raw)?;
        let path = path.split('?').next().unwrap_or("");
        if path.contains('#') {
            return Err(TargetError::Fragment);
        }
        let key = decode_key(&path.as_bytes()[1..])?;
        Ok(match key.strip_prefix(b"_/") {
            Some(b"health") => Target::Health,
            Some(b"stats") => Target::Stats,
            Some(_) => Target::Reserved,
            None if key.is_empty() => Target::NoKey,
            None if key.len() > MAX_KEY => Target::KeyTooLong,
            None => Target::Key(key),
        })
    }
}

/// The path of an origin-form or absolute-form target, starting with `/`.
fn origin_path(raw: &str) -> Result<&str, TargetError> {
    if raw.starts_with('/') {
        return Ok(raw);
    }
    let lower = raw.get(..8).unwrap_or(raw).to_ascii_lowercase();
    let rest = if lower.starts_with("http://") {
        &raw[7..]
    } else if lower.starts_with("https://") {
        &raw[8..]
    } else {
        return Err(TargetError::NotAPath);
    };
    // The authority ends at the first '/', or at '?' with an empty path.
    match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => Ok(&rest[i..]),
        _ => Ok("/"),
    }
}

/// Percent-decode `raw` (`%2F` → `/`; `+` stays `+`, as in any URI path).
pub fn decode_key(raw: &[u8]) -> Result<Vec<u8>, TargetError> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            let hi = raw.get(i + 1).and_then(|&b| hex::value(b));
            let lo = raw.get(i + 2).and_then(|&b| hex::value(b));
            match (hi, lo) {
                (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
                _ => return Err(TargetError::BadPercent),
            }
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// Append `/` and `key`, percent-encoding every byte that is not an RFC
/// 3986 unreserved character, so any byte string survives the trip.
pub fn push_encoded_key(out: &mut Vec<u8>, key: &[u8]) {
    out.push(b'/');
    for &b in key {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b);
        } else {
            out.push(b'%');
            out.extend_from_slice(&hex::upper(b));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &[u8]) -> Result<Target, TargetError> {
        Ok(Target::Key(k.to_vec()))
    }

    #[test]
    fn classifies() {
        assert_eq!(Target::parse("/apple"), key(b"apple"));
        assert_eq!(Target::parse("/a%20b%2Fc"), key(b"a b/c"));
        assert_eq!(Target::parse("/a+b"), key(b"a+b"));
        assert_eq!(Target::parse("/a/b?x=1"), key(b"a/b"));
        assert_eq!(Target::parse("/%ff%00"), key(b"\xff\x00"));
        assert_eq!(Target::parse("/_"), key(b"_"));
        assert_eq!(Target::parse("/__/x"), key(b"__/x"));
        assert_eq!(Target::parse("/_/health"), Ok(Target::Health));
        assert_eq!(Target::parse("/_/stats?pretty"), Ok(Target::Stats));
        assert_eq!(Target::parse("/%5F/stats"), Ok(Target::Stats));
        assert_eq!(Target::parse("/_/"), Ok(Target::Reserved));
        assert_eq!(Target::parse("/_/healthz"), Ok(Target::Reserved));
        assert_eq!(Target::parse("/"), Ok(Target::NoKey));
        assert_eq!(Target::parse("/?q"), Ok(Target::NoKey));
        assert_eq!(Target::parse("http://h:1/k"), key(b"k"));
        assert_eq!(Target::parse("HTTP://h"), Ok(Target::NoKey));
        assert_eq!(Target::parse("https://h?x"), Ok(Target::NoKey));
        assert_eq!(Target::parse("*"), Err(TargetError::NotAPath));
        assert_eq!(Target::parse("host:80"), Err(TargetError::NotAPath));
        assert_eq!(Target::parse("/a%2"), Err(TargetError::BadPercent));
        assert_eq!(Target::parse("/a%zz"), Err(TargetError::BadPercent));
        assert_eq!(Target::parse("/a#b"), Err(TargetError::Fragment));
    }

    #[test]
    fn key_length_limit_counts_decoded_bytes() {
        let max = "k".repeat(MAX_KEY);
        assert_eq!(
            Target::parse(&format!("/{max}")),
            key(max.as_bytes()),
            "1024 bytes is a key"
        );
        assert_eq!(Target::parse(&format!("/{max}k")), Ok(Target::KeyTooLong));
        let encoded = "%41".repeat(MAX_KEY);
        assert_eq!(
            Target::parse(&format!("/{encoded}")),
            key("A".repeat(MAX_KEY).as_bytes())
        );
    }

    #[test]
    fn encoding_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let mut wire = Vec::new();
        push_encoded_key(&mut wire, &all);
        assert!(wire.iter().all(|b| b.is_ascii_graphic()));
        let text = std::str::from_utf8(&wire).unwrap();
        assert_eq!(Target::parse(text), Ok(Target::Key(all)));
    }
}
