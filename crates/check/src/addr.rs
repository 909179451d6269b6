//! The server's address as the user writes it: `HOST:PORT`, `HOST`
//! alone (the protocol's default port), or nothing (127.0.0.1).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

/// Resolve `text` (or 127.0.0.1 when absent) to one address, using
/// `default_port` when no port is given.
pub fn parse(text: Option<&str>, default_port: u16) -> Result<SocketAddr, String> {
    let Some(text) = text else {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, default_port)));
    };
    let t = text.trim();
    if let Ok(addr) = t.parse::<SocketAddr>() {
        return Ok(addr);
    }
    // A bare address, IPv6 with or without brackets.
    let bare = t.strip_prefix('[').and_then(|s| s.strip_suffix(']'));
    if let Ok(ip) = bare.unwrap_or(t).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, default_port));
    }
    let with_port = if t.contains(':') {
        t.to_string()
    } else {
        format!("{t}:{default_port}")
    };
    with_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            format!("'{text}' is not an address (examples: 127.0.0.1:12345, localhost, [::1]:8080)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(parse(None, 8080).unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(
            parse(Some("127.0.0.1:1"), 8080).unwrap().to_string(),
            "127.0.0.1:1"
        );
        assert_eq!(
            parse(Some("127.0.0.2"), 12345).unwrap().to_string(),
            "127.0.0.2:12345"
        );
        assert_eq!(parse(Some("::1"), 80).unwrap().to_string(), "[::1]:80");
        assert_eq!(parse(Some("[::1]"), 80).unwrap().to_string(), "[::1]:80");
        assert_eq!(
            parse(Some("localhost:9"), 80).unwrap().port(),
            9,
            "host names resolve"
        );
        assert!(parse(Some("127.0.0.1:99999"), 80).is_err());
        assert!(parse(Some("host:port"), 80).is_err());
    }
}
