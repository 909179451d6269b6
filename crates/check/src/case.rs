//! Conformance cases: a named rule, the exchanges that test it, and what
//! each exchange sent, expected and got.

use crate::wire::{show, Conn, Got};
use serde::Serialize;
use std::net::SocketAddr;
use std::time::Duration;

/// Whose rule a case tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The original assignment's: every server for it must pass.
    Assignment,
    /// serverlab's own choice beyond the assignment (LF framing, the EXIT
    /// policy, limits, kv's reserved paths): skipped by `--assignment`.
    Serverlab,
}

/// One named rule and how to test it against a server.
pub struct Case<P> {
    /// The name `--only` and `--skip` use: lower-case words and dashes.
    pub name: &'static str,
    pub scope: Scope,
    /// The rule, in one line.
    pub checks: &'static str,
    /// Why a server must keep it.
    pub why: &'static str,
    /// A flag the case needs before it runs (board's EXIT stops the
    /// server: `--include-exit`).
    pub opt_in: Option<&'static str>,
    pub run: fn(&mut Ctx<P>) -> Result<(), Fail>,
}

impl<P> Case<P> {
    pub fn new(
        name: &'static str,
        scope: Scope,
        checks: &'static str,
        why: &'static str,
        run: fn(&mut Ctx<P>) -> Result<(), Fail>,
    ) -> Case<P> {
        Case {
            name,
            scope,
            checks,
            why,
            opt_in: None,
            run,
        }
    }

    /// The case runs only when `flag` was given.
    pub fn opt_in(self, flag: &'static str) -> Case<P> {
        Case {
            opt_in: Some(flag),
            ..self
        }
    }
}

/// Why a case failed, in one sentence; or why it does not apply to this
/// server after all (`skip`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    pub why: String,
    /// The server made a choice the protocol leaves to it (a larger
    /// limit): the case is skipped, with `why`, not failed.
    pub skip: bool,
}

impl Fail {
    pub fn new(why: impl Into<String>) -> Fail {
        Fail {
            why: why.into(),
            skip: false,
        }
    }

    /// The case does not apply to this server, for `why`.
    pub fn skip(why: impl Into<String>) -> Fail {
        Fail {
            why: why.into(),
            skip: true,
        }
    }
}

/// One request and its reply, as the transcript shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exchange {
    /// The bytes sent, escaped (`"POST@t#m\0"`), or what was done.
    pub sent: String,
    pub expected: String,
    pub got: String,
    pub ok: bool,
}

/// What running a case found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    pub name: &'static str,
    pub scope: Scope,
    pub checks: &'static str,
    pub why: &'static str,
    pub status: Status,
    /// Why it failed, or why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub exchanges: Vec<Exchange>,
    pub seconds: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    Failed,
    Skipped,
}

/// What a case runs with: the server, the protocol's settings, fresh
/// names, and the transcript so far.
pub struct Ctx<'a, P> {
    pub addr: SocketAddr,
    pub proto: &'a P,
    pub timeout: Duration,
    /// A prefix no earlier run used, for topics and keys.
    pub nonce: &'a str,
    pub case: &'static str,
    transcript: Vec<Exchange>,
}

impl<'a, P> Ctx<'a, P> {
    pub fn new(
        addr: SocketAddr,
        proto: &'a P,
        timeout: Duration,
        nonce: &'a str,
        case: &'static str,
    ) -> Self {
        Ctx {
            addr,
            proto,
            timeout,
            nonce,
            case,
            transcript: Vec::new(),
        }
    }

    /// A fresh connection.
    pub fn conn(&mut self) -> Result<Conn, Fail> {
        Conn::open(self.addr, self.timeout).map_err(|e| {
            self.note("connect", "a connection", &format!("error: {e}"), false);
            Fail::new(format!("cannot connect: {e}"))
        })
    }

    /// A name unique to this run and case: `ck1a2b3c-post-first-id-x`.
    pub fn name(&self, suffix: &str) -> String {
        format!("{}-{}-{suffix}", self.nonce, self.case)
    }

    /// Record an exchange.
    pub fn note(&mut self, sent: &str, expected: &str, got: &str, ok: bool) {
        self.transcript.push(Exchange {
            sent: sent.to_string(),
            expected: expected.to_string(),
            got: got.to_string(),
            ok,
        });
    }

    /// Record an exchange of bytes and fail the case unless `ok`.
    pub fn expect(&mut self, sent: &[u8], expected: &str, got: &Got, ok: bool) -> Result<(), Fail> {
        self.note(&show(sent), expected, &got.show(), ok);
        if ok {
            Ok(())
        } else {
            Err(Fail::new(format!(
                "expected {expected}, got {}",
                got.show()
            )))
        }
    }

    /// Fail with `why` unless `ok`, recording it as a check of its own.
    pub fn ensure(
        &mut self,
        ok: bool,
        what: &str,
        why: impl FnOnce() -> String,
    ) -> Result<(), Fail> {
        if ok {
            return Ok(());
        }
        let why = why();
        self.note(what, "(see the rule)", &why, false);
        Err(Fail::new(why))
    }

    /// The server must close `conn` (after anything it still sends)
    /// within the timeout; `after` names what should have closed it.
    pub fn expect_close(&mut self, conn: &mut Conn, after: &str) -> Result<(), Fail> {
        let closed = conn.closes();
        let got = if closed { "closed" } else { "still open" };
        self.note("(wait)", "the server closes the connection", got, closed);
        if closed {
            Ok(())
        } else {
            Err(Fail::new(format!(
                "the connection stayed open after {after}"
            )))
        }
    }

    pub fn into_transcript(self) -> Vec<Exchange> {
        self.transcript
    }
}

/// The pause between the bytes of a request sent one byte per write.
pub fn pause() {
    std::thread::sleep(std::time::Duration::from_micros(200));
}
