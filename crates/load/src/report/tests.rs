//! The result schema: every protocol's typed results round-trip through
//! JSON under their name, and files that are not current results are
//! refused with the reason.

use super::*;
use crate::board::{BoardLoad, BoardResults, Reads};
use crate::bucket::{Bound, BucketLoad, BucketResults};
use crate::harness::Protocol;
use crate::kv::{KvLoad, KvResults, Preload, SessionTimes, Sessions};
use crate::resp::{RespLoad, RespResults, Setup};
use serverlab_proto::bucket::{DelayMode, DelayUnit};

fn report(protocol: ProtocolResults) -> LoadReport {
    LoadReport {
        schema: SCHEMA.into(),
        protocol: protocol.name().into(),
        load_model: "closed-loop".into(),
        config: serde_json::json!({"addr": "127.0.0.1:1"}),
        environment: Environment::capture(),
        results: Results {
            duration_s: 2.0,
            requests: 3,
            throughput_rps: 1.5,
            warmup_s: 0.0,
            served: None,
            requested_rps: None,
            concurrency: 2,
            operations: Vec::new(),
            per_second: vec![2, 1],
            per_second_latency_us: None,
            schedule: None,
            threads: Vec::new(),
            client_cpu: ClientCpu::measure((0.25, 0.5), 0.125, 2.0, 1),
            protocol: Some(protocol),
            ..Default::default()
        },
        search: None,
        scan: None,
    }
}

fn every_protocol() -> Vec<ProtocolResults> {
    vec![
        BoardResults {
            reads: Reads::of(3, 1),
            posts_acknowledged: 17,
        }
        .into(),
        BucketResults {
            delay_unit: DelayUnit::Millis,
            delay_mode: DelayMode::Work,
            mean_delay_units: 2.5,
            delay_units: 50,
            connections_opened: 20,
            bound: Bound {
                delay_mode: DelayMode::Work,
                mean_delay_s: 0.0025,
                concurrency: 2,
                limited_by: "min(8 client connections, 2 server cores)".into(),
                rate_rps: Some(800.0),
                share: Some(0.5),
                notes: vec!["a note".into()],
            },
        }
        .into(),
        KvResults {
            total_time_s: 1.25,
            replies_per_s: 80.0,
            statuses: [(200, 90), (404, 10)].into_iter().collect(),
            sessions: Sessions {
                planned: 10,
                completed: 9,
                failed: 1,
                time_ms: SessionTimes {
                    mean: 1.5,
                    median: 1.25,
                    min: 0.5,
                    max: 4.0,
                },
            },
            preload: Some(Preload {
                keys: 100,
                time_s: 0.25,
            }),
        }
        .into(),
        RespResults {
            workload: "board".into(),
            error_replies: 2,
            error_prefixes: Default::default(),
            null_replies: 5,
            setup: Some(Setup {
                keys_written: 100,
                time_s: 0.5,
            }),
            board: Some(BoardResults {
                reads: Reads::of(4, 1),
                posts_acknowledged: 9,
            }),
            pubsub: None,
        }
        .into(),
        crate::http::HttpResults::of(
            &"2xx".parse().unwrap(),
            vec![crate::http::TargetResults {
                target: "GET http://h/a".into(),
                weight: 2,
                requests: 10,
                errors: 0,
                statuses: [(200, 9), (404, 1)].into_iter().collect(),
            }],
        )
        .into(),
    ]
}

#[test]
fn typed_results_round_trip_through_json_under_their_name() {
    let all = every_protocol();
    assert_eq!(
        all.iter().map(|p| p.name()).collect::<Vec<_>>(),
        with_http(registered()),
        "a case for every protocol, and http's"
    );
    for p in all {
        let name = p.name();
        let written = report(p);
        let text = crate::output::json(&written);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema"], "serverlab-load/3");
        assert_eq!(v["results"]["concurrency"], 2);
        assert!(v["results"][name].is_object(), "{name}: {text}");
        assert!(v["results"].get("extra").is_none());
        let read: LoadReport = serde_json::from_str(&text).unwrap();
        assert_eq!(read, written, "{name}");
    }
}

/// `load http`'s name after the protocols': a load with no server of
/// serverlab's.
fn with_http(mut names: Vec<&'static str>) -> Vec<&'static str> {
    names.push(crate::http::NAME);
    names
}

/// The registry's protocols (`serverlab_proto::for_each_protocol!`), by
/// name, in its order.
fn registered() -> Vec<&'static str> {
    use serverlab_util::Named;
    serverlab_proto::ProtocolKind::ALL
        .iter()
        .map(|p| p.name())
        .collect()
}

#[test]
fn each_protocols_results_carry_its_load_name() {
    let names = [
        BoardLoad::NAME,
        BucketLoad::NAME,
        KvLoad::NAME,
        RespLoad::NAME,
        crate::http::HttpLoad::NAME,
    ];
    assert_eq!(ProtocolResults::NAMES, names);
    assert_eq!(
        ProtocolResults::NAMES,
        with_http(registered()),
        "a load for every protocol"
    );
}

