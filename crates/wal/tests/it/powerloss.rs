//! Power loss, simulated: random workloads through the `Wal` API on the
//! simulated disk (`vfs::sim`), a power loss at a random call, and a
//! random call failed with `EIO` or `ENOSPC`; then strict recovery, and
//! the recovered log checked against a model of what was acknowledged.
//!
//! Each record carries its sequence number, so the recovered log is a list
//! in which a lost, reordered, duplicated or invented record shows. The
//! model keeps `history`, every append the log accepted, in order, since
//! the state last recovered, and two floors: how much of it must survive
//! a restart of the process, and how much a power loss. Every recovery,
//! after a restart or a power loss, must give back exactly `history[..n]`
//! for some `n` at least the floor. So: every acknowledged append is
//! there, no refused one (never in `history`), nothing never written, and
//! a prefix, in order.
//!
//! What raises the floors: under `always`, a ticket whose commit returned
//! `Ok` (both floors: it was synced); under `os` and `everysec`, an
//! append that returned `Ok` (the restart floor: the kernel has it; a
//! power loss may take any suffix of the appends since the last sync the
//! test can see); in every mode, a compaction that finished (its snapshot
//! holds the state at its cut) and an open that succeeded (replay syncs
//! what it replayed). A failed `fsync` that dropped the page cache lowers
//! the restart floor to the power floor, as the kernel may forget the
//! data without a power loss.
//!
//! The default run is short (200 cases); `SERVERLAB_POWERLOSS_CASES=N`
//! runs N cases and prints what was tried, `SERVERLAB_POWERLOSS_SECS=S`
//! takes no new case after S seconds.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serverlab_wal::vfs::sim::{At, Call, Fault, Loss, SimFs, EIO, ENOSPC};
use serverlab_wal::vfs::Fs;
use serverlab_wal::{ApplyError, Committer, Durability, Error, Options, Recover, Ticket, Wal};

const DIR: &str = "/srv/data";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `always`, the log thread committing.
    Always,
    /// `always`, the caller committing (`commit_pending`).
    AlwaysCaller,
    /// `always`, the waiting caller leading the commit (no log thread).
    AlwaysLeader,
    Os,
    EverySec,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    /// An append with this many bytes of padding after its number.
    Append(u8),
    /// Under `always`, wait for (or commit) the pending appends.
    Commit,
    /// A whole compaction, snapshotting the model's state.
    Compact,
    /// The process restarts (no power loss): close, open.
    Reopen,
}

#[derive(Debug, Clone, Copy)]
struct Planned {
    /// Where the failing call falls, as a fraction of the workload's calls
    /// (`None`: the n-th call of `kind`).
    at: Option<f64>,
    kind: Call,
    nth: u64,
    errno: i32,
    torn: bool,
}

#[derive(Debug, Clone)]
struct Case {
    mode: Mode,
    ops: Vec<Op>,
    /// Where the power is lost, as a fraction of the workload's calls
    /// (1.0 and over: after the last).
    crash: f64,
    fault: Option<Planned>,
    loss: Loss,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    let mode = prop_oneof![
        Just(Mode::Always),
        Just(Mode::AlwaysCaller),
        Just(Mode::AlwaysLeader),
        Just(Mode::Os),
        Just(Mode::EverySec)
    ];
    let op = prop_oneof![
        10 => (0u8..48).prop_map(Op::Append),
        3 => Just(Op::Commit),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
    ];
    let kind = proptest::sample::select(&Call::ALL[..]);
    let fault = (
        prop_oneof![Just(None), (0.0..1.0f64).prop_map(Some)],
        kind,
        1u64..6,
        prop_oneof![Just(EIO), Just(ENOSPC)],
        any::<bool>(),
    )
        .prop_map(|(at, kind, nth, errno, torn)| Planned {
            at,
            kind,
            nth,
            errno,
            torn,
        });
    let loss = prop_oneof![Just(Loss::All), Just(Loss::Prefix), Just(Loss::ZeroTail)];
    (
        mode,
        proptest::collection::vec(op, 1..40),
        0.0..1.1f64,
        proptest::option::weighted(0.7, fault),
        loss,
        any::<u64>(),
    )
        .prop_map(|(mode, ops, crash, fault, loss, seed)| Case {
            mode,
            ops,
            crash,
            fault,
            loss,
            seed,
        })
}

