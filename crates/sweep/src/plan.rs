//! The plan: an experiment expanded into its axes (whatever takes more than
//! one value) and the points of their product, each with the exact flags
//! its server and load get, and the baseline beside them.

use crate::spec::{template_names, Baseline, Experiment};
use crate::value::Scalar;
use serde::{Deserialize, Serialize};

/// Where an axis's values go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A `[matrix]` variable, substituted into flags that name it.
    Matrix,
    /// Which protocol the server speaks.
    ServerProtocol,
    /// A server flag (named without `--`).
    ServerFlag(String),
    /// A load flag (named without `--`).
    LoadFlag(String),
}

/// Something the sweep varies.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Axis {
    /// Its name in results and reports: the flag or variable name, prefixed
    /// with `server.` or `load.` only where two would clash.
    pub key: String,
    pub source: Source,
    pub values: Vec<Scalar>,
}

/// One combination of axis values: a configuration to run `repetitions` times.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub index: usize,
    /// Directory name under `runs/`, derived from the axis values.
    pub slug: String,
    /// Axis key → value, in axis order.
    pub params: serde_json::Map<String, serde_json::Value>,
    pub server_protocol: String,
    /// The server's flags, without the ones the runner adds (`--addr`,
    /// `--stats-json`).
    pub server_flags: Vec<String>,
    pub load_protocol: String,
    /// The load's flags, without `--addr` and `--json`.
    pub load_flags: Vec<String>,
}

/// `key=value` for each parameter, joined by `sep`; strings unquoted.
pub fn params_text<'a>(
    params: impl IntoIterator<Item = (&'a String, &'a serde_json::Value)>,
    sep: &str,
) -> String {
    params
        .into_iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(sep)
}

/// About how long starting and stopping a server adds to a run.
pub const RUN_OVERHEAD_S: f64 = 0.3;

/// The address a server is told to listen on: any free port, announced.
pub const SERVER_ADDR: &str = "127.0.0.1:0";

/// The baseline's slug (its runs are `runs/baseline/rep-<k>`). No point's
/// slug can be this: theirs are `key=value…` or `all`.
pub const BASELINE: &str = "baseline";

impl Point {
    /// The server's command line after the binary: `serve <protocol>`, the
    /// address and statistics file the sweep sets, then the experiment's
    /// flags. The runner runs exactly this; `validate` checks exactly this.
    pub fn serve_args(&self, stats_json: &str) -> Vec<String> {
        let head = ["serve", &self.server_protocol, "--addr", SERVER_ADDR];
        args(&head, &["--stats-json", stats_json], &self.server_flags)
    }

    /// The load's command line after the binary: `load <protocol> --addr
    /// ADDR --json FILE`, then the experiment's flags.
    pub fn load_args(&self, addr: &str, json: &str) -> Vec<String> {
        let head = ["load", &self.load_protocol, "--addr", addr];
        args(&head, &["--json", json], &self.load_flags)
    }
}

fn args(head: &[&str], file: &[&str], flags: &[String]) -> Vec<String> {
    head.iter()
        .chain(file)
        .map(|s| s.to_string())
        .chain(flags.iter().cloned())
        .collect()
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub experiment: Experiment,
    pub axes: Vec<Axis>,
    pub points: Vec<Point>,
    /// Run once in every block beside the points (slug [`BASELINE`]).
    pub baseline: Option<Point>,
}

impl Plan {
    pub fn new(experiment: Experiment) -> Plan {
        let axes = axes(&experiment);
        let mut points: Vec<Point> = product(&axes)
            .into_iter()
            .enumerate()
            .map(|(index, choice)| point(&experiment, &axes, index, &choice))
            .collect();
        dedupe_slugs(&mut points);
        let baseline = experiment
            .baseline
            .as_ref()
            .map(|b| baseline_point(b, points.len()));
        Plan {
            experiment,
            axes,
            points,
            baseline,
        }
    }

    /// Runs in the blocks every point gets (before any target adds more).
    pub fn runs(&self) -> usize {
        self.block().len() * self.experiment.design.repetitions as usize
    }

    /// What one block runs: the baseline (if any) and every point.
    pub fn block(&self) -> Vec<&Point> {
        self.baseline.iter().chain(&self.points).collect()
    }

    /// The point (or baseline) with this slug.
    pub fn find(&self, slug: &str) -> Option<&Point> {
        self.block().into_iter().find(|p| p.slug == slug)
    }

