//! Shrinking a violation to a witness a person can read: the few
//! operations whose replies contradict each other, whatever the rest of
//! the history did.
//!
//! Three shrinking steps, each a search in which operations outside the
//! witness are *optional* (they may or may not have taken effect), so the
//! witness never blames an operation that a missing context would explain:
//! 1. the earliest reply that makes the history unexplainable: cut the
//!    history at each reply time (operations answered by then required,
//!    those still running optional, later ones out), and find the first
//!    cut that fails — failing is monotone in the cut, so a binary search;
//! 2. the latest start: make the operations answered before s optional,
//!    and find the largest s that still fails — monotone again;
//! 3. one by one, make each remaining operation optional and keep it so
//!    if the rest still fails.
//!
//! Every search has the partition's budget; a search that runs out counts
//! as "explained", so the witness stays a proven contradiction, only
//! perhaps not the smallest one (`minimal: false`).

use super::search::{search, trace, SearchResult};
use super::{Budget, Model, Operation, Role};
use serde::Serialize;

/// A minimal set of operations no order explains, in a person's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Witness {
    /// The operations, by the time they were sent.
    pub ops: Vec<WitnessOp>,
    /// "B was sent after A was answered": the real-time facts that rule
    /// out the orders a reader might try first.
    pub after: Vec<String>,
    /// The order that got furthest (its last few steps, context included),
    /// each with the state it left.
    pub closest: Vec<String>,
    /// Why no witness operation can come next in that order.
    pub stuck: Vec<String>,
    /// False if a search ran out of budget while shrinking.
    pub minimal: bool,
    /// What the operations before the witness's window leave, when the
    /// witness was shrunk within a window of the history (from that
    /// state) rather than in the whole history (everything else
    /// optional).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// One operation of a witness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WitnessOp {
    /// Its index in the partition's operations.
    #[serde(skip)]
    pub index: usize,
    /// A short label used in `after`, `closest` and `stuck`: `A`, `B`, …
    pub label: String,
    pub client: usize,
    /// When it was sent and answered, in ns from the start of the run.
    pub sent_ns: u64,
    pub answered_ns: u64,
    pub what: String,
}

/// How many of the operations answered before a witness may or may not
/// have taken effect: those before them are context, taken as they
/// happened. Leaving every earlier operation optional would let a search
/// choose any subset of thousands, which no budget covers (a board
/// topic's count could then be anything up to its true value, at every
/// point of the history).
const OPTIONAL_BEFORE: usize = 64;
/// How many steps of the closest order to show.
const CLOSEST_SHOWN: usize = 6;
/// Most one-by-one shrinking searches.
const MAX_GREEDY: usize = 256;

struct Shrink<'a, M: Model> {
    model: &'a M,
    ops: &'a [Operation<M::Op>],
    budget: Budget,
    minimal: bool,
}

impl<M: Model> Shrink<'_, M> {
    /// True only when the search proves no order explains the replies.
    fn fails(&mut self, roles: &[Role]) -> bool {
        match search(self.model, self.ops, roles, self.budget) {
            SearchResult::Violation => true,
            SearchResult::Linearizable => false,
            SearchResult::Inconclusive { .. } => {
                self.minimal = false;
                false
            }
        }
    }

    /// Roles for the history cut at time `t`.
    fn cut(&self, t: u64) -> Vec<Role> {
        self.ops
            .iter()
            .map(|o| match (o.ret <= t, o.call <= t) {
                (true, _) => Role::Required,
                (false, true) => Role::Optional,
                (false, false) => Role::Excluded,
            })
            .collect()
    }

    /// Step 1: the first cut that fails (the whole history does).
    fn earliest_cut(&mut self) -> Vec<Role> {
        let mut rets: Vec<u64> = self.ops.iter().map(|o| o.ret).collect();
        rets.sort_unstable();
        rets.dedup();
        let (mut lo, mut hi) = (0, rets.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.fails(&self.cut(rets[mid])) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        self.cut(rets[hi])
    }

    /// Step 2: take the earliest-answered required operations out of
    /// the witness, as many as possible: the last [`OPTIONAL_BEFORE`] of
    /// them become optional, the ones before those context.
    fn latest_start(&mut self, roles: Vec<Role>) -> Vec<Role> {
        let mut required: Vec<usize> = (0..self.ops.len())
            .filter(|&i| roles[i] == Role::Required)
            .collect();
        required.sort_by_key(|&i| self.ops[i].ret);
        let with_first_k_optional = |k: usize| {
            let mut r = roles.clone();
            for (j, &i) in required[..k].iter().enumerate() {
                r[i] = if k - j > OPTIONAL_BEFORE {
                    Role::Context
                } else {
                    Role::Optional
                };
            }
            r
        };
        let (mut lo, mut hi) = (0, required.len().saturating_sub(1));
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.fails(&with_first_k_optional(mid)) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        with_first_k_optional(lo)
    }

    /// Step 3: drop each remaining requirement that is not needed.
    fn one_by_one(&mut self, mut roles: Vec<Role>) -> Vec<Role> {
        let required: Vec<usize> = (0..self.ops.len())
            .filter(|&i| roles[i] == Role::Required)
            .collect();
        if required.len() > MAX_GREEDY {
            self.minimal = false;
        }
        for &i in required.iter().take(MAX_GREEDY) {
            roles[i] = Role::Optional;
            if !self.fails(&roles) {
                roles[i] = Role::Required;
            }
        }
        roles
    }
}

