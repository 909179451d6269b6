#![no_main]
//! Finding and parsing kv request heads (`proto::kv::scan`): never
//! panics; an incomplete head stays within `max_head` bytes and a complete
//! one within its limits; and the scan resumed over a head arriving in
//! pieces (as a server runs it) agrees with one scan of the whole.
//! Input: [limits, split seed, bytes…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_fuzz::model::kv::{limits, missable};
use serverlab_proto::kv::{scan, HeadScan};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let limits = limits(input.byte());
    let mut plan = Plan::new(input.byte());
    let buf = input.rest();

    let whole = scan(buf, &mut 0, &limits);
    match &whole {
        HeadScan::Incomplete => assert!(
            buf.len() < limits.max_head(),
            "{} bytes of head, and waiting",
            buf.len()
        ),
        HeadScan::Complete { head, len } => {
            assert!(*len <= buf.len() && *len <= limits.max_head());
            assert!(head.content_length <= limits.max_value);
        }
        HeadScan::Reject(_) => {}
    }

    let (mut scanned, mut end) = (0, 0);
    loop {
        let got = scan(&buf[..end], &mut scanned, &limits);
        assert!(scanned <= end, "scanned {scanned} of {end} bytes");
        match (&got, &whole) {
            (HeadScan::Incomplete, _) if end < buf.len() => {}
            (HeadScan::Incomplete, HeadScan::Incomplete) => return,
            (HeadScan::Incomplete, HeadScan::Reject(r)) => {
                assert!(missable(buf, &limits, r), "pieces: waiting; whole: {r:?}");
                return;
            }
            (HeadScan::Complete { .. }, _) => {
                assert_eq!(got, whole, "pieces and whole disagree");
                return;
            }
            (HeadScan::Reject(_), HeadScan::Reject(_)) => return,
            _ => panic!("pieces up to {end}: {got:?}; whole: {whole:?}"),
        }
        end += plan.read_len(buf.len() - end);
    }
});
