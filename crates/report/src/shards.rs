//! A sweep run in shards (`sweep --shard I/N`, one directory each, often
//! on different machines) read as one: every run keeps its block's number
//! and is divided by the baseline run of its own block, which ran on the
//! same machine just before or after it. Shards on several machines are
//! compared only that way: their absolute throughputs are left out.

use crate::data::{PointRuns, Sweep};
use crate::doc::Table;
use crate::error::ReportError;
use serverlab_sweep::{Host, Point, Schedule, Shard};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One shard's directory, where it ran, and the blocks it holds.
pub struct ShardDir {
    pub dir: PathBuf,
    pub shard: Option<Shard>,
    pub host: Option<Host>,
    pub blocks: Vec<u32>,
    /// Its successful runs.
    pub runs: usize,
}

pub struct Shards {
    pub dirs: Vec<ShardDir>,
    /// The shards of the split that no directory holds: their runs count
    /// as not run.
    pub missing: Vec<MissingShard>,
    /// Runs of two shards made at the same time on one machine, on CPUs
    /// both were pinned to: co-scheduled shards, competing.
    pub clashes: Vec<Clash>,
}

/// A run that ran at the same time as another shard's run on the same
/// machine, pinned to CPUs both used (or one not pinned at all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    pub slug: String,
    pub repetition: u32,
    pub shard: Option<Shard>,
    /// The other shard's run: `shard 1/2's posters=1 rep 2`.
    pub other: String,
    pub host: String,
    /// The CPUs both were pinned to; empty where one was not pinned.
    pub shared: Vec<usize>,
}

impl Clash {
    /// Its line under Problems.
    pub fn problem(&self) -> String {
        let cpus = if self.shared.is_empty() {
            "one of them not pinned".to_string()
        } else {
            let shared: Vec<String> = self.shared.iter().map(usize::to_string).collect();
            format!("both pinned to CPUs {}", shared.join(","))
        };
        format!(
            "{} rep {}: co-scheduled: ran at the same time as {} on {} ({cpus}): the two \
             competed for those CPUs, so its numbers are not to be trusted",
            self.slug, self.repetition, self.other, self.host
        )
    }
}

/// A shard of the split that no directory given holds, and its blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingShard {
    pub shard: Shard,
    pub blocks: Vec<u32>,
}

impl std::fmt::Display for MissingShard {
    /// `shard 2/3 (blocks 3, 6): not run`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = if self.blocks.len() == 1 {
            "block"
        } else {
            "blocks"
        };
        write!(
            f,
            "shard {} ({word} {}): not run",
            self.shard,
            list(&self.blocks)
        )
    }
}

/// `3, 6`.
fn list(blocks: &[u32]) -> String {
    let blocks: Vec<String> = blocks.iter().map(u32::to_string).collect();
    blocks.join(", ")
}

impl Shards {
    /// The distinct machines the shards ran on (a shard with no record of
    /// its machine counts as one of its own).
    pub fn machines(&self) -> Vec<String> {
        let mut seen: Vec<(Option<&Host>, String)> = vec![];
        for d in &self.dirs {
            let known = seen
                .iter()
                .any(|(h, _)| matches!((h, &d.host), (Some(a), Some(b)) if a.same_machine(b)));
            if !known {
                let name = d
                    .host
                    .as_ref()
                    .map_or("an unrecorded machine".into(), Host::describe);
                seen.push((d.host.as_ref(), name));
            }
        }
        seen.into_iter().map(|(_, n)| n).collect()
    }

    pub fn several_machines(&self) -> bool {
        self.machines().len() > 1
    }

    /// A row per shard: its directory, shard, machine, blocks and runs; a
    /// missing shard's row says it was not run.
    pub fn table(&self) -> Table {
        let headers = ["directory", "shard", "machine", "blocks", "runs"];
        let given = self.dirs.iter().map(|d| {
            vec![
                d.dir.display().to_string(),
                d.shard.map_or("all".into(), |s| s.to_string()),
                d.host
                    .as_ref()
                    .map_or("not recorded".into(), Host::describe),
                list(&d.blocks),
                d.runs.to_string(),
            ]
        });
        let missing = self.missing.iter().map(|m| {
            vec![
                "none given".into(),
                m.shard.to_string(),
                "–".into(),
                list(&m.blocks),
                "not run".into(),
            ]
        });
        let rows = given.chain(missing).collect();
        Table {
            headers: headers.map(String::from).to_vec(),
            rows,
        }
    }

