//! What strict recovery refuses and truncate cuts: damage that only looks
//! like a torn tail, missing files, incomplete snapshots, payloads that
//! hold records, and a directory an older build wrote.

use std::fs;
use std::path::{Path, PathBuf};

use serverlab_wal::format::{self, FRAME_LEN, HEADER_LEN};
use serverlab_wal::{Durability, Error, Why, MANIFEST_FILE};

use crate::{logs, open, opts, truncating};

fn log(dir: &Path, g: u64) -> PathBuf {
    dir.join(format!("wal-{g:016x}.log"))
}

fn snap(dir: &Path, g: u64) -> PathBuf {
    dir.join(format!("snap-{g:016x}.snap"))
}

/// Three opens, each appending `per` records: segments 1, 2 and 3 (and
/// the 4th, empty, is never created: the third open's segment is 3).
fn three_opens(dir: &Path, per: usize) -> Vec<Vec<u8>> {
    let mut all = Vec::new();
    for open_no in 0..3 {
        let (wal, got) = open(dir, opts(Durability::Os)).unwrap();
        assert_eq!(got, all);
        for i in 0..per {
            let r = format!("SET k{i} from-open-{open_no}").into_bytes();
            wal.append(&r).unwrap();
            all.push(r);
        }
    }
    assert_eq!(logs(dir), [log(dir, 1), log(dir, 2), log(dir, 3)]);
    all
}

/// The byte offset of each record of a segment, from its header on.
fn offsets(path: &Path) -> Vec<usize> {
    let bytes = fs::read(path).unwrap();
    let h = format::decode_header(&bytes).unwrap();
    let s = format::scan(&bytes, &h, HEADER_LEN);
    s.records.iter().map(|r| r.start - FRAME_LEN).collect()
}

/// Opens strictly, expecting a refusal that changes no file.
fn refused(dir: &Path) -> Error {
    let before = contents(dir);
    let err = open(dir, opts(Durability::Os)).err().expect("refused");
    assert_eq!(contents(dir), before, "a refused open changes nothing");
    let msg = err.to_string();
    assert!(msg.contains("--recover truncate"), "says what to do: {msg}");
    err
}

fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with("LOCK"))
        .map(|p| {
            let b = fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    v.sort();
    v
}

/// Damage at the end of segment 2 of 3: refused by strict recovery,
/// naming the file and the bad record's offset; truncate keeps segment 1
/// and segment 2 up to the bad record, removes segment 3, and says so;
/// the next strict open takes what truncate left.
fn older_segment_damaged(damage: impl Fn(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all = three_opens(d, 4);
    let seg2 = log(d, 2);
    let last = *offsets(&seg2).last().unwrap();
    damage(&seg2);
    let err = refused(d);
    match &err {
        Error::DamagedSegment { path, offset, .. } => {
            assert_eq!((path, *offset), (&seg2, last as u64), "{err}");
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains(&format!("byte offset {last}")));
    assert!(err.to_string().contains("only the newest segment"), "{err}");

    let (wal, got) = open(d, truncating(Durability::Os)).unwrap();
    assert_eq!(
        got,
        all[..7],
        "segment 1 and segment 2 before the bad record"
    );
    let r = wal.recovery();
    assert_eq!(r.cuts.len(), 2, "{r}");
    assert!(matches!(r.cuts[0].why, Why::Corrupt(_)), "{r}");
    assert_eq!((&r.cuts[0].path, r.cuts[0].offset), (&seg2, last as u64));
    assert!(
        matches!(&r.cuts[1].why, Why::After { broken } if broken == &seg2),
        "{r}"
    );
    assert_eq!(r.cuts[1].path, log(d, 3));
    let line = r.to_string();
    assert!(
        line.contains(&format!("at byte {last} (corruption")),
        "{line}"
    );
    assert!(line.contains("removed") && line.contains("wal-0000000000000003.log"));
    drop(wal);
    let (wal, got) = open(d, opts(Durability::Os)).unwrap();
    assert_eq!(got, all[..7]);
    assert_eq!(wal.recovery().dropped_bytes, 0);
}

#[test]
fn an_older_segment_cut_short_is_damage_not_a_torn_tail() {
    older_segment_damaged(|seg| {
        let len = fs::metadata(seg).unwrap().len();
        let f = fs::OpenOptions::new().write(true).open(seg).unwrap();
        f.set_len(len - 10).unwrap();
    });
}

#[test]
fn a_flipped_byte_in_an_older_segments_last_record_is_damage() {
    older_segment_damaged(|seg| {
        let mut b = fs::read(seg).unwrap();
        let n = b.len();
        b[n - 2] ^= 0x01;
        fs::write(seg, b).unwrap();
    });
}

#[test]
fn the_newest_segments_torn_tail_is_still_cut() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all = three_opens(d, 4);
    let seg3 = log(d, 3);
    let len = fs::metadata(&seg3).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&seg3)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    let (wal, got) = open(d, opts(Durability::Os)).unwrap();
    assert_eq!(got, all[..11]);
    assert!(matches!(wal.recovery().cuts[..], [ref c] if matches!(c.why, Why::TornTail(_))));
}

#[test]
fn a_deleted_newest_segment_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all = three_opens(d, 3);
    fs::remove_file(log(d, 3)).unwrap();
    let err = refused(d);
    assert!(
        matches!(&err, Error::MissingNewest { path, generation: 3, .. } if path == &log(d, 3)),
        "{err}"
    );
    assert!(err.to_string().contains(MANIFEST_FILE), "{err}");
    let (wal, got) = open(d, truncating(Durability::Os)).unwrap();
    assert_eq!(got, all[..6]);
    let line = wal.recovery().to_string();
    assert!(
        line.contains("wal-0000000000000003.log is missing"),
        "{line}"
    );
    drop(wal);
    let (_, got) = open(d, opts(Durability::Os)).unwrap();
    assert_eq!(got, all[..6], "truncate rewrote the manifest");
}

