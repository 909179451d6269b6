//! The experiment file: a server part and a load part, each a table of
//! flags where any value may be a list, plus matrix variables that several
//! flags share, how runs are repeated and ordered, an optional baseline,
//! and pinning.
//!
//! ```toml
//! name = "caps"
//! protocol = "board"
//! repetitions = 3
//! client_cpus = "1"
//! [server]
//! strategy = "pool-locked"
//! cpus = "0"
//! [load]
//! posters = [1, 2, 3]
//! readers = [1, 2, 3]
//! duration = "2s"
//! ```
//!
//! Flags that only some values of another flag take go under `when`:
//!
//! ```toml
//! [server]
//! strategy = ["thread-per-request", "pool-locked"]
//! [server.when.strategy.pool-locked]
//! threads = 8
//! ```

use crate::design::Design;
use crate::error::SpecError;
use crate::placement::Cores;
use crate::side::Side;
use crate::value::Scalar;
use serde::Deserialize;
use serverlab_util::duration;
use serverlab_util::CpuSet;
use std::time::Duration;

/// Flags the runner sets itself; an experiment may not.
pub const RESERVED_SERVER: [&str; 2] = ["addr", "stats-json"];
pub const RESERVED_LOAD: [&str; 2] = ["addr", "json"];

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// A parsed, checked experiment.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// The file it was read from, as errors name it.
    pub file: String,
    pub name: String,
    pub description: String,
    /// Repetitions, their order, and when to add more.
    pub design: Design,
    /// CPUs the load is pinned to.
    pub client_cpus: Option<Cpus>,
    /// Longest a load may run before it is stopped and the run failed.
    pub timeout: Duration,
    /// Variables flags refer to as `"{name}"`, each with its values.
    pub matrix: Vec<(String, Vec<Scalar>)>,
    pub server: Part,
    pub load: Part,
    /// `cores` in `[server]`: the server's core counts, an axis; the sweep
    /// places the server and the load on the machine's CPUs itself.
    pub cores: Option<Cores>,
    /// `transport` in `[server]`: TCP, a Unix socket, or both (an axis);
    /// None: TCP.
    pub transport: Option<Vec<crate::Transport>>,
    /// A fixed server and load run once in every block, beside the points.
    pub baseline: Option<Baseline>,
    /// The file as written, kept with the results.
    pub source: String,
}

/// `[baseline.server]` and `[baseline.load]`: one fixed configuration
/// (every flag a single value) whose throughput the report divides each
/// point's by, run in the same block.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub server: Part,
    pub load: Part,
}

/// A CPU list as the experiment wrote it (`1`, `2-3`), which results
/// record and compare, and the set it names, which the runner pins to.
#[derive(Debug, Clone, PartialEq)]
pub struct Cpus {
    pub written: String,
    pub set: CpuSet,
}

impl Cpus {
    /// The written form of an optional list, as records keep it.
    pub fn written(cpus: &Option<Cpus>) -> Option<String> {
        cpus.as_ref().map(|c| c.written.clone())
    }
}

/// One side of a run: the protocol(s) and the flags with their values.
#[derive(Debug, Clone)]
pub struct Part {
    /// One protocol, or several (server only): then it is an axis.
    pub protocols: Vec<String>,
    /// Flag name (dashed, no `--`) and its values; more than one = an axis.
    pub flags: Vec<(String, Vec<Scalar>)>,
    /// Flags given only where another flag takes one value (`[server.when.
    /// strategy.pool-locked] threads = 8`: `--threads 8` only with
    /// `--strategy pool-locked`, a flag the other strategies refuse).
    pub when: Vec<When>,
}

/// `[<side>.when.<flag>.<value>]`: these flags where `flag` is `value`.
#[derive(Debug, Clone)]
pub struct When {
    pub flag: String,
    pub value: String,
    pub flags: Vec<(String, Scalar)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Option<String>,
    description: Option<String>,
    protocol: Option<String>,
    repetitions: Option<i64>,
    order: Option<String>,
    seed: Option<i64>,
    target_ci: Option<toml::Value>,
    max_repetitions: Option<i64>,
    client_cpus: Option<toml::Value>,
    timeout: Option<String>,
    #[serde(default)]
    matrix: toml::Table,
    #[serde(default)]
    server: toml::Table,
    #[serde(default)]
    load: toml::Table,
    baseline: Option<toml::Table>,
}

