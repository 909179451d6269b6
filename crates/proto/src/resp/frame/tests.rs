use super::*;
use crate::resp::client;

fn limits() -> Limits {
    Limits::default()
}

/// Frame everything in `wire`, fed `step` bytes at a time: each request's
/// arguments, or its error.
fn all(wire: &[u8], step: usize, limits: &Limits) -> Vec<Result<Vec<Vec<u8>>, ProtocolError>> {
    let mut f = Framer::new();
    let mut out = Vec::new();
    let (mut start, mut avail) = (0, 0);
    while avail < wire.len() || start < wire.len() {
        avail = (avail + step).min(wire.len());
        loop {
            let input = &wire[start..avail];
            match f.frame(input, limits) {
                Framed::Incomplete => break,
                Framed::Empty { len } => start += len,
                Framed::Request { len } => {
                    let args = f.args().iter().map(|&s| f.get(input, s).to_vec()).collect();
                    out.push(Ok(args));
                    start += len;
                }
                Framed::Error(e) => {
                    out.push(Err(e));
                    return out;
                }
            }
        }
        if avail == wire.len() {
            break;
        }
    }
    out
}

fn words(ws: &[&str]) -> Vec<Vec<u8>> {
    ws.iter().map(|w| w.as_bytes().to_vec()).collect()
}

#[test]
fn arrays_in_any_pieces() {
    let mut wire = Vec::new();
    client::command(&mut wire, &[b"SET", b"k", b"a\r\nb\0"]);
    client::command(&mut wire, &[b"GET", b""]);
    wire.extend_from_slice(b"*0\r\n*-1\r\n");
    client::command(&mut wire, &[b"PING"]);
    for step in [1, 2, 3, 7, wire.len()] {
        let got = all(&wire, step, &limits());
        assert_eq!(
            got,
            vec![
                Ok(vec![b"SET".to_vec(), b"k".to_vec(), b"a\r\nb\0".to_vec()]),
                Ok(words(&["GET", ""])),
                Ok(words(&["PING"])),
            ],
            "step {step}"
        );
    }
}

#[test]
fn inline_commands() {
    let wire = b"SET k v\r\n\r\nGET  k\n  \n set \"a b\" 'c\\'d' \"\\x41\\n\"x\n";
    let got = all(wire, 1, &limits());
    assert_eq!(got[0], Ok(words(&["SET", "k", "v"])));
    assert_eq!(got[1], Ok(words(&["GET", "k"])));
    assert_eq!(got[2], Err(ProtocolError::UnbalancedQuotes));
    let got = all(
        b"set \"a b\" 'c\\'d' \"\\x41\\n\" ab\"c d\"\n",
        3,
        &limits(),
    );
    assert_eq!(got, vec![Ok(words(&["set", "a b", "c'd", "A\n", "abc d"]))]);
    assert_eq!(
        all(b"get \"k\n", 100, &limits()),
        vec![Err(ProtocolError::UnbalancedQuotes)]
    );
}

/// Found by the fuzz target `resp_frame` against `sdssplitargs`: an
/// unquoted inline word ended at VT or FF, splitting `a\x0bb` in two;
/// redis-server ends a word only at a space, tab, CR or LF, and skips
/// VT and FF only between words.
#[test]
fn vertical_tab_and_form_feed_belong_to_an_unquoted_word() {
    let got = all(b"SET a\x0bb \x0cc\x0c \x0b'q'\x0c\r\n", 1, &limits());
    let want = vec![
        b"SET".to_vec(),
        b"a\x0bb".to_vec(),
        b"c\x0c".to_vec(),
        b"q".to_vec(),
    ];
    assert_eq!(got, vec![Ok(want)]);
}

#[test]
fn protocol_errors_and_limits() {
    let small = Limits {
        max_bulk: 5,
        max_args: 3,
        max_inline: 8,
        max_query: 1 << 20,
    };
    for (wire, want) in [
        (&b"*x\r\n"[..], ProtocolError::InvalidMultibulkLength),
        (b"*4\r\n", ProtocolError::InvalidMultibulkLength),
        (b"*01\r\n", ProtocolError::InvalidMultibulkLength),
        (b"*1\r\n+GET\r\n", ProtocolError::ExpectedDollar(b'+')),
        (b"*1\r\n$6\r\n", ProtocolError::InvalidBulkLength),
        (b"*1\r\n$-1\r\n", ProtocolError::InvalidBulkLength),
        (b"*1\r\n$1\r\nab\r\n", ProtocolError::ExpectedCrlf),
        (b"*1\rX", ProtocolError::ExpectedCrlf),
        (b"abcdefghijk\n", ProtocolError::TooBigInline),
        (b"abcdefghijk", ProtocolError::TooBigInline),
    ] {
        assert_eq!(
            all(wire, 1, &small),
            vec![Err(want)],
            "{:?}",
            String::from_utf8_lossy(wire)
        );
    }
    // At the limits, accepted.
    assert_eq!(
        all(
            b"*3\r\n$5\r\nabcde\r\n$0\r\n\r\n$1\r\nx\r\nabcdefgh\r\n",
            1,
            &small
        ),
        vec![Ok(words(&["abcde", "", "x"])), Ok(words(&["abcdefgh"]))]
    );
    assert_eq!(all(b"abcdefgh", 100, &small), vec![]);
    let long = vec![b'1'; 70 << 10];
    let mut wire = b"*".to_vec();
    wire.extend_from_slice(&long);
    assert_eq!(
        all(&wire, 1 << 20, &limits()),
        vec![Err(ProtocolError::TooBigMbulkCount)]
    );
    for e in [
        ProtocolError::ExpectedDollar(b'\r'),
        ProtocolError::TooBigInline,
    ] {
        assert!(e.message().starts_with("Protocol error: ") && !e.message().contains('\r'));
    }
}

/// Framing resumes: a huge request arriving a byte at a time is parsed
/// in time proportional to its length.
#[test]
fn resumes_where_it_stopped() {
    let mut wire = Vec::new();
    let args: Vec<Vec<u8>> = (0..20_000).map(|i| format!("v{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    client::command(&mut wire, &refs);
    let mut f = Framer::new();
    for end in 1..wire.len() {
        assert_eq!(f.frame(&wire[..end], &limits()), Framed::Incomplete);
    }
    assert_eq!(
        f.frame(&wire, &limits()),
        Framed::Request { len: wire.len() }
    );
    assert_eq!(f.args().len(), 20_000);
    assert_eq!(f.arg(&wire, 19_999), b"v19999");
}

proptest::proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), step in 1usize..40) {
        let small = Limits { max_bulk: 50, max_args: 10, max_inline: 60, max_query: 1000 };
        let _ = all(&bytes, step, &small);
    }

    #[test]
    fn any_split_frames_the_same(
        cmds in proptest::collection::vec(proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20), 1..5), 1..6),
        step in 1usize..50,
    ) {
        let mut wire = Vec::new();
        for c in &cmds {
            let refs: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            client::command(&mut wire, &refs);
        }
        let want: Vec<_> = cmds.iter().map(|c| Ok(c.clone())).collect();
        proptest::prop_assert_eq!(all(&wire, step, &limits()), want);
    }
}
