use super::super::RespService;
use super::*;
use crate::{run_all, Peer, Service};
use serverlab_proto::resp::{client, Limits as RespLimits};
use serverlab_store::StoreKind;
use std::sync::atomic::AtomicUsize;

fn service() -> RespService {
    RespService::new(StoreKind::Sharded, RespLimits::default(), "test".into()).unwrap()
}

fn send(svc: &RespService, conn: &mut RespConn, cmds: &[&[&str]]) -> String {
    let mut wire = Vec::new();
    for c in cmds {
        let args: Vec<&[u8]> = c.iter().map(|a| a.as_bytes()).collect();
        client::command(&mut wire, &args);
    }
    let mut out = Vec::new();
    run_all(svc, conn, &wire, &mut out);
    String::from_utf8(out).unwrap()
}

/// What the connection was pushed since last asked.
fn pushed(svc: &RespService, conn: &mut RespConn) -> String {
    let mut out = Vec::new();
    svc.pushes(conn, Some(&mut out), None);
    String::from_utf8(out).unwrap()
}

#[test]
fn channels_and_patterns_deliver_once_per_subscription_in_order() {
    let svc = service();
    let (mut sub, mut publ) = (svc.open(Peer::Unix), svc.open(Peer::Unix));
    let got = send(
        &svc,
        &mut sub,
        &[
            &["SUBSCRIBE", "news", "news"],
            &["PSUBSCRIBE", "n?ws", "x[a-c]*"],
        ],
    );
    assert_eq!(
        got,
        "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n\
         *3\r\n$10\r\npsubscribe\r\n$4\r\nn?ws\r\n:2\r\n*3\r\n$10\r\npsubscribe\r\n$7\r\nx[a-c]*\r\n:3\r\n"
    );
    let got = send(
        &svc,
        &mut publ,
        &[
            &["PUBLISH", "news", "1"],
            &["PUBLISH", "xb", "2"],
            &["PUBLISH", "xd", "3"],
            &["PUBLISH", "News", "4"],
        ],
    );
    assert_eq!(got, ":2\r\n:1\r\n:0\r\n:0\r\n");
    assert_eq!(
        pushed(&svc, &mut sub),
        "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$1\r\n1\r\n\
         *4\r\n$8\r\npmessage\r\n$4\r\nn?ws\r\n$4\r\nnews\r\n$1\r\n1\r\n\
         *4\r\n$8\r\npmessage\r\n$7\r\nx[a-c]*\r\n$2\r\nxb\r\n$1\r\n2\r\n"
    );
    assert_eq!(pushed(&svc, &mut sub), "", "taken once");
    assert_eq!(svc.pubsub.delivered(), 3);
}

#[test]
fn counts_and_introspection() {
    let svc = service();
    let (mut a, mut b, mut q) = (
        svc.open(Peer::Unix),
        svc.open(Peer::Unix),
        svc.open(Peer::Unix),
    );
    send(
        &svc,
        &mut a,
        &[&["SUBSCRIBE", "c1", "c2"], &["PSUBSCRIBE", "c*"]],
    );
    send(
        &svc,
        &mut b,
        &[&["SUBSCRIBE", "c1"], &["PSUBSCRIBE", "c*", "d*"]],
    );
    let got = send(
        &svc,
        &mut q,
        &[
            &["PUBSUB", "NUMSUB", "c1", "c2", "zz"],
            &["PUBSUB", "NUMPAT"],
            &["PUBSUB", "CHANNELS", "*2"],
        ],
    );
    assert_eq!(
        got,
        "*6\r\n$2\r\nc1\r\n:2\r\n$2\r\nc2\r\n:1\r\n$2\r\nzz\r\n:0\r\n:2\r\n*1\r\n$2\r\nc2\r\n"
    );
    assert_eq!(svc.pubsub.sizes(), (2, 2));
    let info = send(&svc, &mut q, &[&["INFO", "stats"]]);
    assert!(
        info.contains("\r\npubsub_channels:2\r\npubsub_patterns:2\r\n"),
        "{info}"
    );
}

#[test]
fn unsubscribe_all_goes_in_subscription_order_then_says_none_is_left() {
    let svc = service();
    let mut a = svc.open(Peer::Unix);
    send(
        &svc,
        &mut a,
        &[&["SUBSCRIBE", "z", "a", "m"], &["PSUBSCRIBE", "p*"]],
    );
    let got = send(
        &svc,
        &mut a,
        &[
            &["UNSUBSCRIBE"],
            &["UNSUBSCRIBE"],
            &["PUNSUBSCRIBE"],
            &["GET", "k"],
        ],
    );
    assert_eq!(
        got,
        "*3\r\n$11\r\nunsubscribe\r\n$1\r\nz\r\n:3\r\n*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:2\r\n\
         *3\r\n$11\r\nunsubscribe\r\n$1\r\nm\r\n:1\r\n*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:1\r\n\
         *3\r\n$12\r\npunsubscribe\r\n$2\r\np*\r\n:0\r\n$-1\r\n"
    );
    assert_eq!(svc.pubsub.sizes(), (0, 0));
}