/// The `[server]` keys the sweep itself acts on, taken out of the table
/// (the rest are serve's flags): `cores` and `transport`.
fn server_axes(
    table: &mut toml::Table,
) -> Result<(Option<Cores>, Option<Vec<crate::Transport>>), String> {
    let cores = table
        .remove("cores")
        .map(|v| Cores::parse(&v))
        .transpose()?;
    let transport = table
        .remove("transport")
        .map(|v| crate::Transport::parse_list(&v))
        .transpose()?;
    Ok((cores, transport))
}

/// An experiment's name when its file gives none: the file's stem.
fn default_name(file: &str) -> String {
    std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "experiment".into())
}

impl Experiment {
    /// Parse `text`, read from `file` (named in errors; its stem is the
    /// default name).
    pub fn parse(file: &str, text: &str) -> Result<Experiment, SpecError> {
        let err = |message: String| SpecError {
            file: file.to_string(),
            message,
        };
        let raw: Raw = toml::from_str(text).map_err(|e| err(e.to_string().trim().to_string()))?;
        let design = Design::parse(
            raw.repetitions,
            raw.order.as_deref(),
            raw.seed,
            raw.target_ci.as_ref(),
            raw.max_repetitions,
        )
        .map_err(err)?;
        let timeout = match &raw.timeout {
            None => DEFAULT_TIMEOUT,
            Some(t) => duration::parse(t).map_err(|e| err(format!("timeout: {e}")))?,
        };
        let client_cpus = raw
            .client_cpus
            .as_ref()
            .map(client_cpus)
            .transpose()
            .map_err(err)?;
        let matrix = matrix(&raw.matrix).map_err(err)?;
        let mut server_table = raw.server.clone();
        let (cores, transport) = server_axes(&mut server_table).map_err(err)?;
        let protocol = raw.protocol.as_deref();
        let server = part(Side::Server, false, &server_table, protocol).map_err(err)?;
        let load = part(Side::Load, false, &raw.load, protocol).map_err(err)?;
        let baseline = raw
            .baseline
            .as_ref()
            .map(|t| baseline(t, raw.protocol.as_deref()))
            .transpose()
            .map_err(err)?;
        let name = raw.name.unwrap_or_else(|| default_name(file));
        Self::check_name(&name).map_err(err)?;
        let exp = Experiment {
            file: file.to_string(),
            name,
            description: raw.description.unwrap_or_default(),
            design,
            client_cpus,
            timeout,
            matrix,
            server,
            load,
            cores,
            transport,
            baseline,
            source: text.to_string(),
        };
        exp.check_templates().map_err(err)?;
        exp.check_cores().map_err(err)?;
        Ok(exp)
    }

    /// Give the load `--flag value` in every run, each point's and the
    /// baseline's, in place of what the file says (`sweep --duration`: a
    /// baseline measured longer than its points would not be the same
    /// measurement).
    pub fn set_load_flag(&mut self, flag: &str, value: Scalar) {
        let parts =
            std::iter::once(&mut self.load).chain(self.baseline.as_mut().map(|b| &mut b.load));
        for part in parts {
            let flags = &mut part.flags;
            match flags.iter_mut().find(|(f, _)| f == flag) {
                Some((_, values)) => *values = vec![value.clone()],
                None => flags.push((flag.to_string(), vec![value.clone()])),
            }
            for w in &mut part.when {
                w.flags.retain(|(f, _)| f != flag);
            }
        }
    }

