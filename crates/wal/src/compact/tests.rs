//! Compaction, and a crash after each of its steps: the directory always
//! recovers to exactly the state the writes made.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::{Compacted, Durability, Error, Options, Wal};

/// A store of counters whose records do not all overwrite (INCR), so a
/// record replayed twice or lost shows.
type Map = BTreeMap<String, i64>;

fn apply(m: &mut Map, rec: &[u8]) -> Result<(), crate::ApplyError> {
    let rec = std::str::from_utf8(rec)?;
    let mut words = rec.split(' ');
    match (words.next(), words.next(), words.next()) {
        (Some("INCR"), Some(k), None) => *m.entry(k.to_owned()).or_default() += 1,
        (Some("DEL"), Some(k), None) => drop(m.remove(k)),
        (Some("SET"), Some(k), Some(v)) => drop(m.insert(k.to_owned(), v.parse()?)),
        _ => return Err(format!("bad record {rec:?}").into()),
    }
    Ok(())
}

struct Store {
    map: Mutex<Map>,
    wal: Wal,
}

impl Store {
    fn open(dir: &Path, durability: Durability) -> Store {
        let mut map = Map::new();
        let wal = Wal::open(dir, Options::new(durability), |r| apply(&mut map, r)).unwrap();
        Store {
            map: Mutex::new(map),
            wal,
        }
    }

    /// Applies and appends under the store's lock, then waits for the
    /// commit outside it.
    fn write(&self, rec: &str) {
        let ticket = {
            let mut m = self.map.lock().unwrap();
            apply(&mut m, rec.as_bytes()).unwrap();
            self.wal.append(rec.as_bytes()).unwrap()
        };
        self.wal.wait(ticket).unwrap();
    }

    fn compact(&self) -> Result<Compacted, Error> {
        let (c, copy) = {
            let m = self.map.lock().unwrap();
            let c = self.wal.begin_compaction()?.expect("no other compaction");
            (c, m.clone())
        };
        c.write_snapshot(copy.iter().map(|(k, v)| format!("SET {k} {v}")))
    }

    fn state(&self) -> Map {
        self.map.lock().unwrap().clone()
    }
}

fn some_writes(s: &Store, round: usize, n: usize) {
    for i in 0..n {
        let k = (i * 7 + round) % 5;
        match i % 6 {
            5 => s.write(&format!("DEL k{k}")),
            4 => s.write(&format!("SET k{k} {}", round * 100 + i)),
            _ => s.write(&format!("INCR k{k}")),
        }
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// One crash after step `k` of a compaction (of one that had a snapshot
/// before it); false when the compaction has fewer steps and finished.
fn crash_at_step(durability: Durability, k: usize) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), durability);
    some_writes(&s, 0, 20);
    s.compact().unwrap();
    some_writes(&s, 1, 20);
    s.wal.shared().crash.after_more(k);
    let crashed = match s.compact() {
        Err(Error::SimulatedCrash) => true,
        Ok(_) => false,
        Err(e) => panic!("step {k}: {e}"),
    };
    let want = s.state();
    drop(s); // the process dies: what was written stays in the page cache
    let s = Store::open(dir.path(), durability); // strict recovery
    assert_eq!(s.state(), want, "{durability}: crash after step {k}");
    let r = s.wal.recovery();
    assert_eq!(r.dropped_bytes, 0);
    assert!(r.cuts.is_empty(), "{durability}: crash after step {k}: {r}");
    // And it carries on: more writes, a full compaction, another restart.
    some_writes(&s, 2, 10);
    s.compact().unwrap();
    some_writes(&s, 3, 10);
    let want = s.state();
    drop(s);
    let s = Store::open(dir.path(), durability);
    assert_eq!(s.state(), want, "{durability}: after step {k}, then more");
    crashed
}

#[test]
fn a_crash_after_any_step_of_a_compaction_recovers() {
    for durability in [Durability::Os, Durability::EverySec, Durability::Always] {
        let mut k = 1;
        while crash_at_step(durability, k) {
            k += 1;
        }
        // Cut (2), recording it (1), snapshot (3), publish (2), one
        // removal per old file.
        assert!(k > 9, "{durability}: only {k} steps");
    }
}