#[test]
fn bad_files_are_refused_with_the_reason() {
    let good = serde_json::to_value(report(every_protocol().remove(2))).unwrap();
    let refused = |v: serde_json::Value| LoadReport::from_value(v).unwrap_err().to_string();

    let mut v = good.clone();
    v["results"].as_object_mut().unwrap().remove("kv");
    assert!(refused(v).contains("results.kv"), "absent");

    let mut v = good.clone();
    v["results"]["kv"]["statuses"] = serde_json::json!("many");
    let why = refused(v);
    assert!(
        why.contains("results.kv") && why.contains("invalid type"),
        "{why}"
    );

    let mut v = good.clone();
    v["protocol"] = "board".into();
    assert!(refused(v).contains("results.board"));

    let mut v = good.clone();
    v["schema"] = "serverlab-load/9".into();
    assert!(refused(v).contains("unknown schema \"serverlab-load/9\""));

    let mut v = good;
    v.as_object_mut().unwrap().remove("schema");
    assert!(refused(v).contains("not a serverlab load result"));
}

#[test]
fn a_version_2_file_reads_as_the_current_schema() {
    let mut written = report(every_protocol().remove(0));
    written.results.operations = vec![OpSummary {
        name: "POST".into(),
        count: 3,
        rate_rps: 1.5,
        latency_us: Percentiles {
            p99: 80.0,
            p99_99: 95.0,
            ..Percentiles::default()
        },
        service_us: None,
        histogram_us: vec![(80.0, 3)],
    }];
    let mut v = serde_json::to_value(&written).unwrap();
    v["schema"] = "serverlab-load/2".into();
    // Version 2 had no p99.99 (nor any open-loop field).
    v["results"]["operations"][0]["latency_us"]
        .as_object_mut()
        .unwrap()
        .remove("p99_99");
    let read = LoadReport::from_value(v).unwrap();
    assert_eq!(read.schema, "serverlab-load/2");
    let op = &read.results.operations[0];
    assert_eq!((op.latency_us.p99, op.latency_us.p99_99), (80.0, 0.0));
    assert_eq!(read.results.requested_rps, None);
    assert!(read.search.is_none() && read.results.schedule.is_none());
}

/// Polling is part of the client's CPU time, never more; a client that
/// works on cores others keep busy is flagged, one alone on its cores
/// that mostly polls is not.
#[test]
fn client_cpu_polling_is_part_of_it_and_sharing_is_flagged() {
    let c = ClientCpu::measure((0.2, 0.4), 1.5, 4.0, 1);
    assert!((c.idle_poll_s - 0.6).abs() < 1e-9, "{c:?}");
    assert!(!c.bottleneck);
    let shared = ClientCpu::measure((0.5, 0.5), 0.1, 3.0, 1).on_cores(Some(1.0));
    assert!(shared.shared() && shared.bottleneck, "{shared:?}");
    let alone = ClientCpu::measure((0.3, 0.6), 0.6, 1.0, 1).on_cores(Some(0.95));
    assert!(!alone.shared() && !alone.bottleneck, "{alone:?}");
    assert_eq!(alone.cores_busy, Some(0.95));
}

#[test]
fn a_server_is_said_to_have_stopped_only_after_a_silence_long_for_its_rate() {
    // Killed after 4 s of a 20 s window: the run failed.
    let s = Served::of(133_129, Some(4.0), 20.0, true).unwrap();
    assert_eq!((s.duration_s, s.silent_s), (4.0, 16.0));
    assert!((s.throughput_rps - 133_129.0 / 4.0).abs() < 1e-9, "{s:?}");
    // A run that did not fail makes no claim.
    assert_eq!(Served::of(133_129, Some(4.0), 20.0, false), None);
    // Under a second of silence is not a stop.
    assert_eq!(Served::of(1000, Some(19.5), 20.0, true), None);
    // Ten replies in 18 s: 2 s without one is its pace, not a stop.
    assert_eq!(Served::of(10, Some(18.0), 20.0, true), None);
    assert!(Served::of(10, Some(1.8), 20.0, true).is_some());
    // Nothing answered: no rate over no time.
    assert_eq!(Served::of(0, None, 20.0, true), None);
}

#[test]
fn the_served_seconds_and_the_warm_up_round_trip_and_are_absent_when_nothing_to_say() {
    let mut written = report(every_protocol().remove(0));
    let plain = serde_json::to_value(&written).unwrap();
    assert!(plain["results"].get("served").is_none(), "{plain}");
    assert!(plain["results"].get("warmup_s").is_none(), "{plain}");
    written.results.warmup_s = 1.0;
    written.results.served = Served::of(30, Some(0.5), 2.0, true);
    assert!(written.results.served.is_some());
    written.results.verification.not_checked = Some("order".into());
    written.results.client_cpu.poll = Some(PollUse {
        mode: "auto".into(),
        resolved: Some("sleep".into()),
        spin_share: 0.0,
        why: "why".into(),
    });
    let text = crate::output::json(&written);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"]["served"]["duration_s"], 0.5, "{text}");
    assert_eq!(v["results"]["served"]["silent_s"], 1.5, "{text}");
    assert_eq!(v["results"]["warmup_s"], 1.0, "{text}");
    let read: LoadReport = serde_json::from_str(&text).unwrap();
    assert_eq!(read, written);
}