/// Record `seq`: its number, then `pad` bytes that depend on it.
fn encode(seq: u64, pad: u8) -> Vec<u8> {
    let mut r = seq.to_le_bytes().to_vec();
    r.extend((0..pad).map(|i| (seq as u8).wrapping_add(i)));
    r
}

fn decode(r: &[u8]) -> Result<u64, ApplyError> {
    let seq = u64::from_le_bytes(r.get(..8).ok_or("short record")?.try_into()?);
    let pad_ok = r[8..]
        .iter()
        .enumerate()
        .all(|(i, &b)| b == (seq as u8).wrapping_add(i as u8));
    if !pad_ok {
        return Err(format!("record {seq}: its padding is damaged").into());
    }
    Ok(seq)
}

/// What the test knows of the log.
#[derive(Default)]
struct Model {
    /// Every append accepted, in order, since the state last recovered.
    history: Vec<u64>,
    /// How much of `history` survives a restart of the process.
    restart_floor: usize,
    /// How much of `history` survives a power loss.
    power_floor: usize,
    next_seq: u64,
    /// `always`: appends accepted, commit not yet seen (ticket, index).
    pending: Vec<(Ticket, usize)>,
    /// The faults already accounted for.
    fired_seen: usize,
}

impl Model {
    fn durable(&mut self, upto: usize) {
        self.power_floor = self.power_floor.max(upto);
        self.restart_floor = self.restart_floor.max(upto);
    }

    /// Checks a recovered log against the history and the floor; it is
    /// the new history, all of it durable.
    fn recovered(&mut self, got: &[u64], floor: usize, when: &str) -> Result<(), TestCaseError> {
        let h = &self.history;
        let n = got.len();
        prop_assert!(
            n <= h.len() && got == &h[..n],
            "{when}: recovered {got:?} is not a prefix of the appends {h:?}"
        );
        prop_assert!(
            n >= floor,
            "{when}: recovered {n} records, but {floor} were acknowledged as surviving it: {got:?} of {h:?}"
        );
        self.history.truncate(n);
        self.pending.clear();
        self.power_floor = n;
        self.restart_floor = n;
        Ok(())
    }
}

/// Tallies over a campaign.
#[derive(Debug, Default)]
struct Tally {
    cases: u64,
    by_mode: BTreeMap<String, u64>,
    ops: u64,
    appends: u64,
    acknowledged: u64,
    refused: u64,
    compactions: u64,
    reopens: u64,
    calls: u64,
    crashes_mid_workload: u64,
    crashes_mid_open: u64,
    faults_fired: BTreeMap<String, u64>,
    failed_opens: u64,
    refusals: BTreeMap<String, u64>,
    recovered_records: u64,
}

static TALLY: Mutex<Option<Tally>> = Mutex::new(None);

fn tally(f: impl FnOnce(&mut Tally)) {
    let mut t = TALLY.lock().unwrap_or_else(|e| e.into_inner());
    f(t.get_or_insert_with(Tally::default));
}

struct Run {
    fs: SimFs,
    mode: Mode,
    wal: Option<Wal>,
    m: Model,
}

impl Run {
    fn new(case: &Case) -> Run {
        let fs = SimFs::new(case.seed);
        fs.set_loss(case.loss);
        fs.create_dir(Path::new("/srv")).unwrap();
        fs.sync_dir(Path::new("/")).unwrap();
        Run {
            fs,
            mode: case.mode,
            wal: None,
            m: Model::default(),
        }
    }

