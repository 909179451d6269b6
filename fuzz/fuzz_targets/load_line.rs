#![no_main]
//! The load client's line-reply framing (`load::driver::take_line`, for
//! board, bucket and echo replies): server bytes arriving in any pieces
//! are framed into the same replies as when they arrive at once, each
//! reply the bytes up to a NUL or LF. Input: [split seed, bytes…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_load::driver::take_line;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut plan = Plan::new(input.byte());
    let stream = input.rest();
    // Every reply, as a client that got the stream at once frames it.
    let mut want: Vec<&[u8]> = stream.split(|&b| b == 0 || b == b'\n').collect();
    let unterminated = want.pop().expect("split yields at least one piece");

    let mut buf = Vec::new();
    let mut got = Vec::new();
    let mut fed = 0;
    while fed < stream.len() {
        let n = plan.read_len(stream.len() - fed);
        buf.extend_from_slice(&stream[fed..fed + n]);
        fed += n;
        while let Some((reply, used)) = take_line(&buf).expect("within the line limit") {
            assert_eq!(used, reply.len() + 1);
            got.push(reply.to_vec());
            buf.drain(..used);
        }
    }
    assert_eq!(got, want);
    assert_eq!(buf, unterminated);
});
