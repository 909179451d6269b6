//! The RESP load's own results: error and nil replies, the keys written
//! before the run, and for the board workload, the board's figures.

use crate::board::BoardResults;
use crate::report::TextLines;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RespResults {
    /// `keys` or `board`.
    pub workload: String,
    /// Replies that were errors (`-ERR …`, `-WRONGTYPE …`).
    pub error_replies: u64,
    /// Replies that were the null bulk string (a GET, LPOP or LINDEX that
    /// found nothing).
    pub null_replies: u64,
    /// Keys written before the run (shared, and with `--preload` every
    /// string key), and how long it took; null when none.
    pub setup: Option<Setup>,
    /// The board workload's reads and acknowledged posts.
    pub board: Option<BoardResults>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    pub keys_written: u64,
    pub time_s: f64,
}

impl TextLines for RespResults {
    fn text_lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "replies: {} errors, {} nil",
            self.error_replies, self.null_replies
        )];
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
        lines
    }
}
