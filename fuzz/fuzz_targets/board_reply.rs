#![no_main]
//! The board replies the load client reads: `proto::board::parse_list`
//! (LIST) and `proto::number::parse_u64` (POST ids, COUNTs). Any reply
//! parses without panic; what parses re-encodes to the same bytes; and
//! what the server encodes parses back. Input: a reply.

use libfuzzer_sys::fuzz_target;
use serverlab_proto::board::{parse_list, push_list_entry, reply_number, valid_topic};
use serverlab_proto::number::parse_u64;
use serverlab_proto::Terminator;

fuzz_target!(|reply: &[u8]| {
    if let Some(topics) = parse_list(reply) {
        let mut again = Vec::new();
        for (i, t) in topics.iter().enumerate() {
            assert!(!t.contains(&b'#'), "a listed topic holds '#'");
            push_list_entry(&mut again, i == 0, t);
        }
        assert_eq!(again, reply, "LIST re-encoded");
    }
    // The server's own LIST, of topics cut from the input, parses back.
    let topics: Vec<&[u8]> = reply
        .split(|&b| b == b'\n')
        .filter(|t| valid_topic(t))
        .collect();
    let mut list = Vec::new();
    for (i, t) in topics.iter().enumerate() {
        push_list_entry(&mut list, i == 0, t);
    }
    let back = parse_list(&list).expect("the server's LIST parses");
    assert_eq!(back, topics);

    match parse_u64(reply) {
        Ok(Some(n)) => {
            let mut wire = Vec::new();
            reply_number(&mut wire, n, Terminator::Lf);
            let digits = &wire[..wire.len() - 1];
            let trimmed = &reply[reply
                .iter()
                .take_while(|&&b| b == b'0')
                .count()
                .min(reply.len() - 1)..];
            assert_eq!(digits, trimmed, "a number re-encoded");
        }
        Ok(None) => assert!(reply.len() >= 20 && reply.iter().all(u8::is_ascii_digit)),
        Err(()) => assert!(reply.is_empty() || !reply.iter().all(u8::is_ascii_digit)),
    }
});
