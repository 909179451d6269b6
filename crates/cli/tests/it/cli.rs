//! Command-line contract: bad usage names the flag and exits 2.

use crate::support::*;

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    usage_error(&["serve", "board", "--strategy", "fastest"], "--strategy");
    usage_error(&["serve", "board", "--store", "magic"], "--store");
    usage_error(&["serve", "board", "--cpus", "0-x"], "--cpus");
    usage_error(&["serve", "board", "--cpus", "1000"], "--cpus");
    usage_error(&["serve", "board", "--threads", "0"], "--threads");
    usage_error(
        &["serve", "board", "--exit-policy", "sometimes"],
        "--exit-policy",
    );
    usage_error(&["serve", "board", "--max-request", "0"], "--max-request");
    usage_error(&["serve", "echo", "--addr", "nowhere"], "--addr");
    usage_error(&["serve", "board", "--bogus"], "--bogus");
    usage_error(&["load", "board", "--pipeline", "0"], "--pipeline");
    usage_error(&["load", "board", "--duration", "soon"], "--duration");
    usage_error(
        &["load", "board", "--reader-mix", "write=1"],
        "--reader-mix",
    );
    usage_error(&["load", "board", "--format", "xml"], "--format");
    usage_error(
        &["load", "board", "--posters", "0", "--readers", "0"],
        "--posters",
    );
    usage_error(&["load", "board", "127.0.0.1", "5", "5", "10"], "5 values");
    usage_error(
        &["load", "board", "127.0.0.1", "5", "5", "10", "7"],
        "THROTTLE",
    );
    usage_error(&["load", "board", "localhost", "5", "5", "10", "0"], "IP");
    usage_error(&["frobnicate"], "frobnicate");
}

#[test]
fn serve_help_lists_strategies_and_stores() {
    let out = run(&["serve", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for name in strategies().into_iter().chain(stores()) {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(name)),
            "serve --help lacks {name}:\n{help}"
        );
    }
}

#[test]
fn port_in_use_is_a_clear_runtime_error() {
    let server = ServerProc::start("board", &[]);
    let addr = server.addr.to_string();
    let out = run(&["serve", "board", "--addr", &addr]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(&addr), "{}", text(&out.stderr));
}
