//! What a reader must know before trusting the numbers, run by run:
//! failed, stale and missing runs, runs in which nothing completed, runs
//! made on a busy machine, runs not certified (each failed check of
//! their verdict), outliers (with their files), points with too
//! few runs or above the sweep's precision target, and points where the
//! client may have set the pace. Lines of one kind that differ only in
//! their point, repetition and figures ([`GROUP_AT`] or more of them: a
//! hundred runs on a busy machine) are said once, with their count, the
//! figures' ranges and the points they cover.

use crate::points::PointStats;
use crate::stats::{outlier_cutoff, MIN_N};
use crate::units::{num, percent};
use serverlab_sweep::layout;
use serverlab_sweep::Manifest;

/// One kind of problem: its lines for one point.
type Kind<'f> = &'f dyn Fn(&PointStats) -> Vec<String>;

/// This many near-identical lines of one kind or more are said as one.
pub const GROUP_AT: usize = 3;

/// Every problem of `stats` (the points, then the baseline), grouped by
/// kind, near-identical lines as one.
pub fn problems(m: &Manifest, stats: &[&PointStats]) -> Vec<String> {
    let kinds: [Kind; 7] = [
        &lost,
        &busy,
        &crate::certified::problems,
        &crate::certified::thresholds,
        &outliers,
        &|s| imprecise(m, s),
        &bottlenecked,
    ];
    kinds
        .iter()
        .flat_map(|kind| {
            let lines: Vec<Line> = stats
                .iter()
                .flat_map(|s| kind(s).into_iter().map(|text| Line::of(slug(s), text)))
                .collect();
            group(lines)
        })
        .collect()
}

/// Lines `(slug, line)` of one kind, near-identical ones said once.
pub fn group_lines(lines: Vec<(String, String)>) -> Vec<String> {
    group(
        lines
            .into_iter()
            .map(|(slug, text)| Line::of(&slug, text))
            .collect(),
    )
}

/// A problem's line split at its point: `SLUG rep K: what`, with the
/// slug and the repetition in `what` (a file's path) made placeholders.
struct Line {
    text: String,
    slug: String,
    rep: Option<u32>,
    /// `what` with its point, repetition and numbers taken out.
    shape: Vec<Token>,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Text(String),
    Number(String),
}

impl Line {
    fn of(slug: &str, text: String) -> Line {
        let rest = text.strip_prefix(slug).unwrap_or(&text);
        let (rep, what) = match rest.strip_prefix(" rep ").and_then(|r| r.split_once(':')) {
            Some((k, what)) if k.parse::<u32>().is_ok() => (k.parse().ok(), what),
            _ => (None, rest.strip_prefix(':').unwrap_or(rest)),
        };
        let mut generic = what.replace(slug, "<point>");
        if let Some(k) = rep {
            generic = generic.replace(&format!("rep-{k}"), "rep-<k>");
        }
        Line {
            shape: tokens(generic.trim()),
            slug: slug.to_string(),
            rep,
            text,
        }
    }

    /// The shape with its numbers blanked: lines alike but for them match.
    fn key(&self) -> Vec<Token> {
        self.shape
            .iter()
            .map(|t| match t {
                Token::Number(_) => Token::Number(String::new()),
                t => t.clone(),
            })
            .collect()
    }
}

/// Text split into numbers (`0.90`, `1,200`) and the text between.
fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .char_indices()
            .take_while(|&(i, c)| {
                c.is_ascii_digit() || (i > 0 && (c == '.' || c == ',') && next_is_digit(rest, i))
            })
            .last()
            .map_or(0, |(i, c)| i + c.len_utf8());
        let glued = out.last().is_some_and(|t| match t {
            Token::Text(t) => t.ends_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_'),
            Token::Number(_) => false,
        });
        if digits > 0 && !glued {
            out.push(Token::Number(rest[..digits].to_string()));
            rest = &rest[digits..];
            continue;
        }
        let c = rest.chars().next().map_or(1, char::len_utf8);
        match out.last_mut() {
            Some(Token::Text(t)) => t.push_str(&rest[..c]),
            _ => out.push(Token::Text(rest[..c].to_string())),
        }
        rest = &rest[c..];
    }
    out
}

fn next_is_digit(text: &str, i: usize) -> bool {
    text[i + 1..].starts_with(|c: char| c.is_ascii_digit())
}

/// `lines` with each set of [`GROUP_AT`] or more alike said once, where
/// the first of them stood.
fn group(lines: Vec<Line>) -> Vec<String> {
    let mut keys: Vec<(Vec<Token>, Vec<usize>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let key = line.key();
        match keys.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => keys.push((key, vec![i])),
        }
    }
    let mut out: Vec<(usize, String)> = Vec::new();
    for (_, members) in keys {
        if members.len() >= GROUP_AT {
            let group: Vec<&Line> = members.iter().map(|&i| &lines[i]).collect();
            out.push((members[0], grouped(&group)));
        } else {
            out.extend(members.iter().map(|&i| (i, lines[i].text.clone())));
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, text)| text).collect()
}

/// One line for `group`: how many, what (each figure as its range), and
/// the points (with their repetitions) it covers.
fn grouped(group: &[&Line]) -> String {
    let what: String = group[0]
        .shape
        .iter()
        .enumerate()
        .map(|(i, t)| match t {
            Token::Text(t) => t.clone(),
            Token::Number(_) => range(group.iter().filter_map(|l| match &l.shape[i] {
                Token::Number(n) => Some(n.as_str()),
                Token::Text(_) => None,
            })),
        })
        .collect();
    let runs = group.iter().all(|l| l.rep.is_some());
    let count = if runs {
        format!("{} runs", group.len())
    } else {
        format!("{} points", group.len())
    };
    format!("{count}: {what} — {}", covered(group))
}

