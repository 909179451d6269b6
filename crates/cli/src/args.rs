//! Flag value parsers shared by the subcommands: each names what it
//! expected, so clap's error names the flag and exits 2.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serverlab_server::StrategyKind;
use serverlab_store::StoreKind;
use serverlab_util::addr::HostPort;
use serverlab_util::Named;
use std::net::SocketAddr;
use std::time::Duration;

/// Any value of `T`, by name; `--help` lists each with its description.
pub fn named<T: Named + Send + Sync>() -> impl TypedValueParser<Value = T> {
    named_from(T::ALL)
}

/// One of `values`, by name; `--help` lists each with its description.
pub fn named_from<T: Named + Send + Sync>(
    values: &'static [T],
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(values.iter().map(|v| {
        let value = PossibleValue::new(v.name());
        match v.describe() {
            "" => value,
            help => value.help(help),
        }
    }))
    .map(|s| serverlab_util::named::parse::<T>(&s).expect("a listed value"))
}

/// The strategies and stores, a line each, for `serve --help`.
pub fn serve_after_help() -> String {
    let mut s = String::from("Strategies (--strategy):\n");
    for &k in StrategyKind::ALL {
        s += &format!("  {:<22} {}\n", k.name(), k.describe());
    }
    s += "\nStores (--store):\n";
    for &k in StoreKind::ALL {
        s += &format!("  {:<22} {}\n", k.name(), k.describe());
    }
    s
}

/// A positive duration in the one grammar every flag uses (`10s`,
/// `500ms`, `250us`, `2m`, `1h`, or plain seconds).
pub fn duration(text: &str) -> Result<Duration, String> {
    serverlab_util::duration::parse(text)
}

/// A server address as a person writes it: `HOST:PORT`, `HOST` alone
/// (the protocol's `default_port`), or `:PORT` (on 127.0.0.1); host names
/// resolve (the first address found). The one grammar
/// (`serverlab_util::addr`) of `serve --addr`, `load --addr` and `check`'s
/// ADDR.
pub fn addr(
    default_port: u16,
) -> impl Fn(&str) -> Result<SocketAddr, String> + Clone + Send + Sync {
    move |text: &str| {
        serverlab_util::addr::parse(text)
            .map(|a| a.or_port(default_port))
            .map_err(|why| {
                format!(
                    "'{text}' is not an address or does not resolve ({why}): write HOST:PORT, \
                     HOST (port {default_port}) or :PORT (on 127.0.0.1), e.g. \
                     127.0.0.1:{default_port}, localhost, :{default_port}"
                )
            })
    }
}

/// [`addr`], or `unix:PATH` for a Unix domain socket: where a load
/// connects.
pub fn endpoint(
    default_port: u16,
) -> impl Fn(&str) -> Result<serverlab_load::Endpoint, String> + Clone + Send + Sync {
    let tcp = addr(default_port);
    move |text: &str| match serverlab_load::Endpoint::unix(text) {
        Some(unix) => unix,
        None => tcp(text).map(serverlab_load::Endpoint::Tcp),
    }
}

/// `serve --addr`: where a server listens, a TCP address or a Unix
/// domain socket's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeAddr {
    /// [`host_port`]'s: the port may be left to the protocol.
    Tcp(HostPort),
    /// `unix:PATH`.
    Unix(std::path::PathBuf),
}

/// `serve --addr`'s value: [`host_port`], or `unix:PATH` for a Unix
/// domain socket (a path a socket can have: 1 to 107 bytes).
pub fn serve_addr(text: &str) -> Result<ServeAddr, String> {
    let Some(path) = text.strip_prefix(serverlab_server::UNIX) else {
        return host_port(text).map(ServeAddr::Tcp);
    };
    let max = serverlab_server::UNIX_PATH_MAX;
    if path.is_empty() || path.len() > max {
        return Err(format!(
            "'{text}': a Unix socket's path is 1 to {max} bytes, this one {}: use a shorter \
             path (a relative one is taken from the working directory)",
            path.len()
        ));
    }
    Ok(ServeAddr::Unix(path.into()))
}

