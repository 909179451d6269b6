//! Commands of the user's own (`--command 'HSET __key__ f __data__'`,
//! weighted with `--command-weight`), as memtier_benchmark's `--command`:
//! `__key__` is a key drawn as `--key-dist` says, `__data__` a value of
//! `--value-size`. There is no model of what they do, so their replies
//! are checked only for being RESP and for errors (counted by prefix).
//! Also the connection's greeting: `AUTH` and `SELECT` before the run.

use serde::Serialize;
use std::fmt;

const KEY: &[u8] = b"__key__";
const DATA: &[u8] = b"__data__";

/// One command, as given, with its weight.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// As given.
    pub text: String,
    pub weight: u32,
    /// Its name for the results: the command word in capitals
    /// (`HSET`), numbered (`HSET#2`) where two commands share one.
    pub name: String,
    args: Vec<Vec<Piece>>,
}

/// Part of an argument.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(Vec<u8>),
    Key,
    Data,
}

/// What a command writes into its arguments each time it is sent.
pub struct Fill<'a> {
    pub key: &'a [u8],
    pub data: &'a [u8],
}

impl Command {
    /// `text` split into arguments at spaces (quoted with `"` or `'` to
    /// keep spaces in one), weighted `weight`.
    pub fn parse(text: &str, weight: u32) -> Result<Command, String> {
        let words = split(text)?;
        let Some(first) = words.first() else {
            return Err(
                "--command is empty: give a command (example: 'HSET __key__ f __data__')".into(),
            );
        };
        if first.contains("__key__") || first.contains("__data__") {
            return Err(format!(
                "'{text}': the command's name cannot be a placeholder (__key__, __data__)"
            ));
        }
        let args = words.iter().map(|w| pieces(w.as_bytes())).collect();
        Ok(Command {
            text: text.to_string(),
            weight,
            name: first.to_ascii_uppercase(),
            args,
        })
    }

    /// Whether it names a key (`__key__`) or a value (`__data__`).
    pub fn uses(&self) -> (bool, bool) {
        let has = |p: &Piece| self.args.iter().flatten().any(|q| q == p);
        (has(&Piece::Key), has(&Piece::Data))
    }

    /// Its arguments, placeholders filled in, into `args`.
    pub fn build(&self, fill: &Fill<'_>, args: &mut Vec<Vec<u8>>) {
        args.clear();
        for arg in &self.args {
            let mut a = Vec::new();
            for p in arg {
                match p {
                    Piece::Text(t) => a.extend_from_slice(t),
                    Piece::Key => a.extend_from_slice(fill.key),
                    Piece::Data => a.extend_from_slice(fill.data),
                }
            }
            args.push(a);
        }
    }
}

/// Names commands that share a command word apart: the second `HSET` is
/// `HSET#2`.
pub fn name_apart(commands: &mut [Command]) {
    let mut seen: Vec<String> = Vec::new();
    for c in commands.iter_mut() {
        let n = seen.iter().filter(|s| **s == c.name).count();
        seen.push(c.name.clone());
        if n > 0 {
            c.name = format!("{}#{}", c.name, n + 1);
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// In the configuration: the command as given, its weight and its name.
impl Serialize for Command {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("command", &self.text)?;
        m.serialize_entry("weight", &self.weight)?;
        m.serialize_entry("name", &self.name)?;
        m.end()
    }
}

/// An argument's literal text and placeholders.
fn pieces(word: &[u8]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = Vec::new();
    let mut i = 0;
    while i < word.len() {
        let rest = &word[i..];
        let hole = if rest.starts_with(KEY) {
            Some((Piece::Key, KEY.len()))
        } else if rest.starts_with(DATA) {
            Some((Piece::Data, DATA.len()))
        } else {
            None
        };
        match hole {
            Some((p, len)) => {
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(p);
                i += len;
            }
            None => {
                text.push(word[i]);
                i += 1;
            }
        }
    }
    if !text.is_empty() || out.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

/// Words split at whitespace; `"…"` and `'…'` keep what they quote in one.
fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("'{text}': a quote is not closed"));
    }
    if started {
        words.push(word);
    }
    Ok(words)
}

/// `--auth [USER:]PASSWORD`: sent as `AUTH` on every connection before
/// the run (Redis 6's ACL form with a user).
#[derive(Clone, PartialEq)]
pub struct Auth {
    pub user: Option<String>,
    pub password: String,
}

impl Auth {
    /// `PASSWORD`, or `USER:PASSWORD` (the first colon splits them).
    pub fn parse(s: &str) -> Result<Auth, String> {
        if s.is_empty() {
            return Err("--auth is empty: give PASSWORD or USER:PASSWORD".into());
        }
        Ok(match s.split_once(':') {
            Some((user, password)) if !user.is_empty() => Auth {
                user: Some(user.into()),
                password: password.into(),
            },
            _ => Auth {
                user: None,
                password: s.into(),
            },
        })
    }
}

