//! The ledger's file: every write a load sent and every one the server
//! acknowledged, one line per event, written as it happens (the load
//! writes it, `check --ledger` reads it back: `serverlab_check::ledger`).
//!
//! `S <ms> <key> <value>` when a write is sent, `A <ms> <key> <value>`
//! when its reply acknowledged it; `<ms>` is milliseconds since the Unix
//! epoch, key and value are hex, and a delete's value is `-`.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where a load records its writes; shared by its connections.
pub struct Ledger {
    out: Mutex<BufWriter<File>>,
    path: PathBuf,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ledger({})", self.path.display())
    }
}

impl Ledger {
    pub fn create(path: &Path) -> io::Result<Ledger> {
        Ok(Ledger {
            out: Mutex::new(BufWriter::new(File::create(path)?)),
            path: path.to_path_buf(),
        })
    }

    /// The file it writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A write of `value` (`None`: a delete) to `key` is being sent.
    pub fn sent(&self, key: &[u8], value: Option<&[u8]>) {
        self.line(Event::Sent, key, value);
    }

    /// The server acknowledged the write of `value` to `key`.
    pub fn acked(&self, key: &[u8], value: Option<&[u8]>) {
        self.line(Event::Acked, key, value);
    }

    /// Writes out what is buffered.
    pub fn flush(&self) -> io::Result<()> {
        self.lock().flush()
    }

    fn line(&self, what: Event, key: &[u8], value: Option<&[u8]>) {
        let tag = match what {
            Event::Sent => 'S',
            Event::Acked => 'A',
        };
        let mut s = format!("{tag} {} {} ", now_ms(), hex(key));
        match value {
            Some(v) => s += &hex(v),
            None => s.push('-'),
        }
        s.push('\n');
        // A ledger that cannot be written fails the check later (it is
        // short), which is where it is reported.
        let _ = self.lock().write_all(s.as_bytes());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BufWriter<File>> {
        self.out.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        let _ = self.lock().flush();
    }
}

/// What a line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Sent,
    Acked,
}

/// One line read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub event: Event,
    /// Milliseconds since the Unix epoch.
    pub ms: u64,
    pub key: Vec<u8>,
    /// `None`: a delete.
    pub value: Option<Vec<u8>>,
}

/// Parses one line; `None` if it is not a ledger line.
pub fn parse(line: &str) -> Option<Line> {
    let mut parts = line.split(' ');
    let event = match parts.next()? {
        "S" => Event::Sent,
        "A" => Event::Acked,
        _ => return None,
    };
    let ms = parts.next()?.parse().ok()?;
    let key = unhex(parts.next()?)?;
    let value = match parts.next()? {
        "-" => None,
        v => Some(unhex(v)?),
    };
    if parts.next().is_some() {
        return None;
    }
    Some(Line {
        event,
        ms,
        key,
        value,
    })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back_as_written() {
        let dir = std::env::temp_dir().join(format!("ledger-util-{}", std::process::id()));
        let l = Ledger::create(&dir).unwrap();
        l.sent(b"k 1", Some(b"v\n"));
        l.acked(b"k 1", None);
        l.flush().unwrap();
        let text = std::fs::read_to_string(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        let lines: Vec<Line> = text.lines().map(|x| parse(x).unwrap()).collect();
        assert_eq!(lines[0].event, Event::Sent);
        assert_eq!(lines[0].key, b"k 1");
        assert_eq!(lines[0].value.as_deref(), Some(&b"v\n"[..]));
        assert_eq!(lines[1].event, Event::Acked);
        assert_eq!(lines[1].value, None);
    }

    #[test]
    fn other_lines_are_refused() {
        for bad in [
            "",
            "S",
            "X 1 6b -",
            "S x 6b -",
            "S 1 6 -",
            "S 1 6b zz",
            "S 1 6b - more",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
