//! CLIENT REPLY ON|OFF|SKIP, as Redis 7.0 serves it: OFF answers
//! nothing (not even itself) until ON; SKIP answers nothing to itself
//! and to the command after it. What a subscription pushes (the
//! confirmations of SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE, PUNSUBSCRIBE,
//! and the messages) is written all the same, as Redis pushes it.

use super::{pubsub, Args, RespConn};
use serverlab_proto::resp::command::Cmd;
use serverlab_proto::resp::{reply, Name};

/// A connection's replies.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replies {
    #[default]
    On,
    Off,
    /// CLIENT REPLY SKIP ran: the next command's reply goes.
    SkipNext,
    /// This command's reply goes.
    Skip,
}

/// Whether `cmd` is CLIENT REPLY.
pub(crate) fn is_client_reply(cmd: &Cmd, a: &Args) -> bool {
    matches!(cmd, Cmd::Ext(Name::Client)) && a.arg(1).eq_ignore_ascii_case(b"reply")
}

/// CLIENT REPLY mode: `+OK` for ON only.
pub(crate) fn client_reply(replies: &mut Replies, a: &Args, out: &mut Vec<u8>) {
    if a.count() != 3 {
        return reply::error(out, reply::wrong_arity("client|reply").as_bytes());
    }
    let mode = a.arg(2).to_ascii_lowercase();
    match &mode[..] {
        b"on" => {
            *replies = Replies::On;
            reply::ok(out)
        }
        b"off" => *replies = Replies::Off,
        b"skip" if *replies != Replies::Off => *replies = Replies::SkipNext,
        b"skip" => {}
        _ => reply::error(out, reply::SYNTAX.as_bytes()),
    }
}

/// After a command whose reply is `out[from..]`: dropped if the
/// connection's replies are off or skipped (but what a subscription
/// pushes); a SKIP moves on to the next command.
pub(crate) fn after(conn: &mut RespConn, cmd: Option<Name>, out: &mut Vec<u8>, from: usize) {
    let pushes =
        cmd.is_some_and(|n| pubsub::is_pubsub(n) && n != Name::Publish && n != Name::PubSub);
    match conn.replies {
        Replies::On => return,
        Replies::SkipNext => {
            conn.replies = Replies::Skip;
            return;
        }
        Replies::Skip => conn.replies = Replies::On,
        Replies::Off => {}
    }
    if !pushes {
        out.truncate(from);
    }
}