/// The smallest and largest of numbers as written (`0.81–2.30`), or the
/// one where all are alike.
fn range<'a>(numbers: impl Iterator<Item = &'a str>) -> String {
    let value = |n: &str| n.replace(',', "").parse::<f64>().unwrap_or(f64::NAN);
    let all: Vec<&str> = numbers.collect();
    let lo = all.iter().min_by(|a, b| value(a).total_cmp(&value(b)));
    let hi = all.iter().max_by(|a, b| value(a).total_cmp(&value(b)));
    match (lo, hi) {
        (Some(lo), Some(hi)) if value(lo) == value(hi) => lo.to_string(),
        (Some(lo), Some(hi)) => format!("{lo}–{hi}"),
        _ => String::new(),
    }
}

/// The points of `group`, each with its repetitions: `posters=1 (reps 1,
/// 2), posters=2 (rep 3)`.
fn covered(group: &[&Line]) -> String {
    let mut points: Vec<(&str, Vec<u32>)> = Vec::new();
    for line in group {
        match points.iter_mut().find(|(s, _)| *s == line.slug) {
            Some((_, reps)) => reps.extend(line.rep),
            None => points.push((&line.slug, line.rep.into_iter().collect())),
        }
    }
    let said: Vec<String> = points
        .iter()
        .map(|(slug, reps)| match reps.as_slice() {
            [] => slug.to_string(),
            [k] => format!("{slug} (rep {k})"),
            reps => {
                let reps: Vec<String> = reps.iter().map(u32::to_string).collect();
                format!("{slug} (reps {})", reps.join(", "))
            }
        })
        .collect();
    said.join(", ")
}

fn slug<'a>(s: &'a PointStats) -> &'a str {
    &s.runs.point.slug
}

/// Failed, stale, not yet run, and runs in which nothing completed.
fn lost(s: &PointStats) -> Vec<String> {
    let slug = slug(s);
    let mut out = Vec::new();
    for f in &s.runs.failed {
        out.push(format!("{slug} rep {}: failed: {}", f.repetition, f.error));
    }
    for f in &s.runs.stale {
        out.push(format!(
            "{slug} rep {}: stale (made with other flags, left out): {}",
            f.repetition, f.error
        ));
    }
    if !s.runs.missing.is_empty() {
        let reps: Vec<String> = s.runs.missing.iter().map(|r| r.to_string()).collect();
        out.push(format!(
            "{slug}: repetitions {} not run yet",
            reps.join(", ")
        ));
    }
    for rep in &s.empty {
        out.push(format!(
            "{slug} rep {rep}: no request completed in the measured window \
             (a stalled server, or a machine too busy to measure on); its throughput \
             of 0 counts, it has no latency"
        ));
    }
    out
}

fn busy(s: &PointStats) -> Vec<String> {
    s.busy
        .iter()
        .map(|(rep, state)| {
            format!(
                "{} rep {rep}: made on a busy machine ({}): `runs/{}/rep-{rep}/{}`",
                slug(s),
                state.describe(),
                slug(s),
                layout::RUN_RECORD
            )
        })
        .collect()
}

fn outliers(s: &PointStats) -> Vec<String> {
    s.outliers
        .iter()
        .map(|o| {
            let fate = if s.dropped.contains(&o.repetition) {
                "left out of every number (--drop-outliers)"
            } else {
                "kept in the numbers (report --drop-outliers leaves it out)"
            };
            let n = s.runs.runs.len();
            format!(
                "{} rep {}: outlier: throughput {} req/s against the point's median {}, \
                 {:.1} robust sds {} it on the log scale (the bar at {n} runs is {}) \
                 (`{}/{}`); {fate}",
                slug(s),
                o.repetition,
                num(o.value),
                num(o.median),
                o.z.abs(),
                if o.z > 0.0 { "above" } else { "below" },
                outlier_cutoff(n).map(num).unwrap_or_default(),
                o.dir.display(),
                layout::LOAD_JSON
            )
        })
        .collect()
}

/// Too few runs for a sturdy interval, or wider than the sweep's target.
fn imprecise(m: &Manifest, s: &PointStats) -> Vec<String> {
    let Some(t) = &s.throughput else {
        return vec![];
    };
    let mut out = Vec::new();
    if t.n < MIN_N {
        out.push(format!(
            "{}: only {} successful run{}: {}",
            slug(s),
            t.n,
            if t.n == 1 { "" } else { "s" },
            if t.n == 1 {
                "no confidence interval".to_string()
            } else {
                format!("intervals from fewer than {MIN_N} runs are wide and fragile")
            }
        ));
    }
    if let (Some(target), Some(w)) = (m.target_ci, t.relative_half_width()) {
        if w > target {
            out.push(format!(
                "{}: its throughput CI reaches ±{} after {} runs, above the target ±{}",
                slug(s),
                percent(w),
                t.n,
                percent(target)
            ));
        }
    }
    out
}

fn bottlenecked(s: &PointStats) -> Vec<String> {
    if s.bottlenecked == 0 {
        return vec![];
    }
    vec![format!(
        "{}: in {} of its runs the client used over 90% of its CPUs and may have set the pace",
        slug(s),
        s.bottlenecked
    )]
}