    /// Seconds one run of `point` should take, start to stop, when its
    /// load says how long it lasts (`--duration`).
    pub fn run_seconds(&self, point: &Point) -> Option<f64> {
        self.load_seconds(point).map(|s| s + RUN_OVERHEAD_S)
    }

    /// Seconds the runs of `points` (one entry per run) should take; None
    /// if any has no fixed duration.
    pub fn estimate_seconds<'a>(&self, points: impl IntoIterator<Item = &'a Point>) -> Option<f64> {
        points.into_iter().map(|p| self.run_seconds(p)).sum()
    }

    /// Seconds one run's load lasts, if its flags say (`--duration`).
    pub fn load_seconds(&self, point: &Point) -> Option<f64> {
        let i = point.load_flags.iter().position(|f| f == "--duration")?;
        serverlab_util::duration::parse(point.load_flags.get(i + 1)?)
            .ok()
            .map(|d| d.as_secs_f64())
    }
}

/// Every flag or variable with more than one value, in file order:
/// matrix, server protocol, server flags, load flags.
fn axes(e: &Experiment) -> Vec<Axis> {
    let mut axes = Vec::new();
    for (name, values) in e.matrix.iter().filter(|(_, v)| v.len() > 1) {
        axes.push((name.clone(), "", Source::Matrix, values.clone()));
    }
    if e.server.protocols.len() > 1 {
        let values = e
            .server
            .protocols
            .iter()
            .map(|p| Scalar::Str(p.clone()))
            .collect();
        axes.push(("protocol".into(), "server.", Source::ServerProtocol, values));
    }
    for (flag, values) in e.server.flags.iter().filter(|(_, v)| v.len() > 1) {
        let src = Source::ServerFlag(flag.clone());
        axes.push((flag.clone(), "server.", src, values.clone()));
    }
    for (flag, values) in e.load.flags.iter().filter(|(_, v)| v.len() > 1) {
        let src = Source::LoadFlag(flag.clone());
        axes.push((flag.clone(), "load.", src, values.clone()));
    }
    let clashes = |name: &str| axes.iter().filter(|a| a.0 == name).count() > 1;
    axes.iter()
        .map(|(name, prefix, source, values)| Axis {
            key: if clashes(name) {
                format!("{prefix}{name}")
            } else {
                name.clone()
            },
            source: source.clone(),
            values: values.clone(),
        })
        .collect()
}

/// The index of each axis's value, for every point; the last axis varies
/// fastest. No axes: one point.
fn product(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..axis.values.len()).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect();
    }
    out
}

fn point(e: &Experiment, axes: &[Axis], index: usize, choice: &[usize]) -> Point {
    let chosen = |source: &Source| -> Option<&Scalar> {
        axes.iter()
            .zip(choice)
            .find(|(a, _)| a.source == *source)
            .map(|(a, &i)| &a.values[i])
    };
    let vars: Vec<(&str, &Scalar)> = e
        .matrix
        .iter()
        .map(|(name, values)| {
            let v = axes
                .iter()
                .zip(choice)
                .find(|(a, _)| a.source == Source::Matrix && a.key == *name)
                .map(|(a, &i)| &a.values[i])
                .unwrap_or(&values[0]);
            (name.as_str(), v)
        })
        .collect();
    let flags = |flags: &[(String, Vec<Scalar>)], server: bool| -> Vec<String> {
        flags
            .iter()
            .flat_map(|(flag, values)| {
                let src = if server {
                    Source::ServerFlag(flag.clone())
                } else {
                    Source::LoadFlag(flag.clone())
                };
                let v = chosen(&src).unwrap_or(&values[0]);
                substitute(v, &vars).args(flag)
            })
            .collect()
    };
    // Flags given only where another flag takes one value.
    let when = |part: &crate::spec::Part, server: bool| -> Vec<String> {
        part.when
            .iter()
            .filter(|w| {
                let src = if server {
                    Source::ServerFlag(w.flag.clone())
                } else {
                    Source::LoadFlag(w.flag.clone())
                };
                let first = part
                    .flags
                    .iter()
                    .find(|(f, _)| *f == w.flag)
                    .map(|f| &f.1[0]);
                chosen(&src)
                    .or(first)
                    .is_some_and(|v| substitute(v, &vars).to_string() == w.value)
            })
            .flat_map(|w| {
                w.flags
                    .iter()
                    .flat_map(|(f, v)| substitute(v, &vars).args(f))
            })
            .collect()
    };
    let mut server_flags = flags(&e.server.flags, true);
    server_flags.extend(when(&e.server, true));
    let mut load_flags = flags(&e.load.flags, false);
    load_flags.extend(when(&e.load, false));
    let server_protocol = chosen(&Source::ServerProtocol)
        .map(|p| p.to_string())
        .unwrap_or_else(|| e.server.protocols[0].clone());
    let params: serde_json::Map<String, serde_json::Value> = axes
        .iter()
        .zip(choice)
        .map(|(a, &i)| (a.key.clone(), a.values[i].to_json()))
        .collect();
    Point {
        index,
        slug: slug(axes, choice),
        params,
        server_protocol,
        server_flags,
        load_protocol: e.load.protocols[0].clone(),
        load_flags,
    }
}

