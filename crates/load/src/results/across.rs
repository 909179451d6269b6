//! How results merge across the agents of a split load: [`Merge`], which
//! every protocol's results type implements by building its merged value
//! as a struct literal (no `..`), one rule per field, so a field added
//! without saying how it merges does not compile; and [`Across`], the
//! agents merged and the merged run's figures, with a method for each
//! way a field combines:
//!
//! - a count: added, and an error past `u64::MAX` rather than wrapped
//!   ([`Across::count`], [`Across::counts`] for a map of counts);
//! - a setting of the run or a property of the server: the same in every
//!   agent, else an error naming the field and the values
//!   ([`Across::same`], [`Across::config`]);
//! - a mean: weighted by its own count ([`Across::mean`]);
//! - a maximum or minimum ([`Across::max`], [`Across::min`]); a time from
//!   the start, the latest end ([`Across::latest`]);
//! - a figure derived from others (a share, a rate over a time, a bucket
//!   run's bound): computed again from the merged figures by the
//!   function a single run uses, never combined.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Display;

/// A protocol's results, merged across agents.
pub trait Merge: Sized {
    /// `parts` (one per agent, in the order of `at.parts`, at least one)
    /// as one run's results, or why they cannot be one run's.
    fn merge(parts: &[&Self], at: &Across<'_>) -> Result<Self, String>;
}

/// One agent, as its results' merge needs it.
#[derive(Debug, Clone)]
pub struct Part<'a> {
    /// How errors name it: "agent 2".
    pub name: String,
    /// Its run's settings, as written (`config`).
    pub config: &'a Value,
    /// The cores online on its machine (`environment.cores_online`).
    pub cores_online: usize,
    /// Its measured window's start after the earliest agent's, in seconds.
    pub start_offset_s: f64,
}

/// The agents merged, and the merged run's figures that derived fields
/// are computed from.
#[derive(Debug, Clone)]
pub struct Across<'a> {
    pub parts: Vec<Part<'a>>,
    /// Requests counted in the merged window: every agent's.
    pub requests: u64,
    /// The merged run's throughput (requests over its window).
    pub throughput_rps: f64,
}