    fn opts(&self, recover: Recover) -> Options {
        let (durability, committer) = match self.mode {
            Mode::Always => (Durability::Always, Committer::LogThread),
            Mode::AlwaysCaller => (Durability::Always, Committer::Caller),
            Mode::AlwaysLeader => (Durability::Always, Committer::Leader),
            Mode::Os => (Durability::Os, Committer::LogThread),
            Mode::EverySec => (Durability::EverySec, Committer::LogThread),
        };
        Options {
            recover,
            committer,
            fs: self.fs.shared(),
            ..Options::new(durability)
        }
    }

    fn open(&self, recover: Recover) -> Result<(Wal, Vec<u64>), Error> {
        let mut got = Vec::new();
        let wal = Wal::open(DIR, self.opts(recover), |r| {
            got.push(decode(r)?);
            Ok(())
        })?;
        Ok((wal, got))
    }

    /// A failed sync that dropped the page cache since the last look: the
    /// restart floor falls to the power floor.
    fn account_faults(&mut self) {
        let fired = self.fs.fired();
        for f in &fired[self.m.fired_seen..] {
            let sync = matches!(f.call, Call::SyncData | Call::SyncAll | Call::SyncFile);
            if sync && f.fault.torn {
                self.m.restart_floor = self.m.power_floor;
            }
            tally(|t| *t.faults_fired.entry(format!("{:?}", f.call)).or_default() += 1);
        }
        self.m.fired_seen = fired.len();
    }

    /// The process (re)starts: open, and check what replay gave back.
    fn start(&mut self) -> Result<(), TestCaseError> {
        self.account_faults();
        match self.open(Recover::Strict) {
            Ok((wal, got)) => {
                let floor = self.m.restart_floor;
                self.m.recovered(&got, floor, "a restart")?;
                self.wal = Some(wal);
            }
            Err(e) => {
                tally(|t| t.failed_opens += 1);
                let before = self.m.fired_seen;
                self.account_faults();
                let explained = self.fs.is_off() || self.m.fired_seen > before;
                if self.fs.is_off() {
                    tally(|t| t.crashes_mid_open += 1);
                }
                prop_assert!(
                    explained,
                    "an open with no fault and no power loss failed: {e}"
                );
            }
        }
        Ok(())
    }

    fn append(&mut self, pad: u8) {
        let wal = self.wal.as_ref().expect("open");
        let seq = self.m.next_seq;
        self.m.next_seq += 1;
        tally(|t| t.appends += 1);
        let Ok(ticket) = wal.append(&encode(seq, pad)) else {
            tally(|t| t.refused += 1);
            return;
        };
        self.m.history.push(seq);
        let n = self.m.history.len();
        match self.mode {
            Mode::Os | Mode::EverySec => {
                self.m.restart_floor = n;
                tally(|t| t.acknowledged += 1);
            }
            Mode::Always | Mode::AlwaysCaller | Mode::AlwaysLeader => {
                self.m.pending.push((ticket, n - 1))
            }
        }
    }

    /// `always`: waits for (or makes) the commit of every pending append,
    /// and counts the acknowledged ones as durable.
    fn commit(&mut self) {
        let wal = self.wal.as_ref().expect("open");
        match self.mode {
            Mode::AlwaysCaller => wal.commit_pending(),
            Mode::Always | Mode::AlwaysLeader => {
                if let Some(&(t, _)) = self.m.pending.last() {
                    let _ = wal.wait(t);
                }
            }
            Mode::Os | Mode::EverySec => return,
        }
        let mut acked = 0;
        for (t, i) in std::mem::take(&mut self.m.pending) {
            match wal.settled(t) {
                Some(Ok(())) => {
                    self.m.durable(i + 1);
                    acked += 1;
                }
                Some(Err(_)) => {}
                None => self.m.pending.push((t, i)),
            }
        }
        tally(|t| t.acknowledged += acked);
    }

