#![no_main]
//! Board and echo framing (`proto::line::frame`) against the framing rule
//! as the wire contract (docs/protocols/) words it, and bounded: it never looks past `max + 1`
//! bytes. Input: [max, buffer…] (max 255 stands for "no limit").

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_fuzz::model::{line, Next};
use serverlab_proto::line::{frame, Framed};
use serverlab_proto::Terminator;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let max = input.limit();
    let buf = input.rest();
    let got = frame(buf, max);
    let window = &buf[..buf.len().min(max.saturating_add(1))];
    assert_eq!(got, frame(window, max), "looked past max + 1 bytes");
    let want = match line::next(buf, max) {
        Next::Request(used) => {
            let (payload, term) = line::split(&buf[..used]);
            let term = if term == 0 {
                Terminator::Nul
            } else {
                Terminator::Lf
            };
            Framed::Frame {
                len: payload.len(),
                used,
                term,
            }
        }
        Next::Wait => Framed::Incomplete,
        Next::Refuse => Framed::Oversize,
    };
    assert_eq!(got, want);
});
