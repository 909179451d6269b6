//! Reading a `serverlab-load/1` file, written before results were typed:
//! kept so `serverlab report` still reads old result directories. Its
//! `extra` becomes the protocol's typed results where it reads as them,
//! and its concurrency — which version 1 did not record — is guessed from
//! the configuration's key names, as version-1 readers did. Nothing else
//! guesses; nothing writes version 1.

use super::{ClientCpu, LoadReport, OpSummary, ProtocolResults, Results, SchemaError};
use super::{ThreadSummary, Verification};
use crate::env::Environment;
use serde::Deserialize;
use serde_json::Value;

pub const SCHEMA: &str = "serverlab-load/1";

#[derive(Deserialize)]
struct V1 {
    schema: String,
    protocol: String,
    load_model: String,
    config: Value,
    environment: Environment,
    results: V1Results,
}

#[derive(Deserialize)]
struct V1Results {
    duration_s: f64,
    requests: u64,
    throughput_rps: f64,
    operations: Vec<OpSummary>,
    per_second: Vec<u64>,
    threads: Vec<ThreadSummary>,
    late_replies: u64,
    errors: Vec<String>,
    verification: Verification,
    client_cpu: ClientCpu,
    #[serde(default)]
    extra: Value,
}

/// A version-1 result in the current types. `schema` stays
/// `serverlab-load/1`, so a reader can tell.
pub fn upgrade(value: Value) -> Result<LoadReport, SchemaError> {
    let v: V1 = serde_json::from_value(value)?;
    let r = v.results;
    let concurrency = guess_concurrency(&v.config, r.threads.len());
    // A hand-made or partial `extra` that does not read as the protocol's
    // results is left out rather than filled with made-up zeros.
    let protocol = ProtocolResults::named(&v.protocol, r.extra).ok();
    Ok(LoadReport {
        schema: v.schema,
        protocol: v.protocol,
        load_model: v.load_model,
        config: v.config,
        environment: v.environment,
        results: Results {
            duration_s: r.duration_s,
            requests: r.requests,
            throughput_rps: r.throughput_rps,
            warmup_s: 0.0,
            served: None,
            requested_rps: None,
            concurrency,
            operations: r.operations,
            per_second: r.per_second,
            per_second_latency_us: None,
            schedule: None,
            threads: r.threads,
            late_replies: r.late_replies,
            interrupted: false,
            errors: r.errors,
            failures: 0,
            thresholds: Vec::new(),
            verification: r.verification,
            client_cpu: r.client_cpu,
            agent: None,
            merged: None,
            validity: None,
            client_share: None,
            tls: None,
            protocol,
        },
        search: None,
        scan: None,
    })
}

/// The client's concurrency, as version-1 readers guessed it: posters +
/// readers (board), connections (bucket), concurrency (kv), else one per
/// client thread (0 if there were none).
fn guess_concurrency(config: &Value, threads: usize) -> u64 {
    let field = |name: &str| config.get(name).and_then(|v| v.as_u64());
    if let (Some(p), Some(r)) = (field("posters"), field("readers")) {
        return p + r;
    }
    field("connections")
        .or_else(|| field("concurrency"))
        .unwrap_or(threads as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v1(protocol: &str, config: Value, extra: Value) -> Value {
        json!({
            "schema": SCHEMA, "protocol": protocol, "load_model": "closed-loop",
            "config": config,
            "environment": { "serverlab_version": "0.1.0", "os": "linux", "arch": "x86_64",
                "kernel": "Linux 6.1", "cores_online": 2, "client_cpus": [1],
                "started_unix_s": 1700000000 },
            "results": { "duration_s": 2.0, "requests": 10, "throughput_rps": 5.0,
                "operations": [], "per_second": [5, 5],
                "threads": [{ "role": "connection", "index": 0, "total": 10,
                    "per_second": [5, 5], "runtime_s": 2.0 }],
                "late_replies": 0, "errors": [],
                "verification": { "enabled": false, "checked": 0, "mismatches": 0, "examples": [] },
                "client_cpu": { "user_s": 0.1, "system_s": 0.1, "idle_poll_s": 0.0, "cores": 1,
                    "utilization": 0.1, "bottleneck": false },
                "extra": extra }
        })
    }

    #[test]
    fn concurrency_is_guessed_from_the_configuration() {
        let board = json!({"posters": 3, "readers": 2});
        let read = |config: Value| {
            let r = LoadReport::from_value(v1("board", config, json!({}))).unwrap();
            r.results.concurrency
        };
        assert_eq!(read(board), 5);
        assert_eq!(read(json!({"connections": 8})), 8);
        assert_eq!(read(json!({"concurrency": 16, "sessions": 100})), 16);
        assert_eq!(read(json!({})), 1, "one per client thread");
    }

    #[test]
    fn extra_becomes_typed_where_it_reads_as_the_protocols_results() {
        let extra = json!({"reads": {"hits": 9, "misses": 1, "hit_share": 0.9},
            "posts_acknowledged": 40});
        let r = LoadReport::from_value(v1("board", json!({}), extra)).unwrap();
        assert_eq!(r.schema, SCHEMA);
        let Some(ProtocolResults::Board(b)) = r.results.protocol else {
            panic!("board results expected: {:?}", r.results.protocol);
        };
        assert_eq!((b.reads.hits, b.posts_acknowledged), (9, 40));
        // A partial extra is left out, not made up.
        let r = LoadReport::from_value(v1("board", json!({}), json!({}))).unwrap();
        assert_eq!(r.results.protocol, None);
    }
}
