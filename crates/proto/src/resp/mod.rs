//! RESP2, Redis's protocol (section 5 of the wire contract,
//! docs/protocols/resp.md), without I/O: framing
//! requests (arrays of bulk strings, and inline commands) incrementally
//! and without copying ([`frame`]), every command served and its facts
//! ([`name`]), parsing a framed request into a typed
//! command ([`command`]), encoding replies straight into an output buffer
//! ([`reply`]), and the client side: encoding commands and reading replies
//! ([`client`]).

pub mod client;
pub mod command;
pub mod frame;
pub mod glob;
mod inline;
pub mod name;
pub mod number;
pub mod reply;

pub use command::{Cmd, ConnCmd, End, ListCmd, Rejection, ServerCmd, SetCond, StrCmd};
pub use frame::{Framed, Framer, ProtocolError, Span};
pub use name::Name;

/// As every subcommand spells it.
pub const NAME: &str = "resp";
/// One line for lists of protocols.
pub const DESCRIBE: &str =
    "Redis's protocol, RESP2: strings, lists, sets, hashes, sorted sets, deadlines, transactions";
/// Where a RESP server listens unless told otherwise (Redis's port).
pub const DEFAULT_PORT: u16 = 6379;

/// The limits every RESP server enforces (`--max-bulk`, `--max-args`,
/// `--max-inline`, `--max-query`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest bulk string in a request: 8 MiB (Redis's
    /// `proto-max-bulk-len` is 512 MB; docs/protocols/resp.md says why
    /// not here).
    pub max_bulk: usize,
    /// Most elements in a request's array.
    pub max_args: usize,
    /// Longest inline command line (without its CR LF).
    pub max_inline: usize,
    /// Most unconsumed input a connection may hold (Redis's
    /// `client-query-buffer-limit`, 1 GiB there): 16 MiB, room for a SET
    /// of a value at `max_bulk`'s default with room to spare, and what
    /// bounds a connection's input (docs/protocols/resp.md).
    pub max_query: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk: 8 << 20,
            max_args: 1 << 20,
            max_inline: 64 << 10,
            max_query: 16 << 20,
        }
    }
}
