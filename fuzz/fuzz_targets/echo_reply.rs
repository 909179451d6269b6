#![no_main]
//! The echo reply (`proto::echo::reply`): the payload reversed and the
//! request's terminator, whatever the bytes; replying to the reply gives
//! the payload back. Input: [terminator choice, payload…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_proto::{echo, Terminator};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let term = input.pick(&[Terminator::Nul, Terminator::Lf]);
    let payload = input.rest();
    let mut out = b"before".to_vec();
    echo::reply(&mut out, payload, term);
    let reply = &out[6..];
    assert_eq!(reply.len(), payload.len() + 1);
    assert_eq!(reply[payload.len()], term.byte());
    assert!(reply[..payload.len()].iter().eq(payload.iter().rev()));
    let mut back = Vec::new();
    echo::reply(&mut back, &reply[..payload.len()], term);
    assert_eq!(&back[..payload.len()], payload);
});