    /// The missing shards, one after another (empty if none is):
    /// `shard 2/3 (blocks 3, 6): not run`.
    pub fn missing_list(&self) -> String {
        let each: Vec<String> = self.missing.iter().map(ToString::to_string).collect();
        each.join("; ")
    }

    /// The missing shards, in one sentence (empty if none is).
    fn missing_note(&self) -> String {
        match self.missing.len() {
            0 => String::new(),
            1 => format!("{}: its runs are counted as not run.", self.missing_list()),
            _ => format!(
                "{}: their runs are counted as not run.",
                self.missing_list()
            ),
        }
    }

    /// Why a report of these shards alone is refused (without
    /// `--allow-missing`).
    pub fn missing_error(&self) -> String {
        let (which, them) = match self.missing.len() {
            1 => ("it", "its directory"),
            _ => ("them", "their directories"),
        };
        format!(
            "{} (no directory given holds {which}): give {them} too, or \
             --allow-missing to report without {which}",
            self.missing_list()
        )
    }

    /// What the reader must know, in one sentence (and one more for the
    /// shards missing, and a warning for co-scheduled shards).
    pub fn note(&self) -> String {
        let mut note = self.machines_note();
        for more in [self.missing_note(), self.clash_note()] {
            if !more.is_empty() {
                note = format!("{note} {more}");
            }
        }
        note
    }

    /// A warning where shards ran at once on one machine's CPUs (empty
    /// where none did).
    pub fn clash_note(&self) -> String {
        if self.clashes.is_empty() {
            return String::new();
        }
        let mut points: Vec<&str> = self.clashes.iter().map(|c| c.slug.as_str()).collect();
        points.sort_unstable();
        points.dedup();
        format!(
            "WARNING: shards ran at the same time on one machine, pinned to the same CPUs \
             ({} runs at {} points, each listed under Problems): they competed for those CPUs, \
             and those runs' numbers are not to be trusted. Run a machine's shards one after \
             another, or give each its own CPUs.",
            self.clashes.len(),
            points.len()
        )
    }

    /// Where the shards ran, and how points are compared.
    fn machines_note(&self) -> String {
        let machines = self.machines();
        let how = "every point is reported as a ratio to the baseline run of its own block, \
                   which ran on the same machine";
        if machines.len() > 1 {
            format!(
                "{} shards ran on {} machines ({}): {how}; absolute throughputs are left out, \
                 since a point's runs were made on different machines.",
                self.dirs.len(),
                machines.len(),
                machines.join("; ")
            )
        } else {
            format!(
                "{} shards ran on one machine ({}): {how}.",
                self.dirs.len(),
                machines.join("")
            )
        }
    }
}

/// The shards' directories right under `dir` (in name order), where
/// `dir` is no sweep itself but holds the shards of one (each directory's
/// `sweep.json` names its shard: `results/<name>/shard-I-of-N`); None
/// otherwise.
pub fn under(dir: &Path) -> Option<Vec<PathBuf>> {
    if dir.join(serverlab_sweep::layout::MANIFEST).exists() {
        return None;
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| d.is_dir())
        .filter(|d| serverlab_sweep::Manifest::read(d).is_ok_and(|m| m.shard.is_some()))
        .collect();
    dirs.sort();
    (!dirs.is_empty()).then_some(dirs)
}