#[test]
fn a_deleted_middle_segment_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all = three_opens(d, 3);
    fs::remove_file(log(d, 2)).unwrap();
    let err = refused(d);
    assert!(
        matches!(&err, Error::Gap { path, next } if path == &log(d, 2) && next == &log(d, 3)),
        "{err}"
    );
    let (wal, got) = open(d, truncating(Durability::Os)).unwrap();
    assert_eq!(got, all[..3], "the log before the gap");
    let r = wal.recovery();
    assert_eq!(r.cuts[0].why, Why::Missing, "{r}");
    assert!(matches!(&r.cuts[1].why, Why::After { .. }) && r.cuts[1].path == log(d, 3));
    drop(wal);
    assert_eq!(logs(d), [log(d, 1), log(d, 2)], "no gap is left");
    let (_, got) = open(d, opts(Durability::Os)).unwrap();
    assert_eq!(got, all[..3]);
}

#[test]
fn a_deleted_manifest_is_refused_unless_truncate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all = three_opens(d, 2);
    fs::remove_file(d.join(MANIFEST_FILE)).unwrap();
    let err = refused(d);
    assert!(matches!(err, Error::NoManifest { .. }), "{err}");
    let (wal, got) = open(d, truncating(Durability::Os)).unwrap();
    assert_eq!(got, all);
    assert_eq!(wal.recovery().cuts[0].why, Why::Manifest);
    drop(wal);
    open(d, opts(Durability::Os)).unwrap();
}

/// A log of `n` records compacted into a snapshot, with one record after
/// the cut; the snapshot's generation and payloads.
fn compacted(d: &Path, n: usize) -> (u64, Vec<Vec<u8>>) {
    let (wal, _) = open(d, opts(Durability::Os)).unwrap();
    let state: Vec<Vec<u8>> = (0..n).map(|i| format!("SET k{i} v").into_bytes()).collect();
    for r in &state {
        wal.append(r).unwrap();
    }
    let c = wal.begin_compaction().unwrap().unwrap();
    let g = c.generation();
    wal.append(b"SET after cut").unwrap();
    c.write_snapshot(&state).unwrap();
    drop(wal);
    assert!(snap(d, g).exists() && !log(d, 1).exists());
    (g, state)
}

#[test]
fn a_snapshot_cut_at_a_record_boundary_or_to_its_header_is_refused() {
    for records_kept in [3, 0] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (g, state) = compacted(d, 8);
        let path = snap(d, g);
        let boundary = offsets(&path)[records_kept];
        let whole = fs::read(&path).unwrap();
        fs::write(&path, &whole[..boundary]).unwrap();
        let err = refused(d);
        match &err {
            Error::Snapshot {
                path: p,
                offset,
                what,
            } => {
                assert_eq!((p, *offset), (&path, boundary as u64), "{err}");
                assert_eq!(*what, format::SnapshotBad::NoTrailer);
            }
            other => panic!("{other}"),
        }
        let (wal, got) = open(d, truncating(Durability::Os)).unwrap();
        let mut want = state[..records_kept].to_vec();
        want.push(b"SET after cut".to_vec());
        assert_eq!(got, want);
        assert!(matches!(wal.recovery().cuts[0].why, Why::Snapshot(_)));
        drop(wal);
        let (_, got) = open(d, opts(Durability::Os)).unwrap();
        assert_eq!(got, want, "the snapshot was given a trailer");
    }
}

#[test]
fn a_snapshots_trailer_must_count_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (g, _) = compacted(d, 5);
    let path = snap(d, g);
    let mut b = fs::read(&path).unwrap();
    let n = b.len();
    b[n - 8] ^= 1; // the count
    fs::write(&path, &b).unwrap();
    let err = refused(d);
    assert!(
        matches!(
            err,
            Error::Snapshot {
                what: format::SnapshotBad::Trailer,
                ..
            }
        ),
        "{err}"
    );
}