    /// A whole compaction, as a service runs one; a failed step fails the
    /// log, as the services do.
    fn compact(&mut self) {
        let cut = self.m.history.len();
        let wal = self.wal.as_ref().expect("open");
        let c = match wal.begin_compaction() {
            Ok(Some(c)) => c,
            Ok(None) => unreachable!("one compaction at a time"),
            Err(e) => {
                if trace() {
                    eprintln!("  cut failed: {e}");
                }
                return wal.fail(e);
            }
        };
        self.commit();
        let wal = self.wal.as_ref().expect("open");
        let state = self.m.history[..cut].iter().map(|&s| encode(s, 0));
        match c.write_snapshot(state) {
            Ok(_) => {
                self.m.durable(cut);
                tally(|t| t.compactions += 1);
            }
            Err(e) => {
                if trace() {
                    eprintln!("  compaction failed: {e}");
                }
                wal.fail(e)
            }
        }
    }

    fn step(&mut self, op: Op) -> Result<(), TestCaseError> {
        if trace() {
            eprintln!("op {op:?} (calls {})", self.fs.calls());
        }
        if self.wal.is_none() {
            self.start()?;
            if self.wal.is_none() {
                return Ok(());
            }
        }
        tally(|t| t.ops += 1);
        match op {
            Op::Append(pad) => self.append(pad),
            Op::Commit => self.commit(),
            Op::Compact => self.compact(),
            Op::Reopen => {
                self.commit();
                self.wal = None;
                tally(|t| t.reopens += 1);
            }
        }
        Ok(())
    }

    fn workload(&mut self, ops: &[Op]) -> Result<(), TestCaseError> {
        for &op in ops {
            if self.fs.is_off() {
                tally(|t| t.crashes_mid_workload += 1);
                break;
            }
            self.step(op)?;
        }
        if !self.fs.is_off() && self.wal.is_some() {
            self.commit();
        }
        Ok(())
    }

    /// The power goes (if it has not), the process dies with it; then
    /// strict recovery, checked against the power floor.
    fn power_loss_and_recover(&mut self) -> Result<(), TestCaseError> {
        self.fs.power_loss();
        self.account_faults();
        if trace() {
            eprintln!("power loss; fired {:?}", self.fs.fired());
        }
        self.wal = None;
        self.fs.clear_faults();
        self.fs.power_on();
        let floor = self.m.power_floor;
        let got = match self.open(Recover::Strict) {
            Ok((_, got)) => got,
            Err(e) => {
                let refusal = format!("{:?}", self.mode) + ": " + refusal_name(&e);
                tally(|t| *t.refusals.entry(refusal).or_default() += 1);
                prop_assert!(
                    documented_refusal(self.mode, &e),
                    "strict recovery after a power loss refused: {e}"
                );
                self.open(Recover::Truncate)
                    .map_err(|e| TestCaseError::fail(format!("truncate: {e}")))?
                    .1
            }
        };
        tally(|t| t.recovered_records += got.len() as u64);
        self.m.recovered(&got, floor, "a power loss")
    }
}

fn refusal_name(e: &Error) -> &'static str {
    match e {
        Error::DamagedSegment { .. } => "DamagedSegment",
        Error::Corrupt { .. } => "Corrupt",
        Error::Snapshot { .. } => "Snapshot",
        Error::TornHeader { .. } => "TornHeader",
        Error::Gap { .. } => "Gap",
        Error::MissingNewest { .. } => "MissingNewest",
        Error::MissingSnapshot { .. } => "MissingSnapshot",
        Error::NoManifest { .. } => "NoManifest",
        Error::BadManifest { .. } => "BadManifest",
        Error::BadHeader { .. } => "BadHeader",
        _ => "other",
    }
}

/// The one refusal after a power loss that docs/durability.md documents
/// ("What cannot be detected"): under `os` and `everysec`, a power loss
/// between a compaction's cut and its sync of the old segment, which
/// leaves the old segment torn while the new one holds records.
fn documented_refusal(mode: Mode, e: &Error) -> bool {
    matches!(mode, Mode::Os | Mode::EverySec) && matches!(e, Error::DamagedSegment { .. })
}

