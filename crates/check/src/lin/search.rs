//! The Wing–Gong search, as Lowe and Horn–Kroening describe it: walk the
//! history's calls and returns in time order, place any operation whose
//! call comes before the first pending return (if the model agrees with
//! its reply), and backtrack when a return is reached whose operation is
//! not yet placed. Every (operations placed, state) pair already explored
//! is remembered, so no configuration is searched twice.
//!
//! Operations may be *optional*: they are placed if that helps, or left
//! out altogether. The witness search uses this to ask "do these replies
//! still contradict each other if those other operations may or may not
//! have happened?".

use super::done::{Done, DoneKey};
use super::{Budget, Model, Operation, Role};
use foldhash::fast::FixedState;
use std::collections::HashSet;

/// What a search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchResult {
    Linearizable,
    Violation,
    Inconclusive { steps: u64 },
}

/// A search's verdict and, when traced, the furthest it got.
#[derive(Debug, Clone)]
pub struct Search {
    pub result: SearchResult,
    pub steps: u64,
    /// Configurations remembered (the memo's size).
    pub states: usize,
    /// The operations (indexes into the input) of the order that placed
    /// the most required operations, in that order. Only kept by [`trace`].
    pub deepest: Vec<usize>,
}

/// How often the wall clock is read, in steps.
const CLOCK_EVERY: u64 = 4096;
/// The sentinel's index is `2n`; `NONE` marks the end of the search.
type Entry = u32;

/// The history as a doubly linked list of call and return entries in
/// time order, with a sentinel; placed operations are unlinked.
struct Entries {
    next: Vec<Entry>,
    prev: Vec<Entry>,
    /// For a call entry, its operation's bit (its rank by call time).
    bit: Vec<u32>,
    /// The call entry's return entry, and the other way round.
    mate: Vec<Entry>,
    is_call: Vec<bool>,
    /// Operation index (into the caller's slice) by bit.
    op_of_bit: Vec<usize>,
    head: Entry,
}

impl Entries {
    fn new<O>(ops: &[Operation<O>], roles: &[Role]) -> Entries {
        let mut by_call: Vec<usize> = (0..ops.len())
            .filter(|&i| roles[i] != Role::Excluded)
            .collect();
        let n = by_call.len();
        by_call.sort_by_key(|&i| (ops[i].call, ops[i].ret, i));
        // Events sorted by time; at equal times calls come first, so two
        // operations that touch at one instant count as concurrent (the
        // generous reading: it never blames a server for a clock tie).
        let mut events: Vec<(u64, bool, u32)> = Vec::with_capacity(2 * n);
        for (bit, &i) in by_call.iter().enumerate() {
            events.push((ops[i].call, false, bit as u32));
            events.push((ops[i].ret, true, bit as u32));
        }
        events.sort_unstable();
        let head = (2 * n) as Entry;
        let mut e = Entries {
            next: vec![head; 2 * n + 1],
            prev: vec![head; 2 * n + 1],
            bit: vec![0; 2 * n],
            mate: vec![0; 2 * n],
            is_call: vec![false; 2 * n],
            op_of_bit: by_call,
            head,
        };
        let mut call_entry = vec![0 as Entry; n];
        for (idx, &(_, is_ret, bit)) in events.iter().enumerate() {
            let idx = idx as Entry;
            e.bit[idx as usize] = bit;
            e.is_call[idx as usize] = !is_ret;
            if is_ret {
                let c = call_entry[bit as usize];
                e.mate[c as usize] = idx;
                e.mate[idx as usize] = c;
            } else {
                call_entry[bit as usize] = idx;
            }
            let prev = if idx == 0 { head } else { idx - 1 };
            e.prev[idx as usize] = prev;
            e.next[prev as usize] = idx;
        }
        e.prev[head as usize] = if n == 0 { head } else { head - 1 };
        e
    }