/// Never shown: a password in a log or a result file is a leak.
impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.user {
            Some(u) => write!(f, "Auth({u}:***)"),
            None => f.write_str("Auth(***)"),
        }
    }
}

/// In the configuration: who, never the password.
impl Serialize for Auth {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.user {
            Some(u) => s.serialize_str(&format!("{u}:***")),
            None => s.serialize_str("***"),
        }
    }
}

/// What every connection says before the run (`AUTH`, `SELECT`), on the
/// wire, and the command each reply answers.
#[derive(Debug, Clone, Default)]
pub struct Greeting {
    wire: Vec<u8>,
    said: Vec<&'static str>,
}

/// The most a greeting's replies may hold: each is `+OK` or an error line.
const GREETING_REPLIES: usize = 64 * 1024;

impl Greeting {
    pub fn new(auth: Option<&Auth>, db: Option<u32>) -> Greeting {
        let mut g = Greeting::default();
        for c in greeting(auth, db) {
            let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
            serverlab_proto::resp::client::command(&mut g.wire, &refs);
            g.said.push(if c[0] == b"AUTH" { "AUTH" } else { "SELECT" });
        }
        g
    }

    pub fn is_empty(&self) -> bool {
        self.said.is_empty()
    }

    /// Its commands, on the wire, and how many.
    pub fn wire(&self) -> (&[u8], usize) {
        (&self.wire, self.said.len())
    }

    /// Every reply must be `+OK`; else what the server said to which.
    pub fn check(&self, replies: &[Vec<u8>]) -> Result<(), String> {
        for (what, r) in self.said.iter().zip(replies) {
            if r.as_slice() != b"+OK\r\n" {
                let shown = String::from_utf8_lossy(r);
                return Err(format!(
                    "{what} before the run: the server answered {:?}",
                    shown.trim_end()
                ));
            }
        }
        Ok(())
    }

    /// Say it on `stream` (blocking, within its timeouts) and read the
    /// replies: every one must be `+OK`.
    pub fn send(&self, stream: &mut dyn crate::driver::Blocking) -> std::io::Result<()> {
        use std::io::{Error, ErrorKind};
        if self.is_empty() {
            return Ok(());
        }
        stream.write_all(&self.wire)?;
        let (mut buf, mut at, mut replies) = (Vec::new(), 0, Vec::new());
        let mut chunk = [0u8; 4096];
        while replies.len() < self.said.len() {
            match serverlab_proto::resp::client::skip(&buf[at..]) {
                Ok(Some(len)) => {
                    replies.push(buf[at..at + len].to_vec());
                    at += len;
                }
                Ok(None) if buf.len() < GREETING_REPLIES => match stream.read(&mut chunk)? {
                    0 => {
                        let e = "the server closed the connection before answering AUTH or SELECT";
                        return Err(Error::new(ErrorKind::UnexpectedEof, e));
                    }
                    n => buf.extend_from_slice(&chunk[..n]),
                },
                Ok(None) => return Err(Error::other("replies to AUTH or SELECT too long")),
                Err(e) => {
                    return Err(Error::new(
                        ErrorKind::InvalidData,
                        super::not_resp(&e, &buf),
                    ))
                }
            }
        }
        self.check(&replies).map_err(Error::other)
    }
}

/// The commands every connection sends before the run: `AUTH`, then
/// `SELECT`, as each is asked for.
pub fn greeting(auth: Option<&Auth>, db: Option<u32>) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    if let Some(a) = auth {
        let mut c = vec![b"AUTH".to_vec()];
        c.extend(a.user.iter().map(|u| u.as_bytes().to_vec()));
        c.push(a.password.as_bytes().to_vec());
        out.push(c);
    }
    if let Some(db) = db {
        out.push(vec![b"SELECT".to_vec(), db.to_string().into_bytes()]);
    }
    out
}

/// An error reply's prefix, as Redis's error codes go: its first word
/// (`ERR`, `WRONGTYPE`, `NOAUTH`), at most 32 bytes.
pub fn error_prefix(reply: &[u8]) -> std::borrow::Cow<'_, str> {
    let body = reply.strip_prefix(b"-").unwrap_or(reply);
    let end = body
        .iter()
        .position(|&b| b == b' ' || b == b'\r' || b == b'\n')
        .unwrap_or(body.len())
        .min(32);
    let word = String::from_utf8_lossy(&body[..end]);
    if word.is_empty() {
        "(empty)".into()
    } else {
        word
    }
}