/// The sweeps in `dirs`, shards of one experiment, read as one sweep whose
/// directory is `out` (its runs' directories relative to it). The shards
/// of the split that no directory holds are named in [`Shards::missing`],
/// and their runs counted as not run.
pub fn read(dirs: &[PathBuf], out: &Path) -> Result<(Sweep, Shards), ReportError> {
    let absolute = |d: &Path| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf());
    let out = &absolute(out);
    let sweeps = dirs
        .iter()
        .map(|d| Sweep::read(&absolute(d)))
        .collect::<Result<Vec<_>, _>>()?;
    let first = &sweeps[0];
    for s in &sweeps[1..] {
        same_experiment(first, s)?;
    }
    let mut shards = Shards {
        dirs: sweeps.iter().map(|s| shard_dir(s, out)).collect(),
        missing: vec![],
        clashes: clashes(&sweeps),
    };
    disjoint(&shards)?;
    shards.missing = missing(&sweeps)?;
    if shards.several_machines() && first.manifest.baseline.is_none() {
        return Err(ReportError::Incomparable(format!(
            "{} (and its points' runs with them); with no baseline in the experiment there is \
             nothing to divide by on each machine: add a [baseline] and run the shards again",
            shards.note().split(':').next().unwrap_or_default()
        )));
    }
    let schedule = sweeps.iter().find_map(|s| s.schedule.clone());
    let mut sweep = merge(sweeps, out);
    not_run(&mut sweep, &shards.missing, schedule.as_ref());
    Ok((sweep, shards))
}

/// A run as the clash search sees it: its shard (by index in the sweeps
/// given), point, block, when it ran and on which CPUs.
struct Timed<'a> {
    sweep: usize,
    slug: &'a str,
    repetition: u32,
    start: f64,
    end: f64,
    cpus: Option<&'a [usize]>,
}

/// Every run of one shard that overlapped in time, on one machine, a run
/// of another shard on CPUs both used (sorted by start: each run is held
/// against those that started before it ended).
fn clashes(sweeps: &[Sweep]) -> Vec<Clash> {
    let mut runs: Vec<Timed> = Vec::new();
    for (i, s) in sweeps.iter().enumerate() {
        for p in s.points.iter().chain(&s.baseline) {
            runs.extend(p.runs.iter().map(|r| Timed {
                sweep: i,
                slug: &p.point.slug,
                repetition: r.repetition,
                start: r.started_unix_s as f64,
                end: r.started_unix_s as f64 + r.wall_s.max(0.0),
                cpus: r.cpus.as_deref(),
            }));
        }
    }
    runs.sort_by(|a, b| a.start.total_cmp(&b.start));
    let same_machine =
        |a: usize, b: usize| match (&sweeps[a].manifest.host, &sweeps[b].manifest.host) {
            (Some(x), Some(y)) => x.same_machine(y),
            _ => false,
        };
    let mut out = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        // Start times are whole seconds, cut down: a run may have begun up
        // to a second after the one recorded, so runs one after another
        // may seem to overlap by less than a second (seen); only an overlap
        // longer than that is certain.
        for b in runs[i + 1..].iter().take_while(|b| b.start + 1.0 < a.end) {
            if a.sweep == b.sweep || !same_machine(a.sweep, b.sweep) || b.end <= a.start + 1.0 {
                continue;
            }
            let Some(shared) = shared_cpus(a.cpus, b.cpus) else {
                continue;
            };
            let host = sweeps[a.sweep]
                .manifest
                .host
                .as_ref()
                .map_or_else(String::new, |h| h.hostname.clone());
            for (x, y) in [(a, b), (b, a)] {
                out.push(Clash {
                    slug: x.slug.to_string(),
                    repetition: x.repetition,
                    shard: sweeps[x.sweep].manifest.shard,
                    other: format!(
                        "shard {}'s {} rep {}",
                        sweeps[y.sweep]
                            .manifest
                            .shard
                            .map_or("all".into(), |s| s.to_string()),
                        y.slug,
                        y.repetition
                    ),
                    host: host.clone(),
                    shared: shared.clone(),
                });
            }
        }
    }
    out.sort_by(|a, b| (&a.slug, a.repetition).cmp(&(&b.slug, b.repetition)));
    out.dedup_by(|a, b| a.slug == b.slug && a.repetition == b.repetition);
    out
}

/// The CPUs two runs share (empty where one was not pinned: it could run
/// on any); None where they are apart.
fn shared_cpus(a: Option<&[usize]>, b: Option<&[usize]>) -> Option<Vec<usize>> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let both: Vec<usize> = a.iter().filter(|c| b.contains(c)).copied().collect();
            (!both.is_empty()).then_some(both)
        }
        _ => Some(vec![]),
    }
}

