//! Checking a partition window by window. Where no operation is in
//! flight (every operation sent so far has been answered, strictly
//! before the next is sent), every order puts the operations before that
//! point first: the history splits there into windows, and the windows
//! can be checked one after another, each from every state in which the
//! windows before it can leave the model.
//!
//! That keeps the work proportional to the history: a window holds a
//! handful of operations, and a violation is found in the window where
//! it happens, after a search of that window alone. A single search over
//! the whole partition instead has to try every order of everything
//! before the violation (every configuration of every earlier window)
//! before it can say no, which a history of thousands of operations
//! makes hopeless: a board server that dropped one POST in 500 kept the
//! old search busy for minutes.

use super::search::{self, end_states, SearchResult};
use super::witness::{minimise, Witness};
use super::{Budget, Model, Operation, Outcome, Role};
use serde::Serialize;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Most states carried from one window to the next.
const MAX_FRONTIER: usize = 4096;

/// What a check has decided so far, for a progress display: updated as
/// each window is decided, read from another thread.
#[derive(Debug, Default)]
pub struct Progress {
    /// Operations in windows decided.
    pub decided: AtomicU64,
    /// Configurations the searches remembered, summed.
    pub states: AtomicU64,
}

impl Progress {
    /// `(operations decided, configurations remembered)` so far.
    pub fn read(&self) -> (u64, u64) {
        // Relaxed: counters for display only.
        (
            self.decided.load(Ordering::Relaxed),
            self.states.load(Ordering::Relaxed),
        )
    }
}

impl Progress {
    fn add(&self, operations: usize, states: usize) {
        // Relaxed: counters for display only.
        self.decided.fetch_add(operations as u64, Ordering::Relaxed);
        self.states.fetch_add(states as u64, Ordering::Relaxed);
    }
}

/// Where a search that ran out of budget stopped: the window it could
/// not decide.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Undecided {
    pub steps: u64,
    /// Configurations remembered, in all windows.
    pub states: u64,
    pub seconds: f64,
    /// The operations before the window, all decided (linearizable).
    pub decided: usize,
    /// The window: its operations, the first sent and the last answered
    /// (ns from the start of the run).
    pub operations: usize,
    pub from_ns: u64,
    pub to_ns: u64,
}

impl Eq for Undecided {}

/// The windows of `ops`: ranges that no operation spans. Only for
/// operations in the order they were sent (a recorded history's order);
/// otherwise one window.
fn windows<O>(ops: &[Operation<O>]) -> Vec<Range<usize>> {
    if !ops.windows(2).all(|w| w[0].call <= w[1].call) {
        return std::iter::once(0..ops.len()).collect();
    }
    let mut out = Vec::new();
    let (mut start, mut last_ret) = (0, 0);
    for (i, o) in ops.iter().enumerate() {
        // Strictly after: operations that touch at one instant are
        // concurrent, as the search takes them.
        if i > start && o.call > last_ret {
            out.push(start..i);
            start = i;
        }
        last_ret = last_ret.max(o.ret);
    }
    out.push(start..ops.len());
    out
}

/// A model started from `start` instead of its initial state: for a
/// window of a longer history.
struct From<'a, M: Model> {
    model: &'a M,
    start: M::State,
}

impl<M: Model> Model for From<'_, M> {
    type State = M::State;
    type Op = M::Op;

    fn init(&self) -> M::State {
        self.start.clone()
    }
    fn step(&self, state: &M::State, op: &M::Op) -> Option<M::State> {
        self.model.step(state, op)
    }
    fn describe_op(&self, op: &M::Op) -> String {
        self.model.describe_op(op)
    }
    fn describe_state(&self, state: &M::State) -> String {
        self.model.describe_state(state)
    }
}

/// Searching one partition, window by window.
struct Walk<'a, M: Model> {
    model: &'a M,
    ops: &'a [Operation<M::Op>],
    budget: Budget,
    started: Instant,
    steps: u64,
    states: u64,
}

/// What one window did to the states carried in.
enum Step<S> {
    /// The states it can leave (none carried past the last window).
    To(Vec<S>),
    /// No order of the window fits any state carried in.
    Stuck,
    OutOfBudget,
}