    fn unlink(&mut self, x: Entry) {
        let (p, n) = (self.prev[x as usize], self.next[x as usize]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    fn relink(&mut self, x: Entry) {
        let (p, n) = (self.prev[x as usize], self.next[x as usize]);
        self.next[p as usize] = x;
        self.prev[n as usize] = x;
    }

    /// Take an operation (by its call entry) out of the list.
    fn lift(&mut self, call: Entry) {
        self.unlink(call);
        self.unlink(self.mate[call as usize]);
    }

    /// Put it back: the reverse of `lift` (dancing links).
    fn unlift(&mut self, call: Entry) {
        self.relink(self.mate[call as usize]);
        self.relink(call);
    }

    fn first(&self) -> Entry {
        self.next[self.head as usize]
    }
}

enum Frame<S> {
    /// An operation placed; the state before it.
    Placed { call: Entry, before: S },
    /// An optional operation left out.
    Dropped { call: Entry },
}

/// Search for an order in which every required operation is placed (and
/// optional ones may be), within `budget`.
pub fn search<M: Model>(
    model: &M,
    ops: &[Operation<M::Op>],
    roles: &[Role],
    budget: Budget,
) -> SearchResult {
    run(model, ops, roles, budget, false).result
}

/// As [`search`], also recording the furthest it got.
pub fn trace<M: Model>(
    model: &M,
    ops: &[Operation<M::Op>],
    roles: &[Role],
    budget: Budget,
) -> Search {
    run(model, ops, roles, budget, true)
}

/// Every state in which some order of all of `ops` (each required) can
/// leave the model, or `None` when the budget ran out first; with the
/// steps taken and the configurations remembered. No state: no order.
pub struct Ends<S> {
    pub states: Option<Vec<S>>,
    pub steps: u64,
    pub memo: usize,
}

/// Most end states [`end_states`] collects before it gives up.
const MAX_ENDS: usize = 4096;

/// Search every order of `ops`, all required, and collect the states they
/// end in: what a window of a longer history can hand to the next.
pub fn end_states<M: Model>(model: &M, ops: &[Operation<M::Op>], budget: Budget) -> Ends<M::State> {
    let roles = vec![Role::Required; ops.len()];
    let mut s = State::new(model, ops, &roles);
    let mut ends = HashSet::with_hasher(FixedState::with_seed(0x5e7e_51ab));
    let result = s.explore(budget, Some(&mut ends), |_| {});
    let complete = !matches!(result, SearchResult::Inconclusive { .. }) && ends.len() <= MAX_ENDS;
    Ends {
        states: complete.then(|| ends.into_iter().collect()),
        steps: s.steps,
        memo: s.memo.len(),
    }
}

struct State<'a, M: Model> {
    model: &'a M,
    ops: &'a [Operation<M::Op>],
    list: Entries,
    done: Done,
    required_by_bit: Vec<bool>,
    left: usize,
    total_required: usize,
    state: M::State,
    stack: Vec<Frame<M::State>>,
    memo: HashSet<(DoneKey, M::State), FixedState>,
    steps: u64,
}

pub(super) fn run<M: Model>(
    model: &M,
    ops: &[Operation<M::Op>],
    roles: &[Role],
    budget: Budget,
    traced: bool,
) -> Search {
    let mut s = State::new(model, ops, roles);
    let mut best = Search {
        result: SearchResult::Violation,
        steps: 0,
        states: 0,
        deepest: Vec::new(),
    };
    let mut best_depth = 0;
    best.result = s.explore(budget, None, |s| {
        if traced && s.placed_required() > best_depth {
            best_depth = s.placed_required();
            best.deepest = s.placed_ops();
        }
    });
    best.steps = s.steps;
    best.states = s.memo.len();
    best
}

impl<'a, M: Model> State<'a, M> {
    fn new(model: &'a M, ops: &'a [Operation<M::Op>], roles: &[Role]) -> State<'a, M> {
        let list = Entries::new(ops, roles);
        let required_by_bit: Vec<bool> = list
            .op_of_bit
            .iter()
            .map(|&i| roles[i] != Role::Optional)
            .collect();
        let left = required_by_bit.iter().filter(|&&r| r).count();
        State {
            model,
            ops,
            done: Done::new(list.op_of_bit.len()),
            required_by_bit,
            left,
            total_required: left,
            state: model.init(),
            stack: Vec::new(),
            memo: HashSet::with_hasher(FixedState::with_seed(0x5e7e_51ab)),
            steps: 0,
            list,
        }
    }
}

type EndSet<S> = HashSet<S, FixedState>;