    /// With `cores`, the sweep places the server and the load itself: the
    /// experiment may not pin either, nor size the server's threads.
    fn check_cores(&self) -> Result<(), String> {
        if self.cores.is_none() {
            return Ok(());
        }
        if self.client_cpus.is_some() {
            return Err(
                "client_cpus: with server.cores the sweep places the load itself \
                        (on CPUs the server does not use): remove client_cpus"
                    .into(),
            );
        }
        let taken = [
            (Side::Server, "cpus", "chooses the server's CPUs itself"),
            (
                Side::Server,
                "threads",
                "sizes the server's threads to its cores itself",
            ),
            (Side::Load, "cpus", "places the load itself"),
        ];
        for (side, flag, why) in taken {
            let part = side.part(self);
            let set = part.flags.iter().any(|(f, _)| f == flag)
                || part
                    .when
                    .iter()
                    .any(|w| w.flags.iter().any(|(f, _)| f == flag));
            if set {
                return Err(format!(
                    "{}.{flag}: with server.cores the sweep {why}: remove it",
                    side.name()
                ));
            }
        }
        Ok(())
    }

    /// An experiment's name names its results directory (`results/<name>`):
    /// a name, never a path.
    fn check_name(name: &str) -> Result<(), String> {
        let bad = name.is_empty()
            || name == "."
            || name.contains("..")
            || name.contains(['/', '\\', '\0']);
        match bad {
            true => Err(format!(
                "name = \"{name}\": an experiment's name names its results directory, so it \
             is a name, not a path: no /, no \\, no .."
            )),
            false => Ok(()),
        }
    }

    /// Every `{name}` in a flag value names a matrix variable, and every
    /// matrix variable is used.
    fn check_templates(&self) -> Result<(), String> {
        let mut used = vec![false; self.matrix.len()];
        for side in Side::BOTH {
            let (part, side) = (side.part(self), side.name());
            let conditional = part
                .when
                .iter()
                .flat_map(|w| w.flags.iter().map(|(f, v)| (f.clone(), vec![v.clone()])));
            let all: Vec<(String, Vec<Scalar>)> =
                part.flags.iter().cloned().chain(conditional).collect();
            for (flag, values) in &all {
                for v in values {
                    let Scalar::Str(s) = v else { continue };
                    for name in template_names(s) {
                        match self.matrix.iter().position(|(n, _)| *n == name) {
                            Some(i) => used[i] = true,
                            None => {
                                return Err(format!(
                                    "{side}.{flag} = \"{s}\": no matrix variable `{name}` \
                                     (define it under [matrix])"
                                ))
                            }
                        }
                    }
                }
            }
        }
        if let Some(i) = used.iter().position(|u| !u) {
            return Err(format!(
                "matrix.{}: no flag uses it (write \"{{{}}}\" as a flag's value)",
                self.matrix[i].0, self.matrix[i].0
            ));
        }
        Ok(())
    }
}

/// `client_cpus = "1"` (or `1`): a CPU list this process may use.
fn client_cpus(v: &toml::Value) -> Result<Cpus, String> {
    let text = match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        _ => return Err("client_cpus: expected a CPU list such as \"1\" or \"2-3\"".into()),
    };
    let set = text
        .parse::<CpuSet>()
        .map_err(|e| format!("client_cpus: {e}"))?;
    Ok(Cpus { written: text, set })
}

/// `[matrix]`: each variable a value or a list of values.
fn matrix(table: &toml::Table) -> Result<Vec<(String, Vec<Scalar>)>, String> {
    let mut out = Vec::new();
    for (name, v) in table {
        if !is_identifier(name) {
            return Err(format!(
                "matrix.{name}: a variable name is letters, digits and _"
            ));
        }
        out.push((name.clone(), values(&format!("matrix.{name}"), v)?));
    }
    Ok(out)
}

