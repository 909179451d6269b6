//! The server's final statistics as a report reads them. Every server
//! writes a typed part beside its protocol's own figures —
//! `connections` {…}, `service_time_us` {count, timed, min, mean, p50,
//! p90, p99, max} and `protocol` {…}, the types of
//! `serverlab_util::server_stats` — and the report reads service time
//! from it by name, with those types. Statistics written before that part existed go through
//! [`legacy_service_time`], which searches them as older reports did.

use serde::Deserialize;
use serde_json::Value;
use serverlab_util::server_stats::ServiceTime;

/// Whether `stats` has the typed part: `protocol` holds the protocol's own
/// figures beside it. Older statistics mixed them in at the top level.
fn is_typed(stats: &Value) -> bool {
    stats.get("protocol").is_some_and(Value::is_object)
}

/// The server's service time statistics in µs, named as the report shows
/// them (p50 as "median"). Empty when the server served nothing or did not
/// say.
pub fn service_time(stats: &Value) -> Vec<(String, f64)> {
    if !is_typed(stats) {
        return legacy_service_time(stats);
    }
    let typed = stats
        .get("service_time_us")
        .map(ServiceTime::deserialize)
        .and_then(Result::ok);
    match typed {
        Some(t) if t.count > 0 && t.timed > 0 => vec![
            ("min".into(), t.min),
            ("mean".into(), t.mean),
            ("median".into(), t.p50),
            ("p90".into(), t.p90),
            ("p99".into(), t.p99),
            ("max".into(), t.max),
        ],
        _ => Vec::new(),
    }
}

/// Statistic names a legacy service-time object may hold.
const SERVICE_STATS: [&str; 8] = ["min", "mean", "median", "p50", "p90", "p99", "p99_9", "max"];

/// For statistics written before the typed part (old result
/// directories): the first object whose key mentions "service" and that
/// holds service-time statistics, in µs (a key ending `_ms`, `_ns` or
/// `_s` says its unit; otherwise µs). Empty if none.
pub fn legacy_service_time(stats: &Value) -> Vec<(String, f64)> {
    let Some(map) = stats.as_object() else {
        return vec![];
    };
    for (key, value) in map {
        let lower = key.to_ascii_lowercase();
        if let (true, Some(inner)) = (lower.contains("service"), value.as_object()) {
            let scale = if lower.ends_with("_ms") {
                1e3
            } else if lower.ends_with("_ns") {
                1e-3
            } else if lower.ends_with("_s") && !lower.ends_with("_us") {
                1e6
            } else {
                1.0
            };
            // A count of 0: no request was served, and its zeros are no times.
            if inner.get("count").and_then(|c| c.as_u64()) == Some(0) {
                return vec![];
            }
            let found: Vec<(String, f64)> = SERVICE_STATS
                .iter()
                .filter_map(|name| {
                    let v = inner.get(*name)?.as_f64()?;
                    let name = if *name == "p50" { "median" } else { name };
                    Some((name.to_string(), v * scale))
                })
                .collect();
            if found.len() >= 2 {
                return found;
            }
        }
        let nested = legacy_service_time(value);
        if !nested.is_empty() {
            return nested;
        }
    }
    vec![]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_typed_part_is_read_by_name() {
        let stats = json!({
            "connections": {"accepted": 3},
            "service_time_us": {"count": 40, "min": 2.0, "mean": 9.5, "p50": 8.0,
                "p90": 15.0, "p99": 30.0, "max": 44.0},
            // The protocol's own figures may say anything, even "service".
            "protocol": {"service_ms": {"min": 1.0, "p99": 2.0}},
        });
        assert_eq!(
            service_time(&stats),
            [
                ("min".to_string(), 2.0),
                ("mean".to_string(), 9.5),
                ("median".to_string(), 8.0),
                ("p90".to_string(), 15.0),
                ("p99".to_string(), 30.0),
                ("max".to_string(), 44.0)
            ]
        );
        let idle = json!({"service_time_us": {"count": 0, "min": 0.0, "mean": 0.0, "p50": 0.0,
            "p90": 0.0, "p99": 0.0, "max": 0.0}, "protocol": {}});
        assert!(service_time(&idle).is_empty());
        // Served, but none of it timed (a sampling server): no times.
        let untimed = json!({"service_time_us": {"count": 9, "timed": 0, "sampled_one_in": 64,
            "min": 0.0, "mean": 0.0, "p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0},
            "protocol": {}});
        assert!(service_time(&untimed).is_empty());
        let mut sampled = stats.clone();
        sampled["service_time_us"]["timed"] = 3.into();
        assert_eq!(service_time(&sampled).len(), 6);
        // Typed but without service time: none, not a guess.
        assert!(
            service_time(&json!({"protocol": {"service_us": {"p50": 1.0, "p99": 2.0}}})).is_empty()
        );
    }

    #[test]
    fn legacy_service_time_is_found_with_its_unit() {
        let stats = json!({"connections": {"accepted": 3},
            "kv": {"service_time_ms": {"min": 0.1, "median": 0.25, "p99": 2.0, "max": 3.5}}});
        assert_eq!(
            service_time(&stats),
            [
                ("min".to_string(), 100.0),
                ("median".to_string(), 250.0),
                ("p99".to_string(), 2000.0),
                ("max".to_string(), 3500.0)
            ]
        );
        let us = json!({"service_us": {"p50": 12.0, "p99": 80.0}});
        assert_eq!(service_time(&us)[0], ("median".to_string(), 12.0));
        assert!(service_time(&json!({"requests": {"GET": 3}})).is_empty());
        let none = json!({"service_time_us": {"count": 0, "min": 0.0, "median": 0.0, "p99": 0.0}});
        assert!(service_time(&none).is_empty());
    }
}
