//! The plan: an experiment expanded into its axes (whatever takes more than
//! one value) and the points of their product, each with the exact flags
//! its server and load get, and the baseline beside them.

use crate::error::SpecError;
use crate::placement::{self, Placement};
use crate::side::Side;
use crate::spec::{template_names, Baseline, Experiment, Part, When};
use crate::topology::Topology;
use crate::value::Scalar;
use serde::{Deserialize, Serialize};
use serverlab_proto::Served;

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
    /// The server's cores (`cores` in `[server]`): its `--cpus` and
    /// `--threads`, and the load's `--cpus`.
    Cores,
    /// How the load reaches the server (`transport` in `[server]`): the
    /// server's `--addr`, TCP or a Unix socket.
    Transport,
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
    /// Where the server and the load run, where cores are an axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// How the load reaches the server.
    #[serde(default, skip_serializing_if = "crate::Transport::is_tcp")]
    pub transport: crate::Transport,
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

/// The address a server is told to listen on over TCP: any free port,
/// announced.
pub const SERVER_ADDR: &str = "127.0.0.1:0";

/// The baseline's slug (its runs are `runs/baseline/rep-<k>`). No point's
/// slug can be this: theirs are `key=value…` or `all`.
pub const BASELINE: &str = "baseline";

impl Point {
    /// The server's command line after the binary: `serve <protocol>`, the
    /// address and statistics file the sweep sets, then the experiment's
    /// flags. The runner runs exactly this; `validate` checks exactly this.
    pub fn serve_args(&self, stats_json: &str) -> Vec<String> {
        let addr = self.transport.server_addr(stats_json);
        let head = ["serve", &self.server_protocol, "--addr", &addr];
        let flags = match Served::parse(&self.server_protocol) {
            Some(s) if !s.own_server() => own_server_flags_left_out(&self.server_flags),
            _ => self.server_flags.clone(),
        };
        args(&head, &["--stats-json", stats_json], &flags)
    }

    /// The load's command line after the binary: `load <protocol> --addr
    /// ADDR --json FILE`, then the experiment's flags.
    pub fn load_args(&self, addr: &str, json: &str) -> Vec<String> {
        let head = ["load", &self.load_protocol, "--addr", addr];
        args(&head, &["--json", json], &self.load_flags)
    }
}

/// `flags` without those only serverlab's own servers act on
/// ([`Served::OWN_SERVER_FLAGS`], which `serve external` refuses): a
/// grid's `strategy` runs another program's server once per strategy, to
/// pair with serverlab's (experiments/redis.toml), and the program is
/// given none of them.
fn own_server_flags_left_out(flags: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        let name = f.split('=').next().unwrap_or(f);
        match Served::OWN_SERVER_FLAGS.iter().find(|o| o.flag == name) {
            Some(own) if own.takes_value && !f.contains('=') => {
                it.next();
            }
            Some(_) => {}
            None => out.push(f.clone()),
        }
    }
    out
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
    /// What the machine decided about the plan (the cores it allows).
    pub notes: Vec<String>,
}

impl Plan {
    /// The plan on this machine (whose CPUs matter only where cores are
    /// an axis).
    pub fn new(experiment: Experiment) -> Result<Plan, SpecError> {
        let topology = match experiment.cores {
            None => Topology::flat(1),
            Some(_) => Topology::here().map_err(|e| SpecError {
                file: experiment.file.clone(),
                message: format!("server.cores: cannot read this machine's CPUs: {e}"),
            })?,
        };
        Plan::on(experiment, &topology)
    }