impl Across<'_> {
    /// A count: the parts' added; an error where the sum passes `u64::MAX`.
    pub fn count<T>(
        &self,
        field: &str,
        parts: &[&T],
        get: impl Fn(&T) -> u64,
    ) -> Result<u64, String> {
        parts.iter().try_fold(0u64, |sum, p| {
            sum.checked_add(get(p))
                .ok_or_else(|| overflow(field, parts.iter().map(|p| get(p))))
        })
    }

    /// Counts by key (responses per status): each key's added, checked.
    pub fn counts<T, K: Ord + Clone + Display>(
        &self,
        field: &str,
        parts: &[&T],
        get: impl Fn(&T) -> &BTreeMap<K, u64>,
    ) -> Result<BTreeMap<K, u64>, String> {
        let mut out: BTreeMap<K, u64> = BTreeMap::new();
        for p in parts {
            for (k, n) in get(p) {
                let sum = out.entry(k.clone()).or_default();
                *sum = sum.checked_add(*n).ok_or_else(|| {
                    let each = parts.iter().map(|p| get(p).get(k).copied().unwrap_or(0));
                    overflow(&format!("{field}.{k}"), each)
                })?;
            }
        }
        Ok(out)
    }

    /// A setting of the run or a property of the server: every part's the
    /// same, else an error naming the field and two values that differ.
    pub fn same<T, V: PartialEq + Display>(
        &self,
        field: &str,
        parts: &[&T],
        get: impl Fn(&T) -> V,
    ) -> Result<V, String> {
        let first = get(parts[0]);
        for (k, p) in parts.iter().enumerate().skip(1) {
            let v = get(p);
            if v != first {
                return Err(format!(
                    "{field} differs between the agents: {first} in {} but {v} in {}",
                    self.parts[0].name, self.parts[k].name
                ));
            }
        }
        Ok(first)
    }

    /// Settings every agent's `config` holds (`C`'s fields, by name), the
    /// same in every agent, else an error naming the first setting that
    /// differs and its values.
    pub fn config<C: DeserializeOwned + Serialize + PartialEq>(
        &self,
        what: &str,
    ) -> Result<C, String> {
        let read = |p: &Part<'_>| {
            serde_json::from_value::<C>(p.config.clone())
                .map_err(|e| format!("{}'s config does not hold {what}: {e}", p.name))
        };
        let first = read(&self.parts[0])?;
        for p in &self.parts[1..] {
            let other = read(p)?;
            if other != first {
                let (key, a, b) = first_difference(&first, &other);
                return Err(format!(
                    "config.{key} differs between the agents: {a} in {} but {b} in {}",
                    self.parts[0].name, p.name
                ));
            }
        }
        Ok(first)
    }

    /// A mean: the parts' means (`get`: the mean and how many it is of)
    /// weighted by their counts; 0 when every count is 0.
    pub fn mean<T>(&self, parts: &[&T], get: impl Fn(&T) -> (f64, u64)) -> f64 {
        let (sum, n) = parts.iter().fold((0.0, 0u128), |(sum, n), p| {
            let (mean, count) = get(p);
            (sum + mean * count as f64, n + count as u128)
        });
        if n > 0 {
            sum / n as f64
        } else {
            0.0
        }
    }

    /// The largest of the parts' values.
    pub fn max<T>(&self, parts: &[&T], get: impl Fn(&T) -> f64) -> f64 {
        parts
            .iter()
            .map(|p| get(p))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// The smallest of the parts' values (`get` gives `None` for a part
    /// that has none); 0 when none has one.
    pub fn min<T>(&self, parts: &[&T], get: impl Fn(&T) -> Option<f64>) -> f64 {
        let min = parts
            .iter()
            .filter_map(|p| get(p))
            .fold(f64::INFINITY, f64::min);
        if min.is_finite() {
            min
        } else {
            0.0
        }
    }

    /// A time from each agent's start (`get`): when the last agent's
    /// ended, from the first agent's start.
    pub fn latest<T>(&self, parts: &[&T], get: impl Fn(&T) -> f64) -> f64 {
        parts
            .iter()
            .zip(&self.parts)
            .map(|(p, at)| at.start_offset_s + get(p))
            .fold(0.0, f64::max)
    }

    /// A part that every agent has or none has (a setting decides it):
    /// the parts', or `None`; an error naming the field where some agents
    /// have it and others do not.
    pub fn all_or_none<'p, T, U>(
        &self,
        field: &str,
        parts: &[&'p T],
        get: impl Fn(&'p T) -> Option<&'p U>,
    ) -> Result<Option<Vec<&'p U>>, String> {
        let has: Vec<Option<&U>> = parts.iter().map(|p| get(p)).collect();
        match has.iter().position(|h| h.is_some() != has[0].is_some()) {
            None => Ok(has.into_iter().collect()),
            Some(k) => {
                let (with, without) = if has[0].is_some() { (0, k) } else { (k, 0) };
                Err(format!(
                    "{field}: {} has one but {} has none",
                    self.parts[with].name, self.parts[without].name
                ))
            }
        }
    }

    /// The most cores online on any agent's machine.
    pub fn most_cores(&self) -> usize {
        self.parts.iter().map(|p| p.cores_online).max().unwrap_or(0)
    }

    /// Why part `k`'s results cannot merge with the first's.
    pub(crate) fn other_protocol(&self, k: usize, first: &str, other: &str) -> String {
        format!(
            "the agents ran different protocols: {first} in {} but {other} in {}",
            self.parts[0].name, self.parts[k].name
        )
    }
}

/// Why a count cannot be added: it passes `u64::MAX`.
fn overflow(field: &str, each: impl Iterator<Item = u64>) -> String {
    let each: Vec<String> = each.map(|n| n.to_string()).collect();
    format!(
        "{field}: the agents' counts ({}) add up to more than {} (a count cannot be that large; is a file corrupt?)",
        each.join(", "),
        u64::MAX
    )
}

/// The first setting in which `a` and `b` differ, by name, and its
/// value in each.
fn first_difference<C: Serialize>(a: &C, b: &C) -> (String, Value, Value) {
    let json = |c: &C| serde_json::to_value(c).unwrap_or_default();
    let (a, b) = (json(a), json(b));
    let differs = a
        .as_object()
        .and_then(|o| o.iter().find(|(k, v)| b.get(k.as_str()) != Some(*v)));
    match differs {
        Some((k, v)) => (
            k.clone(),
            v.clone(),
            b.get(k.as_str()).cloned().unwrap_or_default(),
        ),
        None => (String::new(), a, b),
    }
}