/// `[baseline]`: a `server` and a `load` table, each flag one value, no
/// matrix variables (the baseline does not vary).
fn baseline(table: &toml::Table, default_protocol: Option<&str>) -> Result<Baseline, String> {
    let named = |k: &String| Side::BOTH.iter().any(|s| s.name() == k);
    if let Some(key) = table.keys().find(|k| !named(k)) {
        return Err(format!(
            "baseline.{key}: a baseline has a [baseline.server] and a [baseline.load] table"
        ));
    }
    let empty = toml::Table::new();
    let side = |which: Side| -> Result<Part, String> {
        let what = format!("baseline.{}", which.name());
        let t = match table.get(which.name()) {
            None => &empty,
            Some(toml::Value::Table(t)) => t,
            Some(_) => return Err(format!("{what}: expected a table of flags")),
        };
        let p = part(which, true, t, default_protocol)?;
        fixed(&what, &p)?;
        Ok(p)
    };
    Ok(Baseline {
        server: side(Side::Server)?,
        load: side(Side::Load)?,
    })
}

/// A baseline's part (`what`) is one fixed configuration: no `when`, one
/// value per flag, no matrix variables.
fn fixed(what: &str, p: &Part) -> Result<(), String> {
    if let Some(w) = p.when.first() {
        return Err(format!(
            "{what}.when.{}: a baseline is one fixed configuration: give its flags directly",
            w.flag
        ));
    }
    for (flag, values) in &p.flags {
        if values.len() > 1 {
            return Err(format!(
                "{what}.{flag}: a baseline is one fixed configuration: give one value"
            ));
        }
        let Scalar::Str(s) = &values[0] else {
            continue;
        };
        if !template_names(s).is_empty() {
            return Err(format!(
                "{what}.{flag} = \"{s}\": a baseline is fixed: no matrix variables"
            ));
        }
    }
    Ok(())
}

/// `[server]` or `[load]` (or the baseline's: `baseline.server`…).
fn part(
    which: Side,
    baseline: bool,
    table: &toml::Table,
    default_protocol: Option<&str>,
) -> Result<Part, String> {
    let side = &match baseline {
        true => format!("baseline.{}", which.name()),
        false => which.name().to_string(),
    };
    let protocol_may_vary = which == Side::Server && !baseline;
    let mut protocols = default_protocol.map(|p| vec![p.to_string()]);
    let mut flags: Vec<(String, Vec<Scalar>)> = Vec::new();
    let reserved = which.reserved();
    let mut when_table = None;
    for (key, v) in table {
        let what = format!("{side}.{key}");
        if key == "when" {
            when_table = Some(v);
            continue;
        }
        if key == "protocol" {
            let list = values(&what, v)?;
            if list.len() > 1 && !protocol_may_vary {
                let who = match (which, baseline) {
                    (Side::Load, false) => "the load",
                    _ => "a baseline",
                };
                return Err(format!("{what}: {who} speaks one protocol"));
            }
            let names: Result<Vec<String>, String> = list
                .into_iter()
                .map(|p| match p {
                    Scalar::Str(s) if is_flag_name(&s) => Ok(s),
                    other => Err(format!("{what}: '{other}' is not a protocol name")),
                })
                .collect();
            protocols = Some(names?);
            continue;
        }
        let flag = key.replace('_', "-");
        if !is_flag_name(&flag) {
            return Err(format!(
                "{what}: a flag name is lower-case letters, digits and dashes, without the leading --"
            ));
        }
        if reserved.contains(&flag.as_str()) {
            return Err(format!("{what}: the sweep sets --{flag} itself"));
        }
        if flags.iter().any(|(f, _)| *f == flag) {
            return Err(format!("{what}: --{flag} is given twice"));
        }
        flags.push((flag, values(&what, v)?));
    }
    let protocols = protocols.ok_or_else(|| {
        format!("no protocol for the {side}: set protocol = \"board\" at the top (or in [{side}])")
    })?;
    let when = match when_table {
        Some(v) => when(side, v, &flags, &protocols, reserved)?,
        None => Vec::new(),
    };
    Ok(Part {
        protocols,
        flags,
        when,
    })
}