    /// The plan on a machine with `topology`'s CPUs. A core count above
    /// them is an error naming the axis.
    pub fn on(experiment: Experiment, topology: &Topology) -> Result<Plan, SpecError> {
        let counts = match &experiment.cores {
            None => None,
            Some(c) => Some(c.counts(topology).map_err(|message| SpecError {
                file: experiment.file.clone(),
                message,
            })?),
        };
        let cores: Vec<usize> = counts.iter().flat_map(|c| c.counts.clone()).collect();
        let placements = placement::place(topology, &cores);
        let axes = axes(&experiment, &cores);
        check_size(&axes).map_err(|message| SpecError {
            file: experiment.file.clone(),
            message,
        })?;
        let mut points: Vec<Point> = product(&axes)
            .into_iter()
            .enumerate()
            .map(|(index, choice)| point(&experiment, &axes, index, &choice, &placements))
            .collect();
        dedupe_slugs(&mut points);
        let baseline = experiment
            .baseline
            .as_ref()
            .map(|b| baseline_point(b, points.len()));
        Ok(Plan {
            experiment,
            axes,
            points,
            baseline,
            notes: counts.and_then(|c| c.note).into_iter().collect(),
        })
    }

    /// The points whose server shares CPUs with their load.
    pub fn shared_cpus(&self) -> impl Iterator<Item = (&Point, &Placement)> {
        self.points
            .iter()
            .filter_map(|p| Some((p, p.placement.as_ref().filter(|c| c.is_shared())?)))
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

    /// Seconds one run's load lasts, if its flags say (`--duration`): its
    /// warm-up (`--warmup`, else the load's default) and its window.
    pub fn load_seconds(&self, point: &Point) -> Option<f64> {
        let window = flag_seconds(&point.load_flags, "--duration")?;
        let warmup = flag_seconds(&point.load_flags, "--warmup").unwrap_or(DEFAULT_WARMUP_S);
        Some(warmup + window)
    }
}

/// The load's warm-up when its flags give none (`load --warmup`'s default).
pub const DEFAULT_WARMUP_S: f64 = 1.0;

/// A duration flag's value in seconds, written `--flag T` or `--flag=T`.
fn flag_seconds(flags: &[String], flag: &str) -> Option<f64> {
    let joined = format!("{flag}=");
    let text = flags
        .iter()
        .enumerate()
        .find_map(|(i, f)| match f.strip_prefix(&joined) {
            Some(v) => Some(v),
            None => (f == flag)
                .then(|| flags.get(i + 1).map(String::as_str))
                .flatten(),
        })?;
    serverlab_util::duration::parse_with_zero(text)
        .ok()
        .map(|d| d.as_secs_f64())
}

/// Every flag or variable with more than one value, in file order:
/// matrix, server protocol, server flags, the server's cores (an axis
/// even with one value: the report's scaling section follows it), load
/// flags.
fn axes(e: &Experiment, cores: &[usize]) -> Vec<Axis> {
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
    if e.cores.is_some() {
        let values = cores.iter().map(|&k| Scalar::Int(k as i64)).collect();
        axes.push(("cores".into(), "server.", Source::Cores, values));
    }
    if let Some(list) = &e.transport {
        let values = list.iter().map(|t| Scalar::Str(t.name().into())).collect();
        axes.push(("transport".into(), "server.", Source::Transport, values));
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

/// The most points a plan may have: at a third of a second of set-up per
/// run, 10,000 points × 3 repetitions is already three hours.
pub const MAX_POINTS: u64 = 10_000;

/// Refuse a grid above [`MAX_POINTS`] before building it, with its size.
fn check_size(axes: &[Axis]) -> Result<(), String> {
    let size = axes
        .iter()
        .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64));
    match size {
        Some(n) if n <= MAX_POINTS => Ok(()),
        _ => {
            let factors: Vec<String> = axes
                .iter()
                .filter(|a| a.values.len() > 1)
                .map(|a| format!("{} {}", a.values.len(), a.key))
                .collect();
            let size = size.map_or("more than 2^64".into(), |n| n.to_string());
            Err(format!(
                "the grid has {size} points ({}), more than {MAX_POINTS}: give fewer values, \
                 or split it into several experiments",
                factors.join(" × ")
            ))
        }
    }
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

/// What one point chose: each axis's value (by index) and so every
/// matrix variable's value.
struct Choice<'a> {
    axes: &'a [Axis],
    index: &'a [usize],
    vars: Vec<(&'a str, &'a Scalar)>,
}

impl<'a> Choice<'a> {
    fn new(e: &'a Experiment, axes: &'a [Axis], index: &'a [usize]) -> Choice<'a> {
        let mut c = Choice {
            axes,
            index,
            vars: Vec::new(),
        };
        c.vars = e
            .matrix
            .iter()
            .map(|(name, values)| {
                let on_axis = axes
                    .iter()
                    .zip(index)
                    .find(|(a, _)| a.source == Source::Matrix && a.key == *name)
                    .map(|(a, &i)| &a.values[i]);
                (name.as_str(), on_axis.unwrap_or(&values[0]))
            })
            .collect();
        c
    }

    /// The value the point's axis from `source` takes, if it is an axis.
    fn chosen(&self, source: &Source) -> Option<&'a Scalar> {
        self.axes
            .iter()
            .zip(self.index)
            .find(|(a, _)| a.source == *source)
            .map(|(a, &i)| &a.values[i])
    }

