//! Linearizability checking of a concurrent history against a sequential
//! model: the Wing–Gong search with Lowe's memoisation, one partition
//! (topic, key, bucket) at a time (P-compositionality), one window of a
//! partition at a time (cut where no operation is in flight), within a
//! budget of steps, time and memory.
//!
//! A history is a list of [`Operation`]s, each with the time it was sent
//! and the time its reply arrived, and its request and reply together as
//! the model's `Op`. The history is linearizable when some order of the
//! operations (a) puts A before B whenever A's reply came before B was
//! sent, and (b) gives every operation its observed reply when the model
//! applies them one by one. A violation comes with a [`Witness`]: a few
//! operations whose replies no order explains.

mod done;
mod search;
mod windows;
mod witness;

pub mod brute;
pub mod spans;

pub use search::{end_states, search, trace, Ends, Search, SearchResult};
pub use windows::{check_watched, Progress, Undecided};
pub use witness::{minimise, Witness, WitnessOp};

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The sequential specification of one partition.
pub trait Model {
    /// Everything the outcome of later operations can depend on. Two
    /// searches that reach the same state with the same operations done
    /// have the same future, which is what memoisation relies on.
    type State: Clone + Eq + Hash + Debug;
    /// One operation: its request and the reply the server gave.
    type Op: Debug;

    fn init(&self) -> Self::State;
    /// The state after `op`, if `op`'s reply is what the model answers
    /// in `state`; `None` if it is not.
    fn step(&self, state: &Self::State, op: &Self::Op) -> Option<Self::State>;
    /// The operation in a person's words: `POST@t#hello answered 3`.
    fn describe_op(&self, op: &Self::Op) -> String;
    /// The state in a person's words: `the topic held 3 messages`.
    fn describe_state(&self, state: &Self::State) -> String;
}

/// One completed operation: who sent it, when (ns from the start of the
/// run), when its reply arrived, and what it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation<O> {
    pub client: usize,
    pub call: u64,
    pub ret: u64,
    pub op: O,
}

/// What part an operation plays in a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It happened: every order must place it.
    Required,
    /// It may have happened: an order may place it or leave it out.
    Optional,
    /// It happened, as `Required`, but it is context, not part of a
    /// witness: the earlier history a witness is shrunk against.
    Context,
    /// Not part of this search.
    Excluded,
}

/// How much work one partition's search may do before it gives up and
/// says "inconclusive". A step is one application of the model (or one
/// decision to leave an optional operation out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub steps: u64,
    /// Wall-clock limit, checked every few thousand steps.
    pub deadline: Option<Instant>,
    /// Most configurations one search remembers (its memo, a few dozen
    /// bytes each): the memory cap.
    pub states: usize,
}

impl Budget {
    /// `steps`, no deadline, no memory cap.
    pub fn steps(steps: u64) -> Budget {
        Budget {
            steps,
            deadline: None,
            states: usize::MAX,
        }
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// The default step budget per partition: far more than any history from
/// a correct server needs (a linearizable history costs a few steps per
/// operation), small enough to end in seconds on a pathological one.
pub const DEFAULT_STEPS: u64 = 20_000_000;

/// The default memory cap per search, in configurations remembered: about
/// 150 MB at the board's few dozen bytes each.
pub const DEFAULT_STATES: usize = 2_000_000;

/// The verdict on one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Linearizable,
    Violation(Witness),
    /// The budget ran out before the search could decide.
    Inconclusive(Undecided),
}

impl Outcome {
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Linearizable => "linearizable",
            Outcome::Violation(_) => "not linearizable",
            Outcome::Inconclusive { .. } => "inconclusive",
        }
    }
}

/// Check one partition: window by window, and on a violation a minimal
/// witness (within the same budget again).
pub fn check<M: Model>(model: &M, ops: &[Operation<M::Op>], budget: Budget) -> Outcome {
    check_watched(model, ops, budget, &Progress::default())
}

/// Check every partition, `threads` at a time; results in input order.
/// `progress` counts what is decided as it goes.
pub fn check_partitions<M>(
    parts: &[(M, Vec<Operation<M::Op>>)],
    budget: Budget,
    threads: usize,
    progress: &Progress,
) -> Vec<Outcome>
where
    M: Model + Sync,
    M::Op: Sync,
{
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<Outcome>> = vec![None; parts.len()];
    let slots: Vec<_> = results.iter_mut().map(std::sync::Mutex::new).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, parts.len().max(1)) {
            s.spawn(|| loop {
                // Relaxed: the counter only hands out indexes; the results
                // are published by the scope's join.
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((model, ops)) = parts.get(i) else {
                    return;
                };
                let outcome = check_watched(model, ops, budget, progress);
                **slots[i].lock().expect("no panics while held") = Some(outcome);
            });
        }
    });
    drop(slots);
    results
        .into_iter()
        .map(|r| r.expect("every partition checked"))
        .collect()
}