/// `[<side>.when.<flag>.<value>]` tables: each names a flag of the part
/// (or `protocol`, one of the part's protocols) and one of its values, and
/// holds flags (one value each) the part does not set otherwise.
fn when(
    side: &str,
    v: &toml::Value,
    flags: &[(String, Vec<Scalar>)],
    protocols: &[String],
    reserved: &[&str],
) -> Result<Vec<When>, String> {
    let protocol_values: Vec<Scalar> = protocols.iter().cloned().map(Scalar::Str).collect();
    let table = |what: &str, v: &toml::Value| -> Result<toml::Table, String> {
        v.as_table()
            .cloned()
            .ok_or_else(|| format!("{what}: expected [{what}.<value>] tables of flags"))
    };
    let mut out = Vec::new();
    for (key, by_value) in &table(&format!("{side}.when"), v)? {
        let what = format!("{side}.when.{key}");
        let flag = key.replace('_', "-");
        let values = match flags.iter().find(|(f, _)| *f == flag) {
            Some((_, values)) => values,
            None if flag == "protocol" => &protocol_values,
            None => {
                return Err(format!(
                    "{what}: the {side} has no flag --{flag} to depend on"
                ))
            }
        };
        for (value, extras) in &table(&what, by_value)? {
            let what = format!("{what}.{value}");
            if !values.iter().any(|v| v.to_string() == *value) {
                return Err(format!("{what}: --{flag} never takes the value '{value}'"));
            }
            let mut when = When {
                flag: flag.clone(),
                value: value.clone(),
                flags: Vec::new(),
            };
            for (extra, v) in &table(&what, extras)? {
                let name = extra.replace('_', "-");
                let bad = !is_flag_name(&name)
                    || reserved.contains(&name.as_str())
                    || flags.iter().any(|(f, _)| *f == name)
                    || when.flags.iter().any(|(f, _)| *f == name);
                let scalar = Scalar::from_toml(v);
                match (bad, scalar) {
                    (false, Some(s)) => when.flags.push((name, s)),
                    _ => {
                        return Err(format!(
                            "{what}.{extra}: one value for a flag the {side} does not set otherwise"
                        ))
                    }
                }
            }
            out.push(when);
        }
    }
    Ok(out)
}

/// A scalar, or a non-empty list of scalars without duplicates.
fn values(what: &str, v: &toml::Value) -> Result<Vec<Scalar>, String> {
    let list = match v {
        toml::Value::Array(items) => items.as_slice(),
        other => std::slice::from_ref(other),
    };
    if list.is_empty() {
        return Err(format!("{what}: an empty list gives no runs"));
    }
    let mut out: Vec<Scalar> = Vec::with_capacity(list.len());
    for item in list {
        let s = Scalar::from_toml(item).ok_or_else(|| {
            format!("{what}: values are strings, numbers or booleans, or a list of them")
        })?;
        if out.contains(&s) {
            return Err(format!("{what}: {s} is listed twice"));
        }
        out.push(s);
    }
    Ok(out)
}