impl<M: Model> State<'_, M> {
    /// Search for an order that places every required operation. With
    /// `ends`, go on past each such order (backtracking from it) and
    /// collect the states they end in, until every order is tried (the
    /// result is then `Violation`: the caller reads `ends`).
    fn explore(
        &mut self,
        budget: Budget,
        mut ends: Option<&mut EndSet<M::State>>,
        mut progress: impl FnMut(&Self),
    ) -> SearchResult {
        let mut entry = self.list.first();
        loop {
            if self.left == 0 {
                let Some(ends) = ends.as_deref_mut() else {
                    return SearchResult::Linearizable;
                };
                ends.insert(self.state.clone());
                if ends.len() > MAX_ENDS {
                    return SearchResult::Inconclusive { steps: self.steps };
                }
                match self.backtrack() {
                    Some(next) => entry = next,
                    None => return SearchResult::Violation,
                }
                continue;
            }
            if let Some(r) = self.over_budget(budget) {
                return r;
            }
            let e = entry as usize;
            if self.list.is_call[e] {
                if self.try_place(entry) {
                    progress(self);
                    entry = self.list.first();
                } else {
                    entry = self.list.next[e];
                }
            } else if self.try_drop(entry) {
                progress(self);
                entry = self.list.first();
            } else {
                match self.backtrack() {
                    Some(next) => entry = next,
                    None => return SearchResult::Violation,
                }
            }
        }
    }

    fn over_budget(&self, budget: Budget) -> Option<SearchResult> {
        let out = SearchResult::Inconclusive { steps: self.steps };
        if self.steps >= budget.steps || self.memo.len() >= budget.states {
            return Some(out);
        }
        let clock = self.steps.is_multiple_of(CLOCK_EVERY);
        match budget.deadline {
            Some(d) if clock && std::time::Instant::now() >= d => Some(out),
            _ => None,
        }
    }

    fn op(&self, bit: usize) -> &M::Op {
        &self.ops[self.list.op_of_bit[bit]].op
    }

    /// Place the operation whose call is `call`, if the model agrees with
    /// its reply and the configuration it leads to is new.
    fn try_place(&mut self, call: Entry) -> bool {
        self.steps += 1;
        let bit = self.list.bit[call as usize] as usize;
        let Some(next) = self.model.step(&self.state, self.op(bit)) else {
            return false;
        };
        self.done.insert(bit);
        if !self.memo.insert((self.done.key(), next.clone())) {
            self.done.remove(bit);
            return false;
        }
        let before = std::mem::replace(&mut self.state, next);
        self.stack.push(Frame::Placed { call, before });
        self.settle(call, bit);
        true
    }

    /// At the return of an unplaced operation: leave it out if it is
    /// optional and that configuration is new.
    fn try_drop(&mut self, ret: Entry) -> bool {
        let call = self.list.mate[ret as usize];
        let bit = self.list.bit[call as usize] as usize;
        if self.required_by_bit[bit] {
            return false;
        }
        self.steps += 1;
        self.done.insert(bit);
        if !self.memo.insert((self.done.key(), self.state.clone())) {
            self.done.remove(bit);
            return false;
        }
        self.stack.push(Frame::Dropped { call });
        self.settle(call, bit);
        true
    }

    fn settle(&mut self, call: Entry, bit: usize) {
        self.list.lift(call);
        if self.required_by_bit[bit] {
            self.left -= 1;
        }
    }

    /// Undo the last placement and return the entry to try next; undo
    /// any drops on the way (leaving an operation out is the last choice
    /// at its return). `None` when there is nothing left to undo.
    fn backtrack(&mut self) -> Option<Entry> {
        loop {
            let frame = self.stack.pop()?;
            let call = match &frame {
                Frame::Placed { call, .. } | Frame::Dropped { call } => *call,
            };
            let bit = self.list.bit[call as usize] as usize;
            self.list.unlift(call);
            self.done.remove(bit);
            if self.required_by_bit[bit] {
                self.left += 1;
            }
            if let Frame::Placed { before, .. } = frame {
                self.state = before;
                return Some(self.list.next[call as usize]);
            }
        }
    }

    fn placed_required(&self) -> usize {
        self.total_required - self.left
    }

    fn placed_ops(&self) -> Vec<usize> {
        self.stack
            .iter()
            .filter_map(|f| match f {
                Frame::Placed { call, .. } => {
                    Some(self.list.op_of_bit[self.list.bit[*call as usize] as usize])
                }
                Frame::Dropped { .. } => None,
            })
            .collect()
    }
}
