//! Terminator framing as a service sees it, shared by board and echo.

use crate::Frame;
use serverlab_proto::line::{self, Framed};
use serverlab_proto::Terminator;

/// Frame at NUL/LF with a payload limit; `oversize` is called when the
/// peer exceeded it (the connection then closes without a reply).
pub(crate) fn frame(input: &[u8], max: usize, oversize: impl FnOnce()) -> Frame {
    match line::frame(input, max) {
        Framed::Incomplete => Frame::Incomplete,
        Framed::Frame { used, .. } => Frame::Ready(used),
        Framed::Oversize => {
            oversize();
            Frame::Close
        }
    }
}

/// Split a framed request into its payload and terminator.
pub(crate) fn split(request: &[u8]) -> (&[u8], Terminator) {
    match request.split_last() {
        Some((0, payload)) => (payload, Terminator::Nul),
        Some((_, payload)) => (
            payload.strip_suffix(b"\r").unwrap_or(payload),
            Terminator::Lf,
        ),
        None => (request, Terminator::Lf),
    }
}
