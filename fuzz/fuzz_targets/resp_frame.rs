#![no_main]
//! RESP request framing (`proto::resp::Framer`: arrays of bulk strings
//! and inline commands) against the rule written a second time from
//! docs/protocols/resp.md (section 5) and redis-server 7 (`model::resp_wire`), request
//! after request of a pipelined stream, with the same arguments; and
//! split-independent: a framer resumed over the stream arriving in random
//! pieces reaches the same verdicts. Input: [max-inline, max-bulk,
//! max-args, split seed, stream…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_fuzz::model::resp_wire::{self, Wire};
use serverlab_proto::resp::{Framed, Framer, Limits};

/// The framer's verdict in the reference's terms.
fn verdict(f: &Framer, framed: Framed, input: &[u8]) -> Wire {
    let args = || {
        (0..f.args().len())
            .map(|i| f.arg(input, i).to_vec())
            .collect()
    };
    match framed {
        Framed::Incomplete => Wire::Wait,
        Framed::Request { len } => Wire::Request { len, args: args() },
        Framed::Empty { len } => Wire::Request {
            len,
            args: Vec::new(),
        },
        Framed::Error(e) => Wire::Error(e),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let limits = Limits {
        max_inline: input.limit(),
        max_bulk: input.limit(),
        max_args: input.limit(),
        max_query: usize::MAX,
    };
    let mut plan = Plan::new(input.byte());
    let stream = input.rest();
    let (mut whole, mut pieces) = (Framer::new(), Framer::new());
    let mut at = 0;
    while at < stream.len() {
        let rest = &stream[at..];
        let want = resp_wire::frame(rest, &limits);
        let framed = whole.frame(rest, &limits);
        let got = verdict(&whole, framed, rest);
        assert_eq!(got, want, "{:?}", String::from_utf8_lossy(rest));
        if let Wire::Request { args, .. } = &want {
            assert!(matches!(framed, Framed::Empty { .. }) == args.is_empty());
        }
        // The same request arriving in pieces, the framer resumed.
        let mut seen = 0;
        let resumed = loop {
            seen += plan.read_len(rest.len() - seen);
            let framed = pieces.frame(&rest[..seen], &limits);
            if framed != Framed::Incomplete || seen == rest.len() {
                break verdict(&pieces, framed, &rest[..seen]);
            }
        };
        assert_eq!(
            resumed,
            want,
            "split at {seen}: {:?}",
            String::from_utf8_lossy(rest)
        );
        match want {
            Wire::Request { len, .. } => at += len,
            _ => break,
        }
    }
});
