//! What `load http` sends: targets (a method, a URL, headers and a body,
//! each with a weight), their URLs taken apart, and the placeholders
//! `{key}` (a key drawn from the key distribution, as its number) and
//! `{value}` (a value of the value size) filled in per request.

use serde::Serialize;

/// One request the load sends, with its weight among the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    pub method: String,
    /// As given (`http://host/path`), for the results.
    pub url: String,
    /// The `Host` every request of it names: the URL's authority, or a
    /// `Host` header's value.
    #[serde(skip)]
    pub host: String,
    /// The URL's own authority (empty for a path), where the load
    /// connects: a `Host` header names a virtual host, never another
    /// server.
    #[serde(skip)]
    url_authority: String,
    /// An `https://` URL: spoken to under TLS.
    #[serde(skip)]
    pub tls: bool,
    /// The request-target: the URL's path and query.
    #[serde(skip)]
    pub path: String,
    /// Header lines besides `Host`, `Content-Length` and `Connection`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// The body, placeholders not yet filled in.
    #[serde(rename = "body_bytes", serialize_with = "length")]
    pub body: Vec<u8>,
    pub weight: u32,
}

fn length<S: serde::Serializer>(body: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(body.len() as u64)
}

/// Methods a target may name: HTTP's tokens, as a request line spells them.
fn is_method(m: &str) -> bool {
    !m.is_empty()
        && m.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl Target {
    /// A target of `method` for `url` (`http://HOST[:PORT]/PATH`,
    /// `https://…`, or a path `/PATH`, sent to `--addr`), weight 1, no
    /// headers or body.
    pub fn new(method: &str, url: &str) -> Result<Target, String> {
        if !is_method(method) {
            return Err(format!("'{method}' is not an HTTP method (GET, POST, …)"));
        }
        let (tls, host, path) = split_url(url)?;
        Ok(Target {
            method: method.to_string(),
            url: url.to_string(),
            url_authority: host.clone(),
            tls,
            host,
            path,
            headers: Vec::new(),
            body: Vec::new(),
            weight: 1,
        })
    }

    /// Add a header line `Name: value` (as curl's and vegeta's -H).
    pub fn header(&mut self, line: &str) -> Result<(), String> {
        let (name, value) = parse_header(line)?;
        if name.eq_ignore_ascii_case("host") {
            self.host = value;
        } else {
            self.headers.push((name, value));
        }
        Ok(())
    }

    /// The authority (`host[:port]`) of an absolute URL; None for a path.
    pub fn authority(&self) -> Option<&str> {
        (!self.url_authority.is_empty()).then_some(self.url_authority.as_str())
    }

    /// Its line in the results: `GET http://host/path`.
    pub fn name(&self) -> String {
        format!("{} {}", self.method, self.url)
    }
}

/// `Name: value` as a header: a token, a colon, a value without line breaks.
pub fn parse_header(line: &str) -> Result<(String, String), String> {
    let (name, value) = line
        .split_once(':')
        .ok_or_else(|| format!("'{line}' is not a header: write 'Name: value'"))?;
    let name = name.trim();
    if !is_method(name) {
        return Err(format!("'{name}' is not a header name"));
    }
    let value = value.trim();
    if value.contains(['\r', '\n']) {
        return Err(format!("header {name}: a value may not hold a line break"));
    }
    let own = ["content-length", "connection", "transfer-encoding"];
    if own.iter().any(|o| name.eq_ignore_ascii_case(o)) {
        return Err(format!(
            "header {name}: the load writes it itself (Content-Length from the body, Connection \
             from --no-keepalive)"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

/// `http://host[:port]/path?query` (or `https://…`: true) as its
/// authority and request-target (`/` when it has no path); a path alone
/// (`/path`) has no authority (the Host is `--addr`'s).
fn split_url(url: &str) -> Result<(bool, String, String), String> {
    if url.starts_with('/') {
        check_path(url)?;
        return Ok((false, String::new(), url.to_string()));
    }
    let (tls, rest) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
        (Some(rest), _) => (false, rest),
        (None, Some(rest)) => (true, rest),
        (None, None) => {
            return Err(format!(
                "'{url}' is not an http:// or https:// URL or a path \
                 (http://HOST[:PORT]/PATH, /PATH)"
            ))
        }
    };
    let cut = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(cut);
    if authority.is_empty() || authority.contains('@') {
        return Err(format!("'{url}' names no host (http://HOST[:PORT]/PATH)"));
    }
    let path = path.split('#').next().unwrap_or_default();
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    check_path(&path)?;
    Ok((tls, authority.to_string(), path))
}

fn check_path(path: &str) -> Result<(), String> {
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(format!(
            "'{path}': a URL may not hold spaces or control characters (write them %-encoded)"
        ));
    }
    Ok(())
}

/// A piece of a path or body: bytes as they are, or a placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Bytes(Vec<u8>),
    Key,
    Value,
}

/// A path or body with its placeholders found once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(Vec<Piece>);

impl Template {
    pub fn new(text: &[u8]) -> Template {
        let mut pieces = Vec::new();
        let mut lit = Vec::new();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let hole = if rest.starts_with(b"{key}") {
                Some((Piece::Key, 5))
            } else if rest.starts_with(b"{value}") {
                Some((Piece::Value, 7))
            } else {
                None
            };
            match hole {
                Some((p, n)) => {
                    if !lit.is_empty() {
                        pieces.push(Piece::Bytes(std::mem::take(&mut lit)));
                    }
                    pieces.push(p);
                    i += n;
                }
                None => {
                    lit.push(text[i]);
                    i += 1;
                }
            }
        }
        if !lit.is_empty() {
            pieces.push(Piece::Bytes(lit));
        }
        Template(pieces)
    }

    /// Whether it holds `{value}`.
    pub fn has_value(&self) -> bool {
        self.0.contains(&Piece::Value)
    }

    /// Append it to `out` with `key` and `value` in their places.
    pub fn fill(&self, out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
        for p in &self.0 {
            match p {
                Piece::Bytes(b) => out.extend_from_slice(b),
                Piece::Key => out.extend_from_slice(key),
                Piece::Value => out.extend_from_slice(value),
            }
        }
    }

    /// Bytes once filled with a key of `key` bytes and a value of `value`.
    pub fn filled_len(&self, key: usize, value: usize) -> usize {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Bytes(b) => b.len(),
                Piece::Key => key,
                Piece::Value => value,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_host_and_path() {
        let t = Target::new("GET", "http://127.0.0.1:8080/a/b?c=1#frag").unwrap();
        assert_eq!(
            (t.host.as_str(), t.path.as_str()),
            ("127.0.0.1:8080", "/a/b?c=1")
        );
        assert_eq!(t.authority(), Some("127.0.0.1:8080"));
        let t = Target::new("DELETE", "http://localhost").unwrap();
        assert_eq!((t.host.as_str(), t.path.as_str()), ("localhost", "/"));
        let t = Target::new("GET", "http://h?x").unwrap();
        assert_eq!(t.path, "/?x");
        let t = Target::new("GET", "/only/path").unwrap();
        assert_eq!((t.authority(), t.path.as_str()), (None, "/only/path"));
        for bad in [
            "ftp://x/",
            "http:///x",
            "http://u@h/",
            "x/y",
            "http://h/a b",
        ] {
            assert!(Target::new("GET", bad).is_err(), "{bad}");
        }
        let t = Target::new("GET", "https://h:8443/s").unwrap();
        assert_eq!(
            (t.tls, t.authority(), t.path.as_str()),
            (true, Some("h:8443"), "/s")
        );
        assert!(!Target::new("GET", "http://h/").unwrap().tls);
        assert!(Target::new("GE T", "/").is_err());
        assert!(Target::new("", "/").is_err());
    }

    #[test]
    fn headers_are_checked_and_host_replaces_the_urls() {
        let mut t = Target::new("POST", "http://a/").unwrap();
        t.header("X-Id:  7 ").unwrap();
        t.header("Host: b.example").unwrap();
        assert_eq!(t.headers, vec![("X-Id".to_string(), "7".to_string())]);
        assert_eq!(t.host, "b.example");
        // The header names a virtual host; the load still connects to the URL's.
        assert_eq!(t.authority(), Some("a"));
        for bad in [
            "NoColon",
            ": v",
            "Content-Length: 3",
            "connection: close",
            "A B: c",
        ] {
            assert!(t.header(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn templates_fill_their_holes() {
        let t = Template::new(b"/k/{key}?v={value}&{nope}{key");
        assert!(t.has_value());
        assert!(!Template::new(b"{key}").has_value());
        let mut out = Vec::new();
        t.fill(&mut out, b"42", b"vvv");
        assert_eq!(out, b"/k/42?v=vvv&{nope}{key");
        assert_eq!(t.filled_len(2, 3), out.len());
        let plain = Template::new(b"plain");
        out.clear();
        plain.fill(&mut out, b"42", b"vvv");
        assert_eq!(out, b"plain");
        assert!(!plain.has_value());
    }
}
