//! The simulated disk's own promises, tested as a library's: what a power
//! loss keeps and drops, and what a failed call leaves.

use std::path::Path;

use super::*;

fn disk() -> SimFs {
    let fs = SimFs::new(7);
    fs.create_dir(Path::new("/d")).unwrap();
    fs.sync_dir(Path::new("/")).unwrap();
    fs
}

fn p(name: &str) -> PathBuf {
    Path::new("/d").join(name)
}

/// Creates `name` holding `bytes`, its data synced, its name not.
fn file(fs: &SimFs, name: &str, bytes: &[u8]) -> Box<dyn FsFile> {
    let f = fs.create(&p(name)).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_data().unwrap();
    f
}

fn reboot(fs: &SimFs) {
    fs.power_loss();
    assert!(fs.is_off());
    assert_eq!(fs.read(&p("x")).unwrap_err().raw_os_error(), Some(EIO));
    fs.power_on();
}

fn names(fs: &SimFs) -> Vec<String> {
    let names = fs.list(Path::new("/d")).unwrap();
    names
        .into_iter()
        .map(|n| n.into_string().unwrap())
        .collect()
}

#[test]
fn unsynced_data_is_lost_and_synced_data_survives() {
    let fs = disk();
    let f = file(&fs, "a", b"synced");
    fs.sync_dir(Path::new("/d")).unwrap();
    f.write_all(b" and not").unwrap();
    assert_eq!(
        fs.read(&p("a")).unwrap(),
        b"synced and not",
        "reads see the cache"
    );
    reboot(&fs);
    assert_eq!(fs.read(&p("a")).unwrap(), b"synced");
    assert_eq!(
        f.write_all(b"x").unwrap_err().raw_os_error(),
        Some(EIO),
        "a file opened before the power loss is dead"
    );
}

#[test]
fn a_new_name_needs_its_directory_synced() {
    let fs = disk();
    file(&fs, "a", b"data synced, name not");
    file(&fs, "b", b"both");
    fs.sync_dir(Path::new("/d")).unwrap();
    file(&fs, "c", b"after the directory's sync");
    reboot(&fs);
    assert_eq!(names(&fs), ["a", "b"]);
    assert_eq!(fs.read(&p("b")).unwrap(), b"both");
}

#[test]
fn an_unsynced_rename_or_remove_is_undone() {
    let fs = disk();
    file(&fs, "CURRENT", b"old");
    file(&fs, "gone", b"still here");
    fs.sync_dir(Path::new("/d")).unwrap();
    file(&fs, "CURRENT.tmp", b"new");
    fs.rename(&p("CURRENT.tmp"), &p("CURRENT")).unwrap();
    fs.remove(&p("gone")).unwrap();
    assert_eq!(fs.read(&p("CURRENT")).unwrap(), b"new");
    reboot(&fs);
    assert_eq!(fs.read(&p("CURRENT")).unwrap(), b"old");
    assert_eq!(
        names(&fs),
        ["CURRENT", "gone"],
        "the temporary name was never synced"
    );
    // The same steps with the directory synced last: all of it survives.
    file(&fs, "CURRENT.tmp", b"new");
    fs.rename(&p("CURRENT.tmp"), &p("CURRENT")).unwrap();
    fs.remove(&p("gone")).unwrap();
    fs.sync_dir(Path::new("/d")).unwrap();
    reboot(&fs);
    assert_eq!(fs.read(&p("CURRENT")).unwrap(), b"new");
    assert_eq!(names(&fs), ["CURRENT"]);
}

#[test]
fn a_directory_is_an_entry_of_its_parent() {
    let fs = SimFs::new(1);
    fs.create_dir(Path::new("/d")).unwrap();
    let f = fs.create(&p("a")).unwrap();
    f.sync_all().unwrap();
    fs.sync_dir(Path::new("/d")).unwrap();
    reboot(&fs);
    assert_eq!(
        fs.list(Path::new("/d")).unwrap_err().kind(),
        io::ErrorKind::NotFound,
        "/d's own name was never synced in /"
    );
}

