//! `--metrics ADDR` (of `serve` and of `load`): a registry's metrics for
//! Prometheus, at `GET /metrics` on a listener and thread of their own.
//!
//! Built on `prometheus-client`, the Prometheus project's Rust client:
//! typed metrics (a counter cannot go down, a histogram's buckets are
//! checked), the OpenMetrics text format, and registries that are values,
//! not a process-wide global, so a registry holds exactly what this
//! process exports. What is exported is a collector's: read at scrape
//! time from what the server or the load already keeps (the server's in
//! `serve::metrics::collect`, the load's in `load::metrics`); the process
//! figures come from /proc/self ([`process`]). docs/observing.md lists them.
//!
//! The endpoint is no second served port: one request per connection,
//! `GET /metrics` or an error status; a request must arrive whole within
//! [`READ_TIMEOUT`] and [`MAX_HEAD`] bytes (past them: 408 and 431, the
//! rest of an oversized head read and dropped so the client sees its
//! status, not a reset); at most [`MAX_CONNECTIONS`] are served at once,
//! a new one evicting the connection that has waited longest for its
//! request ([`Slots`]), and closed at once only when all are being
//! answered. One exposition is rendered at a time and reused for
//! [`REUSE`], so scrapes cannot cost the process more than one render
//! per [`REUSE`] ([`Renderer`]).

pub mod encode;
pub mod process;
mod text;

use anyhow::Context;
use prometheus_client::collector::Collector;
use prometheus_client::registry::Registry;
use std::borrow::Cow;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a client may take to send its whole request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a reply may take to be written, whole.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest request head taken (request line and headers).
pub const MAX_HEAD: usize = 8 * 1024;
/// Connections served at once: a new one past them evicts the one waiting
/// longest for its request; none waiting, it is closed at once.
pub const MAX_CONNECTIONS: usize = 16;
/// How long an exposition is served again rather than rendered anew.
pub const REUSE: Duration = Duration::from_millis(100);
/// After refusing an oversized head, how long, and how many bytes, of
/// the rest are read and dropped (so that closing does not reset the
/// connection before the client has read its 431).
const LINGER: Duration = Duration::from_secs(5);
const LINGER_BYTES: usize = 16 << 20;

/// `--metrics`'s value: an address with its port (the endpoint has no
/// default port; port 0 takes a free one).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let a = crate::args::host_port(s)?;
    match a.port {
        Some(_) => Ok(a.or_port(0)),
        None => Err(format!(
            "'{s}' has no port: write HOST:PORT or :PORT, e.g. 127.0.0.1:9464 (port 0 takes a \
             free one)"
        )),
    }
}

/// Listen for scrapes at `addr` (before the server serves, so a taken
/// address stops it at start).
pub fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .map_err(|e| anyhow::anyhow!("cannot listen for --metrics on {addr}: {e}"))
}

/// Serve `GET /metrics` on `listener` from a thread of its own, for as
/// long as the process runs: the process's metrics, and `collector`'s
/// under the constant `labels`.
pub fn start(
    listener: TcpListener,
    labels: Vec<(&'static str, String)>,
    collector: Box<dyn Collector>,
) -> anyhow::Result<()> {
    let renderer = Arc::new(Renderer {
        registries: registries(labels, collector),
        last: Mutex::new(None),
    });
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || accept(&listener, &renderer))
        .context("cannot start the --metrics thread")?;
    Ok(())
}

/// The process's metrics (unlabelled, as every exporter gives them) and
/// the program's own (with its constant labels).
struct Registries {
    process: Registry,
    own: Registry,
}