/// The shards of the split the directories were made by that none of
/// them holds. Every directory must be a shard of one split (`I/N`, the
/// same N).
fn missing(sweeps: &[Sweep]) -> Result<Vec<MissingShard>, ReportError> {
    let split = |s: &Sweep| s.manifest.shard.map(|sh| sh.count);
    let count = split(&sweeps[0]);
    if let Some(other) = sweeps.iter().find(|s| split(s) != count) {
        let said = |s: &Sweep| {
            s.manifest
                .shard
                .map_or("a whole sweep".into(), |sh| format!("shard {sh}"))
        };
        return Err(ReportError::Incomparable(format!(
            "{} is {} and {} is {}: give the shards of one split (the same N in --shard I/N)",
            sweeps[0].dir.display(),
            said(&sweeps[0]),
            other.dir.display(),
            said(other)
        )));
    }
    let Some(count) = count else {
        return Ok(vec![]);
    };
    let blocks = total_blocks(sweeps);
    let given: Vec<u32> = sweeps
        .iter()
        .filter_map(|s| s.manifest.shard.map(|sh| sh.index))
        .collect();
    Ok((0..count)
        .filter(|i| !given.contains(i))
        .map(|index| {
            let shard = Shard { index, count };
            MissingShard {
                shard,
                blocks: shard.blocks(blocks).collect(),
            }
        })
        .collect())
}

/// How many blocks the whole sweep has: its recorded schedule's, else
/// its repetitions.
fn total_blocks(sweeps: &[Sweep]) -> u32 {
    sweeps
        .iter()
        .map(|s| {
            s.schedule
                .as_ref()
                .map_or(s.manifest.repetitions, |sch| sch.blocks.len() as u32)
        })
        .max()
        .unwrap_or(0)
}

/// One shard's record, its directory as seen from `out`.
fn shard_dir(s: &Sweep, out: &Path) -> ShardDir {
    let mut blocks: Vec<u32> = s
        .points
        .iter()
        .chain(&s.baseline)
        .flat_map(|p| {
            let done = p.runs.iter().map(|r| r.repetition);
            let failed = p.failed.iter().chain(&p.stale).map(|f| f.repetition);
            done.chain(failed).chain(p.missing.iter().copied())
        })
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    ShardDir {
        dir: s.dir.strip_prefix(out).unwrap_or(&s.dir).to_path_buf(),
        shard: s.manifest.shard,
        host: s.manifest.host.clone(),
        blocks,
        runs: s
            .points
            .iter()
            .chain(&s.baseline)
            .map(|p| p.runs.len())
            .sum(),
    }
}

/// Whether `b` is a shard of the experiment `a` is: the same name, points
/// and baseline, run with the same flags.
fn same_experiment(a: &Sweep, b: &Sweep) -> Result<(), ReportError> {
    let (ma, mb) = (&a.manifest, &b.manifest);
    let flags = |p: &Point| (p.slug.clone(), p.server_flags.clone(), p.load_flags.clone());
    let differs = if ma.name != mb.name {
        Some(format!("experiments {} and {}", ma.name, mb.name))
    } else if ma.points.iter().map(flags).ne(mb.points.iter().map(flags)) {
        Some("other points or flags".into())
    } else if ma.baseline.as_ref().map(flags) != mb.baseline.as_ref().map(flags) {
        Some("another baseline".into())
    } else {
        None
    };
    match differs {
        Some(what) => Err(ReportError::Incomparable(format!(
            "{} and {} are not shards of one experiment ({what})",
            a.dir.display(),
            b.dir.display()
        ))),
        None => Ok(()),
    }
}

/// No block is in two directories (the same shard given twice, or a
/// whole sweep beside one of its shards).
fn disjoint(shards: &Shards) -> Result<(), ReportError> {
    let mut owner: BTreeMap<u32, &Path> = BTreeMap::new();
    for d in &shards.dirs {
        for b in &d.blocks {
            if let Some(other) = owner.insert(*b, &d.dir) {
                return Err(ReportError::Incomparable(format!(
                    "block {b} is in both {} and {}: give each shard's directory once",
                    other.display(),
                    d.dir.display()
                )));
            }
        }
    }
    Ok(())
}