impl<M: Model> Walk<'_, M> {
    fn left(&self) -> Budget {
        Budget {
            steps: self.budget.steps.saturating_sub(self.steps),
            ..self.budget
        }
    }

    /// The states `window` can leave from any of `from`; for the last
    /// window only whether one order fits (nothing is carried on).
    fn advance(
        &mut self,
        from: &[M::State],
        window: &[Operation<M::Op>],
        last: bool,
    ) -> Step<M::State> {
        let mut to: Vec<M::State> = Vec::new();
        if let [op] = window {
            // One operation alone: its one order, without a search.
            self.steps += from.len() as u64;
            for s in from {
                if let Some(next) = self.model.step(s, &op.op) {
                    if !to.contains(&next) {
                        to.push(next);
                    }
                }
            }
            return if to.is_empty() {
                Step::Stuck
            } else {
                Step::To(to)
            };
        }
        for s in from {
            let model = From {
                model: self.model,
                start: s.clone(),
            };
            if last {
                let all = vec![Role::Required; window.len()];
                let found = search::run(&model, window, &all, self.left(), false);
                self.steps += found.steps;
                self.states += found.states as u64;
                match found.result {
                    SearchResult::Linearizable => return Step::To(Vec::new()),
                    SearchResult::Violation => continue,
                    SearchResult::Inconclusive { .. } => return Step::OutOfBudget,
                }
            }
            let ends = end_states(&model, window, self.left());
            self.steps += ends.steps;
            self.states += ends.memo as u64;
            let Some(states) = ends.states else {
                return Step::OutOfBudget;
            };
            for e in states {
                if !to.contains(&e) {
                    to.push(e);
                }
            }
            if to.len() > MAX_FRONTIER {
                return Step::OutOfBudget;
            }
        }
        if to.is_empty() {
            Step::Stuck
        } else {
            Step::To(to)
        }
    }

    fn undecided(&self, window: Range<usize>) -> Outcome {
        let ops = &self.ops[window.clone()];
        Outcome::Inconclusive(Undecided {
            steps: self.steps,
            states: self.states,
            seconds: self.started.elapsed().as_secs_f64(),
            decided: window.start,
            operations: ops.len(),
            from_ns: ops.first().map_or(0, |o| o.call),
            to_ns: ops.iter().map(|o| o.ret).max().unwrap_or(0),
        })
    }

    /// The witness of a violation first found in `window`: shrunk in the
    /// history up to its end.
    fn witness(&self, window: Range<usize>) -> Witness {
        minimise(self.model, &self.ops[..window.end], self.left())
    }
}

/// Check one partition window by window, counting what is decided in
/// `progress`; on a violation, a witness.
pub fn check_watched<M: Model>(
    model: &M,
    ops: &[Operation<M::Op>],
    budget: Budget,
    progress: &Progress,
) -> Outcome {
    let mut walk = Walk {
        model,
        ops,
        budget,
        started: Instant::now(),
        steps: 0,
        states: 0,
    };
    let windows = windows(ops);
    let mut from = vec![model.init()];
    for (k, window) in windows.iter().enumerate() {
        let last = k + 1 == windows.len();
        let before = walk.states;
        if walk.budget.expired() {
            return walk.undecided(window.clone());
        }
        match walk.advance(&from, &ops[window.clone()], last) {
            Step::To(to) => from = to,
            Step::Stuck => return Outcome::Violation(walk.witness(window.clone())),
            Step::OutOfBudget => return walk.undecided(window.clone()),
        }
        progress.add(window.len(), (walk.states - before) as usize);
    }
    Outcome::Linearizable
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(call: u64, ret: u64) -> Operation<()> {
        Operation {
            client: 0,
            call,
            ret,
            op: (),
        }
    }

    #[test]
    fn windows_cut_only_where_nothing_is_in_flight() {
        let ops = [op(0, 10), op(5, 20), op(21, 30), op(30, 40), op(41, 42)];
        // 21 > 20: a cut; 30 touches 30: concurrent; 41 > 40: a cut.
        assert_eq!(windows(&ops), vec![0..2, 2..4, 4..5]);
        // A long operation spans everything after it.
        let ops = [op(0, 100), op(5, 6), op(7, 8)];
        assert_eq!(windows(&ops), vec![0..3]);
        // Not in the order sent: one window.
        let ops = [op(10, 11), op(0, 1)];
        let one = |r: Vec<Range<usize>>| (r.len(), r[0].clone());
        assert_eq!(one(windows(&ops)), (1, 0..2));
        assert_eq!(one(windows::<()>(&[])), (1, 0..0));
    }
}
