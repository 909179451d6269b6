//! Long board histories, as the concurrency phase records them: checked
//! window by window, a violation deep inside is found with a witness of
//! the two operations that contradict each other, not thousands.

use serverlab_check::board::model::{Op, ReadReply, Topic};
use serverlab_check::lin::{self, Budget, Operation, Outcome, DEFAULT_STEPS};

const CLIENTS: usize = 8;

/// One topic's history of `n` operations from 8 clients, each taking
/// effect at a random instant inside its interval, sorted by the time
/// they were sent; every `drop_every`th POST is answered but neither
/// stored nor counted (0: none), as a server that drops POSTs does.
fn history(n: usize, seed: u64, drop_every: usize) -> Vec<Operation<Op>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let spans = serverlab_check::lin::spans::random_spans(&mut rng, n, CLIENTS, 20_000);
    let (mut messages, mut posts) = (Vec::<String>::new(), 0);
    let mut ops: Vec<Operation<Op>> = Vec::new();
    for (i, s) in spans.iter().enumerate() {
        let (client, call, ret) = (s.client, s.sent, s.answered);
        let count = messages.len() as u64;
        let op = match rng.u8(..100) {
            0..40 => {
                posts += 1;
                if drop_every == 0 || posts % drop_every != 0 {
                    messages.push(format!("m{i}"));
                }
                Op::Post {
                    msg: format!("m{i}"),
                    id: Ok(count),
                }
            }
            40..75 => {
                let id = rng.u64(..=count + 1);
                let got = match messages.get(id as usize) {
                    Some(m) => ReadReply::Posted { msg: m.clone(), id },
                    None => ReadReply::Empty,
                };
                Op::Read { id, got }
            }
            75..90 => Op::Count(Ok(count)),
            _ => Op::Listed(Ok(count > 0)),
        };
        ops.push(Operation {
            client,
            call,
            ret,
            op,
        });
    }
    ops.sort_by_key(|o| (o.call, o.ret));
    ops
}

fn topic() -> Topic {
    Topic { name: "t".into() }
}

#[test]
fn a_long_correct_history_is_linearizable() {
    let ops = history(10_000, 1, 0);
    assert_eq!(
        lin::check(&topic(), &ops, Budget::steps(DEFAULT_STEPS)),
        Outcome::Linearizable
    );
}

/// The search used to shrink such a violation with every earlier
/// operation optional, which let a topic's count be anything at every
/// point: minutes of search for one witness. Now the earlier history is
/// context, and the witness is the two POSTs answered one id.
#[test]
fn a_dropped_post_deep_in_a_long_history_has_a_two_post_witness() {
    let ops = history(10_000, 2, 500);
    let Outcome::Violation(w) = lin::check(&topic(), &ops, Budget::steps(DEFAULT_STEPS)) else {
        panic!("a dropped POST was not caught")
    };
    assert!(w.minimal, "{w:#?}");
    assert_eq!(w.ops.len(), 2, "{w:#?}");
    let ids: Vec<&str> = w
        .ops
        .iter()
        .map(|o| o.what.rsplit(" answered ").next().unwrap())
        .collect();
    assert!(
        w.ops.iter().all(|o| o.what.starts_with("POST@t#")),
        "{w:#?}"
    );
    assert_eq!(ids[0], ids[1], "{w:#?}");
    // The 500th POST is far in: the rest is context, and says so.
    let context = w.context.as_deref().unwrap_or_default();
    assert!(context.contains("taken as they happened"), "{w:#?}");
    assert!(
        w.stuck.iter().any(|s| s.contains("cannot come next")),
        "{w:#?}"
    );
}