/// One sweep of every shard's runs, each run's directory relative to `out`.
fn merge(sweeps: Vec<Sweep>, out: &Path) -> Sweep {
    let mut sweeps = sweeps.into_iter();
    let mut all = sweeps.next().expect("at least one directory");
    rebase(&mut all, out);
    for mut s in sweeps {
        rebase(&mut s, out);
        for (into, from) in all.points.iter_mut().zip(s.points) {
            add(into, from);
        }
        if let (Some(into), Some(from)) = (all.baseline.as_mut(), s.baseline) {
            add(into, from);
        }
    }
    all.manifest.shard = None;
    all.dir = out.to_path_buf();
    all.schedule = None;
    all
}

/// The runs of the missing shards' blocks, counted as not run: each
/// point's (and the baseline's) in the blocks that hold it.
fn not_run(sweep: &mut Sweep, missing: &[MissingShard], schedule: Option<&Schedule>) {
    let holds = |block: u32, slug: &str| {
        schedule.is_none_or(|s| {
            s.blocks
                .get(block as usize - 1)
                .is_some_and(|b| b.iter().any(|x| x == slug))
        })
    };
    for p in sweep.points.iter_mut().chain(sweep.baseline.as_mut()) {
        let blocks = missing.iter().flat_map(|m| &m.blocks);
        let slug = p.point.slug.clone();
        p.missing
            .extend(blocks.filter(|&&b| holds(b, &slug)).copied());
        p.missing.sort_unstable();
        p.missing.dedup();
    }
}

/// Runs' directories as seen from `out`.
fn rebase(s: &mut Sweep, out: &Path) {
    let prefix = s.dir.strip_prefix(out).unwrap_or(&s.dir).to_path_buf();
    for p in s.points.iter_mut().chain(s.baseline.as_mut()) {
        for r in &mut p.runs {
            r.dir = prefix.join(&r.dir);
        }
    }
}

fn add(into: &mut PointRuns, from: PointRuns) {
    into.runs.extend(from.runs);
    into.runs.sort_by_key(|r| r.repetition);
    into.failed.extend(from.failed);
    into.stale.extend(from.stale);
    into.missing.extend(from.missing);
    into.missing.sort_unstable();
}

/// Every point's throughput as a ratio to the baseline run of its own
/// block: each block's ratio (`b2 0.981`), and their geometric mean with
/// its 95% CI. None without a baseline.
pub fn ratio_table(sweep: &Sweep, stats: &[crate::points::PointStats]) -> Option<Table> {
    let baseline = sweep.baseline.as_ref()?;
    let m = &sweep.manifest;
    let rows = stats
        .iter()
        .map(|s| {
            // A block whose baseline failed or measured nothing has no
            // ratio: it is shown as such, never divided by another block's.
            let ratios: Vec<(u32, Option<f64>)> = s
                .runs
                .runs
                .iter()
                .map(|r| {
                    let b = baseline.runs.iter().find(|b| b.repetition == r.repetition);
                    let base = b.map_or(0.0, |b| b.metrics.throughput_rps);
                    let ratio = (base > 0.0).then(|| r.metrics.throughput_rps / base);
                    (r.repetition, ratio)
                })
                .collect();
            let values: Vec<f64> = ratios.iter().filter_map(|r| r.1).collect();
            let mut row = crate::tables::cells(m, s);
            row.push(match crate::stats::Summary::of(&values) {
                Some(sum) => crate::tables::centre_ci_with(&sum, &|x| format!("{x:.3}")),
                None => "–".into(),
            });
            let each: Vec<String> = ratios
                .iter()
                .map(|(b, r)| match r {
                    Some(r) => format!("b{b} {r:.3}"),
                    None => format!("b{b} – (no baseline)"),
                })
                .collect();
            row.push(each.join(", "));
            row
        })
        .collect();
    let rest = [
        "ratio to own block's baseline (95% CI)".to_string(),
        "per block".to_string(),
    ];
    Some(Table {
        headers: crate::tables::headers(m, &rest),
        rows,
    })
}