/// The baseline as a point: its fixed flags, no axis values.
fn baseline_point(b: &Baseline, index: usize) -> Point {
    let flags = |flags: &[(String, Vec<Scalar>)]| -> Vec<String> {
        flags.iter().flat_map(|(f, v)| v[0].args(f)).collect()
    };
    Point {
        index,
        slug: BASELINE.into(),
        params: serde_json::Map::new(),
        server_protocol: b.server.protocols[0].clone(),
        server_flags: flags(&b.server.flags),
        load_protocol: b.load.protocols[0].clone(),
        load_flags: flags(&b.load.flags),
    }
}

/// A value with its `{var}` references filled in. A value that is exactly
/// one reference takes the variable's value (and type) whole.
fn substitute(v: &Scalar, vars: &[(&str, &Scalar)]) -> Scalar {
    let Scalar::Str(s) = v else { return v.clone() };
    if template_names(s).is_empty() {
        return v.clone();
    }
    let mut out = s.clone();
    for (name, value) in vars {
        let pattern = format!("{{{name}}}");
        if out == pattern {
            return (*value).clone();
        }
        out = out.replace(&pattern, &value.to_string());
    }
    Scalar::Str(out)
}

/// `key=value,key=value` over the axes, safe as a directory name.
fn slug(axes: &[Axis], choice: &[usize]) -> String {
    if axes.is_empty() {
        return "all".into();
    }
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let parts: Vec<String> = axes
        .iter()
        .zip(choice)
        .map(|(a, &i)| format!("{}={}", clean(&a.key), clean(&a.values[i].to_string())))
        .collect();
    let mut s = parts.join(",");
    if s.len() > 200 {
        s.truncate(200);
    }
    s
}

