//! `check kv|resp ADDR --ledger FILE [--allow-loss DUR]`: a restarted
//! server against the ledger a load wrote (`serverlab_check::ledger`),
//! instead of the conformance cases.

use crate::args;
use anyhow::{bail, Context};
use serverlab_check::ledger;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
#[command(next_help_heading = "After a crash (docs/durability.md)")]
pub struct LedgerArgs {
    /// Check the server's data against this ledger (`load --verify
    /// --ledger FILE`) instead of running the cases: every acknowledged
    /// write must be there
    #[arg(long, value_name = "FILE")]
    ledger: Option<PathBuf>,
    /// With --ledger: acknowledged writes may be missing if acknowledged
    /// this long before the ledger ends (2s for --durability everysec)
    #[arg(long, value_name = "DUR", value_parser = args::duration, requires = "ledger")]
    allow_loss: Option<Duration>,
}

/// How one key's value is read from a server.
pub enum Fetch {
    Kv,
    Resp,
}

impl LedgerArgs {
    /// Runs the ledger check if `--ledger` was given.
    pub fn run(&self, addr: SocketAddr, fetch: Fetch) -> Option<anyhow::Result<ExitCode>> {
        let path = self.ledger.as_ref()?;
        Some(self.check(path, addr, fetch))
    }

    fn check(&self, path: &Path, addr: SocketAddr, fetch: Fetch) -> anyhow::Result<ExitCode> {
        let read = match ledger::read(path) {
            Ok(r) => r,
            Err(e) => bail!("{e}"),
        };
        let stream =
            TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut conn = BufReader::new(stream);
        let verdict = ledger::check(
            &read,
            self.allow_loss.unwrap_or_default(),
            |key| match fetch {
                Fetch::Kv => kv_get(&mut conn, key),
                Fetch::Resp => resp_get(&mut conn, key),
            },
        )
        .with_context(|| format!("reading the server at {addr}"))?;
        println!("ledger {}: {verdict}", path.display());
        Ok(if verdict.passed() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    }
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// `GET /<key>`: the body of a 200, `None` for a 404.
fn kv_get(conn: &mut BufReader<TcpStream>, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
    let mut req = b"GET /".to_vec();
    req.extend_from_slice(key);
    req.extend_from_slice(b" HTTP/1.1\r\nHost: ledger\r\n\r\n");
    conn.get_mut().write_all(&req)?;
    let mut status = String::new();
    conn.read_line(&mut status)?;
    let code = status.split(' ').nth(1).unwrap_or("");
    let mut len = 0;
    loop {
        let mut line = String::new();
        conn.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                len = value.trim().parse().map_err(|_| bad(line.into()))?;
            }
        }
    }
    let mut body = vec![0; len];
    conn.read_exact(&mut body)?;
    match code {
        "200" => Ok(Some(body)),
        "404" => Ok(None),
        _ => Err(bad(format!("GET answered {}", status.trim_end()))),
    }
}

/// `GET key`: a bulk string, `None` for nil.
fn resp_get(conn: &mut BufReader<TcpStream>, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
    let mut req = format!("*2\r\n$3\r\nGET\r\n${}\r\n", key.len()).into_bytes();
    req.extend_from_slice(key);
    req.extend_from_slice(b"\r\n");
    conn.get_mut().write_all(&req)?;
    let mut head = String::new();
    conn.read_line(&mut head)?;
    let head = head.trim_end();
    let len: i64 = head
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| bad(format!("GET answered {head}")))?;
    if len < 0 {
        return Ok(None);
    }
    let mut body = vec![0; len as usize + 2];
    conn.read_exact(&mut body)?;
    body.truncate(len as usize);
    Ok(Some(body))
}
