//! The report's first section, in sentences a reader can act on: what ran
//! on which machine; the best configuration per metric and which points
//! are not significantly worse; where throughput stops growing; which
//! differences along the other axes are significant; and how noisy the
//! runs were ("differences smaller than Y% are not resolved here").

use crate::axes::{self, Role};
use crate::data::{PointRuns, Sweep};
use crate::dates::utc;
use crate::figures::{groups, value};
use crate::points::PointStats;
use crate::stats::Summary;
use crate::student;
use crate::tables::{centre_ci_bare, few};
use crate::units::{num, percent, TimeUnit};
use crate::welch::{contrast, Contrast, Scale};
use serverlab_sweep::{params_text, Manifest};

/// At most this many lines on knees and on axis differences each.
const MAX_LINES: usize = 6;

/// The summary's two lists.
pub struct Findings {
    /// The experiment and the machine.
    pub setting: Vec<String>,
    /// Best configurations, knees, significant differences, noise.
    pub findings: Vec<String>,
}

pub fn summary(sweep: &Sweep, stats: &[PointStats], baseline: Option<&PointStats>) -> Findings {
    let m = &sweep.manifest;
    let mut findings = best(m, stats);
    findings.extend(knees(m, stats));
    findings.extend(axis_differences(m, stats));
    findings.extend(noise(stats));
    let all: Vec<&PointStats> = stats.iter().chain(baseline).collect();
    let busy: usize = all.iter().map(|s| s.busy.len()).sum();
    if busy > 0 {
        let runs: usize = all.iter().map(|s| s.runs.runs.len()).sum();
        let steadier = match baseline {
            Some(_) => "; the share of the baseline is the steadier measure",
            None => "",
        };
        findings.push(format!(
            "{busy} of {runs} runs were made on a busy machine (other processes kept at least \
             {} of a core busy, or the hypervisor stole {}){steadier}.",
            serverlab_sweep::machine::BUSY_OTHERS_CORES,
            serverlab_sweep::machine::BUSY_STEAL_CORES
        ));
    }
    if let Some(b) = baseline.and_then(|b| b.throughput) {
        findings.push(format!("The baseline ran at {}.", show_rate(&b)));
    }
    Findings {
        setting: setting(sweep, stats),
        findings,
    }
}

/// `posters=2, readers=3`, or `the single point`.
pub fn point_name(s: &PointStats) -> String {
    let p = &s.runs.point.params;
    if p.is_empty() {
        "the single point".into()
    } else {
        params_text(p, ", ")
    }
}

/// The experiment (its size, order and target), the machine, the baseline.
fn setting(sweep: &Sweep, stats: &[PointStats]) -> Vec<String> {
    let all: Vec<&PointRuns> = stats
        .iter()
        .map(|s| s.runs)
        .chain(&sweep.baseline)
        .collect();
    let mut out = vec![experiment_line(&sweep.manifest, &all)];
    out.extend(machine_line(&sweep.manifest, &all));
    if let Some(b) = &sweep.manifest.baseline {
        out.push(format!(
            "Baseline: `serverlab serve {} {}` under `serverlab load {} {}`; each point's \
             throughput is also given as a share of the baseline run in the same block.",
            b.server_protocol,
            b.server_flags.join(" "),
            b.load_protocol,
            b.load_flags.join(" ")
        ));
    }
    out
}