/// Shrink a failing partition to a witness. `ops` must not be
/// linearizable (the caller's search said so).
pub fn minimise<M: Model>(model: &M, ops: &[Operation<M::Op>], budget: Budget) -> Witness {
    let mut s = Shrink {
        model,
        ops,
        budget,
        minimal: true,
    };
    let roles = s.earliest_cut();
    let roles = s.latest_start(roles);
    let roles = s.one_by_one(roles);
    let mut w = describe(model, ops, &roles, budget, s.minimal);
    let context: Vec<usize> = (0..ops.len())
        .filter(|&i| roles[i] == Role::Context)
        .collect();
    if let Some(until) = context.iter().map(|&i| ops[i].ret).max() {
        w.context = Some(format!(
            "the {} operations answered by {:.3} ms are taken as they happened, in an order that \
             explains them; the {OPTIONAL_BEFORE} answered after those, before the witness, may or \
             may not have taken effect",
            context.len(),
            until as f64 / 1e6
        ));
    }
    w
}

fn describe<M: Model>(
    model: &M,
    ops: &[Operation<M::Op>],
    roles: &[Role],
    budget: Budget,
    minimal: bool,
) -> Witness {
    let mut members: Vec<usize> = (0..ops.len())
        .filter(|&i| roles[i] == Role::Required)
        .collect();
    members.sort_by_key(|&i| (ops[i].call, ops[i].ret));
    let labels = Labels(members);
    let traced = trace(model, ops, roles, budget);
    // A trace cut short by the budget ends in a state from which a
    // witness operation might still fit: say nothing of what cannot.
    let complete = !matches!(traced.result, SearchResult::Inconclusive { .. });
    let order = traced.deepest;
    let (closest, state) = closest(model, ops, &order, &labels);
    let stuck = labels
        .0
        .iter()
        .filter(|i| complete && !order.contains(i))
        .map(|&i| {
            format!(
                "{} cannot come next: when {}, {} is impossible",
                labels.of(i),
                model.describe_state(&state),
                model.describe_op(&ops[i].op)
            )
        })
        .collect();
    Witness {
        ops: labels
            .0
            .iter()
            .map(|&i| WitnessOp {
                index: i,
                label: labels.of(i),
                client: ops[i].client,
                sent_ns: ops[i].call,
                answered_ns: ops[i].ret,
                what: model.describe_op(&ops[i].op),
            })
            .collect(),
        after: real_time(ops, &labels),
        closest,
        stuck,
        minimal: minimal && complete,
        context: None,
    }
}

/// The witness operations, by the time they were sent; `A` is the first.
struct Labels(Vec<usize>);

impl Labels {
    /// An operation's label, or "" if it is not in the witness.
    fn of(&self, i: usize) -> String {
        self.0
            .iter()
            .position(|&m| m == i)
            .map(letters)
            .unwrap_or_default()
    }
}

/// "B was sent after A was answered", for every such pair.
fn real_time<O>(ops: &[Operation<O>], labels: &Labels) -> Vec<String> {
    let mut after = Vec::new();
    for &a in &labels.0 {
        for &b in &labels.0 {
            if ops[a].ret < ops[b].call {
                let (a, b) = (labels.of(a), labels.of(b));
                after.push(format!("{b} was sent after {a} was answered"));
            }
        }
    }
    after
}

/// The last steps of the order that got furthest, each with the state it
/// left; and the state at its end.
fn closest<M: Model>(
    model: &M,
    ops: &[Operation<M::Op>],
    order: &[usize],
    labels: &Labels,
) -> (Vec<String>, M::State) {
    let mut state = model.init();
    let mut lines = Vec::new();
    if order.len() > CLOSEST_SHOWN {
        let earlier = order.len() - CLOSEST_SHOWN;
        lines.push(format!("({earlier} earlier operations in a valid order)"));
    }
    for (n, &i) in order.iter().enumerate() {
        state = model
            .step(&state, &ops[i].op)
            .expect("a traced order replays");
        if n + CLOSEST_SHOWN >= order.len() {
            let who = match labels.of(i) {
                l if l.is_empty() => "(context)".to_string(),
                l => l,
            };
            let (op, after) = (model.describe_op(&ops[i].op), model.describe_state(&state));
            lines.push(format!("{who}: {op} — then {after}"));
        }
    }
    (lines, state)
}

/// `A`, `B`, … `Z`, `AA`, `AB`, …
fn letters(mut k: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'A' + (k % 26) as u8);
        if k < 26 {
            break;
        }
        k = k / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII")
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels() {
        assert_eq!(super::letters(0), "A");
        assert_eq!(super::letters(25), "Z");
        assert_eq!(super::letters(26), "AA");
        assert_eq!(super::letters(27), "AB");
    }
}
