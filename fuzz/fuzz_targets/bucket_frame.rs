#![no_main]
//! Bucket line framing (`proto::bucket::frame`) against the rule as
//! the wire contract (docs/protocols/) words it (LF ends a line, a CR before it is dropped, a
//! payload over the limit is refused as soon as it must be), and bounded:
//! it never looks past `max + 2` bytes. Input: [max, buffer…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_fuzz::model::{bucket, Next};
use serverlab_proto::bucket::{frame, Line};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let max = input.limit();
    let buf = input.rest();
    let got = frame(buf, max);
    let window = &buf[..buf.len().min(max.saturating_add(2))];
    assert_eq!(got, frame(window, max), "looked past max + 2 bytes");
    let want = match bucket::frame(buf, max) {
        Next::Request(used) => {
            let line = &buf[..used - 1];
            let len = line.strip_suffix(b"\r").unwrap_or(line).len();
            Line::Ready { len, used }
        }
        Next::Wait => Line::Incomplete,
        Next::Refuse => Line::TooLong,
    };
    assert_eq!(got, want);
});
