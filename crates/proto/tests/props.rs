//! Property tests: the parsers never panic, and encode/parse round-trip.

use proptest::prelude::*;
use serverlab_proto::board::{valid_message, valid_topic, Request};
use serverlab_proto::line::{frame, Framed};
use serverlab_proto::Terminator;

fn topic() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..12).prop_filter("valid topic", |t| valid_topic(t))
}

fn message() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 1..40).prop_filter("valid message", |m| valid_message(m))
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), max in 0usize..64) {
        let _ = Request::parse(&bytes);
        match frame(&bytes, max) {
            Framed::Frame { len, used, .. } => {
                prop_assert!(len < used && used <= bytes.len() && len <= max);
                let _ = Request::parse(&bytes[..len]);
            }
            Framed::Oversize => prop_assert!(bytes.len() > max),
            Framed::Incomplete => prop_assert!(bytes.len() <= max),
        }
    }

    #[test]
    fn post_round_trips(t in topic(), m in message(), nul in any::<bool>()) {
        let term = if nul { Terminator::Nul } else { Terminator::Lf };
        let req = Request::Post { topic: &t, message: &m };
        let mut wire = Vec::new();
        req.encode(&mut wire, term);
        let Framed::Frame { len, used, term: got } = frame(&wire, 1 << 20) else { panic!("no frame") };
        prop_assert_eq!(used, wire.len());
        prop_assert_eq!(got, term);
        prop_assert_eq!(Request::parse(&wire[..len]), req);
    }

    #[test]
    fn read_count_round_trip(t in topic(), id in proptest::option::of(any::<u64>())) {
        for req in [Request::Read { topic: &t, id }, Request::Count { topic: &t }, Request::List, Request::Exit] {
            let mut wire = Vec::new();
            req.encode(&mut wire, Terminator::Nul);
            prop_assert_eq!(Request::parse(&wire[..wire.len() - 1]), req);
        }
    }
}
