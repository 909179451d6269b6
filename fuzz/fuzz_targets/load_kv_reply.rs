#![no_main]
//! The load client's kv response framing (`load::kv::reply::next_response`):
//! interim 1xx responses skipped, the body taken by Content-Length. Any
//! bytes frame without panic; a response found in the first bytes is the
//! one found in all of them, and none is found before it is whole.
//! Input: [method, cut seed, bytes…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_load::kv::reply::next_response;
use serverlab_proto::kv::Method;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let method = input.pick(&Method::ALL);
    let mut plan = Plan::new(input.byte());
    let bytes = input.rest();
    let whole = next_response(bytes, method);
    let found = match &whole {
        Ok(Some(r)) => {
            assert!(r.len <= bytes.len());
            assert!(bytes[..r.len].ends_with(r.body));
            assert_eq!(r.body.len(), r.head.body_len);
            assert!(
                !(100..200).contains(&r.head.status),
                "an interim response returned"
            );
            Some((r.len, r.head, r.body.to_vec()))
        }
        _ => None,
    };
    let mut cut = 0;
    while cut < bytes.len() {
        let part = next_response(&bytes[..cut], method);
        match (part, &found) {
            (Ok(None), Some((len, _, _))) => {
                assert!(cut < *len, "whole at {len}, yet not at {cut}")
            }
            (Ok(None), None) => {}
            (Ok(Some(r)), Some(f)) => assert_eq!((r.len, r.head, r.body.to_vec()), *f),
            (Ok(Some(r)), None) => panic!(
                "found in {cut} bytes, not in all {}: {:?}",
                bytes.len(),
                r.head
            ),
            (Err(e), _) => assert!(whole.is_err(), "{e} in {cut} bytes, not in all"),
        }
        cut += plan.read_len(bytes.len() - cut);
    }
});