/// An endpoint with the host as it was written (`localhost` of
/// `localhost:6380`): the name a TLS session sends and checks.
#[derive(Debug, Clone)]
pub struct NamedEndpoint {
    pub at: serverlab_load::Endpoint,
    pub host: String,
}

/// [`endpoint`], keeping the host as written.
pub fn named_endpoint(
    default_port: u16,
) -> impl Fn(&str) -> Result<NamedEndpoint, String> + Clone + Send + Sync {
    let at = endpoint(default_port);
    move |text: &str| {
        let host = match text.trim() {
            t if t.starts_with(serverlab_load::endpoint::UNIX) || t.starts_with(':') => "localhost",
            t if t.starts_with('[') => t[1..].split(']').next().unwrap_or_default(),
            t if t.matches(':').count() == 1 => t.split(':').next().unwrap_or_default(),
            t => t,
        };
        Ok(NamedEndpoint {
            at: at(text)?,
            host: host.to_string(),
        })
    }
}

/// [`addr`] where the protocol, so its port, is not known yet (`serve`'s
/// common flags, `check`'s ADDR): the port is left unset when not written.
pub fn host_port(text: &str) -> Result<HostPort, String> {
    if text.starts_with(serverlab_load::endpoint::UNIX) {
        return Err(format!(
            "'{text}' is a Unix socket: `serverlab load` and `serverlab serve` take one as \
             --addr, but this takes a TCP address only (docs/load-http.md, \"Unix sockets\")"
        ));
    }
    serverlab_util::addr::parse(text).map_err(|why| {
        format!(
            "'{text}' is not an address or does not resolve ({why}): write HOST:PORT, HOST \
             (the protocol's port) or :PORT (on 127.0.0.1), e.g. 127.0.0.1:12345, localhost, \
             :12345"
        )
    })
}

/// A size flag's value: bytes, shown in `--help` with the largest binary
/// suffix that divides it (`1MiB`, `64KiB`, `65535`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0;
        for (shift, suffix) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
            if n != 0 && n.is_multiple_of(1 << shift) {
                return write!(f, "{}{suffix}", n >> shift);
            }
        }
        write!(f, "{n}")
    }
}

/// [`size`], as a [`Size`].
pub fn size_flag(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<Size, String> + Clone + Send + Sync {
    let parse = size(min, max);
    move |text: &str| parse(text).map(Size)
}

/// A duration flag's value, shown in `--help` in the grammar it is
/// written in (`10s`, `500ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(pub Duration);

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = self.0;
        if d.subsec_nanos() == 0 {
            write!(f, "{}s", d.as_secs())
        } else if d.subsec_nanos().is_multiple_of(1_000_000) {
            write!(f, "{}ms", d.as_millis())
        } else {
            write!(f, "{}us", d.as_micros())
        }
    }
}

/// [`duration`], as a [`Span`].
pub fn span(text: &str) -> Result<Span, String> {
    duration(text).map(Span)
}

/// A CPU list (`0`, `0-1`, `1,3`) of CPUs this process may use.
pub fn cpus(text: &str) -> Result<serverlab_util::CpuSet, String> {
    text.parse()
}

