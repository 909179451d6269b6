use std::fs;

use serverlab_wal::{Durability, Error, Wal, LOCK_FILE};

use crate::{open, opts};

#[test]
fn a_directory_in_use_refuses_a_second_opener() {
    let dir = tempfile::tempdir().unwrap();
    let (first, _) = open(dir.path(), opts(Durability::Always)).unwrap();
    let err = open(dir.path(), opts(Durability::Os)).err().unwrap();
    match &err {
        Error::InUse { dir: d, lock } => {
            assert_eq!(d, dir.path());
            assert_eq!(lock, &dir.path().join(LOCK_FILE));
        }
        other => panic!("{other}"),
    }
    assert!(
        err.to_string().contains(dir.path().to_str().unwrap()),
        "{err}"
    );
    assert!(err.to_string().contains("in use"), "{err}");
    drop(first);
    open(dir.path(), opts(Durability::Os)).expect("free once the first is closed");
}

#[test]
fn an_unusable_directory_is_named() {
    let base = tempfile::tempdir().unwrap();
    let file = base.path().join("plain-file");
    fs::write(&file, b"x").unwrap();
    let dir = file.join("data");
    let err = open(&dir, opts(Durability::Always)).err().unwrap();
    assert!(matches!(err, Error::Dir { .. }), "{err}");
    assert!(err.to_string().contains(dir.to_str().unwrap()), "{err}");
}

#[test]
fn a_missing_directory_is_created() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("a/b");
    let (wal, _) = open(&dir, opts(Durability::Os)).unwrap();
    wal.append(b"x").unwrap();
    assert!(dir.join(LOCK_FILE).exists());
}

#[test]
fn durability_none_opens_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let err = Wal::open(dir.path(), opts(Durability::None), |_| Ok(()))
        .err()
        .unwrap();
    assert!(matches!(err, Error::NoLog), "{err}");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_compaction_still_running_keeps_the_directory_locked() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = open(dir.path(), opts(Durability::Os)).unwrap();
    wal.append(b"SET a 1").unwrap();
    let c = wal.begin_compaction().unwrap().unwrap();
    drop(wal);
    let err = open(dir.path(), opts(Durability::Os)).err().unwrap();
    assert!(matches!(err, Error::InUse { .. }), "{err}");
    c.write_snapshot([b"SET a 1"]).unwrap();
    let (_, got) = open(dir.path(), opts(Durability::Os)).unwrap();
    assert_eq!(got, [b"SET a 1".to_vec()]);
}
