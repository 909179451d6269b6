use std::fs;

use serverlab_wal::format::{FRAME_LEN, HEADER_LEN};
use serverlab_wal::{Durability, Error, Why};

use crate::{copy_manifest, logs, open, opts, payloads, truncating, write_log};

#[test]
fn round_trip_across_restarts_and_modes() {
    let dir = tempfile::tempdir().unwrap();
    let mut want = Vec::new();
    for (i, mode) in [Durability::Os, Durability::EverySec, Durability::Always]
        .into_iter()
        .enumerate()
    {
        let (wal, got) = open(dir.path(), opts(mode)).unwrap();
        assert_eq!(got, want, "restart {i} replays everything before it");
        assert_eq!(wal.recovery().records(), want.len() as u64);
        assert_eq!(wal.recovery().dropped_bytes, 0);
        assert_eq!(wal.stats().recovered, want.len() as u64);
        for p in payloads(5 + i) {
            let t = wal.append(&p).unwrap();
            wal.wait(t).unwrap();
            want.push(p);
        }
        want.push(Vec::new());
        wal.append(&[]).unwrap();
    }
    let (_wal, got) = open(dir.path(), opts(Durability::Os)).unwrap();
    assert_eq!(got, want);
}

#[test]
fn torn_tail_at_every_byte_of_the_last_record_is_cut() {
    let src = tempfile::tempdir().unwrap();
    let records = payloads(4);
    let log = write_log(src.path(), &records);
    let whole = fs::read(&log).unwrap();
    let last_start = whole.len() - FRAME_LEN - records[3].len();
    for cut in last_start..whole.len() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(log.file_name().unwrap());
        fs::write(&path, &whole[..cut]).unwrap();
        copy_manifest(src.path(), dir.path());
        let (wal, got) = open(dir.path(), opts(Durability::Os)).unwrap();
        assert_eq!(got, records[..3], "cut at {cut}");
        let r = wal.recovery();
        assert_eq!(r.dropped_bytes, (cut - last_start) as u64, "cut at {cut}");
        assert_eq!(wal.stats().dropped_bytes, r.dropped_bytes);
        assert_eq!(r.cuts.len(), usize::from(cut > last_start));
        if let Some(c) = r.cuts.first() {
            assert!(matches!(c.why, Why::TornTail(_)), "{c:?}");
            assert_eq!(c.offset, last_start as u64);
        }
        assert_eq!(fs::metadata(&path).unwrap().len(), last_start as u64);
        let line = r.to_string();
        assert!(line.starts_with("replayed 3 records, dropped"), "{line}");
    }
}

#[test]
fn a_flipped_byte_in_an_early_record_refuses_naming_the_offset() {
    let src = tempfile::tempdir().unwrap();
    let records = payloads(6);
    let log = write_log(src.path(), &records);
    let whole = fs::read(&log).unwrap();
    let second = HEADER_LEN + FRAME_LEN + records[0].len();
    // A byte of its payload, of its checksum, of its length.
    for at in [second + FRAME_LEN + 3, second + 5, second] {
        let mut bytes = whole.clone();
        bytes[at] ^= 0x40;
        fs::write(&log, &bytes).unwrap();
        let err = open(src.path(), opts(Durability::Os)).err().unwrap();
        match &err {
            Error::Corrupt { path, offset, .. } => {
                assert_eq!(*offset, second as u64, "flip at {at}");
                assert_eq!(path, &log);
            }
            other => panic!("flip at {at}: {other}"),
        }
        let msg = err.to_string();
        assert!(msg.contains(&format!("byte offset {second}")), "{msg}");
        assert!(msg.contains("truncate"), "{msg}");
        assert_eq!(
            fs::read(&log).unwrap(),
            bytes,
            "a refused open changes nothing"
        );
    }
    let (wal, got) = open(src.path(), truncating(Durability::Os)).unwrap();
    assert_eq!(got, records[..1]);
    let r = wal.recovery();
    assert_eq!(r.dropped_bytes, (whole.len() - second) as u64);
    assert_eq!(r.cuts.len(), 1);
    assert!(matches!(r.cuts[0].why, Why::Corrupt(_)), "{r}");
    drop(wal);
    let (_, got) = open(src.path(), opts(Durability::Os)).unwrap();
    assert_eq!(got, records[..1], "the cut holds at the next open");
}