/// A value size: one size (`64`, `4KiB`), a range `32..4096` (uniform,
/// both ends included) or a weighted list `64:8,1024:1`, each size
/// `min..=max` bytes.
pub fn value_size(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<serverlab_load::keyspace::ValueSize, String> + Clone + Send + Sync {
    let one = size(min, max);
    move |text: &str| {
        serverlab_load::keyspace::ValueSize::parse(text.trim(), |t| {
            one(t).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
        })
    }
}

/// A size parser accepting `min..=max` bytes, written as a plain number or
/// with a binary suffix: `1048576`, `1MiB`, `64KiB`, `16K`, `1G`.
pub fn size(min: u64, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    move |text: &str| {
        let t = text.trim();
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, suffix) = t.split_at(digits);
        let scale: u64 = match suffix.trim() {
            "" | "B" => 1,
            "K" | "KiB" => 1 << 10,
            "M" | "MiB" => 1 << 20,
            "G" | "GiB" => 1 << 30,
            _ => {
                return Err(format!(
                    "'{text}' is not a size (examples: 1000, 64KiB, 1MiB)"
                ))
            }
        };
        let value = num
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(scale))
            .ok_or_else(|| format!("'{text}' is not a size (examples: 1000, 64KiB, 1MiB)"))?;
        if value < min || value > max {
            return Err(format!("'{text}' must be from {min} to {max} bytes"));
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let p = addr(8080);
        assert_eq!(p("127.0.0.1:1").unwrap().to_string(), "127.0.0.1:1");
        assert_eq!(p("127.0.0.1").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(p(":9").unwrap().to_string(), "127.0.0.1:9");
        assert_eq!(p("localhost").unwrap().port(), 8080);
        assert!(p("localhost").unwrap().ip().is_loopback());
        assert_eq!(p("[::1]:7").unwrap().to_string(), "[::1]:7");
        for bad in ["", ":", ":x", "127.0.0.1:99999", "no such host.invalid"] {
            let e = p(bad).unwrap_err();
            assert!(e.contains("HOST:PORT") && e.contains(":PORT"), "{bad}: {e}");
            let e = host_port(bad).unwrap_err();
            assert!(e.contains("HOST:PORT") && e.contains(":PORT"), "{bad}: {e}");
        }
        assert_eq!(
            host_port("127.0.0.2").unwrap().or_port(12345).to_string(),
            "127.0.0.2:12345"
        );
        assert_eq!(
            host_port(":7").unwrap().or_port(12345).to_string(),
            "127.0.0.1:7"
        );
    }

    /// `serve --addr` takes a TCP address as `check` does, or `unix:PATH`
    /// with a path a socket can have; `check` refuses a Unix socket.
    #[test]
    fn serve_addresses() {
        assert_eq!(
            serve_addr(":7"),
            Ok(ServeAddr::Tcp(host_port(":7").unwrap()))
        );
        assert_eq!(
            serve_addr("unix:/tmp/s.sock"),
            Ok(ServeAddr::Unix("/tmp/s.sock".into()))
        );
        let longest = format!("unix:/{}", "x".repeat(106));
        assert!(serve_addr(&longest).is_ok());
        for bad in ["unix:".to_string(), format!("{longest}y")] {
            let e = serve_addr(&bad).unwrap_err();
            assert!(e.contains("1 to 107 bytes"), "{bad}: {e}");
        }
        let e = host_port("unix:/tmp/s.sock").unwrap_err();
        assert!(e.contains("TCP address only"), "{e}");
    }

    /// What `--help` shows as a default reads back as the same value.
    #[test]
    fn defaults_show_as_written() {
        let p = size_flag(0, 1 << 30);
        for (n, shown) in [
            (1 << 20, "1MiB"),
            (64 << 10, "64KiB"),
            (65535, "65535"),
            (0, "0"),
        ] {
            assert_eq!(Size(n).to_string(), shown);
            assert_eq!(p(shown), Ok(Size(n)));
        }
        for (d, shown) in [
            (Duration::from_secs(10), "10s"),
            (Duration::from_millis(1500), "1500ms"),
        ] {
            assert_eq!(Span(d).to_string(), shown);
            assert_eq!(span(shown), Ok(Span(d)));
        }
    }

    #[test]
    fn sizes() {
        let p = size(1, 1 << 30);
        assert_eq!(p("1MiB"), Ok(1 << 20));
        assert_eq!(p("64KiB"), Ok(64 << 10));
        assert_eq!(p("16K"), Ok(16 << 10));
        assert_eq!(p("1000"), Ok(1000));
        assert_eq!(p("7B"), Ok(7));
        assert_eq!(p("1G"), Ok(1 << 30));
        assert!(p("2G").is_err());
        assert!(p("0").is_err());
        assert!(p("1.5M").is_err());
        assert!(p("MiB").is_err());
        assert!(p("-1").is_err());
        assert!(p("99999999999999999999").is_err());
    }
}