/// `**caps**: 25 points × 4 repetitions + a baseline…: 104 runs succeeded,
/// 0 failed, 0 not run; randomized blocks (seed 7)`.
fn experiment_line(m: &Manifest, all: &[&PointRuns]) -> String {
    let count = |f: fn(&PointRuns) -> usize| all.iter().map(|p| f(p)).sum::<usize>();
    let (ok, failed, missing) = (
        count(|p| p.runs.len()),
        count(|p| p.failed.len()),
        count(|p| p.missing.len()),
    );
    let baseline = match m.baseline {
        Some(_) => " + a baseline run in every block",
        None => "",
    };
    let order = match (m.order, m.seed) {
        (Some(o), Some(seed)) => format!("; {} (seed {seed})", o.describe()),
        (Some(o), None) => format!("; {}", o.describe()),
        (None, _) => String::new(),
    };
    let target = m
        .target_ci
        .map(|t| {
            let max = m.max_repetitions.unwrap_or(m.repetitions);
            format!("; repeated towards ±{} (up to {max} runs)", percent(t))
        })
        .unwrap_or_default();
    format!(
        "**{}**: {} points × {} repetitions{baseline}: {ok} runs succeeded, {failed} failed, \
         {missing} not run{order}{target}.",
        m.name,
        m.points.len(),
        m.repetitions
    )
}

/// The machine the runs report, where the load ran, and when.
fn machine_line(m: &Manifest, all: &[&PointRuns]) -> Option<String> {
    let runs: Vec<_> = all.iter().flat_map(|p| &p.runs).collect();
    let e = &runs.first()?.load.environment;
    let times: Vec<u64> = runs
        .iter()
        .map(|r| r.started_unix_s)
        .filter(|t| *t > 0)
        .collect();
    let when = match (times.iter().min(), times.iter().max()) {
        (Some(a), Some(b)) => format!("; runs from {} to {}", utc(*a), utc(*b)),
        _ => String::new(),
    };
    let pinned = load_pinning(m);
    Some(format!(
        "Machine: {} CPUs, {} {}, {}; serverlab {}; load {pinned}{when}.",
        e.cores_online, e.os, e.arch, e.kernel, e.serverlab_version,
    ))
}

/// Where the load ran: one CPU list for the sweep, or per point where
/// the cores axis placed it, or nowhere in particular.
pub fn load_pinning(m: &Manifest) -> String {
    match &m.client_cpus {
        Some(c) => format!("pinned to CPUs {c}"),
        None if m.points.iter().any(|p| p.placement.is_some()) => {
            "pinned per point, on CPUs its server does not use where the machine has them \
             (each point's placement is in sweep.json)"
                .into()
        }
        None => "not pinned".into(),
    }
}

/// How a metric's value reads: `12,345 (12,000 – 12,700) req/s`.
type Show = dyn Fn(&Summary) -> String;

fn show_rate(s: &Summary) -> String {
    format!("{} req/s{}", centre_ci_bare(s, &num), few(s))
}

fn show_share(s: &Summary) -> String {
    format!("{} of the baseline{}", centre_ci_bare(s, &percent), few(s))
}

fn show_time(s: &Summary) -> String {
    let unit = TimeUnit::for_max(s.centre());
    format!(
        "{} {}{}",
        centre_ci_bare(&s.scaled(unit.per_us()), &num),
        unit.symbol(),
        few(s)
    )
}

/// The best point for throughput, its share of the baseline, and median
/// and p99 latency, each with how many others it does not beat
/// significantly.
fn best(m: &Manifest, stats: &[PointStats]) -> Vec<String> {
    let lines: [Best; 4] = [
        Best {
            label: ("Highest throughput", "Throughput"),
            higher: true,
            get: &|s| s.throughput,
            show: &show_rate,
        },
        Best {
            label: ("Highest share of the baseline", "Share of the baseline"),
            higher: true,
            get: &|s| s.share,
            show: &show_share,
        },
        Best {
            label: ("Lowest median (p50) latency", "Median (p50) latency"),
            higher: false,
            get: &|s| s.latency("p50").copied(),
            show: &show_time,
        },
        Best {
            label: ("Lowest p99 latency", "p99 latency"),
            higher: false,
            get: &|s| s.latency("p99").copied(),
            show: &show_time,
        },
    ];
    lines
        .iter()
        .filter_map(|b| best_line(m, stats, b))
        .collect()
}