/// The most distinct prefixes a client counts; the rest count as
/// [`OTHER_PREFIXES`] (the server chooses the words: a server that made
/// up a new one per reply would otherwise grow the load's memory, and
/// its results, without bound).
pub const MAX_PREFIXES: usize = 32;
/// Where prefixes past [`MAX_PREFIXES`] are counted.
pub const OTHER_PREFIXES: &str = "(other)";

/// Count error reply `reply` under its prefix in `counts`.
pub fn count_prefix(counts: &mut std::collections::BTreeMap<String, u64>, reply: &[u8]) {
    let word = error_prefix(reply);
    if let Some(n) = counts.get_mut(&*word) {
        *n += 1;
        return;
    }
    let key = if counts.len() < MAX_PREFIXES {
        word.into_owned()
    } else {
        OTHER_PREFIXES.to_string()
    };
    *counts.entry(key).or_insert(0) += 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(c: &Command, key: &str, data: &str) -> Vec<String> {
        let mut args = Vec::new();
        let fill = Fill {
            key: key.as_bytes(),
            data: data.as_bytes(),
        };
        c.build(&fill, &mut args);
        args.iter()
            .map(|a| String::from_utf8(a.clone()).unwrap())
            .collect()
    }

    #[test]
    fn placeholders_are_filled_whole_or_within_an_argument() {
        let c = Command::parse("hset __key__ f __data__", 3).unwrap();
        assert_eq!(c.name, "HSET");
        assert_eq!(c.uses(), (true, true));
        assert_eq!(built(&c, "k1", "v"), ["hset", "k1", "f", "v"]);
        let c = Command::parse("SET user:__key__:x \"a b\" ''", 1).unwrap();
        assert_eq!(built(&c, "7", "-"), ["SET", "user:7:x", "a b", ""]);
        assert_eq!(c.uses(), (true, false));
        assert!(Command::parse("  ", 1).is_err());
        assert!(Command::parse("SET 'open", 1).is_err());
        assert!(Command::parse("__key__ x", 1).is_err());
    }

    #[test]
    fn commands_sharing_a_name_are_numbered() {
        let mut cs: Vec<Command> = ["GET __key__", "HSET __key__ a 1", "get x"]
            .iter()
            .map(|t| Command::parse(t, 1).unwrap())
            .collect();
        name_apart(&mut cs);
        let names: Vec<&str> = cs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["GET", "HSET", "GET#2"]);
    }

    #[test]
    fn auth_hides_its_password_and_greets() {
        let a = Auth::parse("alice:s3:cret").unwrap();
        assert_eq!(
            (a.user.as_deref(), a.password.as_str()),
            (Some("alice"), "s3:cret")
        );
        assert_eq!(format!("{a:?}"), "Auth(alice:***)");
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"alice:***\"");
        let p = Auth::parse("pw").unwrap();
        assert_eq!(p.user, None);
        assert_eq!(Auth::parse(":pw").unwrap().password, ":pw");
        assert!(Auth::parse("").is_err());
        let g = greeting(Some(&a), Some(3));
        assert_eq!(
            g[0],
            [b"AUTH".to_vec(), b"alice".to_vec(), b"s3:cret".to_vec()]
        );
        assert_eq!(g[1], [b"SELECT".to_vec(), b"3".to_vec()]);
        assert!(greeting(None, None).is_empty());
        let g = Greeting::new(Some(&p), Some(2));
        assert_eq!(g.wire().1, 2);
        assert_eq!(g.check(&[b"+OK\r\n".to_vec(), b"+OK\r\n".to_vec()]), Ok(()));
        let no = g.check(&[b"-WRONGPASS invalid\r\n".to_vec()]).unwrap_err();
        assert!(
            no.contains("AUTH") && no.contains("WRONGPASS") && !no.contains("pw"),
            "{no}"
        );
    }

    #[test]
    fn prefixes_past_the_cap_count_as_other() {
        let mut counts = std::collections::BTreeMap::new();
        for i in 0..1000 {
            count_prefix(&mut counts, format!("-E{i} made up\r\n").as_bytes());
        }
        count_prefix(&mut counts, b"-E3 again\r\n");
        assert_eq!(counts.len(), MAX_PREFIXES + 1);
        assert_eq!(counts["E3"], 2);
        assert_eq!(counts[OTHER_PREFIXES], 1000 - MAX_PREFIXES as u64);
    }

    #[test]
    fn error_prefixes_are_the_first_word() {
        assert_eq!(error_prefix(b"-ERR unknown command\r\n"), "ERR");
        assert_eq!(error_prefix(b"-WRONGTYPE Operation\r\n"), "WRONGTYPE");
        assert_eq!(error_prefix(b"-\r\n"), "(empty)");
    }
}
