use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::task::{Wake, Waker};
use std::time::{Duration, Instant};

use serverlab_wal::{Durability, Options};

use crate::{open, opts};

/// `writers` threads each append and wait `each` times under `always`,
/// with every fsync slowed so that appends pile up while one runs; the
/// statistics' mean records per fsync.
fn records_per_fsync(writers: usize, each: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        fsync_delay: Duration::from_millis(2),
        ..opts(Durability::Always)
    };
    let (wal, _) = open(dir.path(), o).unwrap();
    let wal = Arc::new(wal);
    let start = Arc::new(Barrier::new(writers));
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (wal, start) = (Arc::clone(&wal), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                for i in 0..each {
                    let t = wal.append(format!("PUT w{w} {i}").as_bytes()).unwrap();
                    wal.wait(t).unwrap();
                    assert!(wal.is_committed(t));
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let s = wal.stats();
    assert_eq!(s.records, (writers * each) as u64);
    assert_eq!(s.records_per_fsync.len(), s.fsyncs);
    assert_eq!(
        crate::synced(&s),
        s.records,
        "every record was synced exactly once"
    );
    assert_eq!(s.commit_ns.len(), s.records);
    // 3 significant figures: a 2 ms wait may read as 1,999,872 ns.
    assert!(
        s.commit_ns.min() >= 1_990_000,
        "every commit waited for a 2 ms fsync: min {} ns",
        s.commit_ns.min()
    );
    s.mean_records_per_fsync()
}

#[test]
fn group_commit_shares_fsyncs_among_concurrent_writers() {
    let alone = records_per_fsync(1, 20);
    assert_eq!(
        alone, 1.0,
        "one writer that waits each time syncs each record alone"
    );
    let many = records_per_fsync(64, 10);
    assert!(many > alone, "64 writers: {many} records per fsync");
}

struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_registered_waker_is_woken_once_per_commit() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        fsync_delay: Duration::from_secs(2),
        ..opts(Durability::Always)
    };
    let (wal, _) = open(dir.path(), o).unwrap();
    let count = Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(Arc::clone(&count));
    // The first record starts an fsync that sleeps 2 s; the next three
    // wait for the one after it and share it. (2 s, not less: the three
    // appends and their registrations must all come while it sleeps, and
    // a busy machine may hold this thread back for a few hundred ms.)
    let first = wal.append(b"a").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let tickets: Vec<_> = (0..3).map(|_| wal.append(b"b").unwrap()).collect();
    assert!(
        tickets.iter().all(|&t| !wal.is_committed(t)),
        "not on disk yet"
    );
    for &t in &tickets {
        assert!(wal.register(t, &waker));
    }
    wal.wait(*tickets.last().unwrap()).unwrap();
    assert!(wal.is_committed(first));
    assert!(tickets.iter().all(|&t| wal.is_committed(t)));
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        1,
        "one wake for three tickets"
    );
    assert!(
        !wal.register(tickets[0], &waker),
        "settled: nothing to wait for"
    );
}

#[test]
fn an_append_returns_while_an_fsync_is_slow() {
    // The caller's thread never waits for the disk under `always`: it
    // appends and carries on; only the ticket waits.
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        fsync_delay: Duration::from_secs(2),
        ..opts(Durability::Always)
    };
    let (wal, _) = open(dir.path(), o).unwrap();
    let first = wal.append(b"a").unwrap();
    let second = wal.append(b"b").unwrap();
    assert!(!wal.is_committed(first) && !wal.is_committed(second));
    wal.wait(second).unwrap();
    assert!(wal.is_committed(first));
}