    /// A flag's value at this point: the axis's, else its only one, with
    /// matrix variables filled in.
    fn value(&self, side: Side, flag: &str, values: &[Scalar]) -> Scalar {
        let v = self.chosen(&side.flag(flag)).unwrap_or(&values[0]);
        substitute(v, &self.vars)
    }

    /// The part's flags as arguments.
    fn flags(&self, side: Side, part: &Part) -> Vec<String> {
        part.flags
            .iter()
            .flat_map(|(flag, values)| self.value(side, flag, values).args(flag))
            .collect()
    }

    /// Whether `w` applies: its flag (or the protocol) takes its value here.
    fn holds(&self, side: Side, part: &Part, w: &When, protocol: &str) -> bool {
        match part.flags.iter().find(|(f, _)| *f == w.flag) {
            Some((flag, values)) => self.value(side, flag, values).to_string() == w.value,
            None => w.flag == "protocol" && protocol == w.value,
        }
    }

    /// The flags given only where another flag (or the protocol) takes
    /// one value.
    fn when_flags(&self, side: Side, part: &Part, protocol: &str) -> Vec<String> {
        part.when
            .iter()
            .filter(|w| self.holds(side, part, w, protocol))
            .flat_map(|w| {
                w.flags
                    .iter()
                    .flat_map(|(f, v)| substitute(v, &self.vars).args(f))
            })
            .collect()
    }

