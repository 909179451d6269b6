//! Reference models: what a correct server answers to a whole stream, as
//! the wire contract (docs/protocols/) says, to check a session's [`Transcript`] against.
//!
//! A model frames the *whole* stream at once (the session saw it in
//! pieces), keeps the protocol's state in plain collections (the service
//! keeps it in a concurrent store), and checks each reply. [`check`] walks
//! the stream and the transcript together: every request the protocol
//! frames must be applied, in order, with the right reply, up to the
//! first request that closes the connection or the point where the
//! protocol refuses the input or waits for more.

pub mod board;
pub mod bucket;
pub mod echo;
pub mod kv;
pub mod line;
pub mod resp;
pub mod resp_wire;

use crate::session::{Applied, Event, Frame, Transcript};
use serverlab_service::After;

/// What the protocol finds at the front of the unread stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// A whole request of this many bytes.
    Request(usize),
    /// Not a whole request yet: a server waits for more (and at the end of
    /// the stream closes without a reply).
    Wait,
    /// Input the server refuses: it answers (or not) and closes.
    Refuse,
}

pub trait Model {
    /// Frame the front of `rest`.
    fn next(&mut self, rest: &[u8]) -> Next;

    /// Check the reply to the request just framed and apply the request to
    /// the model. Returns whether the connection closes after it.
    fn answer(&mut self, applied: &Applied) -> bool;

    /// Whether `request` asks for nothing and is answered with nothing
    /// (RESP's `*0` and blank lines); every other request gets a reply.
    fn silent(&self, _request: &[u8]) -> bool {
        false
    }

    /// Check the event that refused the input (the transcript's last),
    /// given the unconsumed bytes the session had read when it did.
    fn refused(&self, refusal: Option<&Event>, seen: &[u8]);
}

/// Check a transcript against a fresh model of its protocol.
pub fn check<M: Model>(model: &mut M, t: &Transcript, stream: &[u8]) {
    // A stopped server reads only what had arrived.
    let stream = &stream[..t.arrived];
    let mut applied = t.applied();
    let mut at = 0;
    loop {
        match model.next(&stream[at..]) {
            Next::Request(used) => {
                let request = &stream[at..at + used];
                let Some(a) = applied.next() else {
                    // Only a timeout ends a session before it has read
                    // every request (the driver feeds all, then EOF).
                    assert!(
                        t.timed_out(),
                        "never applied, framed by the protocol: {request:?}"
                    );
                    return;
                };
                assert_eq!(
                    a.request, request,
                    "applied other bytes than the protocol frames"
                );
                assert!(
                    !a.reply.is_empty() || model.silent(request),
                    "a request got no reply: {request:?}"
                );
                at += used;
                let closes = model.answer(&a);
                assert_eq!(
                    closes,
                    a.after != After::Continue,
                    "after {request:?} the service said {:?}",
                    a.after
                );
                if closes {
                    break;
                }
            }
            Next::Wait => {
                assert!(
                    t.refusal().is_none(),
                    "refused a stream that is only incomplete: {:?}",
                    t.refusal()
                );
                break;
            }
            Next::Refuse => {
                if !t.timed_out() {
                    model.refused(t.refusal(), &stream[at..t.fed]);
                }
                break;
            }
        }
    }
    assert!(
        applied.next().is_none(),
        "applied a request the protocol does not frame"
    );
}

/// The reply of a refusal that framing made (`Frame::Close`), the only
/// way these protocols refuse input (never by overflow or otherwise).
pub fn framing_refusal(refusal: Option<&Event>) -> &[u8] {
    match refusal {
        Some(Event::Framed {
            frame: Frame::Close,
            out,
        }) => out,
        other => panic!("input must be refused by framing, not {other:?}"),
    }
}