#[test]
fn a_subscribed_connection_runs_only_the_pub_sub_commands_ping_quit_and_reset() {
    let svc = service();
    let mut a = svc.open(Peer::Unix);
    let got = send(
        &svc,
        &mut a,
        &[
            &["SUBSCRIBE", "c"],
            &["GET", "k"],
            &["CLIENT", "ID"],
            &["PING"],
            &["PING", "x"],
            &["GET"],
            &["HELLO", "3"],
            &["SET", "k", "v", "NX", "XX"],
            &["RESET"],
            &["GET", "k"],
        ],
    );
    let refused = |n: &str| {
        format!("-ERR Can't execute '{n}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n")
    };
    let want = format!(
        "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n{}{}*2\r\n$4\r\npong\r\n$0\r\n\r\n*2\r\n$4\r\npong\r\n$1\r\nx\r\n\
         -ERR wrong number of arguments for 'get' command\r\n{}{}+RESET\r\n$-1\r\n",
        refused("get"),
        refused("client|id"),
        refused("hello"),
        refused("set"),
    );
    assert_eq!(got, want);
    assert_eq!(svc.pubsub.sizes(), (0, 0), "RESET unsubscribes");
}

#[test]
fn a_closed_connection_leaves_the_registry() {
    let svc = service();
    for _ in 0..3 {
        let mut a = svc.open(Peer::Unix);
        send(
            &svc,
            &mut a,
            &[&["SUBSCRIBE", "c", "d"], &["PSUBSCRIBE", "*"]],
        );
        svc.close(a);
    }
    assert_eq!(svc.pubsub.sizes(), (0, 0));
    let mut p = svc.open(Peer::Unix);
    assert_eq!(send(&svc, &mut p, &[&["PUBLISH", "c", "m"]]), ":0\r\n");
}

/// Counts its wakes.
struct Count(AtomicUsize);

impl std::task::Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_listener_is_woken_once_per_batch_and_a_slow_one_is_cut_at_the_hard_limit() {
    let svc = service().with_pubsub_limits(Limits {
        hard: 1000,
        soft: 0,
        soft_for: Duration::ZERO,
    });
    let (mut sub, mut publ) = (svc.open(Peer::Unix), svc.open(Peer::Unix));
    send(&svc, &mut sub, &[&["SUBSCRIBE", "c"]]);
    let count = Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    let mut out = Vec::new();
    assert_eq!(
        svc.pushes(&mut sub, Some(&mut out), Some(&waker)),
        Pushes::Listening
    );
    send(
        &svc,
        &mut publ,
        &[&["PUBLISH", "c", "a"], &["PUBLISH", "c", "b"]],
    );
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        1,
        "woken as the queue filled"
    );
    assert_eq!(pushed(&svc, &mut sub).matches("message").count(), 2);
    let big = "x".repeat(600);
    send(&svc, &mut publ, &[&["PUBLISH", "c", &big]]);
    assert_eq!(svc.pubsub.cut_count(), 0);
    send(&svc, &mut publ, &[&["PUBLISH", "c", &big]]);
    assert_eq!(svc.pubsub.cut_count(), 1);
    assert_eq!(count.0.load(Ordering::SeqCst), 3, "woken to be cut");
    assert_eq!(svc.pushes(&mut sub, None, None), Pushes::Cut);
    svc.close(sub);
    assert_eq!(svc.pubsub.sizes(), (0, 0));
}

#[test]
fn a_soft_limit_cuts_only_after_its_time() {
    let svc = service().with_pubsub_limits(Limits {
        hard: 0,
        soft: 100,
        soft_for: Duration::from_secs(3600),
    });
    let (mut sub, mut publ) = (svc.open(Peer::Unix), svc.open(Peer::Unix));
    send(&svc, &mut sub, &[&["SUBSCRIBE", "c"]]);
    let big = "x".repeat(200);
    send(
        &svc,
        &mut publ,
        &[&["PUBLISH", "c", &big], &["PUBLISH", "c", &big]],
    );
    assert_eq!(svc.pubsub.cut_count(), 0, "within its time");
    assert_eq!(svc.pushes(&mut sub, None, None), Pushes::Listening);
}

#[test]
fn subscribe_in_a_transaction_runs_at_exec() {
    let svc = service();
    let mut a = svc.open(Peer::Unix);
    let got = send(
        &svc,
        &mut a,
        &[
            &["MULTI"],
            &["SUBSCRIBE", "m"],
            &["PING"],
            &["EXEC"],
            &["GET", "x"],
        ],
    );
    assert!(
        got.starts_with(
            "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nm\r\n:1\r\n*2\r\n$4\r\npong\r\n$0\r\n\r\n-ERR Can't execute 'get'"
        ),
        "{got:?}"
    );
}