fn registries(labels: Vec<(&'static str, String)>, collector: Box<dyn Collector>) -> Registries {
    let mut process = Registry::default();
    process.register_collector(Box::new(process::ProcessCollector));
    let constant = labels
        .into_iter()
        .map(|(k, v)| (Cow::Borrowed(k), Cow::Owned(v)));
    let mut own = Registry::with_labels(constant);
    own.register_collector(collector);
    Registries { process, own }
}

/// The exposition in OpenMetrics text.
fn openmetrics(r: &Registries) -> String {
    use prometheus_client::encoding::text::{encode_eof, encode_registry};
    let mut out = String::new();
    encode_registry(&mut out, &r.process).expect("writing to a String");
    encode_registry(&mut out, &r.own).expect("writing to a String");
    encode_eof(&mut out).expect("writing to a String");
    out
}

/// An exposition rendered, in both formats.
struct Rendered {
    at: Instant,
    open: String,
    plain: String,
}

/// Renders the exposition one scrape at a time, and serves a rendering
/// again for [`REUSE`]: scrapes that arrive together, or faster than
/// that, share one render, so however fast clients scrape, the process
/// spends at most one render per [`REUSE`] on them.
struct Renderer {
    registries: Registries,
    last: Mutex<Option<Arc<Rendered>>>,
}

impl Renderer {
    fn exposition(&self) -> Arc<Rendered> {
        // Held while rendering: a scrape arriving meanwhile waits, then
        // takes this rendering.
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = last.as_ref().filter(|r| r.at.elapsed() < REUSE) {
            return r.clone();
        }
        let open = openmetrics(&self.registries);
        let plain = text::prometheus_text(&open);
        let r = Arc::new(Rendered {
            at: Instant::now(),
            open,
            plain,
        });
        *last = Some(r.clone());
        r
    }
}

/// The connections being served, in the order they came: each one's
/// stream (shared with its thread, so it can be closed from here) and
/// whether its request is still awaited.
#[derive(Default)]
struct Slots {
    open: Mutex<Vec<Slot>>,
    next: std::sync::atomic::AtomicU64,
}

struct Slot {
    id: u64,
    stream: Arc<TcpStream>,
    waiting: bool,
}

impl Slots {
    fn lock(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for `stream`: when all are taken, the connection that has
    /// waited longest for its request is closed to make room; None (the
    /// new one is to be closed) when every one is being answered.
    fn admit(&self, stream: &Arc<TcpStream>) -> Option<u64> {
        let mut open = self.lock();
        if open.len() >= MAX_CONNECTIONS {
            let oldest = open.iter().position(|s| s.waiting)?;
            let evicted = open.remove(oldest);
            // Its thread's read ends, and the thread with it.
            let _ = evicted.stream.shutdown(Shutdown::Both);
        }
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        open.push(Slot {
            id,
            stream: stream.clone(),
            waiting: true,
        });
        Some(id)
    }

    /// Connection `id` sent its request: it is answered, not evicted.
    fn answering(&self, id: u64) {
        if let Some(s) = self.lock().iter_mut().find(|s| s.id == id) {
            s.waiting = false;
        }
    }

    fn release(&self, id: u64) {
        self.lock().retain(|s| s.id != id);
    }
}

fn accept(listener: &TcpListener, renderer: &Arc<Renderer>) {
    let slots = Arc::new(Slots::default());
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            // Out of descriptors, or a connection reset before accept:
            // wait a little rather than spin, and go on.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let stream = Arc::new(stream);
        let Some(id) = slots.admit(&stream) else {
            continue;
        };
        let (served, renderer) = (slots.clone(), renderer.clone());
        let spawned = std::thread::Builder::new()
            .name("metrics-conn".into())
            .spawn(move || {
                let _ = answer(&stream, id, &served, &renderer);
                served.release(id);
            });
        if spawned.is_err() {
            slots.release(id);
        }
    }
}

/// What a request head asked for.
#[derive(Debug, PartialEq, Eq)]
pub struct Head {
    pub method: String,
    pub path: String,
    pub openmetrics: bool,
}

/// Parse a request head (up to its blank line); `None` when malformed.
pub fn parse_head(head: &str) -> Option<Head> {
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, target, version) = (first.next()?, first.next()?, first.next()?);
    if !version.starts_with("HTTP/1.") || first.next().is_some() {
        return None;
    }
    let path = target.split('?').next().unwrap_or(target);
    let openmetrics = lines.any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("accept") && v.contains("application/openmetrics-text")
        })
    });
    Some(Head {
        method: method.to_string(),
        path: path.to_string(),
        openmetrics,
    })
}