/// A deleted snapshot shows when the log after it starts past generation
/// 1 and no other snapshot precedes it: compaction removes segments only
/// once their snapshot is in place. (A deleted snapshot whose older
/// snapshot and segments are all still there, a compaction stopped before
/// its clean-up, is not detected, and needs not be: replay from the older
/// snapshot gives the same state.)
#[test]
fn a_deleted_snapshot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (g, _) = compacted(d, 4);
    fs::remove_file(snap(d, g)).unwrap();
    let err = refused(d);
    assert!(
        matches!(&err, Error::MissingSnapshot { path, first } if path == &snap(d, g) && first == &log(d, g)),
        "{err}"
    );
    let (wal, got) = open(d, truncating(Durability::Os)).unwrap();
    assert!(got.is_empty(), "nothing before the log can be vouched for");
    assert!(!log(d, g).exists());
    drop(wal);
    open(d, opts(Durability::Os)).unwrap();
}

/// A record whose payload holds a whole valid-looking record, then the
/// file torn inside that payload after it: the old search for a later
/// valid record found the inner one and refused the log as corrupt. Now
/// an inner record is valid only where it was sealed, so this is a tail.
fn payload_holding_a_record(inner: impl Fn(&Path) -> Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (wal, _) = open(d, opts(Durability::Os)).unwrap();
    wal.append(b"SET a 1").unwrap();
    let seg = log(d, 1);
    let frame = inner(&seg);
    let mut payload = b"SET b ".to_vec();
    payload.extend_from_slice(&frame);
    payload.extend_from_slice(b" and more bytes after it");
    wal.append(&payload).unwrap();
    drop(wal);
    let whole = fs::read(&seg).unwrap();
    let second = offsets(&seg)[1];
    let inner_end = second + FRAME_LEN + 6 + frame.len();
    fs::write(&seg, &whole[..inner_end + 3]).unwrap();
    let (wal, got) = open(d, opts(Durability::Os)).unwrap();
    assert_eq!(got, [b"SET a 1".to_vec()]);
    let r = wal.recovery();
    assert!(
        matches!(r.cuts[..], [ref c] if matches!(c.why, Why::TornTail(_)) && c.offset == second as u64),
        "{r}"
    );
}

#[test]
fn a_payload_holding_a_format_1_record_is_no_record() {
    payload_holding_a_record(|_| {
        let mut v1 = Vec::new();
        format::encode_record(b"SET forged 1", &mut v1); // the old framing
        v1
    });
}

#[test]
fn a_payload_holding_a_record_sealed_elsewhere_is_no_record() {
    // The bytes of the segment's first record, as sealed on disk.
    payload_holding_a_record(|seg| fs::read(seg).unwrap()[HEADER_LEN..].to_vec());
    // A record sealed for this file at another offset.
    payload_holding_a_record(|seg| {
        let h = format::decode_header(&fs::read(seg).unwrap()).unwrap();
        let mut f = Vec::new();
        format::encode_sealed(b"SET forged 1", &h, 4000, &mut f);
        f
    });
}

/// A format 1 file, as the previous build wrote it: a 24-byte header and
/// records whose checksum covers only the length and payload.
fn v1_file(kind: u8, generation: u64, payloads: &[&[u8]]) -> Vec<u8> {
    let mut f = vec![0u8; 24];
    f[..8].copy_from_slice(&format::MAGIC);
    f[8..10].copy_from_slice(&1u16.to_le_bytes());
    f[10] = kind;
    f[12..20].copy_from_slice(&generation.to_le_bytes());
    let crc = crc32c(&f[..20]);
    f[20..24].copy_from_slice(&crc.to_le_bytes());
    for p in payloads {
        format::encode_record(p, &mut f);
    }
    f
}

/// CRC-32C, bit by bit (the test does not lean on the crate it checks).
fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn a_directory_an_older_build_wrote_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(log(d, 1), v1_file(b'L', 1, &[b"SET a 1", b"SET b 2"])).unwrap();
    fs::write(log(d, 2), v1_file(b'L', 2, &[b"SET c 3"])).unwrap();
    for mode in [opts(Durability::Os), truncating(Durability::Always)] {
        let err = open(d, mode).err().unwrap();
        assert!(matches!(&err, Error::OldFormat { version: 1, .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("written by an older serverlab (format 1); this build reads 2: "),
            "{msg}"
        );
        assert!(msg.contains("wal-0000000000000001.log"), "{msg}");
    }
    assert!(!d.join(MANIFEST_FILE).exists(), "nothing written");
}

#[test]
fn a_segment_from_another_directory_is_refused() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    three_opens(a.path(), 1);
    three_opens(b.path(), 1);
    fs::copy(log(b.path(), 3), log(a.path(), 3)).unwrap();
    let err = open(a.path(), truncating(Durability::Os)).err().unwrap();
    assert!(
        matches!(&err, Error::BadHeader { what: format::HeaderError::Foreign(_), path } if path == &log(a.path(), 3)),
        "{err}"
    );
}
