//! The linearizability checker's own throughput and memory, on synthetic
//! board histories: N operations from 8 clients over 16 topics (POST,
//! READ, COUNT and LIST as the concurrency phase sends them), made
//! linearizable by construction, then checked as `serverlab check` does.
//!
//! ```sh
//! cargo run --release -p serverlab-check --example lin_throughput -- 100000
//! ```
//!
//! Prints operations checked per second and the process's peak RSS
//! (VmHWM), and the RSS before checking (the history itself), so the
//! checker's share can be told apart. Run one size per process: the peak
//! is the process's.
// An example is read top to bottom, as one measurement.
#![allow(clippy::too_many_lines)]

use serverlab_check::board::model::{Op, ReadReply, Topic};
use serverlab_check::lin::{check_partitions, Budget, Operation, Outcome, Progress, DEFAULT_STEPS};
use std::time::Instant;

const TOPICS: usize = 16;
const CLIENTS: usize = 8;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("usage: lin_throughput OPERATIONS  (e.g. 10000, 100000, 1000000)");
            std::process::exit(2)
        });
    let mut parts = history(n, 42);
    // In the order sent, as the phase records them (so the check goes
    // window by window); `UNSORTED=1` keeps the order they took effect
    // in, which makes each partition one window: one search.
    if std::env::var_os("UNSORTED").is_none() {
        for (_, ops) in &mut parts {
            ops.sort_by_key(|o| (o.call, o.ret));
        }
    }
    let before = rss_kib("VmRSS");
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let started = Instant::now();
    let outcomes = check_partitions(
        &parts,
        Budget::steps(DEFAULT_STEPS),
        threads,
        &Progress::default(),
    );
    let took = started.elapsed().as_secs_f64();
    let ok = outcomes.iter().all(|o| *o == Outcome::Linearizable);
    assert!(
        ok,
        "a history linearizable by construction was not: {outcomes:?}"
    );
    println!(
        "{n} operations over {TOPICS} topics, {threads} threads: checked in {took:.3} s = {:.0} ops/s; \
         RSS before checking {} MiB, peak {} MiB",
        n as f64 / took,
        before / 1024,
        rss_kib("VmHWM") / 1024
    );
}

/// A board history: each client sends one operation at a time, each
/// takes effect at a random instant inside its interval, and its reply is
/// what a correct board answers at that instant.
fn history(n: usize, seed: u64) -> Vec<(Topic, Vec<Operation<Op>>)> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let spans = serverlab_check::lin::spans::random_spans(&mut rng, n, CLIENTS, 2_000);
    let mut count = [0u64; TOPICS];
    let mut messages: Vec<Vec<String>> = vec![Vec::new(); TOPICS];
    let mut parts: Vec<(Topic, Vec<Operation<Op>>)> = (0..TOPICS)
        .map(|t| {
            (
                Topic {
                    name: format!("t{t}"),
                },
                Vec::new(),
            )
        })
        .collect();
    for (i, s) in spans.iter().enumerate() {
        let (client, call, ret) = (s.client, s.sent, s.answered);
        let t = rng.usize(..TOPICS);
        let op = |op| Operation {
            client,
            call,
            ret,
            op,
        };
        match rng.u8(..100) {
            0..35 => {
                let id = count[t];
                count[t] += 1;
                messages[t].push(format!("m{i}"));
                parts[t].1.push(op(Op::Post {
                    msg: format!("m{i}"),
                    id: Ok(id),
                }));
            }
            35..70 => {
                let id = rng.u64(..=count[t] + 1);
                let got = if id < count[t] {
                    let msg = messages[t][id as usize].clone();
                    ReadReply::Posted { msg, id }
                } else {
                    ReadReply::Empty
                };
                parts[t].1.push(op(Op::Read { id, got }));
            }
            70..88 => parts[t].1.push(op(Op::Count(Ok(count[t])))),
            _ => {
                for (u, part) in parts.iter_mut().enumerate() {
                    part.1.push(op(Op::Listed(Ok(count[u] > 0))));
                }
            }
        }
    }
    parts
}

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
