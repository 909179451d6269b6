//! The services under simulation: the RESP service (and kv's) on the
//! write-ahead log over the simulated disk (`serverlab_wal::vfs::sim`),
//! with the log committed when the test says (`Committer::Caller`), a
//! clock the test moves, and every client a connection the test steps in
//! turn, in one thread: a run is a function of its seed.
//!
//! Each run takes seeded random commands from every family, commits now
//! and then, moves the clock, fails a sync (the disk's `EIO`, or the
//! `fail_syncs_after` layer) and loses power at random steps. What it
//! checks is in `resp.rs`'s opening and docs/reliability.md.
//!
//! - `cargo test -p serverlab-service --test sim` runs the fixed seeds
//!   CI runs ([`SEEDS`]) with no bug planted, and each planted bug
//!   ([`serverlab_service::sim::Mutant`]) until a seed catches it.
//! - `SEED=17 cargo test -p serverlab-service --test sim -- --nocapture`
//!   replays seed 17 and prints its steps; with `MUTANT=no-rollback`,
//!   with that bug planted.
//! - `SEEDS=2000` runs that many seeds (by hand), and the mutant table
//!   counts over that many (`--nocapture` prints it); with
//!   `SIM_CATCH_ALL=1` it also counts how many of them catch each bug.

mod kv;
mod regressions;
mod reply;
mod resp;
mod workload;
mod world;

use serverlab_service::sim::{self, Mutant};

/// Seeds CI runs with no bug planted (each about 300 steps).
const SEEDS: u64 = 24;
/// The most seeds CI gives a planted bug to be caught in.
const MUTANT_SEEDS: u64 = 60;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number")),
    )
}

fn env_mutant() -> Option<Mutant> {
    let name = std::env::var("MUTANT").ok()?;
    let m = Mutant::ALL.into_iter().find(|m| m.name() == name);
    Some(m.unwrap_or_else(|| {
        let all: Vec<_> = Mutant::ALL.iter().map(|m| m.name()).collect();
        panic!("MUTANT={name}: none such; there are {}", all.join(", "))
    }))
}

/// The seeds to run: `SEED`'s alone, else `0..SEEDS` (env or `default`).
fn seeds(default: u64) -> Vec<u64> {
    match env_u64("SEED") {
        Some(s) => vec![s],
        None => (0..env_u64("SEEDS").unwrap_or(default)).collect(),
    }
}

/// Runs `run` on each seed with `mutant` planted; the first failure,
/// with what replays it.
fn first_failure(
    test: &str,
    mutant: Option<Mutant>,
    seeds: &[u64],
    run: fn(u64, bool) -> Result<(), String>,
) -> Option<(usize, String)> {
    let verbose = std::env::var("SEED").is_ok();
    for (i, &seed) in seeds.iter().enumerate() {
        sim::plant(mutant);
        let got = std::panic::catch_unwind(|| run(seed, verbose))
            .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&p))));
        sim::plant(None);
        sim::set_clock(None);
        if let Err(why) = got {
            let planted = mutant.map_or(String::new(), |m| format!("MUTANT={} ", m.name()));
            let again = format!(
                "SEED={seed} {planted}cargo test -p serverlab-service --test sim {test} -- \
                 --nocapture"
            );
            return Some((i + 1, format!("seed {seed} failed; replay: {again}\n{why}")));
        }
    }
    None
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// With no bug planted (or `MUTANT`'s), every seed keeps every property.
fn clean(test: &str, run: fn(u64, bool) -> Result<(), String>) {
    let seeds = seeds(SEEDS);
    if let Some((_, why)) = first_failure(test, env_mutant(), &seeds, run) {
        panic!("{why}");
    }
}

#[test]
fn resp_keeps_every_property_under_faults() {
    clean("resp_keeps", resp::run);
}

#[test]
fn kv_keeps_every_property_under_faults() {
    clean("kv_keeps", kv::run);
}

/// Each planted bug is caught, and how many seeds it took (the table in
/// docs/reliability.md).
#[test]
fn resp_catches_every_planted_bug() {
    if std::env::var("SEED").is_ok() {
        return; // a replay runs one seed, above
    }
    let seeds = seeds(MUTANT_SEEDS);
    let mut escaped = Vec::new();
    println!("mutant | seeds to catch (of {})", seeds.len());
    let count = std::env::var("SIM_CATCH_ALL").is_ok();
    for m in Mutant::ALL {
        match first_failure("resp_keeps", Some(m), &seeds, resp::run) {
            Some((n, why)) => {
                let first = why.lines().take(3).collect::<Vec<_>>().join(" / ");
                let all = if count {
                    let caught = seeds
                        .iter()
                        .filter(|&&s| {
                            first_failure("resp_keeps", Some(m), &[s], resp::run).is_some()
                        })
                        .count();
                    format!(" | caught by {caught} of {}", seeds.len())
                } else {
                    String::new()
                };
                println!("{} | {n}{all} | {first}", m.name());
            }
            None => {
                println!("{} | not caught", m.name());
                escaped.push(m.name());
            }
        }
    }
    assert!(
        escaped.is_empty(),
        "not caught in {} seeds: {escaped:?}",
        seeds.len()
    );
}
