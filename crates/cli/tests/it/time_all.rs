//! Service time, sampled or timed in full (issue 24, point 6): by default
//! each server thread times one request in 64, and the final statistics
//! say "sampled 1 in 64" beside the figures (a maximum is a sample's);
//! `serve --time-all` times every request, so the timed count is the
//! request count.

use crate::support::*;

/// Requests sent on one connection.
const REQUESTS: u64 = 200;

/// `REQUESTS` board requests, then the final statistics' service-time
/// line.
fn service_time_line(extra: &[&str]) -> String {
    let server = ServerProc::start("board", extra);
    let mut c = Client::connect(server.addr);
    for _ in 0..REQUESTS {
        assert_eq!(c.req(b"COUNT@t"), b"0");
    }
    drop(c);
    let (status, out) = server.stop();
    assert!(status.success(), "{out}");
    out.lines()
        .find(|l| l.trim_start().starts_with("service_time_us:"))
        .unwrap_or_else(|| panic!("no service time in {out}"))
        .to_string()
}

/// A number on the service-time line.
fn field(line: &str, name: &str) -> u64 {
    line.split(&format!(" {name} "))
        .nth(1)
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

#[test]
fn by_default_the_statistics_say_service_time_is_sampled_1_in_64() {
    let line = service_time_line(&[]);
    assert!(line.contains("sampled 1 in 64"), "{line}");
    assert_eq!(field(&line, "count"), REQUESTS, "{line}");
    assert!(field(&line, "timed") < REQUESTS, "{line}");
}

#[test]
fn time_all_times_every_request() {
    let line = service_time_line(&["--time-all"]);
    assert_eq!(field(&line, "count"), REQUESTS, "{line}");
    assert_eq!(field(&line, "timed"), REQUESTS, "{line}");
    assert!(line.contains("every request timed"), "{line}");
}
