//! Property tests for the bucket wire format: framing and parsing never
//! panic, respect the line limit, and requests round-trip.

use proptest::prelude::*;
use serverlab_proto::bucket::{frame, Line, ParseError, Request, MAX_LINE};

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), max in 0usize..80) {
        let _ = Request::parse(&bytes);
        match frame(&bytes, max) {
            Line::Ready { len, used } => {
                prop_assert!(len < used && used <= bytes.len() && len <= max);
                prop_assert_eq!(bytes[used - 1], b'\n');
                prop_assert!(!bytes[..used - 1].contains(&b'\n'));
                let _ = Request::parse(&bytes[..len]);
            }
            Line::TooLong => prop_assert!(bytes.len() > max),
            Line::Incomplete => {
                prop_assert!(bytes.len() <= max + 1);
                prop_assert!(!bytes.contains(&b'\n'));
            }
        }
    }

    #[test]
    fn requests_round_trip(delay in any::<u64>(), bucket in any::<u64>(), crlf in any::<bool>()) {
        let req = Request { delay, bucket };
        let mut wire = Vec::new();
        req.encode(&mut wire);
        if crlf {
            wire.insert(wire.len() - 1, b'\r');
        }
        let Line::Ready { len, used } = frame(&wire, MAX_LINE) else { panic!("no line") };
        prop_assert_eq!(used, wire.len());
        prop_assert_eq!(Request::parse(&wire[..len]), Ok(req));
    }

    #[test]
    fn only_digits_and_one_comma_parse(line in "[0-9,a ]{0,12}") {
        let ok = Request::parse(line.as_bytes());
        let parts: Vec<&str> = line.split(',').collect();
        let well_formed = parts.len() == 2
            && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        prop_assert_eq!(ok.is_ok(), well_formed);
        if !well_formed {
            prop_assert_eq!(ok, Err(ParseError::Malformed));
        }
    }
}
