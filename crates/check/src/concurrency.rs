//! The concurrency phase: N clients send random operations for T
//! seconds, each recording when it sent a request and when the reply
//! came; then the history, partitioned by topic, key or bucket, is
//! checked for linearizability against the protocol's model.

use crate::lin::{self, Budget, Model, Operation, Outcome, Progress, Undecided, Witness};
use crate::wire::Conn;
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How the phase runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub clients: usize,
    pub duration: Duration,
    pub seed: u64,
    /// How long to wait for any one reply.
    pub timeout: Duration,
    /// Search steps per partition before it says "inconclusive".
    pub budget_steps: u64,
    /// Wall-clock time the whole check of the history may take.
    pub lin_budget: Duration,
    /// Configurations one search may remember (the memory cap).
    pub lin_states: usize,
    /// Talk as the original assignment's client does (bucket: one
    /// request per connection).
    pub assignment: bool,
}

/// What a protocol supplies to drive it: connections, a random operation
/// generator, and one operation performed on a connection.
pub trait Workload: Sync {
    /// A client's connection: made from one open TCP connection.
    type Conn: Send + From<Conn>;
    type Call: Send;
    type Reply: Send;
    /// A client's connection; by default one it keeps open throughout.
    fn connect(&self, addr: SocketAddr, timeout: Duration) -> std::io::Result<Self::Conn> {
        Conn::open(addr, timeout).map(Self::Conn::from)
    }
    /// Client `client`'s `seq`th operation.
    fn next(&self, rng: &mut fastrand::Rng, client: usize, seq: u64) -> Self::Call;
    /// Send it and read its reply. An `Err` (the connection closed, no
    /// reply in time) ends the phase: a correct server never does that.
    fn perform(&self, conn: &mut Self::Conn, call: &Self::Call) -> Result<Self::Reply, String>;
}

/// One completed operation as a client saw it.
#[derive(Debug, Clone)]
pub struct Record<C, R> {
    pub client: usize,
    /// ns from the start of the phase.
    pub sent: u64,
    pub answered: u64,
    pub call: C,
    pub reply: R,
}

impl<C, R> Record<C, R> {
    /// As the checker's operation, with `op` made from it.
    pub fn op<O>(&self, op: O) -> Operation<O> {
        Operation {
            client: self.client,
            call: self.sent,
            ret: self.answered,
            op,
        }
    }
}

/// Everything the clients did; `lost` says why the phase stopped early.
pub struct Drive<C, R> {
    pub history: Vec<Record<C, R>>,
    pub lost: Option<String>,
    pub elapsed: Duration,
}

/// Run `plan.clients` clients against `addr` for `plan.duration`.
pub fn drive<W: Workload>(w: &W, addr: SocketAddr, plan: &Plan) -> Drive<W::Call, W::Reply> {
    let start = Instant::now();
    let stop = AtomicBool::new(false);
    let lost = Mutex::new(None);
    // Relaxed: figures for a display.
    checking().sent.store(0, Ordering::Relaxed);
    checking().driving.store(true, Ordering::Release);
    let histories: Vec<Vec<Record<W::Call, W::Reply>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..plan.clients)
            .map(|client| {
                let (stop, lost) = (&stop, &lost);
                s.spawn(move || {
                    let mut out = Vec::new();
                    if let Err(why) = client_loop(w, addr, plan, client, start, stop, &mut out) {
                        // Relaxed: a hint to the other clients to stop
                        // early; nothing is published through it.
                        stop.store(true, Ordering::Relaxed);
                        lost.lock().expect("not poisoned").get_or_insert(format!(
                            "client {client}, after {} operations: {why}",
                            out.len()
                        ));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client thread"))
            .collect()
    });
    checking().driving.store(false, Ordering::Release);
    let mut history: Vec<_> = histories.into_iter().flatten().collect();
    history.sort_by_key(|r| (r.sent, r.answered));
    Drive {
        history,
        lost: lost.into_inner().expect("not poisoned"),
        elapsed: start.elapsed(),
    }
}

fn client_loop<W: Workload>(
    w: &W,
    addr: SocketAddr,
    plan: &Plan,
    client: usize,
    start: Instant,
    stop: &AtomicBool,
    out: &mut Vec<Record<W::Call, W::Reply>>,
) -> Result<(), String> {
    let mut rng =
        fastrand::Rng::with_seed(plan.seed ^ (client as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut conn = w
        .connect(addr, plan.timeout)
        .map_err(|e| format!("cannot connect: {e}"))?;
    let end = start + plan.duration;
    let mut seq = 0;
    while !stop.load(Ordering::Relaxed) && Instant::now() < end {
        let call = w.next(&mut rng, client, seq);
        let sent = start.elapsed().as_nanos() as u64;
        let reply = w.perform(&mut conn, &call)?;
        let answered = start.elapsed().as_nanos() as u64;
        out.push(Record {
            client,
            sent,
            answered,
            call,
            reply,
        });
        // Relaxed: a figure for a display.
        checking().sent.fetch_add(1, Ordering::Relaxed);
        seq += 1;
    }
    Ok(())
}

/// The phase's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Linearizable,
    NotLinearizable,
    Inconclusive,
    /// The phase could not finish (a connection was lost).
    Error,
}

impl Verdict {
    pub fn passed(self) -> bool {
        self == Verdict::Linearizable
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Linearizable => "linearizable",
            Verdict::NotLinearizable => "NOT linearizable",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Error => "error",
        }
    }
}

/// One partition's result.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionReport {
    /// What it is: `topic ck1a2b-t0`, `bucket 3`, `key ck1a2b-k1`.
    pub name: String,
    pub operations: usize,
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// When inconclusive: where the search stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecided: Option<Undecided>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Witness>,
}

/// The check of a history in progress, for a display on another thread:
/// the one phase a process runs at a time.
#[derive(Debug, Default)]
pub struct Checking {
    /// Whether the clients are running now.
    pub driving: AtomicBool,
    /// Operations the clients completed so far.
    pub sent: AtomicU64,
    /// Whether a history is being checked now.
    pub active: AtomicBool,
    /// Its operations, summed over its partitions.
    pub operations: AtomicU64,
    pub progress: Progress,
}

static CHECKING: Checking = Checking {
    driving: AtomicBool::new(false),
    sent: AtomicU64::new(0),
    active: AtomicBool::new(false),
    operations: AtomicU64::new(0),
    progress: Progress {
        decided: AtomicU64::new(0),
        states: AtomicU64::new(0),
    },
};

/// The check in progress in this process, if any (`active`).
pub fn checking() -> &'static Checking {
    &CHECKING
}