#[test]
fn a_log_cut_inside_its_header_holds_nothing_and_is_removed() {
    // A crash while the next open created segment 2: its header never
    // reached the disk, and the manifest still records segment 1.
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &payloads(2));
    let header = fs::read(&log).unwrap()[..HEADER_LEN].to_vec();
    let next = dir.path().join("wal-0000000000000002.log");
    fs::write(&next, &header[..HEADER_LEN - 3]).unwrap();
    let (wal, got) = open(dir.path(), opts(Durability::Os)).unwrap();
    assert_eq!(got, payloads(2));
    assert_eq!(wal.recovery().dropped_bytes, (HEADER_LEN - 3) as u64);
    assert_eq!(wal.recovery().cuts.len(), 1);
    assert_eq!(wal.recovery().cuts[0].path, next);
    assert_eq!(wal.recovery().cuts[0].offset, 0);
    assert_eq!(wal.recovery().cuts[0].why, Why::TornHeader);
    drop(wal);
    // Segment 2 is created again: no gap.
    assert_eq!(logs(dir.path()), [log, next]);
    open(dir.path(), opts(Durability::Os)).unwrap();
}

#[test]
fn a_recorded_segment_cut_inside_its_header_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &payloads(2));
    let whole = fs::read(&log).unwrap();
    fs::write(&log, &whole[..HEADER_LEN - 3]).unwrap();
    let err = open(dir.path(), opts(Durability::Os)).err().unwrap();
    assert!(
        matches!(&err, Error::TornHeader { path } if path == &log),
        "{err}"
    );
    assert!(err.to_string().contains("--recover truncate"), "{err}");
    let (wal, got) = open(dir.path(), truncating(Durability::Os)).unwrap();
    assert!(got.is_empty());
    let r = wal.recovery();
    assert_eq!(r.dropped_bytes, (HEADER_LEN - 3) as u64, "{r}");
    assert!(
        matches!(&r.cuts[..], [c] if c.path == log && matches!(c.why, Why::After { .. })),
        "{r}"
    );
    drop(wal);
    let (_, got) = open(dir.path(), opts(Durability::Os)).unwrap();
    assert!(got.is_empty(), "strict opens what truncate left");
}

#[test]
fn a_file_that_is_not_a_log_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &payloads(2));
    fs::write(&log, b"this is not a log file, but it is long enough").unwrap();
    let err = open(dir.path(), truncating(Durability::Os)).err().unwrap();
    assert!(matches!(err, Error::BadHeader { .. }), "{err}");
    assert!(err.to_string().contains(log.to_str().unwrap()), "{err}");
}

#[test]
fn a_replay_callback_error_names_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &payloads(3));
    let mut n = 0;
    let err = serverlab_wal::Wal::open(dir.path(), opts(Durability::Os), |_| {
        n += 1;
        if n == 2 {
            Err("not a command".into())
        } else {
            Ok(())
        }
    })
    .err()
    .unwrap();
    let second = HEADER_LEN + FRAME_LEN + payloads(1)[0].len();
    assert!(
        matches!(&err, Error::Apply { offset, path, .. } if *offset == second as u64 && path == &log),
        "{err}"
    );
}

#[test]
fn each_restart_starts_a_new_segment() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        let (wal, got) = open(dir.path(), opts(Durability::Os)).unwrap();
        assert_eq!(got.len(), i);
        wal.append(b"x").unwrap();
    }
    assert_eq!(logs(dir.path()).len(), 3);
}

#[test]
fn a_snapshot_has_no_torn_tail_a_bad_end_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = open(dir.path(), opts(Durability::Os)).unwrap();
    wal.append(b"old").unwrap();
    let c = wal.begin_compaction().unwrap().unwrap();
    let g = c.generation();
    wal.append(b"after the cut").unwrap();
    let done = c.write_snapshot([&b"one"[..], b"two"]).unwrap();
    assert_eq!((done.records, done.removed), (2, 1));
    drop(wal);
    let snap = dir.path().join(format!("snap-{g:016x}.snap"));
    let mut bytes = fs::read(&snap).unwrap();
    let second = HEADER_LEN + FRAME_LEN + 3;
    bytes[second + FRAME_LEN + 1] ^= 0x20;
    fs::write(&snap, &bytes).unwrap();
    let err = open(dir.path(), opts(Durability::Os)).err().unwrap();
    assert!(
        matches!(&err, Error::Snapshot { path, offset, .. } if path == &snap && *offset == second as u64),
        "{err}"
    );
    let (wal, got) = open(dir.path(), truncating(Durability::Os)).unwrap();
    assert_eq!(got, [b"one".to_vec(), b"after the cut".to_vec()]);
    assert_eq!(wal.recovery().snapshot, Some(g));
    assert_eq!(wal.recovery().snapshot_records, 1);
    assert_eq!(wal.recovery().log_records, 1);
    let line = wal.recovery().to_string();
    assert!(line.contains("wrote a new trailer"), "{line}");
    drop(wal);
    let (_, got) = open(dir.path(), opts(Durability::Os)).unwrap();
    assert_eq!(
        got,
        [b"one".to_vec(), b"after the cut".to_vec()],
        "resealed"
    );
}
