//! The linearizability search against a brute-force checker on small
//! random histories, linearizable and not; witnesses are contradictions
//! and minimal; a pathological history stops at its budget.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serverlab_check::lin::{self, brute, Budget, Model, Operation, Outcome, Role, SearchResult};

/// A small register that can also be added to: values 0..4 so random
/// histories are often explainable.
struct Reg;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Write(u8),
    Read(u8),
    /// Add, answering the new value (mod 4).
    Add(u8, u8),
}

impl Model for Reg {
    type State = u8;
    type Op = Op;
    fn init(&self) -> u8 {
        0
    }
    fn step(&self, s: &u8, op: &Op) -> Option<u8> {
        match *op {
            Op::Write(v) => Some(v),
            Op::Read(v) => (v == *s).then_some(*s),
            Op::Add(d, got) => ((s + d) % 4 == got).then_some(got),
        }
    }
    fn describe_op(&self, op: &Op) -> String {
        format!("{op:?}")
    }
    fn describe_state(&self, s: &u8) -> String {
        format!("the register held {s}")
    }
}

fn apply(s: u8, op: Op) -> (u8, Op) {
    match op {
        Op::Write(v) => (v, op),
        Op::Read(_) => (s, Op::Read(s)),
        Op::Add(d, _) => ((s + d) % 4, Op::Add(d, (s + d) % 4)),
    }
}

fn op_kind() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..4).prop_map(Op::Write),
        (0u8..4).prop_map(Op::Read),
        (1u8..3).prop_map(|d| Op::Add(d, 0)),
    ]
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        6 => Just(Role::Required),
        2 => Just(Role::Optional),
        1 => Just(Role::Excluded),
    ]
}

/// A history made by running the ops in order, each taking effect at
/// time 10·i inside a random interval around it; then perhaps one reply
/// changed (which may or may not stay explainable).
fn history() -> impl Strategy<Value = (Vec<Operation<Op>>, Vec<Role>)> {
    (1usize..=7)
        .prop_flat_map(|n| {
            (
                prop::collection::vec((op_kind(), 0u64..30, 0u64..30, 0usize..3), n),
                prop::option::of((0..n, 0u8..4)),
                prop::collection::vec(role(), n),
            )
        })
        .prop_map(|(spec, corrupt, roles)| {
            let mut state = 0;
            let mut ops: Vec<Operation<Op>> = spec
                .into_iter()
                .enumerate()
                .map(|(i, (kind, before, after, client))| {
                    let (next, op) = apply(state, kind);
                    state = next;
                    let point = 100 + 10 * i as u64;
                    Operation {
                        client,
                        call: point - before,
                        ret: point + after,
                        op,
                    }
                })
                .collect();
            if let Some((i, v)) = corrupt {
                ops[i].op = match ops[i].op {
                    Op::Write(_) => Op::Read(v),
                    Op::Read(_) => Op::Read(v),
                    Op::Add(d, _) => Op::Add(d, v),
                };
            }
            (ops, roles)
        })
}

const BIG: Budget = Budget {
    steps: 10_000_000,
    deadline: None,
    states: usize::MAX,
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn search_agrees_with_brute_force((ops, roles) in history()) {
        let want = brute::linearizable(&Reg, &ops, &roles);
        let got = lin::search(&Reg, &ops, &roles, BIG);
        prop_assert_eq!(got == SearchResult::Linearizable, want, "{:?} {:?}", ops, roles);
    }

    #[test]
    fn witnesses_are_minimal_contradictions((ops, _) in history()) {
        let Outcome::Violation(w) = lin::check(&Reg, &ops, BIG) else {
            prop_assert!(brute::linearizable(&Reg, &ops, &vec![Role::Required; ops.len()]));
            return Ok(());
        };
        prop_assert!(w.minimal);
        prop_assert!(!w.ops.is_empty());
        // The witness operations alone, everything else optional: no order.
        let mut roles = vec![Role::Optional; ops.len()];
        for o in &w.ops {
            roles[o.index] = Role::Required;
        }
        prop_assert!(!brute::linearizable(&Reg, &ops, &roles));
        // Any one of them made optional: explained. So none is superfluous.
        for o in &w.ops {
            roles[o.index] = Role::Optional;
            prop_assert!(brute::linearizable(&Reg, &ops, &roles), "{:?}", w);
            roles[o.index] = Role::Required;
        }
        prop_assert!(!w.stuck.is_empty());
    }
}

