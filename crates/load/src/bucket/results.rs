//! The bucket load's own results: the delays it asked for, the
//! connections it opened, and the theoretical bound it is judged by.

use super::Bound;
use crate::report::TextLines;
use serde::{Deserialize, Serialize};
use serverlab_proto::bucket::{DelayMode, DelayUnit};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketResults {
    /// The unit delays count in (`s`, `ms`, `us`).
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_unit: DelayUnit,
    /// The server's delay mode the bound assumes.
    #[serde(with = "serverlab_util::named::by_name")]
    pub delay_mode: DelayMode,
    /// Mean delay of the counted requests, in units.
    pub mean_delay_units: f64,
    /// Delay units of the counted requests.
    pub delay_units: u64,
    /// Every TCP connection the run opened, keep-alive ones included.
    pub connections_opened: u64,
    pub bound: Bound,
}

impl TextLines for BucketResults {
    /// The bound and what it assumed, and the connections opened.
    fn text_lines(&self) -> Vec<String> {
        let unit = self.delay_unit;
        let mut lines = self.bound.lines(unit.to_string().as_str(), unit.seconds());
        if self.connections_opened > 0 {
            lines.push(format!(
                "TCP connections opened: {}",
                self.connections_opened
            ));
        }
        lines
    }
}
