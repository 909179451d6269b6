//! `check --ledger`'s verdict is one true sentence: a server that lost
//! acknowledged writes gets FAILED and how many keys lost theirs, the
//! listing says how many keys it leaves out, and a pass says none missing.

use crate::support::*;

/// A verified kv load with a ledger against `server`, only writes, so
/// that every key ends on a value a server that lost it cannot hold.
fn ledgered_load(server: &ServerProc, ledger: &std::path::Path) {
    let out = server.load(
        "kv",
        &words(&format!(
            "--verify --ledger {} --mix put=100 --keys 40 --concurrency 4 \
            --sessions 40 --requests-per-session 20",
            ledger.display()
        )),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn check_ledger(server: &ServerProc, ledger: &std::path::Path) -> (Option<i32>, String) {
    let addr = server.addr.to_string();
    let out = run(&["check", "kv", &addr, "--ledger", ledger.to_str().unwrap()]);
    (
        out.status.code(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

#[test]
fn a_server_that_lost_writes_gets_one_failed_sentence_and_the_count_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let ledger = tmp.path().join("kv.ledger");
    let first = ServerProc::start("kv", &[]);
    ledgered_load(&first, &ledger);
    // The same server holds every acknowledged write.
    let (code, said) = check_ledger(&first, &ledger);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains(" acknowledged writes: none missing"),
        "{said}"
    );
    assert!(!said.contains("FAILED"), "{said}");
    drop(first);
    // A fresh server, as one restarted without a log, holds none of them.
    let empty = ServerProc::start("kv", &[]);
    let (code, said) = check_ledger(&empty, &ledger);
    assert_eq!(code, Some(1), "{said}");
    let first_line = said.lines().next().unwrap();
    let keys = 40;
    assert!(
        first_line.contains(&format!(
            "FAILED: {keys} of {keys} keys lost their last acknowledged write"
        )),
        "{said}"
    );
    // Nothing in the sentence says the opposite.
    assert!(!said.contains("none missing"), "{said}");
    let listed = said
        .lines()
        .filter(|l| l.contains(": holds nothing, last acknowledged"))
        .count();
    assert_eq!(listed, 10, "{said}");
    assert!(
        first_line.ends_with("the keys wrong, the first 10:"),
        "{said}"
    );
    assert_eq!(
        said.lines().last().unwrap().trim(),
        format!("and {} more", keys - 10),
        "{said}"
    );
}
