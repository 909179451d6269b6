#![no_main]
//! RESP replies as the load client reads them (`proto::resp::client::
//! parse`, `skip`): any bytes; a whole reply re-encodes through the
//! server's encoders (`proto::resp::reply`) to exactly its bytes; `skip`
//! agrees with `parse` on every input (refuses what it refuses, waits
//! where it waits, and measures what it reads); a reply is found whole only once its last
//! byte has arrived, and reading it in growing pieces finds the same.
//! Input: [split seed, stream…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_proto::resp::client::{parse, skip, Reply};
use serverlab_proto::resp::reply;

fn encode(out: &mut Vec<u8>, r: &Reply) {
    match r {
        Reply::Simple(s) => reply::simple(out, s),
        // `reply::error` makes CR and LF spaces; a parsed error may hold an LF.
        Reply::Error(e) => {
            out.push(b'-');
            out.extend_from_slice(e);
            out.extend_from_slice(b"\r\n");
        }
        Reply::Int(n) => reply::int(out, *n),
        Reply::Bulk(Some(b)) => reply::bulk(out, b),
        Reply::Bulk(None) => reply::null(out),
        Reply::Array(None) => reply::null_array(out),
        Reply::Array(Some(items)) => {
            reply::array(out, items.len());
            items.iter().for_each(|i| encode(out, i));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut plan = Plan::new(input.byte());
    let stream = input.rest();
    let mut at = 0;
    while at < stream.len() {
        let rest = &stream[at..];
        let parsed = parse(rest);
        let measured = parsed.as_ref().map(|r| r.as_ref().map(|(_, n)| *n));
        assert_eq!(skip(rest), measured.map_err(Clone::clone), "skip disagrees");
        if let Ok(Some((r, n))) = &parsed {
            let mut wire = Vec::new();
            encode(&mut wire, r);
            assert_eq!(wire, &rest[..*n], "re-encoded {}", r.show());
            assert_eq!(parse(&rest[..*n]), parsed, "needs bytes after it");
            assert_eq!(parse(&rest[..n - 1]), Ok(None), "whole before its end");
        }
        // Growing pieces: incomplete until the verdict on the whole.
        let mut seen = 0;
        while seen < rest.len() {
            seen += plan.read_len(rest.len() - seen);
            match parse(&rest[..seen]) {
                Ok(None) if seen < rest.len() => {}
                other => {
                    assert_eq!(other, parsed, "{seen} of {} bytes", rest.len());
                    break;
                }
            }
        }
        match parsed {
            Ok(Some((_, n))) => at += n,
            _ => break,
        }
    }
});