/// The `{name}` references in a flag value.
pub fn template_names(s: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_identifier(&after[..close]) => {
                names.push(after[..close].to_string());
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    names
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

fn is_flag_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two strategies, and a flag only `pool-locked` takes.
    pub(crate) const WHEN_POOL_LOCKED: &str = r#"
        protocol = "bucket"
        [server]
        strategy = ["thread-per-request", "pool-locked"]
        [server.when.strategy.pool-locked]
        threads = 8
    "#;

    fn parse(text: &str) -> Result<Experiment, String> {
        Experiment::parse("x.toml", text).map_err(|e| e.to_string())
    }

    #[test]
    fn flags_when_another_flag_takes_a_value() {
        let e = parse(WHEN_POOL_LOCKED).unwrap();
        assert_eq!(e.server.when.len(), 1);
        assert_eq!(e.server.when[0].flag, "strategy");
        assert_eq!(e.server.when[0].value, "pool-locked");
        assert_eq!(
            e.server.when[0].flags,
            vec![("threads".to_string(), Scalar::Int(8))]
        );
        for (text, complaint) in [
            ("[server.when.cpus.x]\nthreads = 1", "no flag --cpus"),
            (
                "[server.when.strategy.async]\nthreads = 1",
                "never takes the value 'async'",
            ),
            (
                "[server.when.strategy.pool-locked]\nstrategy = \"x\"",
                "does not set otherwise",
            ),
            (
                "[server.when.strategy.pool-locked]\nthreads = [1, 2]",
                "one value",
            ),
            ("[server.when.strategy]\npool-locked = 3", "tables of flags"),
            (
                "[baseline.server]\nstrategy = \"pool-locked\"\n[baseline.server.when.strategy.pool-locked]\nthreads = 1",
                "a baseline is one fixed configuration",
            ),
        ] {
            let err = parse(&format!(
                "protocol = \"bucket\"\n[server]\nstrategy = [\"thread-per-request\", \"pool-locked\"]\n{text}"
            ))
            .unwrap_err();
            assert!(err.contains(complaint), "{text}: {err}");
        }
    }

    #[test]
    fn a_full_experiment() {
        let e = parse(
            r#"
            name = "grid"
            protocol = "board"
            repetitions = 2
            timeout = "30s"
            [matrix]
            n = [32, 64]
            [server]
            strategy = ["async", "pool-locked"]
            max_connections = "{n}"
            [load]
            posters = [1, 2]
            verify = true
            "#,
        )
        .unwrap();
        assert_eq!(e.name, "grid");
        assert_eq!(e.design.repetitions, 2);
        assert_eq!(e.timeout, Duration::from_secs(30));
        assert_eq!(e.server.protocols, ["board"]);
        assert_eq!(e.server.flags[1].0, "max-connections");
        assert_eq!(e.load.flags[1], ("verify".into(), vec![Scalar::Bool(true)]));
        assert_eq!(e.matrix[0].1, vec![Scalar::Int(32), Scalar::Int(64)]);
    }

    #[test]
    fn defaults() {
        let e = parse("protocol = \"echo\"\n[load]\nprotocol = \"board\"").unwrap();
        assert_eq!(e.name, "x");
        assert_eq!(e.design.repetitions, crate::design::DEFAULT_REPETITIONS);
        assert_eq!(e.load.protocols, ["board"]);
        assert_eq!(e.server.protocols, ["echo"]);
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            ("protocol = \"board\"\nrepeats = 3", "repeats"),
            ("[server]\nstrategy = \"async\"", "no protocol"),
            ("protocol = \"board\"\nrepetitions = 0", "repetitions"),
            (
                "protocol = \"board\"\n[load]\naddr = \"1.2.3.4:5\"",
                "load.addr",
            ),
            (
                "protocol = \"board\"\n[server]\nstats_json = \"x\"",
                "server.stats_json",
            ),
            ("protocol = \"board\"\n[load]\nposters = []", "load.posters"),
            (
                "protocol = \"board\"\n[load]\nposters = [1, 1]",
                "listed twice",
            ),
            (
                "protocol = \"board\"\n[load]\nposters = { a = 1 }",
                "load.posters",
            ),
            ("protocol = \"board\"\n[load]\nPosters = 1", "load.Posters"),
            (
                "protocol = \"board\"\n[load]\nprotocol = [\"a\", \"b\"]",
                "one protocol",
            ),
            (
                "protocol = \"board\"\n[load]\nbuckets = \"{n}\"",
                "matrix variable `n`",
            ),
            ("protocol = \"board\"\n[matrix]\nn = [1, 2]", "matrix.n"),
            ("protocol = \"board\"\ntimeout = \"soon\"", "timeout"),
            (
                "protocol = \"board\"\nclient_cpus = \"9999\"",
                "client_cpus",
            ),
            (
                "protocol = \"board\"\n[load]\nposters = 1\nposters = 2",
                "posters",
            ),
        ];
        for (text, names) in cases {
            let e = parse(text).expect_err(text);
            assert!(e.contains(names), "{text}: {e} does not name {names}");
            assert!(e.starts_with("x.toml"), "{e}");
        }
    }

    #[test]
    fn templates() {
        assert_eq!(template_names("{a}-{b_2}"), ["a", "b_2"]);
        assert!(template_names("{} {1x} plain").is_empty());
    }
}