/// One case: a dry run to count the workload's calls, then the run with
/// the power loss and the fault placed among them.
fn run_case(case: &Case) -> Result<(), TestCaseError> {
    let mut dry = Run::new(case);
    let setup = dry.fs.calls();
    dry.workload(&case.ops)?;
    let calls = dry.fs.calls() - setup;
    dry.power_loss_and_recover()?;

    let mut run = Run::new(case);
    let at = |f: f64| setup + 1 + (f * calls as f64) as u64;
    if case.crash < 1.0 {
        run.fs.crash_at(At::Call(at(case.crash)));
    }
    if let Some(p) = case.fault {
        run.fs.inject(Fault {
            at: p.at.map_or(
                At::Nth(p.kind, p.nth + u64::from(p.kind == Call::SyncDir)),
                |f| At::Call(at(f)),
            ),
            errno: p.errno,
            torn: p.torn,
        });
    }
    run.workload(&case.ops)?;
    let made = run.fs.calls();
    run.power_loss_and_recover()?;
    tally(|t| {
        t.cases += 1;
        t.calls += calls + made;
        *t.by_mode.entry(format!("{:?}", case.mode)).or_default() += 1;
    });
    Ok(())
}

fn trace() -> bool {
    std::env::var_os("SERVERLAB_POWERLOSS_TRACE").is_some()
}

fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn power_loss_at_any_call_keeps_every_acknowledged_append() {
    let cases = env("SERVERLAB_POWERLOSS_CASES").unwrap_or(200);
    let secs = env("SERVERLAB_POWERLOSS_SECS").map(Duration::from_secs);
    let start = Instant::now();
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = case();
    let mut result = Ok(());
    for _ in 0..cases {
        if secs.is_some_and(|s| start.elapsed() > s) {
            break;
        }
        let tree = strategy.new_tree(&mut runner).expect("a case");
        result = runner.run_one(tree, |c| run_case(&c)).map(drop);
        if result.is_err() {
            break;
        }
    }
    let t = TALLY.lock().unwrap_or_else(|e| e.into_inner()).take();
    if env("SERVERLAB_POWERLOSS_CASES").is_some() || result.is_err() {
        eprintln!("power-loss campaign, {:.0?}: {t:#?}", start.elapsed());
    }
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Found by the campaign's first case: the first open created the data
/// directory and never synced its parent, so a power loss could take the
/// directory, and every append acknowledged in it, away.
#[test]
fn a_new_data_directory_survives_a_power_loss() {
    for deep in ["/srv/data", "/srv/a/b/data"] {
        let fs = SimFs::new(1);
        fs.create_dir(Path::new("/srv")).unwrap();
        fs.sync_dir(Path::new("/")).unwrap();
        let opts = || Options {
            fs: fs.shared(),
            ..Options::new(Durability::Always)
        };
        let wal = Wal::open(deep, opts(), |_| Ok(())).unwrap();
        let t = wal.append(&encode(0, 3)).unwrap();
        wal.wait(t).unwrap();
        fs.power_loss();
        drop(wal);
        fs.power_on();
        let mut got = Vec::new();
        Wal::open(deep, opts(), |r| {
            got.push(decode(r)?);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, [0], "{deep}");
    }
}

/// Found by the campaign: a compaction whose new segment could not be
/// created had spent its generation, so the next compaction created the
/// one after it, and the next start (a restart is enough, no power loss
/// needed) refused the gap. Now the failed cut leaves the number unused.
#[test]
fn a_failed_cut_leaves_no_gap_in_the_generations() {
    for call in [Call::Create, Call::Write, Call::SyncAll, Call::SyncDir] {
        let fs = SimFs::new(3);
        let opts = || Options {
            fs: fs.shared(),
            ..Options::new(Durability::Os)
        };
        let wal = Wal::open(DIR, opts(), |_| Ok(())).unwrap();
        wal.append(&encode(0, 1)).unwrap();
        let next = fs.calls_by_kind().get(&call).copied().unwrap_or(0) + 1;
        fs.inject(Fault {
            at: At::Nth(call, next),
            errno: ENOSPC,
            torn: false,
        });
        let failed = wal.begin_compaction().err();
        assert!(failed.is_some(), "{call:?}: the cut failed");
        let c = wal.begin_compaction().unwrap().unwrap();
        assert_eq!(c.generation(), 2, "{call:?}: the number was not spent");
        c.write_snapshot([encode(0, 1)]).unwrap();
        wal.append(&encode(1, 1)).unwrap();
        drop(wal);
        let mut got = Vec::new();
        let reopened = Wal::open(DIR, opts(), |r| {
            got.push(decode(r)?);
            Ok(())
        });
        assert!(reopened.is_ok(), "{call:?}: {:?}", reopened.err());
        assert_eq!(got, [0, 1], "{call:?}");
    }
}

/// Found by the campaign: an open that failed after creating its segment,
/// then another that lost power before writing the manifest, left two
/// empty segments and no manifest, and strict recovery refused to start
/// (NoManifest) although no record could have been appended.
#[test]
fn opens_that_stopped_before_the_manifest_leave_nothing_to_refuse() {
    let fs = SimFs::new(5);
    fs.create_dir(Path::new("/srv")).unwrap();
    fs.sync_dir(Path::new("/")).unwrap();
    let opts = || Options {
        fs: fs.shared(),
        ..Options::new(Durability::Always)
    };
    // The first open's segment: created, synced, its name's sync fails.
    fs.inject(Fault {
        at: At::Nth(Call::SyncDir, 3),
        errno: EIO,
        torn: false,
    });
    let first = Wal::open(DIR, opts(), |_| Ok(()));
    assert!(first.is_err());
    // The second creates segment 2, and the power goes as it starts the
    // manifest (the third file created).
    fs.crash_at(At::Nth(Call::Create, 3));
    assert!(Wal::open(DIR, opts(), |_| Ok(())).is_err());
    fs.power_on();
    let names = fs.list(Path::new(DIR)).unwrap();
    assert!(!names.iter().any(|n| n == "CURRENT"), "{names:?}");
    let wal = Wal::open(DIR, opts(), |_| Err("no record".into())).unwrap();
    let t = wal.append(&encode(0, 0)).unwrap();
    wal.wait(t).unwrap();
    drop(wal);
    let mut got = Vec::new();
    Wal::open(DIR, opts(), |r| {
        got.push(decode(r)?);
        Ok(())
    })
    .unwrap();
    assert_eq!(got, [0]);
}

/// Found by the campaign: under `always`, a segment's `fdatasync` failed
/// (its record never acknowledged, still in the page cache), and a
/// compaction's cut then created the next segment and failed. The next
/// open replayed the record, but synced only the newest segment, and
/// moved the manifest past the old one: a power loss then took the
/// record back from under the writes acknowledged after it (recovered
/// `[1]` of the history `[0, 1]`).
#[test]
fn replay_syncs_every_segment_it_has_not_seen_sealed() {
    let fs = SimFs::new(9);
    let opts = || Options {
        fs: fs.shared(),
        committer: Committer::Caller,
        ..Options::new(Durability::Always)
    };
    let open = || {
        let mut got = Vec::new();
        let wal = Wal::open(DIR, opts(), |r| {
            got.push(decode(r)?);
            Ok(())
        })
        .unwrap();
        (wal, got)
    };
    let (wal, _) = open();
    let t = wal.append(&encode(0, 2)).unwrap();
    fs.inject(Fault {
        at: At::Nth(Call::SyncData, 1),
        errno: EIO,
        torn: false,
    });
    wal.commit_pending();
    assert!(wal.wait(t).is_err(), "its fdatasync failed");
    let c = wal.begin_compaction().unwrap().unwrap();
    assert!(c.write_snapshot([encode(0, 2)]).is_err(), "the log failed");
    drop(wal);
    let (wal, got) = open();
    assert_eq!(got, [0], "the page cache still holds it");
    let t = wal.append(&encode(1, 2)).unwrap();
    wal.commit_pending();
    wal.wait(t).unwrap();
    fs.power_loss();
    drop(wal);
    fs.power_on();
    assert_eq!(open().1, [0, 1], "the state record 1 was acknowledged on");
}