/// The whole phase, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct ConcurrencyReport {
    pub clients: usize,
    pub duration_s: f64,
    pub seed: u64,
    pub operations: usize,
    /// What the clients collided on: `4 topics`, `4 buckets of 32`.
    pub over: String,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub partitions: Vec<PartitionReport>,
    /// Time spent checking the history.
    pub check_s: f64,
}

impl ConcurrencyReport {
    /// A phase that could not run: `error` says why.
    pub fn failed(plan: &Plan, over: String, error: String) -> ConcurrencyReport {
        ConcurrencyReport {
            clients: plan.clients,
            duration_s: 0.0,
            seed: plan.seed,
            operations: 0,
            over,
            verdict: Verdict::Error,
            error: Some(error),
            partitions: Vec::new(),
            check_s: 0.0,
        }
    }
}

/// A partition ready to check: its name, its model, its operations.
pub struct Part<M: Model> {
    pub name: String,
    pub model: M,
    pub ops: Vec<Operation<M::Op>>,
}

/// Check every partition and fold the outcomes into a report.
pub fn judge<M, C, R>(
    drive: &Drive<C, R>,
    plan: &Plan,
    over: String,
    parts: Vec<Part<M>>,
) -> ConcurrencyReport
where
    M: Model + Sync,
    M::Op: Sync,
{
    let started = Instant::now();
    let mut report = ConcurrencyReport::failed(plan, over, String::new());
    report.duration_s = drive.elapsed.as_secs_f64();
    report.operations = drive.history.len();
    report.error = drive.lost.clone();
    if drive.lost.is_some() {
        return report;
    }
    report.verdict = Verdict::Linearizable;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let budget = Budget {
        steps: plan.budget_steps,
        deadline: Some(started + plan.lin_budget),
        states: plan.lin_states,
    };
    let names: Vec<String> = parts.iter().map(|p| p.name.clone()).collect();
    let pairs: Vec<(M, Vec<Operation<M::Op>>)> =
        parts.into_iter().map(|p| (p.model, p.ops)).collect();
    let outcomes = watched(&pairs, budget, threads);
    for ((name, (_, ops)), outcome) in names.into_iter().zip(&pairs).zip(outcomes) {
        let part = PartitionReport {
            name,
            operations: ops.len(),
            outcome: outcome.name(),
            steps: None,
            undecided: None,
            witness: None,
        };
        report.partitions.push(match outcome {
            Outcome::Linearizable => part,
            Outcome::Inconclusive(u) => {
                if report.verdict == Verdict::Linearizable {
                    report.verdict = Verdict::Inconclusive;
                }
                PartitionReport {
                    steps: Some(u.steps),
                    undecided: Some(u),
                    ..part
                }
            }
            Outcome::Violation(w) => {
                report.verdict = Verdict::NotLinearizable;
                PartitionReport {
                    witness: Some(w),
                    ..part
                }
            }
        });
    }
    report.check_s = started.elapsed().as_secs_f64();
    report
}

/// Check the partitions with the progress shown in [`checking`].
fn watched<M>(pairs: &[(M, Vec<Operation<M::Op>>)], budget: Budget, threads: usize) -> Vec<Outcome>
where
    M: Model + Sync,
    M::Op: Sync,
{
    let c = checking();
    let total: usize = pairs.iter().map(|(_, ops)| ops.len()).sum();
    // Relaxed: figures for a display; `active` last, so a reader that
    // sees it set sees the fresh totals soon after at worst.
    c.operations.store(total as u64, Ordering::Relaxed);
    c.progress.decided.store(0, Ordering::Relaxed);
    c.progress.states.store(0, Ordering::Relaxed);
    c.active.store(true, Ordering::Release);
    let outcomes = lin::check_partitions(pairs, budget, threads, &c.progress);
    c.active.store(false, Ordering::Release);
    outcomes
}