/// One "best configuration" line: its labels (with several points, and
/// with one), which way is better, the metric and how it reads.
struct Best<'f> {
    label: (&'static str, &'static str),
    higher: bool,
    get: &'f dyn Fn(&PointStats) -> Option<Summary>,
    show: &'f Show,
}

fn best_line(m: &Manifest, stats: &[PointStats], line: &Best) -> Option<String> {
    let (label, higher, get, show) = (line.label.0, line.higher, line.get, line.show);
    let have: Vec<(&PointStats, Summary)> =
        stats.iter().filter_map(|s| Some((s, get(s)?))).collect();
    let (b, best) = *have.iter().max_by(|a, b| {
        let ord = a.1.centre().total_cmp(&b.1.centre());
        if higher {
            ord
        } else {
            ord.reverse()
        }
    })?;
    if m.axes.is_empty() || have.len() == 1 {
        return Some(format!("{}: {}.", line.label.1, show(&best)));
    }
    let others = have.len() - 1;
    let ties = have
        .iter()
        .filter(|(s, _)| !std::ptr::eq(*s, b))
        .filter(|(_, v)| contrast(v, &best).is_none_or(|c| !c.significant))
        .count();
    let worse = if higher { "lower" } else { "higher" };
    let better = if higher { "higher" } else { "lower" };
    let tail = match (ties, others) {
        (0, 1) => format!("significantly {better} than the other point"),
        (0, _) => format!("significantly {better} than every other point"),
        (_, 1) => format!("the other point is not significantly {worse}"),
        (t, o) if t == o => format!("no other point is significantly {worse}"),
        (t, _) => format!("{t} of the {others} other points are not significantly {worse}"),
    };
    Some(format!(
        "{label}: {}, {} — {tail}.",
        point_name(b),
        show(&best)
    ))
}

/// The axis throughput should grow along: the client's connections, else
/// the first ordered numeric axis with 3 values or more (not the server's
/// cores: the scaling section judges those). (The axes left
/// out of a series' grouping, the x of a point, and the axis's name.)
type Growth = (Vec<usize>, Box<dyn Fn(&PointStats) -> Option<f64>>, String);

fn growth(m: &Manifest) -> Option<Growth> {
    let clients: Vec<usize> = (0..m.axes.len())
        .filter(|&i| axes::role(&m.axes[i]) == Role::Client)
        .collect();
    if let Some(&last) = clients.last() {
        return Some((
            vec![last],
            Box::new(|s: &PointStats| s.clients),
            "client connections".into(),
        ));
    }
    // The server's cores have their own verdicts (crate::scaling).
    let i = (0..m.axes.len()).find(|&i| {
        let a = &m.axes[i];
        a.values.len() >= 3
            && !axes::is_nominal(a)
            && a.source != serverlab_sweep::Source::Cores
            && a.values.iter().all(|v| v.as_f64().is_some())
    })?;
    let mm = m.clone();
    let x = move |s: &PointStats| value(&mm, s, i).and_then(|v| v.as_f64());
    Some((vec![i], Box::new(x), m.axes[i].key.clone()))
}

