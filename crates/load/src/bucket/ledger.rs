//! Verification of a bucket run: every acknowledged add, checked against
//! every other and against each bucket's value before and after the run.
//!
//! While nothing else writes to the buckets, the values a correct server
//! returns for one bucket, sorted, are its successive sums: each add's
//! reply minus its delay is the previous reply (or the value before the
//! run). So a lost update, a double add or a wrong reply breaks exactly
//! one link of that chain; a read (`0,b`) must return one of the chain's
//! values; and the final value must be the chain's end, i.e. the value
//! before the run plus everything added.

use crate::checks::Checks;

/// One acknowledged request: `delta` was added to `bucket`, and the server
/// answered `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ack {
    pub bucket: u64,
    pub delta: u64,
    pub value: u64,
}

/// Check every ack, given each bucket's value before (`base`) and after
/// (`finals`) the run. `acks` is reordered.
pub(crate) fn check(base: &[u64], finals: &[u64], acks: &mut [Ack], checks: &mut Checks) {
    acks.sort_unstable_by_key(|a| (a.bucket, a.delta == 0, a.value));
    let mut rest = &acks[..];
    for (b, (&before, &after)) in base.iter().zip(finals).enumerate() {
        let n = rest.iter().take_while(|a| a.bucket == b as u64).count();
        let (mine, tail) = rest.split_at(n);
        rest = tail;
        bucket(b, before, after, mine, checks);
    }
    if !rest.is_empty() {
        checks.mismatch(format!(
            "{} replies came for buckets beyond the {} checked",
            rest.len(),
            base.len()
        ));
    }
}

/// One bucket's acks: adds (sorted by value), then reads.
fn bucket(b: usize, before: u64, after: u64, acks: &[Ack], checks: &mut Checks) {
    let split = acks.iter().take_while(|a| a.delta > 0).count();
    let (adds, reads) = acks.split_at(split);
    let mut prev = before;
    let mut added = 0u64;
    for a in adds {
        checks.checked(1);
        if a.value.wrapping_sub(a.delta) != prev {
            checks.mismatch(format!(
                "bucket {b}: adding {} answered {}, but the value before it was {prev} \
                 (a lost, doubled or misreported update)",
                a.delta, a.value
            ));
        }
        prev = a.value;
        added = added.wrapping_add(a.delta);
    }
    for r in reads {
        checks.checked(1);
        let seen = r.value == before || adds.binary_search_by_key(&r.value, |a| a.value).is_ok();
        if !seen {
            checks.mismatch(format!(
                "bucket {b}: a read answered {}, a value the bucket never had",
                r.value
            ));
        }
    }
    checks.checked(1);
    let want = before.wrapping_add(added);
    if after != want {
        checks.mismatch(format!(
            "bucket {b}: final value {after}, but it held {before} before the run and {added} \
             was added ({want} expected)"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(bucket: u64, delta: u64, value: u64) -> Ack {
        Ack {
            bucket,
            delta,
            value,
        }
    }

    fn run(base: &[u64], finals: &[u64], acks: &[Ack]) -> (u64, u64, Vec<String>) {
        let mut checks = Checks::new(true);
        check(base, finals, &mut acks.to_vec(), &mut checks);
        let (checked, mismatches, examples) = checks.totals();
        (checked, mismatches, examples.to_vec())
    }

    #[test]
    fn a_correct_history_passes() {
        // Bucket 0 from 10: +2 → 12, +1 → 13, read 12; bucket 1 untouched.
        let acks = [ack(0, 1, 13), ack(0, 0, 12), ack(0, 2, 12)];
        let (checked, mismatches, ex) = run(&[10, 4], &[13, 4], &acks);
        assert_eq!((mismatches, ex.len()), (0, 0), "{ex:?}");
        assert_eq!(checked, 2 + 1 + 2);
    }

    #[test]
    fn a_lost_update_is_caught() {
        // +1 and +2 both saw 0: the server lost one of them.
        let acks = [ack(0, 1, 1), ack(0, 2, 2)];
        let (_, mismatches, ex) = run(&[0], &[2], &acks);
        assert_eq!(mismatches, 2, "{ex:?}");
        assert!(ex[0].contains("lost"), "{ex:?}");
        assert!(ex[1].contains("final value 2"), "{ex:?}");
    }

    #[test]
    fn a_wrong_final_value_is_caught() {
        let (_, mismatches, ex) = run(&[0, 0], &[5, 1], &[ack(0, 5, 5)]);
        assert_eq!(mismatches, 1);
        assert!(ex[0].starts_with("bucket 1: final value 1"), "{ex:?}");
    }

    #[test]
    fn an_impossible_read_is_caught() {
        let (_, mismatches, ex) = run(&[0], &[3], &[ack(0, 3, 3), ack(0, 0, 2)]);
        assert_eq!(mismatches, 1);
        assert!(ex[0].contains("never had"), "{ex:?}");
    }

    #[test]
    fn replies_for_unchecked_buckets_are_reported() {
        let (_, mismatches, _) = run(&[0], &[0], &[ack(3, 1, 1)]);
        assert!(mismatches >= 1);
    }
}