/// Two values that clean to the same name (`0,1` and `0_1`) get a suffix.
fn dedupe_slugs(points: &mut [Point]) {
    let mut seen = std::collections::HashSet::new();
    for p in points.iter_mut() {
        if !seen.insert(p.slug.clone()) {
            p.slug = format!("{}~{}", p.slug, p.index);
            seen.insert(p.slug.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Plan {
        Plan::new(Experiment::parse("t.toml", text).unwrap())
    }

    #[test]
    fn product_of_lists_last_fastest() {
        let p = plan(
            r#"
            protocol = "board"
            repetitions = 2
            [server]
            strategy = ["async", "pool-locked"]
            threads = 2
            [load]
            posters = [1, 2, 3]
            duration = "2s"
            "#,
        );
        assert_eq!(p.axes.len(), 2);
        assert_eq!(p.axes[0].key, "strategy");
        assert_eq!(p.axes[1].key, "posters");
        assert_eq!(p.points.len(), 6);
        assert_eq!(p.runs(), 12);
        let last = &p.points[5];
        assert_eq!(last.slug, "strategy=pool-locked,posters=3");
        assert_eq!(
            last.server_flags,
            ["--strategy", "pool-locked", "--threads", "2"]
        );
        assert_eq!(last.load_flags, ["--posters", "3", "--duration", "2s"]);
        assert_eq!(p.load_seconds(last), Some(2.0));
        assert_eq!(p.run_seconds(last), Some(2.0 + RUN_OVERHEAD_S));
        assert_eq!(p.points[1].params["posters"], serde_json::json!(2));
        assert_eq!(
            params_text(&last.params, " "),
            "strategy=pool-locked posters=3"
        );
    }

    #[test]
    fn command_lines_put_the_sweeps_own_flags_first() {
        let p = plan("protocol = \"board\"\n[server]\nthreads = 2\n[load]\nposters = 3");
        let point = &p.points[0];
        assert_eq!(
            point.serve_args("s.json"),
            [
                "serve",
                "board",
                "--addr",
                "127.0.0.1:0",
                "--stats-json",
                "s.json",
                "--threads",
                "2"
            ]
        );
        assert_eq!(
            point.load_args("127.0.0.1:9", "l.json"),
            [
                "load",
                "board",
                "--addr",
                "127.0.0.1:9",
                "--json",
                "l.json",
                "--posters",
                "3"
            ]
        );
    }

    #[test]
    fn the_estimate_follows_each_points_duration() {
        let p = plan("protocol = \"board\"\n[load]\nduration = [\"1s\", \"10s\"]");
        let runs = [&p.points[0], &p.points[1], &p.points[1]];
        let want = 21.0 + 3.0 * RUN_OVERHEAD_S;
        assert!((p.estimate_seconds(runs).unwrap() - want).abs() < 1e-9);
        let q = plan("protocol = \"kv\"\n[load]\nsessions = [1, 2]");
        assert_eq!(q.estimate_seconds(&q.points), None);
    }

    #[test]
    fn matrix_variables_feed_both_sides() {
        let p = plan(
            r#"
            protocol = "bucket"
            [matrix]
            buckets = [32, 2048]
            [server]
            buckets = "{buckets}"
            delay-unit = "ms"
            [load]
            buckets = "{buckets}"
            delay = ["1-3", "{buckets}0"]
            "#,
        );
        assert_eq!(
            p.axes.iter().map(|a| a.key.as_str()).collect::<Vec<_>>(),
            ["buckets", "delay"]
        );
        let last = &p.points[3];
        assert_eq!(
            last.server_flags,
            ["--buckets", "2048", "--delay-unit", "ms"]
        );
        assert_eq!(last.load_flags, ["--buckets", "2048", "--delay", "20480"]);
        assert_eq!(last.slug, "buckets=2048,delay=_buckets_0");
    }

    #[test]
    fn when_flags_join_only_their_points() {
        let p = plan(
            r#"
            protocol = "bucket"
            [server]
            strategy = ["thread-per-request", "pool-locked"]
            [server.when.strategy.pool-locked]
            threads = 8
            "#,
        );
        assert_eq!(p.points.len(), 2, "no new axis");
        assert_eq!(
            p.points[0].server_flags,
            vec!["--strategy", "thread-per-request"]
        );
        assert_eq!(
            p.points[1].server_flags,
            vec!["--strategy", "pool-locked", "--threads", "8"]
        );
    }

    #[test]
    fn clashing_names_are_prefixed() {
        let p = plan("protocol = \"board\"\n[server]\nthreads = [1, 2]\n[load]\nthreads = [3, 4]");
        assert_eq!(p.axes[0].key, "server.threads");
        assert_eq!(p.axes[1].key, "load.threads");
    }

    #[test]
    fn no_axes_is_one_point() {
        let p = plan("protocol = \"echo\"\nrepetitions = 4\n[server]\nprotocol = [\"echo\"]");
        assert_eq!(p.points.len(), 1);
        assert_eq!(p.points[0].slug, "all");
        assert_eq!(p.runs(), 4);
    }

    #[test]
    fn server_protocol_axis() {
        let p = plan("protocol = \"board\"\n[server]\nprotocol = [\"board\", \"echo\"]");
        assert_eq!(p.axes[0].key, "protocol");
        assert_eq!(p.points[1].server_protocol, "echo");
        assert_eq!(p.points[1].load_protocol, "board");
    }

    #[test]
    fn the_baseline_runs_in_every_block() {
        let p = plan(
            r#"
            protocol = "board"
            repetitions = 3
            [load]
            posters = [1, 2]
            [baseline.server]
            protocol = "echo"
            cpus = "0"
            [baseline.load]
            posters = 2
            duration = "1s"
            "#,
        );
        let b = p.baseline.as_ref().unwrap();
        assert_eq!((b.slug.as_str(), b.index), (BASELINE, 2));
        assert_eq!(b.server_protocol, "echo");
        assert_eq!(b.load_protocol, "board");
        assert_eq!(b.server_flags, ["--cpus", "0"]);
        assert_eq!(b.load_flags, ["--posters", "2", "--duration", "1s"]);
        assert_eq!(p.runs(), 9);
        assert_eq!(p.find(BASELINE).unwrap().index, 2);
        assert_eq!(p.find("posters=2").unwrap().index, 1);
    }

    #[test]
    fn slugs_stay_unique() {
        let p = plan("protocol = \"board\"\n[server]\ncpus = [\"0,1\", \"0_1\"]");
        assert_ne!(p.points[0].slug, p.points[1].slug);
    }
}
