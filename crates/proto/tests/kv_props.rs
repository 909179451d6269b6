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

    /// Refusing a head before it ends is sound: whatever a prefix is
    /// refused for, the whole head is refused too (never accepted).
    #[test]
    fn a_refused_prefix_is_a_refused_head(
        key in proptest::collection::vec(any::<u8>(), 1..20),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut wire = Vec::new();
        encode_request(&mut wire, Method::Get, &key, None, "h", false);
        for (at, byte) in edits {
            let i = at.index(wire.len());
            wire[i] = byte;
        }
        let limits = limits();
        let end = cut.index(wire.len() + 1);
        if let HeadScan::Reject(early) = scan(&wire[..end], &mut 0, &limits) {
            let whole = scan(&wire, &mut 0, &limits);
            prop_assert!(
                matches!(whole, HeadScan::Reject(_)),
                "prefix refused ({:?}) but the whole is {:?}", early, whole
            );
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
