//! A share of a sweep for one machine: `--shard I/N` runs the blocks of
//! the interleaved design whose number k (1-based) has (k − 1) mod N = I,
//! each block whole, baseline included, so every run on that machine has
//! its own block's baseline beside it. Block numbers stay the sweep's, so
//! the shards' directories never name the same run and `report` can read
//! them together.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based, below `count` (a Slurm array task's or a Kubernetes Job
    /// completion's index as it is).
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `I/N`, with 0 ≤ I < N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("'{text}': expected I/N, such as 0/4 (shard I of N, from 0)"))?;
        let number = |s: &str, what: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{text}': {what} '{s}' is not a whole number"))
        };
        let (index, count) = (number(i, "I")?, number(n, "N")?);
        if count == 0 {
            return Err(format!("'{text}': N must be 1 or more"));
        }
        if index >= count {
            return Err(format!(
                "'{text}': I counts from 0, so it must be below N (0 to {})",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// Whether block `block` (1-based) falls to this shard.
    pub fn owns(&self, block: u32) -> bool {
        block >= 1 && (block - 1) % self.count == self.index
    }

    /// The blocks of `1..=blocks` that fall to this shard.
    pub fn blocks(&self, blocks: u32) -> impl Iterator<Item = u32> + '_ {
        (1..=blocks).filter(|&b| self.owns(b))
    }

    /// A shard's directory name under the experiment's: `shard-1-of-4`.
    pub fn dir_name(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_blocks_between_them_once_each() {
        let shards: Vec<Shard> = (0..3)
            .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
            .collect();
        for block in 1..=10 {
            assert_eq!(
                shards.iter().filter(|s| s.owns(block)).count(),
                1,
                "block {block}"
            );
        }
        assert_eq!(shards[1].blocks(7).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(shards[0].to_string(), "0/3");
    }

    #[test]
    fn a_bad_shard_says_why() {
        assert!(Shard::parse("4/4").unwrap_err().contains("below N"));
        assert!(Shard::parse("0/0").unwrap_err().contains("1 or more"));
        assert!(Shard::parse("x/2").unwrap_err().contains("whole number"));
        assert!(Shard::parse("2").unwrap_err().contains("I/N"));
    }
}
