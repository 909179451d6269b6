//! Who holds a TCP port, so "address already in use" can name the process
//! and say what to do: the listening socket's inode from `/proc/net/tcp`
//! and `/proc/net/tcp6`, then the process one of whose `/proc/<pid>/fd`
//! links to `socket:[inode]`. Only processes this user may inspect are
//! found (another user's descriptors are not readable).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A process holding a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command line, shortened: `serverlab serve board --addr …`.
    pub command: String,
}

/// TCP state LISTEN, as `/proc/net/tcp` writes it.
const LISTEN: &str = "0A";
/// Longest command line shown.
const SHOWN: usize = 80;

/// The process listening on `addr` (or on its port at the unspecified
/// address, which holds it too), if one can be seen.
pub fn find(addr: SocketAddr) -> Option<Holder> {
    let inodes = listeners(addr);
    if inodes.is_empty() {
        return None;
    }
    let pid = owner(&inodes)?;
    Some(Holder {
        pid,
        command: command(pid),
    })
}

/// Inodes of the sockets listening where `addr` would.
fn listeners(addr: SocketAddr) -> Vec<u64> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter_map(parse_line)
                .filter(|l| l.state == LISTEN && clashes(l.local, addr))
                .map(|l| l.inode)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether a listener on `held` keeps `wanted` from being bound.
fn clashes(held: SocketAddr, wanted: SocketAddr) -> bool {
    held.port() == wanted.port()
        && (held.ip() == wanted.ip() || held.ip().is_unspecified() || wanted.ip().is_unspecified())
}

/// One row of `/proc/net/tcp{,6}`: what is needed of it.
#[derive(Debug, PartialEq, Eq)]
struct Row<'a> {
    local: SocketAddr,
    state: &'a str,
    inode: u64,
}

fn parse_line(line: &str) -> Option<Row<'_>> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (ip, port) = fields.get(1)?.split_once(':')?;
    Some(Row {
        local: SocketAddr::new(parse_ip(ip)?, u16::from_str_radix(port, 16).ok()?),
        state: fields.get(3)?,
        inode: fields.get(9)?.parse().ok()?,
    })
}

/// The kernel prints an address as its 32-bit words in memory order, each
/// in hex.
fn parse_ip(hex: &str) -> Option<IpAddr> {
    let words: Vec<[u8; 4]> = (0..hex.len() / 8)
        .map(|i| u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok())
        .map(|w| w.map(u32::to_ne_bytes))
        .collect::<Option<_>>()?;
    match words.as_slice() {
        [a] => Some(IpAddr::V4(Ipv4Addr::from(*a))),
        [a, b, c, d] => {
            let bytes: Vec<u8> = [a, b, c, d]
                .iter()
                .flat_map(|w| w.iter().copied())
                .collect();
            let octets: [u8; 16] = bytes.try_into().ok()?;
            Some(IpAddr::V6(Ipv6Addr::from(octets)))
        }
        _ => None,
    }
}

/// The first process with a descriptor on one of `inodes`.
fn owner(inodes: &[u64]) -> Option<u32> {
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let fds = std::fs::read_dir(entry.path().join("fd")).ok()?;
            fds.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .any(|link| wanted.iter().any(|w| link.as_os_str() == w.as_str()))
                .then_some(pid)
        })
}

/// `pid`'s command line, arguments separated by spaces, shortened.
fn command(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut line = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if line.is_empty() {
        line = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        line = line.trim().to_string();
    }
    if line.chars().count() > SHOWN {
        line = line.chars().take(SHOWN).collect::<String>() + "…";
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse() {
        let v4 = "   0: 0100007F:3039 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 357871 1 0000000034bc45af 100 0 0 10 0";
        assert_eq!(
            parse_line(v4),
            Some(Row {
                local: "127.0.0.1:12345".parse().unwrap(),
                state: "0A",
                inode: 357871,
            })
        );
        let v6 = "   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 99 1 0000000000000000 100 0 0 10 0";
        assert_eq!(parse_line(v6).unwrap().local, "[::1]:8080".parse().unwrap());
        assert_eq!(parse_line("  sl  local_address rem_address   st"), None);
    }

    #[test]
    fn a_wildcard_listener_clashes() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert!(clashes(a("0.0.0.0:80"), a("127.0.0.1:80")));
        assert!(clashes(a("127.0.0.1:80"), a("127.0.0.1:80")));
        assert!(!clashes(a("127.0.0.2:80"), a("127.0.0.1:80")));
        assert!(!clashes(a("127.0.0.1:81"), a("127.0.0.1:80")));
    }

    /// This very process, listening, is found by its pid.
    #[test]
    fn finds_this_process() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let holder = find(addr).expect("our own listener is visible");
        assert_eq!(holder.pid, std::process::id());
        assert!(!holder.command.is_empty());
        drop(listener);
        assert_eq!(find(addr), None);
    }
}