#[test]
fn tokio_awaits_a_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = open(dir.path(), opts(Durability::Always)).unwrap();
    let wal = Arc::new(wal);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut tasks = Vec::new();
        for i in 0..8 {
            let wal = Arc::clone(&wal);
            tasks.push(tokio::spawn(async move {
                let t = wal.append(format!("PUT {i}").as_bytes()).unwrap();
                wal.commit(t).await.unwrap();
                assert!(wal.is_committed(t));
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(wal.stats().records, 8);
}

#[test]
fn os_and_everysec_commit_on_append() {
    for mode in [Durability::Os, Durability::EverySec] {
        let dir = tempfile::tempdir().unwrap();
        let (wal, _) = open(dir.path(), opts(mode)).unwrap();
        let t = wal.append(b"x").unwrap();
        assert!(wal.is_committed(t), "{mode}");
        assert_eq!(wal.stats().commit_ns.len(), 1);
        if mode == Durability::Os {
            assert_eq!(wal.stats().fsyncs, 0, "os never syncs");
        }
    }
}

#[test]
fn everysec_syncs_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = open(dir.path(), opts(Durability::EverySec)).unwrap();
    for i in 0..5 {
        wal.append(format!("{i}").as_bytes()).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while wal.stats().fsyncs == 0 {
        assert!(Instant::now() < deadline, "no background fsync");
        std::thread::sleep(Duration::from_millis(50));
    }
    let s = wal.stats();
    assert_eq!(s.records_per_fsync.max(), 5);
    let idle = s.fsyncs;
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(wal.stats().fsyncs, idle, "nothing written, nothing synced");
}

#[test]
fn an_oversized_record_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = open(dir.path(), opts(Durability::Os)).unwrap();
    let big = vec![0u8; serverlab_wal::format::MAX_RECORD as usize + 1];
    let err = wal.append(&big).err().unwrap();
    assert!(err.to_string().contains("over the log's limit"), "{err}");
    wal.append(b"small").unwrap();
}

/// Under `everysec`, a compaction's sync of the segment it closes is a
/// data `fsync` like the log thread's: `fail_syncs_after` counts and
/// fails it too (docs/durability.md, "Commits"), whoever syncs.
#[test]
fn fail_syncs_after_fails_a_compactions_sync_too() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        fail_syncs_after: Some(0),
        compaction_floor: 0,
        ..opts(Durability::EverySec)
    };
    let (wal, _) = open(dir.path(), o).unwrap();
    let t = wal.append(b"PUT a 1").unwrap();
    wal.wait(t).unwrap();
    let Err(e) = wal.begin_compaction() else {
        panic!("the compaction's sync of the old segment went through");
    };
    assert!(e.to_string().contains("Input/output error"), "{e}");
}

/// `writers` threads in lock-step under `always` (each appends, waits for
/// its commit, then meets the others) for `rounds`, every fsync slowed by
/// a few ms: the log's statistics.
fn lock_step(writers: usize, rounds: usize) -> serverlab_wal::Stats {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        fsync_delay: Duration::from_millis(3),
        ..opts(Durability::Always)
    };
    let (wal, _) = open(dir.path(), o).unwrap();
    let wal = Arc::new(wal);
    let step = Arc::new(Barrier::new(writers));
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (wal, step) = (Arc::clone(&wal), Arc::clone(&step));
            std::thread::spawn(move || {
                for i in 0..rounds {
                    step.wait();
                    let t = wal.append(format!("PUT w{w} {i}").as_bytes()).unwrap();
                    wal.wait(t).unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let s = wal.stats();
    assert_eq!(s.records, (writers * rounds) as u64);
    s
}

/// The log thread's gathering: 8 lock-step writers come back as a group,
/// and share syncs — more than one record per sync on average (a count,
/// whatever the machine's timing) — while a lone writer's commit is never
/// held to gather (the thread's count of held commits, not a time).
#[test]
fn lock_step_writers_share_syncs_and_a_lone_writer_is_not_held() {
    let group = lock_step(8, 20);
    let mean = group.mean_records_per_fsync();
    assert!(
        mean > 1.0,
        "{mean} records per sync, {} syncs",
        group.fsyncs
    );
    let alone = lock_step(1, 20);
    assert_eq!(alone.mean_records_per_fsync(), 1.0);
    assert_eq!(alone.gathers, 0, "a lone writer's commit was held");
}
