//! The bucket service without sockets: framing, checks, replies, closing.

use super::*;
use serverlab_proto::bucket::DelayUnit;
use serverlab_store::StoreKind;
use std::time::Duration;

fn service(buckets: usize, close_after_reply: bool) -> BucketService {
    BucketService::new(
        serverlab_store::bucket::new(StoreKind::LockFree, buckets).unwrap(),
        BucketConfig {
            max_line: 64,
            max_delay: 60,
            timing: Timing::spin(DelayUnit::Micros),
            close_after_reply,
        },
    )
}

/// Feed `wire` through frame/delay/apply as a strategy would; returns the
/// output, the delays asked for, and whether the connection closed.
fn run(svc: &BucketService, wire: &[u8]) -> (String, Vec<Option<Delay>>, bool) {
    let mut out = Vec::new();
    let ran = crate::run_all(
        svc,
        &mut svc.open("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap()),
        wire,
        &mut out,
    );
    (String::from_utf8(out).unwrap(), ran.delays(), ran.closed())
}

#[test]
fn adds_reads_and_keeps_alive_in_order() {
    let svc = service(16, false);
    let (out, delays, closed) = run(&svc, b"5,10\n3,10\r\n0,10\n0,2\n7,2\n");
    assert_eq!(out, "5\n8\n8\n0\n7\n");
    assert!(!closed);
    assert_eq!(
        delays,
        vec![
            Some(Delay::Spin(Duration::from_micros(5))),
            Some(Delay::Spin(Duration::from_micros(3))),
            None,
            None,
            Some(Delay::Spin(Duration::from_micros(7))),
        ]
    );
    let r = svc.report();
    assert_eq!(r["requests"]["add"], 3);
    assert_eq!(r["requests"]["read"], 2);
    assert_eq!(r["delay_units"], 15);
}

#[test]
fn close_after_reply_closes() {
    let svc = service(4, true);
    assert_eq!(
        run(&svc, b"1,1\n1,1\n"),
        (
            "1\n".into(),
            vec![Some(Delay::Spin(Duration::from_micros(1)))],
            true
        )
    );
}

#[test]
fn bad_input_replies_err_and_closes() {
    let cases: &[(&[u8], &str)] = &[
        (b"abc\n", "ERR expected <delay>,<bucket>\n"),
        (b"\n", "ERR expected <delay>,<bucket>\n"),
        (b"-1,2\n", "ERR expected <delay>,<bucket>\n"),
        (b"1,2,3\n", "ERR expected <delay>,<bucket>\n"),
        (b"1 ,2\n", "ERR expected <delay>,<bucket>\n"),
        (b"1,2\0\n", "ERR expected <delay>,<bucket>\n"),
        (
            b"18446744073709551616,1\n",
            "ERR number too large for 64 bits\n",
        ),
        (b"1,16\n", "ERR bucket 16 out of range 0-15\n"),
        (
            b"1,18446744073709551615\n",
            "ERR bucket 18446744073709551615 out of range 0-15\n",
        ),
        (b"61,0\n", "ERR delay 61 over the maximum 60\n"),
        (&[b'1'; 65], "ERR line over 64 bytes\n"),
        (
            b"1,100000000000000000000000000000000000000000000000000000000000000\n",
            "ERR line over 64 bytes\n",
        ),
    ];
    for &(wire, want) in cases {
        let svc = service(16, false);
        let (out, delays, closed) = run(&svc, wire);
        assert_eq!(out, want, "{:?}", String::from_utf8_lossy(wire));
        assert!(closed);
        assert!(
            delays.iter().all(Option::is_none),
            "no delay for a bad line"
        );
    }
    // Replies to the lines before a bad one go out first; nothing after it
    // is answered.
    let svc = service(16, false);
    let (out, _, closed) = run(&svc, b"60,1\nx\n1,1\n");
    assert_eq!(out, "60\nERR expected <delay>,<bucket>\n");
    assert!(closed);
    let r = svc.report();
    assert_eq!(r["rejected"]["malformed"], 1);
    assert_eq!(r["requests"]["add"], 1);
}

#[test]
fn every_reject_is_counted() {
    let svc = service(2, false);
    for wire in [
        &b"x\n"[..],
        b"99999999999999999999,0\n",
        b"1,2\n",
        b"61,1\n",
        &[b'7'; 70],
    ] {
        run(&svc, wire);
    }
    let r = &svc.report()["rejected"];
    for k in [
        "malformed",
        "number_too_large",
        "bucket_out_of_range",
        "delay_over_max",
        "line_too_long",
    ] {
        assert_eq!(r[k], 1, "{k}");
    }
}

#[test]
fn a_partial_line_waits() {
    let svc = service(2, false);
    assert_eq!(
        run(&svc, b"1,1\n5,"),
        (
            "1\n".into(),
            vec![Some(Delay::Spin(Duration::from_micros(1)))],
            false
        )
    );
}

#[test]
fn work_mode_uses_the_calibration() {
    let svc = BucketService::new(
        serverlab_store::bucket::new(StoreKind::Mutex, 1).unwrap(),
        BucketConfig {
            max_line: 64,
            max_delay: 10,
            timing: Timing::work(DelayUnit::Millis, &Calibration::fixed(1e9)),
            close_after_reply: false,
        },
    );
    let (out, delays, _) = run(&svc, b"2,0\n");
    assert_eq!(out, "2\n");
    assert_eq!(delays, vec![Some(Delay::Work(2_000_000))]);
}

/// `apply` acts on what `frame` parsed and checked and never parses again:
/// given the bytes of a read, it still adds the framed delay.
#[test]
fn apply_uses_the_parse_frame_made() {
    let svc = service(4, false);
    let mut out = Vec::new();
    let Frame::Ready { len, request } = svc.frame(&mut (), b"5,1\n", &mut out) else {
        panic!("a whole line");
    };
    assert_eq!(len, 4);
    assert_eq!(
        svc.delay(&mut (), &request),
        Some(Delay::Spin(Duration::from_micros(5)))
    );
    assert_eq!(
        svc.apply(&mut (), request, b"0,1\n", &mut out),
        After::Continue
    );
    assert_eq!(out, b"5\n");
    assert_eq!(svc.report()["requests"]["add"], 1);
}

/// The op asked of a timed request is the one the report counts it
/// under; a rejected request, applied and timed, is `rejected`. The
/// store's size is its buckets.
#[test]
fn timed_requests_are_recorded_by_add_read_or_rejected() {
    let svc = service(16, false);
    svc.common().times.time_every_request();
    run(&svc, b"5,10\n0,10\n3,1\n1,99\n");
    let by_op: Vec<(&str, u64)> = svc
        .common()
        .times
        .cumulative_by_op(&[1])
        .into_iter()
        .map(|(op, c)| (BucketService::OPS[op], c.count))
        .collect();
    assert_eq!(by_op, vec![("add", 2), ("read", 1), ("rejected", 1)]);
    assert_eq!(svc.store_size(), Some(("buckets", 16)));
}
