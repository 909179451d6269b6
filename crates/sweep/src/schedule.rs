//! The order runs are made in, recorded in `schedule.json`: blocks, each
//! running every point once and the baseline once (block k makes
//! repetition k of each), in plan order (round-robin) or shuffled per
//! block from a seed. Drift of the machine then spreads over every point
//! instead of landing on those that ran last; a stopped sweep resumes in
//! the recorded order; blocks a target adds are appended.

use crate::design::Order;
use crate::error::SweepError;
use crate::layout;
use crate::plan::{Plan, BASELINE};
use crate::shard::Shard;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

pub const SCHEDULE_SCHEMA: &str = "serverlab-schedule/1";
pub const SCHEDULE: &str = "schedule.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub schema: String,
    pub order: Order,
    pub seed: u64,
    /// Block k (1-based) runs repetition k of each slug, in this order.
    pub blocks: Vec<Vec<String>>,
    /// The share of the blocks this directory runs (`sweep --shard I/N`);
    /// the others are listed, and run elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

impl Schedule {
    /// The blocks every point gets, ordered by the plan's order and `seed`.
    pub fn new(plan: &Plan, seed: u64) -> Schedule {
        let mut s = Schedule {
            schema: SCHEDULE_SCHEMA.into(),
            order: plan.experiment.design.order,
            seed,
            blocks: vec![],
            shard: None,
        };
        let members: Vec<String> = plan.block().iter().map(|p| p.slug.clone()).collect();
        for _ in 0..plan.experiment.design.repetitions {
            s.extend(members.clone());
        }
        s
    }

