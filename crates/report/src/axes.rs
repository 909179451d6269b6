//! What a sweep's axes mean for a report: which vary the client's load,
//! which are server cores, threads, delays or bucket counts, and how to
//! title and label them.

use serverlab_sweep::{Axis, Point, Scalar, Source};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Sets the client's concurrency (posters, readers, connections…).
    Client,
    Strategy,
    /// The server's `--cpus`.
    Cores,
    /// The server's `--threads`.
    ServerThreads,
    Delay,
    Buckets,
    Store,
    Protocol,
    /// The open loop's offered rate (`--rate`).
    Rate,
    Other,
}

/// The flag or variable name an axis stands for.
pub fn name(axis: &Axis) -> &str {
    match &axis.source {
        Source::ServerFlag(f) | Source::LoadFlag(f) => f,
        Source::Matrix => &axis.key,
        Source::ServerProtocol => "protocol",
        Source::Cores => "cores",
        Source::Transport => "transport",
    }
}

/// The flags an axis sets: its own, or for the server's cores the
/// server's `--cpus` and `--threads` and the load's `--cpus`.
pub fn flags(axis: &Axis) -> Vec<&str> {
    match axis.source {
        Source::Cores => vec!["cores", "cpus", "threads"],
        Source::Transport => vec!["transport", "addr"],
        _ => vec![name(axis)],
    }
}

pub fn role(axis: &Axis) -> Role {
    let server_side = !matches!(axis.source, Source::LoadFlag(_));
    let load_side = !matches!(axis.source, Source::ServerFlag(_) | Source::ServerProtocol);
    match name(axis) {
        "posters" | "readers" | "connections" | "concurrency" | "clients" if load_side => {
            Role::Client
        }
        "strategy" if server_side => Role::Strategy,
        "cpus" | "cores" if server_side => Role::Cores,
        "threads" if server_side => Role::ServerThreads,
        "delay" => Role::Delay,
        "buckets" => Role::Buckets,
        "store" if server_side => Role::Store,
        "protocol" => Role::Protocol,
        "rate" if load_side => Role::Rate,
        _ => Role::Other,
    }
}

/// Values without an order (drawn as markers, not joined by lines).
pub fn is_nominal(axis: &Axis) -> bool {
    match role(axis) {
        Role::Strategy | Role::Store | Role::Protocol => true,
        Role::Other => axis.values.iter().any(|v| v.as_f64().is_none()),
        _ => false,
    }
}

/// An axis title with its unit or flag.
pub fn title(axis: &Axis, points: &[Point]) -> String {
    match role(axis) {
        Role::Client => format!("client connections (--{})", name(axis)),
        Role::Strategy => "server strategy (--strategy)".into(),
        Role::Cores if axis.source == Source::Cores => "server cores (k: --cpus, --threads)".into(),
        Role::Cores => "server cores (--cpus)".into(),
        Role::ServerThreads => "server threads (--threads)".into(),
        Role::Delay => format!("delay range ({})", delay_unit(points)),
        Role::Buckets => "bucket count (--buckets)".into(),
        Role::Store => "store (--store)".into(),
        Role::Protocol => "server protocol".into(),
        Role::Rate => "offered rate (--rate, requests/s)".into(),
        Role::Other => axis.key.clone(),
    }
}

/// The delay unit the points' flags give (`--delay-unit`); the bucket
/// protocol's default, seconds, otherwise.
pub fn delay_unit(points: &[Point]) -> String {
    points
        .iter()
        .flat_map(|p| [&p.server_flags, &p.load_flags])
        .find_map(|flags| {
            let i = flags.iter().position(|f| f == "--delay-unit")?;
            flags.get(i + 1).cloned()
        })
        .unwrap_or_else(|| "s".into())
}

/// A value as a tick label: CPU lists also say how many cores.
pub fn label(axis: &Axis, value: &Scalar) -> String {
    if axis.source == Source::Cores {
        return value.to_string();
    }
    match (role(axis), value) {
        (Role::Cores, Scalar::Str(list)) => match cpu_count(list) {
            Some(n) => format!("{n} ({list})"),
            None => list.clone(),
        },
        (Role::Cores, Scalar::Int(c)) => format!("1 ({c})"),
        _ => value.to_string(),
    }
}

/// How many CPUs a list like `0-1,3` names.
pub fn cpu_count(list: &str) -> Option<usize> {
    let mut n = 0;
    for part in list.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi): (usize, usize) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
        n += hi.checked_sub(lo)? + 1;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(source: Source, key: &str, values: Vec<Scalar>) -> Axis {
        Axis {
            key: key.into(),
            source,
            values,
        }
    }

    #[test]
    fn roles_by_flag_and_side() {
        let a = axis(Source::LoadFlag("posters".into()), "posters", vec![]);
        assert_eq!(role(&a), Role::Client);
        let a = axis(
            Source::ServerFlag("threads".into()),
            "server.threads",
            vec![],
        );
        assert_eq!(role(&a), Role::ServerThreads);
        let a = axis(Source::LoadFlag("threads".into()), "load.threads", vec![]);
        assert_eq!(role(&a), Role::Other);
        let a = axis(Source::Matrix, "buckets", vec![]);
        assert_eq!(role(&a), Role::Buckets);
        let a = axis(Source::ServerFlag("cpus".into()), "cpus", vec![]);
        assert_eq!(title(&a, &[]), "server cores (--cpus)");
        assert_eq!(label(&a, &Scalar::Str("0-1".into())), "2 (0-1)");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_count("0"), Some(1));
        assert_eq!(cpu_count("0-1,3"), Some(3));
        assert_eq!(cpu_count("x"), None);
        assert_eq!(cpu_count("3-1"), None);
    }
}
