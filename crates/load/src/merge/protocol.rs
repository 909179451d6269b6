//! A protocol's own results merged across agents, field by field from
//! their JSON, so every protocol's figures merge the same way: counts
//! (integers) are added, as are rates (`…per_s`, `…_rps`); times (`…_s`)
//! take the longest, `min` and `max` the extremes, a `hit_share` is
//! recomputed from the hits and misses added; any other figure (a mean
//! session time, a median, a bound) is the agents' mean weighted by their
//! requests — the one kind of field that is not exact, said so in
//! docs/measuring.md. Text and flags are the first agent's.

use super::AgentFile;
use crate::report::ProtocolResults;
use serde_json::{Map, Value};

pub fn merge(agents: &[AgentFile]) -> Result<Option<ProtocolResults>, String> {
    let first = &agents[0];
    let protocol = first.report.protocol.as_str();
    let weights: Vec<f64> = agents
        .iter()
        .map(|a| a.report.results.requests as f64)
        .collect();
    let parts: Vec<&Value> = agents.iter().map(|a| &a.protocol_json).collect();
    let merged = value("", &parts, &weights);
    ProtocolResults::named(protocol, merged)
        .map(Some)
        .map_err(|e| format!("merging the {protocol} results: {e}"))
}

fn value(key: &str, parts: &[&Value], weights: &[f64]) -> Value {
    match parts[0] {
        Value::Object(_) => object(parts, weights),
        Value::Number(n) if n.is_u64() && parts.iter().all(|p| p.is_u64()) => match key {
            "min" => parts.iter().filter_map(|p| p.as_u64()).min().into(),
            "max" => parts.iter().filter_map(|p| p.as_u64()).max().into(),
            _ => parts.iter().filter_map(|p| p.as_u64()).sum::<u64>().into(),
        },
        Value::Number(_) => float(key, parts, weights),
        other => other.clone(),
    }
}

fn float(key: &str, parts: &[&Value], weights: &[f64]) -> Value {
    let xs: Vec<f64> = parts.iter().map(|p| p.as_f64().unwrap_or(0.0)).collect();
    let x = if key.contains("per_s") || key.ends_with("_rps") {
        xs.iter().sum()
    } else if key.ends_with("_s") || key == "max" {
        xs.iter().copied().fold(f64::MIN, f64::max)
    } else if key == "min" {
        xs.iter().copied().fold(f64::MAX, f64::min)
    } else {
        let total: f64 = weights.iter().sum();
        if total > 0.0 {
            xs.iter().zip(weights).map(|(x, w)| x * w).sum::<f64>() / total
        } else {
            xs.iter().sum::<f64>() / xs.len() as f64
        }
    };
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn object(parts: &[&Value], weights: &[f64]) -> Value {
    let mut keys: Vec<&String> = Vec::new();
    for p in parts {
        for k in p.as_object().into_iter().flat_map(|o| o.keys()) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let mut out = Map::new();
    for k in keys {
        let (vals, ws): (Vec<&Value>, Vec<f64>) = parts
            .iter()
            .zip(weights)
            .filter_map(|(p, w)| p.get(k.as_str()).filter(|v| !v.is_null()).map(|v| (v, *w)))
            .unzip();
        let v = if vals.is_empty() {
            Value::Null
        } else {
            value(k, &vals, &ws)
        };
        out.insert(k.clone(), v);
    }
    if let (Some(h), Some(m)) = (
        out.get("hits").and_then(Value::as_u64),
        out.get("misses").and_then(Value::as_u64),
    ) {
        if out.contains_key("hit_share") {
            let share = if h + m > 0 {
                h as f64 / (h + m) as f64
            } else {
                0.0
            };
            out.insert("hit_share".into(), share.into());
        }
    }
    Value::Object(out)
}