    /// Append the next block, running `slugs` (in plan order; the baseline
    /// first) in this schedule's order.
    pub fn extend(&mut self, mut slugs: Vec<String>) {
        let block = self.blocks.len() as u64 + 1;
        if self.order == Order::Random {
            // A generator per block, from the seed and the block's number:
            // block k's order does not depend on how many blocks came before.
            let mut rng =
                fastrand::Rng::with_seed(self.seed ^ block.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            rng.shuffle(&mut slugs);
        }
        self.blocks.push(slugs);
    }

    /// The same blocks, of which this directory runs `shard`'s only.
    pub fn for_shard(mut self, shard: Option<Shard>) -> Schedule {
        self.shard = shard;
        self
    }

    /// Whether this directory runs block `block` (1-based).
    pub fn runs_block(&self, block: u32) -> bool {
        self.shard.is_none_or(|s| s.owns(block))
    }

    /// Every run this directory makes, in order: (block = repetition,
    /// slug), with its 1-based place among them.
    pub fn runs(&self) -> impl Iterator<Item = (usize, u32, &str)> {
        self.blocks
            .iter()
            .enumerate()
            .filter(|(b, _)| self.runs_block(*b as u32 + 1))
            .flat_map(|(b, slugs)| slugs.iter().map(move |s| (b as u32 + 1, s.as_str())))
            .enumerate()
            .map(|(i, (b, s))| (i + 1, b, s))
    }

    /// Whether this recorded schedule still describes `plan` run as
    /// `shard` (None: all of it): the same shard, order and seed (when the experiment fixes one), its first blocks
    /// holding exactly the plan's points and baseline, and any blocks after
    /// them only points the plan has, with the baseline.
    pub fn fits(&self, plan: &Plan, shard: Option<Shard>) -> bool {
        let design = &plan.experiment.design;
        let members: BTreeSet<&str> = plan.block().iter().map(|p| p.slug.as_str()).collect();
        let fixed = design.repetitions as usize;
        fn set(b: &[String]) -> BTreeSet<&str> {
            b.iter().map(String::as_str).collect()
        }
        let has_baseline = plan.baseline.is_some();
        self.schema == SCHEDULE_SCHEMA
            && self.shard == shard
            && self.order == design.order
            && design.seed.is_none_or(|s| s == self.seed)
            && self.blocks.len() >= fixed
            && self.blocks.len() <= design.max() as usize
            && self.blocks[..fixed].iter().all(|b| set(b) == members)
            && self.blocks[fixed..].iter().all(|b| {
                let s = set(b);
                s.len() == b.len() && s.is_subset(&members) && s.contains(BASELINE) == has_baseline
            })
    }

    pub fn read(dir: &Path) -> Option<Schedule> {
        let text = std::fs::read_to_string(dir.join(SCHEDULE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub fn write(&self, dir: &Path) -> Result<(), SweepError> {
        let text = serde_json::to_string_pretty(self).expect("a schedule serializes") + "\n";
        layout::write_atomic(&dir.join(SCHEDULE), &text)
    }

    /// The blocks (1-based) `slug` runs in here: this shard's.
    pub fn blocks_of(&self, slug: &str) -> Vec<u32> {
        (1..=self.blocks.len() as u32)
            .filter(|&b| self.runs_block(b))
            .filter(|&b| self.blocks[b as usize - 1].iter().any(|s| s == slug))
            .collect()
    }

    /// The blocks `slug` runs in.
    pub fn repetitions_of(&self, slug: &str) -> u32 {
        self.blocks
            .iter()
            .filter(|b| b.iter().any(|s| s == slug))
            .count() as u32
    }
}

/// A seed for a sweep whose experiment fixes none: the clock's nanoseconds
/// and the process id, mixed. It is recorded, so the order can be rerun.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut rng = fastrand::Rng::with_seed(nanos ^ (u64::from(std::process::id()) << 32));
    // Small enough to type back into an experiment file (TOML integers are i64).
    rng.u64(..1 << 53)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Experiment;

    fn plan(repetitions: u32, extra: &str) -> Plan {
        let text = format!(
            "protocol = \"board\"\nrepetitions = {repetitions}\n{extra}\n[load]\nposters = [1, 2, 3, 4]\n\
             [baseline.server]\nprotocol = \"echo\"\n"
        );
        Plan::new(Experiment::parse("t.toml", &text).unwrap()).unwrap()
    }

    #[test]
    fn every_block_runs_every_point_and_the_baseline_once() {
        let p = plan(3, "seed = 7");
        let s = Schedule::new(&p, 7);
        assert_eq!(s.blocks.len(), 3);
        for b in &s.blocks {
            let mut sorted = b.clone();
            sorted.sort();
            assert_eq!(
                sorted,
                [
                    "baseline",
                    "posters=1",
                    "posters=2",
                    "posters=3",
                    "posters=4"
                ]
            );
        }
        // Shuffled, differently per block, and the same again from the seed.
        assert!(s.blocks.windows(2).any(|w| w[0] != w[1]), "{s:?}");
        assert_eq!(Schedule::new(&p, 7), s);
        assert_ne!(Schedule::new(&p, 8), s);
        let runs: Vec<_> = s.runs().collect();
        assert_eq!(runs.len(), 15);
        assert_eq!((runs[0].0, runs[0].1), (1, 1));
        assert_eq!((runs[14].0, runs[14].1), (15, 3));
    }

    #[test]
    fn round_robin_keeps_plan_order_with_the_baseline_first() {
        let s = Schedule::new(&plan(3, "order = \"round-robin\""), 1);
        for b in &s.blocks {
            assert_eq!(
                b,
                &[
                    "baseline",
                    "posters=1",
                    "posters=2",
                    "posters=3",
                    "posters=4"
                ]
            );
        }
    }

    #[test]
    fn a_recorded_schedule_fits_its_plan_only() {
        let p = plan(3, "target_ci = \"5%\"\nmax_repetitions = 5");
        let mut s = Schedule::new(&p, 42);
        assert!(s.fits(&p, None));
        s.extend(vec!["baseline".into(), "posters=2".into()]);
        assert!(s.fits(&p, None), "an added block of known points fits");
        assert_eq!(s.repetitions_of("posters=2"), 4);
        assert_eq!(s.repetitions_of("posters=1"), 3);
        let mut other = s.clone();
        other.extend(vec!["baseline".into(), "posters=9".into()]);
        assert!(!other.fits(&p, None), "an unknown point");
        let fixed_seed = plan(3, "target_ci = \"5%\"\nseed = 1");
        assert!(!s.fits(&fixed_seed, None), "the file fixes another seed");
        let round = plan(3, "order = \"round-robin\"");
        assert!(!Schedule::new(&p, 42).fits(&round, None), "another order");
        let more = plan(4, "");
        assert!(!Schedule::new(&p, 42).fits(&more, None), "more repetitions");
        let half = Shard::parse("1/2").ok();
        assert!(!Schedule::new(&p, 42).fits(&p, half), "another shard");
        assert!(Schedule::new(&p, 42).for_shard(half).fits(&p, half));
    }

    #[test]
    fn a_shard_runs_its_own_blocks_whole_with_their_numbers() {
        let p = plan(5, "seed = 3");
        let s = Schedule::new(&p, 3).for_shard(Shard::parse("1/2").ok());
        let blocks: BTreeSet<u32> = s.runs().map(|(_, b, _)| b).collect();
        assert_eq!(blocks, BTreeSet::from([2, 4]));
        assert_eq!(
            s.runs().count(),
            2 * 5,
            "every point and the baseline, per block"
        );
        assert_eq!(s.blocks_of("baseline"), [2, 4]);
        assert_eq!(s.blocks_of("posters=3"), [2, 4]);
    }
}
