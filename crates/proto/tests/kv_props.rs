//! Property tests for kv: the head scanner never panics, never buffers
//! past its limits, and gives the same answer however the bytes arrive.

use proptest::prelude::*;
use serverlab_proto::kv::client::encode_request;
use serverlab_proto::kv::{scan, HeadScan, Limits, Method, Target};

fn limits() -> Limits {
    Limits {
        max_uri: 64,
        max_headers: 128,
        max_value: 256,
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic_and_stay_bounded(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let limits = limits();
        let mut scanned = 0;
        match scan(&bytes, &mut scanned, &limits) {
            HeadScan::Incomplete => {
                prop_assert!(bytes.len() <= limits.max_head());
                prop_assert!(scanned <= bytes.len());
            }
            HeadScan::Complete { len, head } => {
                prop_assert!(len <= bytes.len());
                prop_assert!(head.content_length <= limits.max_value);
            }
            HeadScan::Reject(_) => {}
        }
    }

    #[test]
    fn byte_by_byte_equals_all_at_once(
        key in proptest::collection::vec(any::<u8>(), 1..20),
        body in proptest::collection::vec(any::<u8>(), 0..40),
        put in any::<bool>(),
        close in any::<bool>(),
    ) {
        let method = if put { Method::Put } else { Method::Get };
        let mut wire = Vec::new();
        encode_request(&mut wire, method, &key, put.then_some(&body[..]), "h", close);
        let limits = limits();
        let whole = scan(&wire, &mut 0, &limits);
        let HeadScan::Complete { head, len } = &whole else {
            return Err(TestCaseError::fail(format!("{whole:?}")));
        };
        prop_assert_eq!(&head.target, &Target::Key(key.clone()));
        prop_assert_eq!(head.keep_alive, !close);
        prop_assert_eq!(len + head.content_length, wire.len());
        let mut scanned = 0;
        for end in 0..*len {
            prop_assert_eq!(scan(&wire[..end], &mut scanned, &limits), HeadScan::Incomplete);
        }
        prop_assert_eq!(scan(&wire[..*len], &mut scanned, &limits), whole);
    }
}