/// Per series along the growth axis: where throughput stops growing.
fn knees(m: &Manifest, stats: &[PointStats]) -> Vec<String> {
    let Some((exclude, x, name)) = growth(m) else {
        return vec![];
    };
    let grouped = groups(m, stats, &exclude);
    let mut out = Vec::new();
    let mut longest = 0;
    for (series, members) in grouped.iter().take(MAX_LINES) {
        let mut pts: Vec<(f64, Summary)> = members
            .iter()
            .filter_map(|&p| Some((x(&stats[p])?, stats[p].throughput?)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        longest = longest.max(pts.len());
        if pts.len() >= 3 {
            out.push(knee_line(series, &name, &pts));
        }
    }
    if out.is_empty() && longest > 0 {
        out.push(format!(
            "Where throughput stops growing is not told: each series has {longest} values of \
             {name}, and it takes 3."
        ));
    }
    if grouped.len() > MAX_LINES && !out.is_empty() {
        out.push(format!(
            "… and {} more series: see the plots.",
            grouped.len() - MAX_LINES
        ));
    }
    out
}

/// The first x from which no later point is significantly below the
/// best, and the best's index.
pub fn knee(pts: &[(f64, Summary)]) -> (usize, usize) {
    let best = (0..pts.len())
        .max_by(|&a, &b| pts[a].1.centre().total_cmp(&pts[b].1.centre()))
        .unwrap_or(0);
    let below = |j: usize| {
        contrast(&pts[j].1, &pts[best].1).is_some_and(|c| c.significant && c.estimate < 1.0)
    };
    let mut k = pts.len() - 1;
    while k > 0 && !below(k - 1) {
        k -= 1;
    }
    (k, best)
}

fn knee_line(series: &str, name: &str, pts: &[(f64, Summary)]) -> String {
    let (k, b) = knee(pts);
    let last = pts.len() - 1;
    let prefix = if series.is_empty() {
        "Throughput".to_string()
    } else {
        format!("{series}: throughput")
    };
    let at = |i: usize| format!("{} ({} req/s)", num(pts[i].0), num(pts[i].1.centre()));
    if k == last && b == last {
        format!(
            "{prefix} still grows at the most {name} tried, {}.",
            at(last)
        )
    } else if k == 0 {
        format!(
            "{prefix} is flat over {name} {}–{}: no point is significantly below the best, {}.",
            num(pts[0].0),
            num(pts[last].0),
            at(b)
        )
    } else if k == b {
        format!(
            "{prefix} stops growing at {name} = {}: no later point is significantly higher.",
            at(k)
        )
    } else {
        format!(
            "{prefix} stops growing at {name} = {}: no point from there on is significantly \
             below the best, {}.",
            at(k),
            at(b)
        )
    }
}

/// Along each other axis with few values: at how many paired points
/// (equal on every other axis) one value's throughput is significantly
/// higher than another's.
fn axis_differences(m: &Manifest, stats: &[PointStats]) -> Vec<String> {
    let skip = growth(m).map(|g| g.0).unwrap_or_default();
    let mut out = Vec::new();
    for (i, axis) in m.axes.iter().enumerate() {
        if skip.contains(&i) || axes::role(axis) == Role::Client {
            continue;
        }
        let n = axis.values.len();
        let pairs: Vec<(usize, usize)> = if n <= 4 {
            (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .collect()
        } else {
            (1..n).map(|b| (b - 1, b)).collect()
        };
        for (a, b) in pairs {
            if let Some(line) = pair_line(m, stats, i, a, b) {
                out.push(line);
            }
        }
    }
    if out.len() > MAX_LINES {
        let more = out.len() - MAX_LINES;
        out.truncate(MAX_LINES);
        out.push(format!("… and {more} more pairs: see the appendix."));
    }
    out
}

fn pair_line(m: &Manifest, stats: &[PointStats], i: usize, a: usize, b: usize) -> Option<String> {
    let axis = &m.axes[i];
    let (va, vb) = (&axis.values[a], &axis.values[b]);
    let rest = |s: &PointStats| {
        let mut p = s.runs.point.params.clone();
        p.remove(&axis.key);
        params_text(&p, ",")
    };
    let mut contrasts = Vec::new();
    let mut unknown = 0;
    for sa in stats.iter().filter(|s| value(m, s, i) == Some(va)) {
        let Some(sb) = stats
            .iter()
            .find(|s| value(m, s, i) == Some(vb) && rest(s) == rest(sa))
        else {
            continue;
        };
        match sa
            .throughput
            .zip(sb.throughput)
            .and_then(|(x, y)| contrast(&x, &y))
        {
            Some(c) if c.scale == Scale::Log => contrasts.push(c),
            _ => unknown += 1,
        }
    }
    let (la, lb) = (axes::label(axis, va), axes::label(axis, vb));
    effect_sentence(&axis.key, &la, &lb, &contrasts, unknown)
}

/// "strategy: async is 1.31× pool-locked (95% CI 1.12–1.53)" for one
/// paired point; over several, the geometric mean of the ratios, their
/// range, and at how many each way the difference is resolved.
fn effect_sentence(
    key: &str,
    la: &str,
    lb: &str,
    contrasts: &[Contrast],
    unknown: usize,
) -> Option<String> {
    let total = contrasts.len() + unknown;
    if contrasts.is_empty() {
        return (total > 0).then(|| {
            format!("{key}: {la} against {lb}: not resolved ({total} paired points, too few runs).")
        });
    }
    let higher = contrasts
        .iter()
        .filter(|c| c.significant && c.estimate > 1.0)
        .count();
    let lower = contrasts
        .iter()
        .filter(|c| c.significant && c.estimate < 1.0)
        .count();
    if let [c] = contrasts {
        let verdict = match (higher, lower) {
            (1, _) => "higher",
            (_, 1) => "lower",
            _ => "not resolved",
        };
        return Some(format!(
            "{key}: {la} is {} {lb} in throughput (95% CI {}–{}; {verdict}).",
            times(c.estimate),
            ratio_text(c.ci.0),
            ratio_text(c.ci.1)
        ));
    }
    let n = contrasts.len() as f64;
    let mean = (contrasts.iter().map(|c| c.estimate.ln()).sum::<f64>() / n).exp();
    let lo = contrasts
        .iter()
        .map(|c| c.estimate)
        .fold(f64::INFINITY, f64::min);
    let hi = contrasts.iter().map(|c| c.estimate).fold(0.0, f64::max);
    let unresolved = total - higher - lower;
    Some(format!(
        "{key}: {la} is {} {lb} in throughput (geometric mean over {total} paired points, \
         {}–{} across them); significantly higher at {higher}, lower at {lower}, \
         not resolved at {unresolved}.",
        times(mean),
        ratio_text(lo),
        ratio_text(hi)
    ))
}

/// A ratio as a sentence says it: "1.31×".
fn times(r: f64) -> String {
    format!("{}×", ratio_text(r))
}

/// Two decimals, three below 0.1.
fn ratio_text(r: f64) -> String {
    if r < 0.1 {
        format!("{r:.3}")
    } else {
        format!("{r:.2}")
    }
}

/// The typical coefficient of variation of throughput, and the smallest
/// difference two points' throughputs must have to be resolved; the same
/// for the share of the baseline.
fn noise(stats: &[PointStats]) -> Vec<String> {
    let mut out = Vec::new();
    let thr: Vec<Summary> = stats.iter().filter_map(|s| s.throughput).collect();
    match spread(&thr) {
        None => {
            out.push("Noise: not measurable here (no point has two successful runs).".to_string())
        }
        Some((cv, lo, hi, n, resolved)) => out.push(format!(
            "Noise: these runs vary by {} (median coefficient of variation of throughput; \
             {}–{} across points). With {n} runs a point (the median), throughput differences \
             smaller than about {} are not resolved here.",
            percent(cv),
            percent(lo),
            percent(hi),
            percent(resolved)
        )),
    }
    let shares: Vec<Summary> = stats.iter().filter_map(|s| s.share).collect();
    if let Some((cv, _, _, _, resolved)) = spread(&shares) {
        out.push(format!(
            "As a share of the baseline run in the same block they vary by {}: differences \
             of the share smaller than about {} are not resolved.",
            percent(cv),
            percent(resolved)
        ));
    }
    out
}

/// (median CV, lowest, highest, median n, resolvable relative difference)
/// over summaries with an interval.
fn spread(summaries: &[Summary]) -> Option<(f64, f64, f64, usize, f64)> {
    let mut cvs: Vec<f64> = summaries.iter().filter_map(|s| s.cv).collect();
    if cvs.is_empty() {
        return None;
    }
    cvs.sort_by(f64::total_cmp);
    let mut ns: Vec<usize> = summaries.iter().filter(|s| s.n >= 2).map(|s| s.n).collect();
    ns.sort();
    let mut sds: Vec<f64> = summaries.iter().filter_map(|s| s.log?.sd).collect();
    sds.sort_by(f64::total_cmp);
    let n = ns[ns.len() / 2];
    // Two points with the typical n and log-sd: the half-width of the
    // interval of their log-ratio (Welch with equal sides: df = 2(n − 1)).
    let sd = sds.get(sds.len() / 2).copied().unwrap_or(0.0);
    let t = student::quantile(0.975, 2.0 * (n as f64 - 1.0));
    let resolved = (t * sd * (2.0 / n as f64).sqrt()).exp() - 1.0;
    Some((cvs[cvs.len() / 2], cvs[0], cvs[cvs.len() - 1], n, resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(estimate: f64, ci: (f64, f64), significant: bool) -> Contrast {
        Contrast {
            scale: Scale::Log,
            estimate,
            ci,
            p: if significant { 0.01 } else { 0.5 },
            significant,
            g: None,
        }
    }

    #[test]
    fn a_comparison_is_a_sentence_with_its_effect_size() {
        let one = [ratio(1.31, (1.12, 1.53), true)];
        assert_eq!(
            effect_sentence("strategy", "async", "pool-locked", &one, 0).unwrap(),
            "strategy: async is 1.31× pool-locked in throughput (95% CI 1.12–1.53; higher)."
        );
        let unresolved = [ratio(0.97, (0.80, 1.18), false)];
        assert!(effect_sentence("store", "a", "b", &unresolved, 0)
            .unwrap()
            .ends_with("(95% CI 0.80–1.18; not resolved)."));
        // Several paired points: the geometric mean, the range, the counts.
        let many = [
            ratio(2.0, (1.8, 2.2), true),
            ratio(0.5, (0.4, 0.6), true),
            ratio(1.0, (0.8, 1.2), false),
        ];
        let line = effect_sentence("cores", "8", "1", &many, 1).unwrap();
        assert_eq!(
            line,
            "cores: 8 is 1.00× 1 in throughput (geometric mean over 4 paired points, \
             0.50–2.00 across them); significantly higher at 1, lower at 1, not resolved at 2."
        );
        assert!(effect_sentence("k", "a", "b", &[], 0).is_none());
    }

    fn s(values: &[f64]) -> Summary {
        Summary::of(values).unwrap()
    }

    #[test]
    fn the_knee_is_where_later_points_stop_being_significantly_lower() {
        let pts = vec![
            (1.0, s(&[100.0, 102.0, 98.0])),
            (2.0, s(&[200.0, 204.0, 196.0])),
            (3.0, s(&[300.0, 306.0, 294.0])),
            (4.0, s(&[305.0, 298.0, 301.0])),
            (5.0, s(&[299.0, 303.0, 302.0])),
        ];
        assert_eq!(knee(&pts).0, 2);
        let line = knee_line("", "client connections", &pts);
        assert!(
            line.contains("stops growing at client connections = 3 (300 req/s)"),
            "{line}"
        );
        let growing = &pts[..3];
        assert_eq!(knee(growing), (2, 2));
        assert!(knee_line("", "threads", growing).contains("still grows"));
    }

    #[test]
    fn resolution_follows_noise_and_repetitions() {
        let noisy = [s(&[900.0, 1100.0, 1000.0]), s(&[1800.0, 2200.0, 2000.0])];
        let (cv, _, _, n, resolved) = spread(&noisy).unwrap();
        assert!((cv - 0.1).abs() < 1e-9 && n == 3);
        assert!(resolved > 0.2 && resolved < 0.4, "{resolved}");
        let quiet = [s(&[990.0, 1010.0, 1000.0]), s(&[1980.0, 2020.0, 2000.0])];
        assert!(spread(&quiet).unwrap().4 < resolved / 5.0);
    }
}
