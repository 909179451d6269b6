//! Where each agent's window goes on the merged wall clock. Agents of one
//! run start within their clocks' offsets and start lags of each other;
//! one whose window began further from the others than the run lasts
//! (plus [`MARGIN_S`]) did not load the server with them by its own
//! clock: its clock is wrong (or it was started on its own). Its seconds
//! are placed as if it had started with the others, and it is named in a
//! flag, so a clock in 1970 or a year ahead neither stretches the merged
//! series over the years between nor hides its agent's load.

use super::AgentFile;

/// Beyond the run's duration, how far apart agents' windows may begin
/// before the one apart is taken to have a wrong clock.
pub const MARGIN_S: f64 = 5.0;

/// Each agent's window start on the merged clock.
pub struct Placement {
    /// The earliest window start of the agents whose clocks agree.
    pub t0: f64,
    /// Per agent, in the order given: its window's start as placed (its
    /// own, or `t0` where its clock is wrong).
    pub starts: Vec<f64>,
    /// Per agent: its clock disagrees with the others'.
    pub wrong: Vec<bool>,
    /// The run's duration the rule allows for: the agents' median
    /// window, s.
    pub run_s: f64,
}

impl Placement {
    /// The merged second agent `k`'s window begins in.
    pub fn shift(&self, k: usize) -> usize {
        (self.starts[k] - self.t0).round().max(0.0) as usize
    }

    /// The merged second of an instant `at` by agent `k`'s clock.
    pub fn second(&self, agents: &[AgentFile], k: usize, at: f64) -> usize {
        let placed = at - agents[k].window_start_unix_s + self.starts[k];
        (placed - self.t0).round().max(0.0) as usize
    }
}

/// The placement of `agents` (sorted by index): the largest set of
/// agents whose windows begin within the run's duration plus the margin
/// of each other keeps its clocks; of two such sets, the one with the
/// lowest-numbered agent (so of two agents that disagree, agent 0's clock
/// is taken as right).
pub fn place(agents: &[AgentFile]) -> Placement {
    let starts: Vec<f64> = agents.iter().map(|a| a.window_start_unix_s).collect();
    let mut durations: Vec<f64> = agents.iter().map(|a| a.report.results.duration_s).collect();
    durations.sort_by(f64::total_cmp);
    let run_s = durations
        .get(durations.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0.0);
    let (from, to) = agreeing(&starts, run_s + MARGIN_S);
    let right = |s: f64| s >= from && s <= to;
    let wrong: Vec<bool> = starts.iter().map(|&s| !right(s)).collect();
    Placement {
        t0: from,
        starts: starts
            .iter()
            .map(|&s| if right(s) { s } else { from })
            .collect(),
        wrong,
        run_s,
    }
}

/// The span `[from, to]`, no wider than `width`, holding the most of
/// `starts` (given by agent order), ties to the span holding the
/// earliest in that order.
fn agreeing(starts: &[f64], width: f64) -> (f64, f64) {
    let mut order: Vec<usize> = (0..starts.len()).collect();
    order.sort_by(|&a, &b| starts[a].total_cmp(&starts[b]));
    let mut best: Option<(usize, usize, usize)> = None; // (count, first agent, left)
    let mut right = 0;
    for left in 0..order.len() {
        right = right.max(left);
        while right + 1 < order.len() && starts[order[right + 1]] - starts[order[left]] <= width {
            right += 1;
        }
        let count = right - left + 1;
        if best.is_some_and(|(c, _, _)| count < c) {
            continue;
        }
        let first = order[left..=right].iter().copied().min().unwrap_or(0);
        if best.is_none_or(|(c, f, _)| count > c || first < f) {
            best = Some((count, first, left));
        }
    }
    let Some((count, _, left)) = best else {
        return (0.0, 0.0);
    };
    (starts[order[left]], starts[order[left + count - 1]])
}

#[cfg(test)]
mod tests {
    use super::agreeing;

    #[test]
    fn the_agreeing_clocks_are_the_most_within_the_width() {
        let now = 1_795_787_494.5;
        // A clock in 1970, one a year ahead, two right.
        assert_eq!(
            agreeing(&[1000.0, now, now + 0.002, now + 3.2e7], 7.0),
            (now, now + 0.002)
        );
        // Two that disagree: agent 0's is taken.
        assert_eq!(
            agreeing(&[now + 3.2e7, now], 7.0),
            (now + 3.2e7, now + 3.2e7)
        );
        assert_eq!(agreeing(&[now, now + 3.2e7], 7.0), (now, now));
        // Within the width, all agree, whatever their order.
        assert_eq!(
            agreeing(&[now + 6.0, now, now + 3.0], 7.0),
            (now, now + 6.0)
        );
        assert_eq!(agreeing(&[], 7.0), (0.0, 0.0));
    }
}
