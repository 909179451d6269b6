//! `transport` in `[server]`: how the load reaches the server — TCP on a
//! free port (the default), a Unix domain socket in the run's directory,
//! or both, as an axis (`transport = ["tcp", "unix"]`).

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Tcp,
    Unix,
}

/// The socket's name in a run's directory.
pub const SOCKET: &str = "server.sock";

/// The longest socket path kept in a run's directory (the kernel's limit
/// is 107 bytes; a temporary directory's own path must fit too).
pub const MAX_PATH: usize = 100;

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Unix => "unix",
        }
    }

    pub fn is_tcp(&self) -> bool {
        *self == Transport::Tcp
    }

    /// `transport = "unix"` or `transport = ["tcp", "unix"]`: each named
    /// once.
    pub fn parse_list(v: &toml::Value) -> Result<Vec<Transport>, String> {
        let one = |v: &toml::Value| match v.as_str() {
            Some("tcp") => Ok(Transport::Tcp),
            Some("unix") => Ok(Transport::Unix),
            _ => Err(format!(
                "server.transport: expected \"tcp\" or \"unix\" (or both, [\"tcp\", \"unix\"]), \
                 not {v}"
            )),
        };
        let items = match v {
            toml::Value::Array(items) if !items.is_empty() => items.iter().collect(),
            toml::Value::Array(_) => return Err("server.transport: give at least one".into()),
            other => vec![other],
        };
        let mut list = Vec::new();
        for item in items {
            let t = one(item)?;
            if list.contains(&t) {
                return Err(format!("server.transport: {} is listed twice", t.name()));
            }
            list.push(t);
        }
        Ok(list)
    }

    /// The server's `--addr` for a run whose statistics file is
    /// `stats_json`: any free TCP port, or a socket beside that file. A
    /// Unix socket's path holds at most 107 bytes: past [`MAX_PATH`], the
    /// socket is in the temporary directory instead, named after the run's
    /// path (and this process).
    pub fn server_addr(self, stats_json: &str) -> String {
        match self {
            Transport::Tcp => crate::plan::SERVER_ADDR.to_string(),
            Transport::Unix => {
                let beside = Path::new(stats_json).with_file_name(SOCKET);
                let beside = beside.display().to_string();
                if beside.len() <= MAX_PATH {
                    return format!("unix:{beside}");
                }
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                beside.hash(&mut h);
                let name = format!("serverlab-{}-{:016x}.sock", std::process::id(), h.finish());
                format!("unix:{}", std::env::temp_dir().join(name).display())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports_are_read_once_each_and_placed_in_the_runs_directory() {
        let list = |s: &str| Transport::parse_list(&toml::from_str::<toml::Table>(s).unwrap()["t"]);
        assert_eq!(list("t = 'unix'").unwrap(), vec![Transport::Unix]);
        assert_eq!(
            list("t = ['tcp', 'unix']").unwrap(),
            vec![Transport::Tcp, Transport::Unix]
        );
        for bad in ["t = 'udp'", "t = []", "t = ['unix', 'unix']", "t = 3"] {
            assert!(
                list(bad).unwrap_err().starts_with("server.transport"),
                "{bad}"
            );
        }
        assert_eq!(
            Transport::Unix.server_addr("r/runs/p/rep-1/server.json"),
            "unix:r/runs/p/rep-1/server.sock"
        );
        assert_eq!(Transport::Tcp.server_addr("x/server.json"), "127.0.0.1:0");
        // A run directory too deep for a socket's path: one in /tmp, its
        // own for each run.
        let deep = |rep: usize| format!("/{}/rep-{rep}/server.json", "d".repeat(120));
        let (a, b) = (
            Transport::Unix.server_addr(&deep(1)),
            Transport::Unix.server_addr(&deep(2)),
        );
        assert!(
            a.len() <= "unix:".len() + 107 && a.ends_with(".sock"),
            "{a}"
        );
        assert_ne!(a, b);
        assert_eq!(a, Transport::Unix.server_addr(&deep(1)));
    }
}
