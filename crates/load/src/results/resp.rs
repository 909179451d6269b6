//! The RESP load's own results: error and nil replies, the keys written
//! before the run, and for the board workload, the board's figures.

use super::board::BoardResults;
use super::pubsub::PubSubResults;
use super::{Across, Merge, TextLines};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RespResults {
    /// `keys`, `board`, or `commands` (the user's own, `--command`).
    pub workload: String,
    /// Replies that were errors (`-ERR …`, `-WRONGTYPE …`).
    pub error_replies: u64,
    /// The error replies by their prefix, the first word (`ERR`,
    /// `WRONGTYPE`, `NOAUTH`); absent when there were none (and from the
    /// board workload, which counts them only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_prefixes: BTreeMap<String, u64>,
    /// Replies that were the null bulk string (a GET, LPOP or LINDEX that
    /// found nothing).
    pub null_replies: u64,
    /// Keys written before the run (shared, and with `--preload` every
    /// string key), and how long it took; null when none.
    pub setup: Option<Setup>,
    /// The board workload's reads and acknowledged posts.
    pub board: Option<BoardResults>,
    /// The pub/sub workload's publishes and deliveries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pubsub: Option<PubSubResults>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    pub keys_written: u64,
    pub time_s: f64,
}

impl Merge for RespResults {
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        let workload = at.same("workload", parts, |p| p.workload.clone())?;
        let setups: Vec<&Option<Setup>> = parts.iter().map(|p| &p.setup).collect();
        // The board workload's, in every agent or none.
        let boards = at.all_or_none("board", parts, |p| p.board.as_ref())?;
        let pubsubs = at.all_or_none("pubsub", parts, |p| p.pubsub.as_ref())?;
        Ok(RespResults {
            workload,
            error_replies: at.count("error_replies", parts, |p| p.error_replies)?,
            error_prefixes: at.counts("error_prefixes", parts, |p| &p.error_prefixes)?,
            null_replies: at.count("null_replies", parts, |p| p.null_replies)?,
            setup: Option::<Setup>::merge(&setups, at)?,
            board: boards.map(|b| BoardResults::merge(&b, at)).transpose()?,
            pubsub: pubsubs.map(|p| PubSubResults::merge(&p, at)).transpose()?,
        })
    }
}

impl Merge for Option<Setup> {
    /// Each agent writes the keys its connections own, at once: keys
    /// added, the longest time. An agent that wrote none has none (null),
    /// which adds nothing; null where no agent wrote any.
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String> {
        if parts.iter().all(|p| p.is_none()) {
            return Ok(None);
        }
        let keys = |p: &Self| p.as_ref().map_or(0, |s| s.keys_written);
        Ok(Some(Setup {
            keys_written: at.count("setup.keys_written", parts, keys)?,
            time_s: at.max(parts, |p| p.as_ref().map_or(0.0, |s| s.time_s)),
        }))
    }
}

impl TextLines for RespResults {
    fn text_lines(&self) -> Vec<String> {
        let by_prefix: Vec<String> = self
            .error_prefixes
            .iter()
            .map(|(p, n)| format!("{p} {n}"))
            .collect();
        let prefixes = if by_prefix.is_empty() {
            String::new()
        } else {
            format!(" ({})", by_prefix.join(", "))
        };
        let mut lines = vec![format!(
            "replies: {} errors{prefixes}, {} nil",
            self.error_replies, self.null_replies
        )];
        if self.workload == "commands" {
            lines.push(
                "your commands (--command) have no model: their replies were checked only for \
                 being RESP and for errors"
                    .into(),
            );
        }
        if let Some(s) = &self.setup {
            lines.push(format!(
                "setup: {} written in {:.3} s before the run (not measured)",
                serverlab_util::plural(s.keys_written, "key", "keys"),
                s.time_s
            ));
        }
        if let Some(b) = &self.board {
            lines.extend(b.text_lines());
            lines.push(format!("posts acknowledged: {}", b.posts_acknowledged));
        }
        if let Some(p) = &self.pubsub {
            lines.extend(p.text_lines());
        }
        lines
    }

    fn error_replies(&self) -> u64 {
        self.error_replies
    }
}