/// A crash while the cut waits for the old segment's last records can
/// leave that segment torn (under `always` the log thread was writing its
/// last batch) with the new one empty: until the manifest records the new
/// segment, the old one's bad end is a torn tail. Once it does, the old
/// segment was sealed, and the same bad end is damage.
#[test]
fn an_old_segment_torn_before_the_cut_is_recorded_is_a_tail() {
    for (step, recorded) in [(2, false), (3, true)] {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path(), Durability::Always);
        some_writes(&s, 0, 20);
        let before_last = s.state();
        s.write("INCR last");
        s.wal.shared().crash.after_more(step);
        let stopped = s.compact().map(|_| ());
        assert!(matches!(stopped, Err(Error::SimulatedCrash)), "{stopped:?}");
        drop(s);
        let old = dir.path().join("wal-0000000000000001.log");
        let len = std::fs::metadata(&old).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&old).unwrap();
        f.set_len(len - 3).unwrap();
        drop(f);
        let mut map = Map::new();
        let opts = Options::new(Durability::Always);
        let opened = Wal::open(dir.path(), opts, |r| apply(&mut map, r));
        if recorded {
            let err = opened.err().expect("refused");
            assert!(matches!(err, Error::DamagedSegment { .. }), "{err}");
            continue;
        }
        let wal = opened.unwrap();
        assert_eq!(map, before_last);
        let r = wal.recovery();
        assert!(
            matches!(r.cuts[..], [ref c] if c.path == old && matches!(c.why, crate::Why::TornTail(_))),
            "{r}"
        );
    }
}

#[test]
fn compaction_leaves_one_snapshot_and_the_new_segment() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), Durability::Os);
    some_writes(&s, 0, 30);
    let c = s.compact().unwrap();
    assert_eq!(c.records, s.state().len() as u64);
    assert_eq!(c.removed, 1);
    let g = c.generation;
    assert_eq!(
        files(dir.path()),
        [
            "CURRENT".to_owned(),
            "LOCK".to_owned(),
            format!("snap-{g:016x}.snap"),
            format!("wal-{g:016x}.log")
        ]
    );
    assert_eq!(s.wal.stats().compactions, 1);
    assert_eq!(
        s.wal.disk_bytes(),
        c.bytes + crate::format::HEADER_LEN as u64
    );
    let want = s.state();
    drop(s);
    let s = Store::open(dir.path(), Durability::Os);
    assert_eq!(s.state(), want);
    assert_eq!(s.wal.recovery().snapshot, Some(g));
    assert_eq!(s.wal.recovery().snapshot_records, c.records);
}

#[test]
fn appends_between_the_cut_and_the_snapshot_go_to_the_new_segment() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), Durability::Always);
    some_writes(&s, 0, 12);
    let (c, copy) = {
        let m = s.map.lock().unwrap();
        (s.wal.begin_compaction().unwrap().unwrap(), m.clone())
    };
    assert!(s.wal.begin_compaction().unwrap().is_none(), "one at a time");
    assert!(!s.wal.compaction_due(), "none is due while one runs");
    some_writes(&s, 1, 12);
    c.write_snapshot(copy.iter().map(|(k, v)| format!("SET {k} {v}")))
        .unwrap();
    let want = s.state();
    drop(s);
    let s = Store::open(dir.path(), Durability::Always);
    assert_eq!(s.state(), want);
    assert_eq!(s.wal.recovery().log_records, 12);
}

#[test]
fn compaction_is_due_past_twice_the_live_size_and_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::new(Durability::Os);
    o.compaction_floor = 1000;
    let wal = Wal::open(dir.path(), o, |_| Ok(())).unwrap();
    wal.set_live_bytes(300);
    while wal.disk_bytes() <= 1000 {
        assert!(!wal.compaction_due(), "under the floor");
        wal.append(&[b'x'; 40]).unwrap();
    }
    assert!(wal.compaction_due());
    wal.set_live_bytes(600);
    assert!(!wal.compaction_due(), "under twice the live size");
}

#[test]
fn writers_go_on_while_compactions_run() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(Store::open(dir.path(), Durability::Always));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || {
                for i in 0..60 {
                    s.write(&format!("INCR w{w}k{}", i % 3));
                }
            })
        })
        .collect();
    for _ in 0..4 {
        s.compact().unwrap();
    }
    writers.into_iter().for_each(|t| t.join().unwrap());
    let want = s.state();
    assert_eq!(want.values().sum::<i64>(), 240);
    drop(Arc::into_inner(s).unwrap());
    let s = Store::open(dir.path(), Durability::Always);
    assert_eq!(s.state(), want);
}
