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

    /// A live process whose command line reads as a sharded sweep's.
    /// (Once it has exec'd: until then its command line is this test's,
    /// and a busy machine may take a while.)
    fn pretend_shard() -> std::process::Child {
        let child = std::process::Command::new("sh")
            .args(["-c", "sleep 60; true", "sweep", "--shard", "0/2"])
            .spawn()
            .expect("sh");
        let t0 = std::time::Instant::now();
        while !sharded_sweep(child.id()) {
            assert!(t0.elapsed().as_secs() < 30, "sh never ran");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child
    }

    /// A link left at the claim's name is replaced, never followed (it
    /// truncated what it pointed to); a claim that names no shard is said
    /// as "another shard"; a directory that cannot be made refuses nothing.
    #[test]
    fn claims_follow_no_link_and_read_foreign_ones_plainly() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "kept\n").unwrap();
        let claims = dir.path().join("claims");
        std::fs::create_dir(&claims).unwrap();
        let own = claims.join(format!("caps.{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &own).unwrap();
        let one = Shard { index: 1, count: 2 };
        let claim = claim_in(&claims, "caps", one).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "kept\n");
        assert!(!std::fs::symlink_metadata(&own).unwrap().is_symlink());
        drop(claim);
        let mut other = pretend_shard();
        std::fs::write(claims.join(format!("caps.{}", other.id())), "garbage").unwrap();
        let refused = claim_in(&claims, "caps", one).unwrap_err();
        assert!(
            refused.starts_with("another shard of experiment 'caps'"),
            "{refused}"
        );
        other.kill().unwrap();
        other.wait().unwrap();
        let not_a_dir = dir.path().join("victim").join("claims");
        assert!(claim_in(&not_a_dir, "caps", one).unwrap().0.is_none());
    }

    #[test]
    fn a_second_shard_of_an_experiment_on_one_machine_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut other = pretend_shard();
        std::fs::write(dir.path().join(format!("caps.{}", other.id())), "0/2\n").unwrap();
        let one = Shard { index: 1, count: 2 };
        let refused = claim_in(dir.path(), "caps", one).unwrap_err();
        assert!(
            refused.contains(&format!(
                "shard 0/2 of experiment 'caps' is running on this machine (process {})",
                other.id()
            )),
            "{refused}"
        );
        // Another experiment's shard is no matter.
        drop(claim_in(dir.path(), "other", one).unwrap());
        // Gone, its claim is stale.
        other.kill().unwrap();
        other.wait().unwrap();
        let claim = claim_in(dir.path(), "caps", one).unwrap();
        let own = dir.path().join(format!("caps.{}", std::process::id()));
        assert_eq!(std::fs::read_to_string(&own).unwrap(), "1/2\n");
        drop(claim);
        assert!(!own.exists(), "the claim outlived its shard");
    }

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

/// A running shard's claim on this machine: the file
/// `<temp>/serverlab-shards/<experiment>.<pid>` holding `I/N`, removed
/// when the claim is dropped. Shards of one experiment are pinned alike
/// (its `cpus` and `client_cpus`), so two running at once on one machine
/// compete for the same CPUs and spoil each other's numbers: a shard
/// started while another of its experiment runs here is refused.
#[derive(Debug)]
pub struct Claim(Option<std::path::PathBuf>);

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Claim this machine for `shard` of experiment `name` in the system's
/// temporary directory; Err says which shard already runs here.
pub fn claim(name: &str, shard: Shard) -> Result<Claim, String> {
    claim_in(&std::env::temp_dir().join("serverlab-shards"), name, shard)
}

/// [`claim`] in `dir`. The claim is written first and the others read
/// after, so of two shards started at the same moment neither runs
/// unseen (both may be refused). A claim whose process is gone, or is no
/// longer a sharded sweep, is stale and ignored. Where claims cannot be
/// kept (no /proc, an unwritable directory) nothing is refused.
pub fn claim_in(dir: &std::path::Path, name: &str, shard: Shard) -> Result<Claim, String> {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let me = std::process::id();
    let own = dir.join(format!("{safe}.{me}"));
    if let Err(e) = write_claim(dir, &own, shard) {
        eprintln!(
            "serverlab: warning: shard {shard} could not note itself in {} ({e}): other shards \
             of '{name}' started on this machine will not be refused",
            dir.display()
        );
        return Ok(Claim(None));
    }
    let claim = Claim(Some(own));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(claim);
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().to_string();
        let Some(pid) = file
            .strip_prefix(&format!("{safe}."))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || !sharded_sweep(pid) {
            continue;
        }
        // A claim half written, or not ours, names no shard: said so.
        // Read as a small regular file only: a pipe or device put there
        // (by anyone who can write the directory) is not waited on.
        let other =
            serverlab_util::file::read_regular_text_capped(&entry.path(), 64).unwrap_or_default();
        let which = match Shard::parse(other.trim()) {
            Ok(s) => format!("shard {s}"),
            Err(_) => "another shard".to_string(),
        };
        return Err(format!(
            "{which} of experiment '{name}' is running on this machine (process {pid}): \
             shards of one experiment are pinned to the same CPUs, so two at once compete \
             for them and spoil both; run this machine's shards one after another, or on \
             separate machines"
        ));
    }
    Ok(claim)
}

/// Writes this process's claim as a new file: one left at its name (a
/// process of the same id, long gone) is removed first, and a link put
/// there is never followed.
fn write_claim(dir: &std::path::Path, own: &std::path::Path, shard: Shard) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    match std::fs::remove_file(own) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(own)?;
    writeln!(f, "{shard}")
}

/// Whether process `pid` is alive and a sharded sweep (its command line
/// has `sweep` and `--shard`).
fn sharded_sweep(pid: u32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    args.contains(&&b"sweep"[..]) && args.iter().any(|a| a.starts_with(b"--shard"))
}
