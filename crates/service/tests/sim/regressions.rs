//! The bugs the simulation found, each as the short story that shows it.

use crate::reply::{encode, parse_all, Reply};
use crate::world::peer;
use serverlab_proto::resp::Limits;
use serverlab_service::resp::{RespConn, RespService};
use serverlab_service::sim;
use serverlab_service::wal::vfs::sim::SimFs;
use serverlab_service::wal::{Committer, Durability, Options, Wal};
use serverlab_service::{run_all, Frame, Service};
use serverlab_store::StoreKind;

const T: i64 = 4_000_000_000_000;

/// A server logging under `always` on `disk`, replayed from it.
fn open(disk: &SimFs) -> RespService {
    let mut opts = Options::new(Durability::Always);
    opts.committer = Committer::Caller;
    opts.fs = disk.shared();
    let svc = RespService::new(StoreKind::Sharded, Limits::default(), "test".into()).unwrap();
    let wal = Wal::open("/data", opts, |rec| svc.replay(rec)).unwrap();
    svc.with_log(wal)
}

fn on(svc: &RespService, conn: &mut RespConn, args: &[&str]) -> Reply {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    let mut out = Vec::new();
    run_all(svc, conn, &encode(&args), &mut out);
    svc.logged(conn);
    parse_all(&out).unwrap().pop().unwrap()
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(Some(s.as_bytes().to_vec()))
}

/// A key past its deadline, deleted by a command run alone that then
/// wrote nothing (a blocking pop that blocked; an EXEC a WATCH aborted),
/// was deleted unlogged: the next write of the key was logged without the
/// deletion, replayed onto the old value, and the acknowledged write was
/// lost across a restart (here `INCR k` answered 1, and after the
/// restart `k` was gone).
#[test]
fn a_deletion_by_a_command_that_wrote_nothing_is_logged() {
    for how in ["a blocking pop that blocks", "an EXEC a WATCH aborted"] {
        let disk = SimFs::new(1);
        sim::set_clock(Some(T));
        let svc = open(&disk);
        let mut c = svc.open(peer());
        assert_eq!(
            on(&svc, &mut c, &["SET", "k", "v", "PX", "100"]),
            Reply::Simple("OK".into())
        );
        on(&svc, &mut c, &["WATCH", "w"]);
        on(&svc, &mut svc.open(peer()), &["SET", "w", "1"]);
        svc.wal().unwrap().commit_pending();
        sim::set_clock(Some(T + 200));
        if how.starts_with("a blocking") {
            let mut popper = svc.open(peer());
            let wire = encode(&[b"BLPOP".to_vec(), b"q".to_vec(), b"0".to_vec()]);
            let Frame::Ready { request, .. } = svc.frame(&mut popper, &wire, &mut Vec::new())
            else {
                panic!("BLPOP frames")
            };
            assert!(
                svc.wait(&mut popper, &request, &wire, None).is_some(),
                "it blocks"
            );
        } else {
            on(&svc, &mut c, &["MULTI"]);
            on(&svc, &mut c, &["GET", "w"]);
            assert_eq!(on(&svc, &mut c, &["EXEC"]), Reply::Array(None), "aborted");
        }
        assert_eq!(on(&svc, &mut c, &["INCR", "k"]), Reply::Int(1), "{how}");
        svc.wal().unwrap().commit_pending();
        drop(svc);
        let svc = open(&disk);
        let got = on(&svc, &mut svc.open(peer()), &["GET", "k"]);
        sim::set_clock(None);
        assert_eq!(got, bulk("1"), "after {how}, the acknowledged INCR is lost");
    }
}

/// A SET whose deadline had already passed (`PXAT` in the past) deletes
/// the key, and was logged as the SET: the replay kept the key (no key
/// expires while a log replays), so a later `SET … NX` of it, which had
/// set it, did not, and the acknowledged value was lost.
#[test]
fn a_set_whose_deadline_had_passed_is_logged_as_the_deletion() {
    let disk = SimFs::new(2);
    sim::set_clock(Some(T));
    let svc = open(&disk);
    let mut c = svc.open(peer());
    let past = (T - 10).to_string();
    assert_eq!(
        on(&svc, &mut c, &["SET", "k", "old", "PXAT", &past]),
        Reply::Simple("OK".into())
    );
    assert_eq!(
        on(&svc, &mut c, &["SET", "k", "new", "NX"]),
        Reply::Simple("OK".into())
    );
    svc.wal().unwrap().commit_pending();
    drop(svc);
    let svc = open(&disk);
    let got = on(&svc, &mut svc.open(peer()), &["GET", "k"]);
    sim::set_clock(None);
    assert_eq!(got, bulk("new"));
}

/// An EXEC that a WATCH aborted shows that a watched key was written:
/// its reply (`*-1`) was sent at once, though that write was not yet
/// committed, and a failed `fsync` then lost it. It now waits, as a
/// read of the watched keys does, for that write's commit.
#[test]
fn an_exec_a_watch_aborted_waits_for_the_write_that_aborted_it() {
    let disk = SimFs::new(3);
    sim::set_clock(Some(T));
    let svc = open(&disk);
    let (mut c, mut writer) = (svc.open(peer()), svc.open(peer()));
    on(&svc, &mut c, &["WATCH", "w"]);
    let wire = encode(&[b"SET".to_vec(), b"w".to_vec(), b"1".to_vec()]);
    run_all(&svc, &mut writer, &wire, &mut Vec::new());
    let written = svc
        .logged(&mut writer)
        .expect("the SET waits for its commit");
    on(&svc, &mut c, &["MULTI"]);
    on(&svc, &mut c, &["GET", "w"]);
    let wire = encode(&[b"EXEC".to_vec()]);
    let mut out = Vec::new();
    run_all(&svc, &mut c, &wire, &mut out);
    sim::set_clock(None);
    assert_eq!(out, b"*-1\r\n", "aborted");
    assert_eq!(svc.logged(&mut c), Some(written), "the abort's reply waits");
}
