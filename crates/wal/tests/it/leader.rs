//! `always` with [`Committer::Leader`]: no log thread; the writer that
//! waits for its ticket commits what is pending when no commit is in
//! flight, or waits for the one in flight and is handed the lead if its
//! record missed it. Many threads append and wait in the three ways a
//! server waits (a blocked thread, a registered waker, a future): every
//! ticket settles, every record is on disk, and a failed `fsync` fails
//! every waiter with nothing acknowledged after it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::task::{Wake, Waker};
use std::thread::Thread;
use std::time::Duration;

use serverlab_wal::{Committer, Durability, Error, Options, Ticket, Wal};

use crate::open;

fn leader() -> Options {
    Options {
        committer: Committer::Leader,
        ..Options::new(Durability::Always)
    }
}

/// Runs `f` on its own thread; panics if it has not returned within a
/// generous limit (a stranded ticket waits forever): a hang guard only.
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("still waiting after 120 s: stranded"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the run panicked"),
    }
}

struct Flag {
    woken: AtomicBool,
    thread: Thread,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Waits for `t` as an event loop does: registers a waker and, woken
/// with the ticket still pending (the lead handed to it), asks again.
/// The result, and how many times it was woken with its ticket pending
/// (the lead handed to it, or its one yield).
fn wait_by_waker(wal: &Wal, t: Ticket) -> (Result<(), Error>, usize) {
    let flag = Arc::new(Flag {
        woken: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    let waker = Waker::from(Arc::clone(&flag));
    let mut handed = 0;
    loop {
        if let Some(settled) = wal.settled(t) {
            return (settled, handed);
        }
        if wal.register(t, &waker) {
            while !flag.woken.swap(false, Ordering::SeqCst) {
                std::thread::park();
            }
            if wal.settled(t).is_none() {
                handed += 1;
            }
        }
    }
}

/// The three ways a server waits: a blocked thread (thread per
/// connection), a waker (the reactor, io_uring), a future (tokio).
#[derive(Clone, Copy)]
enum Style {
    Block,
    Waker,
    Future,
}

/// Waits for `t` in `style`; the lead handed to a waker counts in `handed`.
fn wait_in(style: Style, wal: &Wal, t: Ticket, handed: &AtomicUsize) -> Result<(), Error> {
    match style {
        Style::Block => wal.wait(t),
        Style::Waker => {
            let (r, n) = wait_by_waker(wal, t);
            handed.fetch_add(n, Ordering::Relaxed);
            r
        }
        Style::Future => tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(wal.commit(t)),
    }
}

/// No log thread: a record no one waits for stays pending; the first
/// waiter commits it, in its own thread.
#[test]
fn the_waiter_commits_and_nothing_else_does() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = open(dir.path(), leader()).unwrap();
    let t = wal.append(b"PUT a 1").unwrap();
    // Not a timing assertion: with no log thread nothing can commit it.
    std::thread::sleep(Duration::from_millis(50));
    assert!(!wal.is_committed(t), "something committed it unasked");
    assert_eq!(wal.stats().fsyncs, 0);
    wal.wait(t).unwrap();
    assert_eq!(wal.stats().fsyncs, 1, "the waiter synced it");
    let u = wal.append(b"PUT b 2").unwrap();
    let (r, woken_pending) = wait_by_waker(&wal, u);
    r.unwrap();
    assert_eq!(
        woken_pending, 1,
        "an event loop's waiter yields once, then leads"
    );
    assert_eq!(wal.stats().fsyncs, 2);
}

/// `writers` threads, each waiting its own way, append and wait `rounds`
/// times with every fsync slowed (so that records pile up behind a commit
/// in flight): every ticket settles; how many times a waker was handed
/// the lead.
fn stress(dir: &std::path::Path, writers: usize, rounds: usize) -> usize {
    let o = Options {
        fsync_delay: Duration::from_micros(300),
        ..leader()
    };
    let (wal, _) = open(dir, o).unwrap();
    let wal = Arc::new(wal);
    let handed = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(Barrier::new(writers));
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (wal, handed, start) = (wal.clone(), handed.clone(), start.clone());
            let style = [Style::Block, Style::Waker, Style::Future][w % 3];
            std::thread::spawn(move || {
                start.wait();
                for i in 0..rounds {
                    let t = wal.append(format!("w{w} {i}").as_bytes()).unwrap();
                    wait_in(style, &wal, t, &handed).unwrap();
                    assert!(wal.is_committed(t));
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let s = wal.stats();
    assert_eq!(s.records, (writers * rounds) as u64);
    assert_eq!(
        crate::synced(&s),
        s.records,
        "every record was synced exactly once"
    );
    assert_eq!(s.commit_ns.len(), s.records, "every commit wait counted");
    handed.load(Ordering::Relaxed)
}

#[test]
fn every_ticket_settles_however_its_writer_waits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let (writers, rounds) = (12, 100);
    let handed = within(move || stress(&path, writers, rounds));
    eprintln!(
        "a waker was woken with its ticket pending {handed} times (handed the lead, or its yield)"
    );
    // Everything acknowledged is in the log, once, in each writer's order.
    let (_, got) = open(dir.path(), leader()).unwrap();
    assert_eq!(got.len(), writers * rounds);
    let unique: HashSet<_> = got.iter().collect();
    assert_eq!(unique.len(), got.len(), "a record was written twice");
    for w in 0..writers {
        let mine: Vec<_> = got
            .iter()
            .filter_map(|r| {
                std::str::from_utf8(r)
                    .unwrap()
                    .strip_prefix(&format!("w{w} "))
            })
            .map(|i| i.parse::<usize>().unwrap())
            .collect();
        assert_eq!(mine, (0..rounds).collect::<Vec<_>>(), "writer {w}");
    }
}

/// What one writer saw: the records acknowledged, and the error it
/// stopped on (from its append or its wait) with the ticket it waited for.
type Outcome = (Vec<(u64, Vec<u8>)>, Error, Option<u64>);

/// `always`, leader: writers until the log fails.
fn until_failed(wal: &Arc<Wal>, writers: usize) -> Vec<Outcome> {
    let handed = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (wal, handed) = (wal.clone(), handed.clone());
            let style = [Style::Block, Style::Waker, Style::Future][w % 3];
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for i in 0.. {
                    let rec = format!("w{w} {i}").into_bytes();
                    let t = match wal.append(&rec) {
                        Ok(t) => t,
                        Err(e) => return (acked, e, None),
                    };
                    match wait_in(style, &wal, t, &handed) {
                        Ok(()) => acked.push((t.lsn(), rec)),
                        Err(e) => return (acked, e, Some(t.lsn())),
                    }
                }
                unreachable!()
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// A failing disk (every fsync after the 30th fails with EIO): every
/// writer stops on the failure, no ticket after the watermark at failure
/// is acknowledged, no write is accepted after it, and every acknowledged
/// record is on disk.
#[test]
fn a_failed_fsync_fails_every_waiter_and_nothing_later_is_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        fail_syncs_after: Some(30),
        fsync_delay: Duration::from_micros(200),
        ..leader()
    };
    let (wal, _) = open(dir.path(), o).unwrap();
    let wal = Arc::new(wal);
    let w = wal.clone();
    let outcomes = within(move || until_failed(&w, 9));
    let failure = wal.failure().expect("the log failed");
    assert!(failure.error.to_string().contains("Input/output error"));
    assert!(wal.append(b"later").is_err(), "a write after the failure");
    let mut acked = Vec::new();
    for (ok, e, waited) in outcomes {
        assert!(matches!(e, Error::Failed(_)), "{e}");
        if let Some(lsn) = waited {
            assert!(lsn > failure.committed, "{lsn} committed yet refused");
        }
        for (lsn, rec) in ok {
            assert!(lsn <= failure.committed, "{lsn} acknowledged after failure");
            acked.push(rec);
        }
    }
    assert!(!acked.is_empty(), "30 fsyncs went through first");
    drop(wal);
    let (_, got) = open(dir.path(), leader()).unwrap();
    let on_disk: HashSet<_> = got.into_iter().collect();
    for rec in acked {
        assert!(on_disk.contains(&rec), "{:?} lost", String::from_utf8(rec));
    }
}
