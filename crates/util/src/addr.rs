//! A server address as a person writes it, in one grammar for `serve
//! --addr`, `load --addr` and `check`'s ADDR: `HOST:PORT`, `HOST` alone
//! (the protocol's port, known only later), or `:PORT` (on 127.0.0.1).
//! Host names resolve (the first address found); IPv6 as `[::1]:8080`,
//! or `::1` / `[::1]` alone.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

/// An address whose port may be left to the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPort {
    pub ip: IpAddr,
    /// `None`: the protocol's default port.
    pub port: Option<u16>,
}

impl HostPort {
    /// The address, with `default` where no port was written.
    pub fn or_port(self, default: u16) -> SocketAddr {
        SocketAddr::new(self.ip, self.port.unwrap_or(default))
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.port, self.ip) {
            (Some(port), ip) => write!(f, "{}", SocketAddr::new(ip, port)),
            (None, IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            (None, IpAddr::V4(ip)) => write!(f, "{ip}"),
        }
    }
}

impl From<SocketAddr> for HostPort {
    fn from(a: SocketAddr) -> Self {
        HostPort {
            ip: a.ip(),
            port: Some(a.port()),
        }
    }
}

/// `text` as an address; the error says what was wrong with it.
pub fn parse(text: &str) -> Result<HostPort, String> {
    let t = text.trim();
    if let Ok(addr) = t.parse::<SocketAddr>() {
        return Ok(addr.into());
    }
    // A bare address, IPv6 with or without brackets.
    let bare = t.strip_prefix('[').and_then(|s| s.strip_suffix(']'));
    if let Ok(ip) = bare.unwrap_or(t).parse::<IpAddr>() {
        return Ok(HostPort { ip, port: None });
    }
    if let Some(port) = t.strip_prefix(':') {
        return Ok(HostPort {
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: Some(port_number(port)?),
        });
    }
    let (host, port) = match t.rsplit_once(':') {
        Some((host, port)) => (host, Some(port_number(port)?)),
        None => (t, None),
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    let ip = (host, port.unwrap_or(0))
        .to_socket_addrs()
        .ok()
        .and_then(|mut found| found.next())
        .ok_or_else(|| format!("'{host}' does not resolve"))?;
    Ok(HostPort { ip: ip.ip(), port })
}

fn port_number(text: &str) -> Result<u16, String> {
    text.parse()
        .map_err(|_| format!("'{text}' is not a port (0 to 65535)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(text: &str, default: u16) -> Result<SocketAddr, String> {
        parse(text).map(|a| a.or_port(default))
    }

    #[test]
    fn forms() {
        assert_eq!(
            with("127.0.0.1:1", 8080).unwrap().to_string(),
            "127.0.0.1:1"
        );
        assert_eq!(
            with("127.0.0.2", 12345).unwrap().to_string(),
            "127.0.0.2:12345"
        );
        assert_eq!(with(":9", 8080).unwrap().to_string(), "127.0.0.1:9");
        assert_eq!(with("::1", 80).unwrap().to_string(), "[::1]:80");
        assert_eq!(with("[::1]", 80).unwrap().to_string(), "[::1]:80");
        assert_eq!(with("[::1]:7", 80).unwrap().to_string(), "[::1]:7");
        assert_eq!(
            with("localhost:9", 80).unwrap().port(),
            9,
            "host names resolve"
        );
        let local = with("localhost", 80).unwrap();
        assert_eq!(local.port(), 80);
        assert!(local.ip().is_loopback());
        assert_eq!(parse("localhost").unwrap().port, None);
        for bad in [
            "",
            ":",
            ":x",
            "127.0.0.1:99999",
            "host:port",
            "no such host.invalid",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shown_as_written() {
        for text in ["127.0.0.1:9", "127.0.0.1", "[::1]", "[::1]:7"] {
            assert_eq!(parse(text).unwrap().to_string(), text);
        }
    }
}
