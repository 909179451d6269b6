//! A brute-force linearizability checker: try every order. Exponential,
//! so only for tiny histories; it is the reference the real search is
//! tested against, because it is too simple to be wrong.

use super::{Model, Operation, Role};

/// Whether some subset of the operations that includes every required
/// one (and no excluded one) has an order that respects real time (A
/// before B when A's reply came strictly before B was sent) and that the
/// model accepts.
pub fn linearizable<M: Model>(model: &M, ops: &[Operation<M::Op>], roles: &[Role]) -> bool {
    let optional: Vec<usize> = (0..ops.len())
        .filter(|&i| roles[i] == Role::Optional)
        .collect();
    (0u64..1 << optional.len()).any(|mask| {
        let chosen: Vec<usize> = (0..ops.len())
            .filter(|&i| match roles[i] {
                Role::Required | Role::Context => true,
                Role::Excluded => false,
                Role::Optional => {
                    let k = optional.iter().position(|&o| o == i).expect("optional");
                    mask & (1 << k) != 0
                }
            })
            .collect();
        orders(model, ops, &chosen, &mut Vec::new(), model.init())
    })
}

/// Depth-first over the orders of `chosen` that extend `placed`.
fn orders<M: Model>(
    model: &M,
    ops: &[Operation<M::Op>],
    chosen: &[usize],
    placed: &mut Vec<usize>,
    state: M::State,
) -> bool {
    if placed.len() == chosen.len() {
        return true;
    }
    for &i in chosen {
        if placed.contains(&i) {
            continue;
        }
        // Every chosen operation answered before i was sent goes first.
        let ready = chosen
            .iter()
            .all(|&j| j == i || placed.contains(&j) || ops[j].ret >= ops[i].call);
        if !ready {
            continue;
        }
        if let Some(next) = model.step(&state, &ops[i].op) {
            placed.push(i);
            if orders(model, ops, chosen, placed, next) {
                return true;
            }
            placed.pop();
        }
    }
    false
}