    /// The point's axis values by key.
    fn params(&self) -> serde_json::Map<String, serde_json::Value> {
        self.axes
            .iter()
            .zip(self.index)
            .map(|(a, &i)| (a.key.clone(), a.values[i].to_json()))
            .collect()
    }
}

fn point(
    e: &Experiment,
    axes: &[Axis],
    index: usize,
    choice: &[usize],
    cores: &[Placement],
) -> Point {
    let c = Choice::new(e, axes, choice);
    let server_protocol = c
        .chosen(&Source::ServerProtocol)
        .map(|p| p.to_string())
        .unwrap_or_else(|| e.server.protocols[0].clone());
    let load_protocol = e.load.protocols[0].clone();
    let mut server_flags = c.flags(Side::Server, &e.server);
    server_flags.extend(c.when_flags(Side::Server, &e.server, &server_protocol));
    let mut load_flags = c.flags(Side::Load, &e.load);
    load_flags.extend(c.when_flags(Side::Load, &e.load, &load_protocol));
    let placement = c
        .chosen(&Source::Cores)
        .and_then(|k| cores.iter().find(|p| Scalar::Int(p.cores as i64) == *k))
        .cloned();
    if let Some(p) = &placement {
        server_flags.extend(server_placement(p, &server_protocol, &server_flags));
        load_flags.extend(["--cpus".to_string(), p.load_cpus.clone()]);
    }
    let transport = match c.chosen(&Source::Transport) {
        Some(t) if t.to_string() == crate::Transport::Unix.name() => crate::Transport::Unix,
        _ => crate::Transport::Tcp,
    };
    Point {
        index,
        slug: slug(axes, choice),
        params: c.params(),
        server_protocol,
        server_flags,
        load_protocol,
        load_flags,
        placement,
        transport,
    }
}

/// A cores point's server flags: pinned to its CPUs, and as many threads
/// as it has cores where its strategy has a number of threads.
fn server_placement(p: &Placement, protocol: &str, flags: &[String]) -> Vec<String> {
    let mut out = vec!["--cpus".to_string(), p.server_cpus.clone()];
    let strategy = flags
        .iter()
        .position(|f| f == "--strategy")
        .and_then(|i| flags.get(i + 1));
    if sizes_threads(protocol, strategy.map(String::as_str)) {
        out.extend(["--threads".to_string(), p.cores.to_string()]);
    }
    out
}

/// Whether `serve <protocol> --strategy <strategy>` takes `--threads`:
/// not another program's server, nor a strategy that runs a thread per
/// connection or per request. The default strategy (none given) has
/// threads; a protocol or strategy this build does not know is left to the
/// flag check.
pub fn sizes_threads(protocol: &str, strategy: Option<&str>) -> bool {
    let own = Served::parse(protocol).is_none_or(Served::own_server);
    own && serverlab_util::strategies::sizes_threads(strategy)
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
        placement: None,
        transport: crate::Transport::Tcp,
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
        Plan::new(Experiment::parse("t.toml", text).unwrap()).unwrap()
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
        // The 2 s window after the default 1 s warm-up.
        assert_eq!(p.load_seconds(last), Some(3.0));
        assert_eq!(p.run_seconds(last), Some(3.0 + RUN_OVERHEAD_S));
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
        // Each run's window, its warm-up (the default 1 s) and its set-up.
        let want = 21.0 + 3.0 * (DEFAULT_WARMUP_S + RUN_OVERHEAD_S);
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
        let p = plan(crate::spec::tests::WHEN_POOL_LOCKED);
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
    fn when_flags_can_depend_on_the_server_protocol() {
        let p = plan(
            r#"
            protocol = "resp"
            [server]
            protocol = ["resp", "external"]
            cpus = "0"
            [server.when.protocol.resp]
            store = "sharded"
            [server.when.protocol.external]
            command = "redis-server --port $PORT"
            [load]
            requests = 10
            "#,
        );
        let serve = |i: usize| p.points[i].serve_args("s.json").join(" ");
        assert!(
            serve(0).starts_with("serve resp ") && serve(0).ends_with("--cpus 0 --store sharded"),
            "{}",
            serve(0)
        );
        assert!(
            serve(1).starts_with("serve external ")
                && serve(1).ends_with("--cpus 0 --command redis-server --port $PORT"),
            "{}",
            serve(1)
        );
        assert_eq!(p.points[1].load_protocol, "resp");
    }

    /// A strategy axis beside `external` (experiments/redis.toml): the
    /// other program's server is run once per strategy, given none of
    /// the flags only serverlab's servers act on (`serve external`
    /// refuses them).
    #[test]
    fn an_external_server_is_given_no_serving_flags_of_ours() {
        let p = plan(
            r#"
            protocol = "resp"
            [server]
            protocol = ["resp", "external"]
            strategy = ["async", "pool-locked"]
            time-all = true
            write-timeout = "5s"
            cpus = "0"
            [server.when.protocol.external]
            command = "redis-server --port $PORT"
            [load]
            requests = 10
            "#,
        );
        let mut external = 0;
        for point in &p.points {
            let serve = point.serve_args("s.json").join(" ");
            if point.server_protocol == "external" {
                external += 1;
                for flag in ["--strategy", "--threads", "--time-all", "--write-timeout"] {
                    assert!(!serve.contains(flag), "{serve}");
                }
                assert!(serve.contains("--cpus 0 "), "{serve}");
                assert!(
                    serve.ends_with("--command redis-server --port $PORT"),
                    "{serve}"
                );
            } else {
                assert!(
                    serve.contains("--strategy ") && serve.contains("--time-all"),
                    "{serve}"
                );
            }
        }
        assert_eq!(external, 2, "once per strategy");
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

    fn plan_on(text: &str, cpus: usize) -> Result<Plan, String> {
        let e = Experiment::parse("t.toml", text).map_err(|e| e.to_string())?;
        Plan::on(e, &Topology::flat(cpus)).map_err(|e| e.to_string())
    }

    #[test]
    fn cores_pin_the_server_size_its_threads_and_place_the_load() {
        let p = plan_on(
            r#"
            protocol = "board"
            [server]
            strategy = ["async", "thread-per-connection"]
            cores = [1, 2, 4]
            [load]
            pipeline = 16
            "#,
            8,
        )
        .unwrap();
        assert_eq!(p.axes[1].key, "cores");
        assert_eq!(p.axes[1].source, Source::Cores);
        assert_eq!(p.points.len(), 6);
        let two = &p.points[1];
        assert_eq!(two.slug, "strategy=async,cores=2");
        assert_eq!(
            two.server_flags,
            ["--strategy", "async", "--cpus", "0-1", "--threads", "2"]
        );
        assert_eq!(two.load_flags, ["--pipeline", "16", "--cpus", "4-7"]);
        let placement = two.placement.as_ref().unwrap();
        assert_eq!((placement.cores, placement.is_shared()), (2, false));
        // No --threads where the strategy runs a thread per connection.
        assert_eq!(
            p.points[5].server_flags,
            ["--strategy", "thread-per-connection", "--cpus", "0-3"]
        );
        assert!(p.notes.is_empty());
        assert_eq!(p.shared_cpus().count(), 0);
    }

    #[test]
    fn one_core_count_is_still_an_axis_and_half_of_two_is_one() {
        let p = plan_on("protocol = \"board\"\n[server]\ncores = \"1..half\"", 2).unwrap();
        assert_eq!(p.axes.len(), 1);
        assert_eq!(p.points[0].slug, "cores=1");
        assert_eq!(p.points[0].load_flags, ["--cpus", "1"]);
        assert!(
            p.notes[0].contains("no scaling beyond k = 1"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn too_many_cores_is_refused_naming_the_axis() {
        let e = plan_on("protocol = \"board\"\n[server]\ncores = [1, 2, 64]", 2).unwrap_err();
        assert!(e.starts_with("t.toml: server.cores = 64"), "{e}");
        for (text, names) in [
            ("[server]\ncores = [1]\ncpus = \"0\"", "server.cpus"),
            ("[server]\ncores = [1]\nthreads = 2", "server.threads"),
            ("[server]\ncores = [1]\n[load]\ncpus = \"1\"", "load.cpus"),
            ("client_cpus = \"1\"\n[server]\ncores = [1]", "client_cpus"),
            (
                "[server]\ncores = [1]\nstrategy = \"async\"\n[server.when.strategy.async]\nthreads = 2",
                "server.threads",
            ),
        ] {
            let e = plan_on(&format!("protocol = \"board\"\n{text}"), 2).unwrap_err();
            assert!(e.contains(names), "{text}: {e}");
        }
    }

    #[test]
    fn which_servers_take_threads() {
        assert!(sizes_threads("board", None));
        assert!(sizes_threads("board", Some("uring")));
        assert!(!sizes_threads("board", Some("thread-per-request")));
        assert!(!sizes_threads("external", Some("async")));
        assert!(!sizes_threads("external", None));
        assert!(sizes_threads("echo", None));
        assert!(sizes_threads("no-such-protocol", Some("pool-locked")));
    }
}