/// Read a request head within [`READ_TIMEOUT`] and [`MAX_HEAD`] bytes:
/// `Err(status)` when it cannot be had.
fn read_head(mut stream: &TcpStream) -> Result<String, u16> {
    let deadline = Instant::now() + READ_TIMEOUT;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            if end > MAX_HEAD {
                return Err(431);
            }
            return String::from_utf8(buf[..end].to_vec()).map_err(|_| 400);
        }
        if buf.len() > MAX_HEAD {
            return Err(431);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(408);
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Err(400),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(408),
        }
    }
}

/// After an error status written before the request was read whole: no
/// more is written, and what the client still sends is read and dropped
/// (for [`LINGER`], up to [`LINGER_BYTES`]), so that closing does not
/// reset the connection under the client's reading of the status.
fn linger(mut stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let deadline = Instant::now() + LINGER;
    let mut chunk = [0u8; 16 * 1024];
    let mut dropped = 0;
    while dropped < LINGER_BYTES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => dropped += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

fn answer(stream: &TcpStream, id: u64, slots: &Slots, renderer: &Renderer) -> std::io::Result<()> {
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let head = match read_head(stream) {
        Ok(h) => h,
        Err(status) => {
            reply(stream, status, "text/plain", b"", &[])?;
            if status != 408 {
                linger(stream);
            }
            return Ok(());
        }
    };
    slots.answering(id);
    let Some(head) = parse_head(&head) else {
        return reply(stream, 400, "text/plain", b"bad request\n", &[]);
    };
    if head.path != "/metrics" {
        return reply(
            stream,
            404,
            "text/plain",
            b"not found: the metrics are at /metrics\n",
            &[],
        );
    }
    if head.method != "GET" {
        return reply(
            stream,
            405,
            "text/plain",
            b"method not allowed\n",
            &[("Allow", "GET")],
        );
    }
    let r = renderer.exposition();
    if head.openmetrics {
        let kind = "application/openmetrics-text; version=1.0.0; charset=utf-8";
        reply(stream, 200, kind, r.open.as_bytes(), &[])
    } else {
        let kind = "text/plain; version=0.0.4; charset=utf-8";
        reply(stream, 200, kind, r.plain.as_bytes(), &[])
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    }
}

fn reply(
    stream: &TcpStream,
    status: u16,
    content_type: &str,
    body: &[u8],
    extra: &[(&str, &str)],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in extra {
        head += &format!("{k}: {v}\r\n");
    }
    head += "\r\n";
    let by = Instant::now() + WRITE_TIMEOUT;
    write_by(stream, head.as_bytes(), by)?;
    write_by(stream, body, by)
}

/// Writes all of `bytes` by `by`, whatever the pace the client reads at:
/// a timeout on each write alone let a client reading a byte at a time
/// hold its slot (one that is answering is never evicted) for ever.
fn write_by(mut stream: &TcpStream, mut bytes: &[u8], by: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let left = by.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_path_method_and_accept() {
        let h = parse_head("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: application/openmetrics-text;version=1.0.0").unwrap();
        assert_eq!(
            (h.method.as_str(), h.path.as_str(), h.openmetrics),
            ("GET", "/metrics", true)
        );
        let h = parse_head("POST / HTTP/1.0").unwrap();
        assert_eq!(
            (h.method.as_str(), h.path.as_str(), h.openmetrics),
            ("POST", "/", false)
        );
        assert_eq!(parse_head("GET /metrics"), None);
        assert_eq!(parse_head("hello"), None);
    }
}