/// The generator really makes both kinds of history, so the properties
/// above test both answers.
#[test]
fn histories_of_both_kinds_are_generated() {
    let mut runner = TestRunner::deterministic();
    let (mut yes, mut no) = (0, 0);
    for _ in 0..1000 {
        let (ops, roles) = history().new_tree(&mut runner).unwrap().current();
        if brute::linearizable(&Reg, &ops, &roles) {
            yes += 1;
        } else {
            no += 1;
        }
    }
    assert!(yes > 200 && no > 100, "{yes} linearizable, {no} not");
}

/// Concurrent writes of distinct values, concurrent reads of each, and a
/// final read of a value nobody wrote: proving it unexplainable means
/// trying every subset of the concurrent operations. The search must stop
/// at its budget and say so.
fn pathological(n: u8) -> Vec<Operation<Op>> {
    let mut ops = Vec::new();
    for v in 0..n {
        let v = v % 4;
        ops.push(Operation {
            client: 2 * v as usize,
            call: 0,
            ret: 1000,
            op: Op::Write(v),
        });
        ops.push(Operation {
            client: 2 * v as usize + 1,
            call: 0,
            ret: 1000,
            op: Op::Add(1, (v + 1) % 4),
        });
    }
    ops.push(Operation {
        client: 99,
        call: 2000,
        ret: 2001,
        op: Op::Read(7),
    });
    ops
}

#[test]
fn a_pathological_partition_ends_inconclusive_at_its_budget() {
    let ops = pathological(24);
    let budget = Budget::steps(200_000);
    match lin::check(&Reg, &ops, budget) {
        Outcome::Inconclusive(u) => assert!(u.steps <= budget.steps, "{u:?}"),
        other => panic!("expected inconclusive, got {other:?}"),
    }
    // A deadline alone stops it too.
    let deadline = Budget {
        steps: u64::MAX,
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(200)),
        states: usize::MAX,
    };
    assert!(matches!(
        lin::check(&Reg, &ops, deadline),
        Outcome::Inconclusive(_)
    ));
    // So does the memory cap, and it says where.
    let capped = Budget {
        states: 10_000,
        ..Budget::steps(u64::MAX)
    };
    match lin::check(&Reg, &ops, capped) {
        Outcome::Inconclusive(u) => {
            assert!(u.states <= 10_000, "{u:?}");
            // The window of concurrent operations, not the read after it.
            assert_eq!((u.decided, u.operations), (0, ops.len() - 1), "{u:?}");
            assert_eq!((u.from_ns, u.to_ns), (0, 1000), "{u:?}");
        }
        other => panic!("expected inconclusive, got {other:?}"),
    }
}

/// A long linearizable history with a violation at the end: the witness
/// names just the contradicting pair, not the thousands before it.
#[test]
fn a_late_violation_has_a_small_witness() {
    let mut ops = Vec::new();
    let mut state = 0;
    for i in 0..5000u64 {
        let kind = if i % 3 == 0 {
            Op::Write((i % 4) as u8)
        } else {
            Op::Read(0)
        };
        let (next, op) = apply(state, kind);
        state = next;
        ops.push(Operation {
            client: (i % 8) as usize,
            call: 10 * i,
            ret: 10 * i + 25,
            op,
        });
    }
    ops.push(Operation {
        client: 1,
        call: 60_000,
        ret: 60_001,
        op: Op::Write(3),
    });
    ops.push(Operation {
        client: 2,
        call: 60_010,
        ret: 60_011,
        op: Op::Read(2),
    });
    let Outcome::Violation(w) = lin::check(&Reg, &ops, BIG) else {
        panic!("not caught")
    };
    assert_eq!(w.ops.len(), 2, "{w:#?}");
    assert_eq!(w.ops[0].what, "Write(3)");
    assert_eq!(w.ops[1].what, "Read(2)");
    assert_eq!(w.after, ["B was sent after A was answered"]);
}