#[test]
fn a_power_loss_may_keep_a_prefix_of_appended_bytes() {
    let appended: Vec<u8> = (1..=200u8).collect();
    let mut lengths = HashSet::new();
    let mut zeroes = 0;
    for (seed, loss) in (0..40).flat_map(|s| [(s, Loss::Prefix), (s, Loss::ZeroTail)]) {
        let fs = SimFs::new(seed);
        fs.create_dir(Path::new("/d")).unwrap();
        fs.sync_dir(Path::new("/")).unwrap();
        fs.set_loss(loss);
        let f = file(&fs, "a", b"head");
        fs.sync_dir(Path::new("/d")).unwrap();
        f.write_all(&appended).unwrap();
        reboot(&fs);
        let got = fs.read(&p("a")).unwrap();
        assert!(got.starts_with(b"head") && got.len() <= 204, "{loss:?}");
        let kept = &got[4..];
        let data = kept.iter().take_while(|&&b| b != 0).count();
        assert_eq!(kept[..data], appended[..data], "a prefix");
        if loss == Loss::Prefix {
            assert_eq!(data, kept.len(), "no zeroes");
        }
        zeroes += usize::from(kept[data..].contains(&0));
        assert!(kept[data..].iter().all(|&b| b == 0));
        lengths.insert(kept.len());
    }
    assert!(lengths.len() > 10 && zeroes > 5, "random: {lengths:?}");
}

#[test]
fn a_failed_call_fails_once_and_leaves_no_effect() {
    let fs = disk();
    let f = file(&fs, "a", b"one");
    fs.inject(Fault {
        at: At::Nth(Call::Write, 3),
        errno: ENOSPC,
        torn: false,
    });
    f.write_all(b" two").unwrap();
    assert_eq!(
        f.write_all(b" three").unwrap_err().raw_os_error(),
        Some(ENOSPC)
    );
    f.write_all(b" four").unwrap();
    assert_eq!(fs.read(&p("a")).unwrap(), b"one two four");
    let fired = fs.fired();
    assert_eq!(fired.len(), 1);
    assert_eq!((fired[0].call, &fired[0].path), (Call::Write, &p("a")));
    let next = fs.calls() + 1;
    fs.inject(Fault {
        at: At::Call(next),
        errno: EIO,
        torn: false,
    });
    let err = fs.rename(&p("a"), &p("b")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(EIO));
    assert_eq!(names(&fs), ["a"]);
}

#[test]
fn a_torn_write_leaves_a_strict_prefix() {
    let fs = disk();
    let f = file(&fs, "a", b"");
    fs.inject(Fault {
        at: At::Nth(Call::Write, 2),
        errno: EIO,
        torn: true,
    });
    assert!(f.write_all(b"0123456789").is_err());
    let got = fs.read(&p("a")).unwrap();
    assert!(got.len() < 10 && b"0123456789".starts_with(&got), "{got:?}");
}

#[test]
fn a_failed_sync_may_drop_the_page_cache() {
    let fs = disk();
    let f = file(&fs, "a", b"synced");
    fs.sync_dir(Path::new("/d")).unwrap();
    f.write_all(b" unsynced").unwrap();
    fs.inject(Fault {
        at: At::Nth(Call::SyncData, 2),
        errno: EIO,
        torn: true,
    });
    assert_eq!(f.sync_data().unwrap_err().raw_os_error(), Some(EIO));
    assert_eq!(
        fs.read(&p("a")).unwrap(),
        b"synced",
        "gone without a power loss"
    );
}

#[test]
fn a_crash_at_a_call_stops_everything_from_it() {
    let fs = disk();
    let f = file(&fs, "a", b"synced");
    fs.sync_dir(Path::new("/d")).unwrap();
    f.write_all(b" cached").unwrap();
    fs.crash_at(At::Nth(Call::SyncData, 2));
    assert_eq!(f.sync_data().unwrap_err().raw_os_error(), Some(EIO));
    assert!(fs.is_off());
    fs.power_on();
    assert_eq!(fs.read(&p("a")).unwrap(), b"synced", "the sync never ran");
}

#[test]
fn a_lock_is_exclusive_until_dropped_or_the_power_goes() {
    let fs = disk();
    let held = fs.lock(&p("LOCK")).unwrap();
    let again = fs.lock(&p("LOCK")).err().unwrap();
    assert_eq!(again.kind(), io::ErrorKind::WouldBlock);
    drop(held);
    let held = fs.lock(&p("LOCK")).unwrap();
    fs.sync_dir(Path::new("/d")).unwrap();
    reboot(&fs);
    let _new = fs.lock(&p("LOCK")).unwrap();
    drop(held); // the dead process's guard frees nothing of the new one's
    assert!(fs.lock(&p("LOCK")).is_err());
}

#[test]
fn a_file_emptied_since_its_sync_comes_back_whole() {
    for loss in [Loss::All, Loss::Prefix, Loss::ZeroTail] {
        let fs = disk();
        fs.set_loss(loss);
        file(&fs, "a", b"synced bytes");
        fs.sync_dir(Path::new("/d")).unwrap();
        let again = fs.create(&p("a")).unwrap(); // O_TRUNC
        again.write_all(b"new").unwrap();
        reboot(&fs);
        assert_eq!(fs.read(&p("a")).unwrap(), b"synced bytes", "{loss:?}");
    }
}
