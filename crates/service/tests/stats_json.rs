//! The JSON each protocol's statistics are written as (`serve
//! --stats-json`, the final statistics, kv's `/_/stats`): the names,
//! nesting and order docs/protocols/ give them, which users, the report
//! and the sweep read. Each service is driven sans I/O through a few
//! requests, errors among them, and its whole report is compared as text
//! (so the order of the fields counts too).

use serde_json::Value;
use serverlab_proto::resp::client;
use serverlab_service::board::{BoardService, ExitPolicy};
use serverlab_service::bucket::{BucketConfig, BucketService, Timing};
use serverlab_service::echo::EchoService;
use serverlab_service::kv::{KvConfig, KvService};
use serverlab_service::resp::RespService;
use serverlab_service::{run_all, Service};
use serverlab_store::StoreKind;

/// `wires` through `svc`, each on a connection of its own.
fn drive<S: Service>(svc: &S, wires: &[&[u8]]) {
    for wire in wires {
        let mut conn = svc.open("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap());
        run_all(svc, &mut conn, wire, &mut Vec::new());
    }
}

#[test]
fn echo_writes_requests_and_limits() {
    let svc = EchoService::new(8);
    drive(&svc, &[b"abc\ndef\n", b"0123456789abc\n"]);
    assert_eq!(
        svc.report().to_string(),
        r#"{"requests":2,"limits":{"oversize_frames":1}}"#
    );
}

#[test]
fn board_writes_kinds_misses_refusals_and_limits() {
    let svc = BoardService::new(
        serverlab_store::board::new(StoreKind::Mutex),
        32,
        ExitPolicy::Never,
    );
    drive(
        &svc,
        &[
            b"POST@t#hi\0READ@t#0\0READ@t#7\0COUNT@t\0LIST\0",
            b"EXIT\0",
            &[b'x'; 40],
        ],
    );
    assert_eq!(
        svc.report().to_string(),
        r#"{"requests":{"POST":1,"READ":2,"COUNT":1,"LIST":1,"EXIT":0,"invalid":1},"read_misses":1,"exit_refused":1,"limits":{"oversize_frames":1}}"#
    );
}

#[test]
fn bucket_writes_requests_delay_and_each_rejection() {
    let svc = BucketService::new(
        serverlab_store::bucket::new(StoreKind::LockFree, 4).unwrap(),
        BucketConfig {
            max_line: 32,
            max_delay: 60,
            timing: Timing::spin(serverlab_proto::bucket::DelayUnit::Micros),
            close_after_reply: false,
        },
    );
    drive(
        &svc,
        &[
            b"3,1\n0,1\n",
            b"x\n",
            b"99999999999999999999,1\n",
            b"0,9\n",
            b"61,0\n",
            &[b'1'; 40],
        ],
    );
    assert_eq!(
        svc.report().to_string(),
        r#"{"requests":{"add":1,"read":1},"delay_units":3,"rejected":{"line_too_long":1,"malformed":1,"number_too_large":1,"bucket_out_of_range":1,"delay_over_max":1}}"#
    );
}

#[test]
fn kv_writes_methods_statuses_misses_and_keys() {
    let svc = KvService::new(
        serverlab_store::kv::new(StoreKind::Mutex),
        KvConfig::default(),
    );
    drive(
        &svc,
        &[
            b"PUT /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nv",
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
            b"BREW /a HTTP/1.1\r\nHost: x\r\n\r\n",
            b"nonsense\r\n\r\n",
        ],
    );
    let report = svc.report().to_string();
    assert_eq!(
        report,
        r#"{"requests":{"total":4,"GET":2,"HEAD":0,"PUT":1,"POST":0,"DELETE":0,"other":1},"statuses":{"200":1,"201":1,"304":0,"400":1,"404":1,"405":1,"408":0,"411":0,"413":0,"414":0,"417":0,"431":0,"503":0},"misses":1,"keys":1}"#
    );
}

/// The keys of every object in `v`, nested, in order: the shape without
/// the values (the log's timings and directory differ from run to run).
fn shape(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let inner: Vec<String> = m.iter().map(|(k, v)| format!("{k}{}", shape(v))).collect();
            format!("{{{}}}", inner.join(","))
        }
        _ => String::new(),
    }
}

#[test]
fn resp_writes_commands_errors_protocol_errors_and_keys() {
    let svc = RespService::new(StoreKind::Sharded, Default::default(), "test".into()).unwrap();
    let mut wire = Vec::new();
    for args in [
        &[&b"SET"[..], b"k", b"v"][..],
        &[b"LPUSH", b"k", b"x"],
        &[b"INCR", b"k"],
        &[b"NOSUCH"],
    ] {
        client::command(&mut wire, args);
    }
    drive(&svc, &[&wire, b"*1\r\n$x\r\n"]);
    let r = svc.report();
    let top: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(
        top,
        ["requests", "errors", "protocol_errors", "keys", "pubsub"]
    );
    let requests = r["requests"].as_object().unwrap();
    assert_eq!(requests.keys().next().unwrap(), "total");
    assert_eq!(requests.keys().next_back().unwrap(), "rejected");
    assert_eq!(
        (requests["total"].as_u64(), requests["set"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(requests["lpush"], 1);
    assert_eq!(requests["incrby"], 1);
    assert_eq!(requests["rejected"], 1);
    let errors = r["errors"].as_object().unwrap();
    let tail: Vec<&String> = errors.keys().rev().take(3).collect();
    assert_eq!(tail, ["misconf", "not_an_integer_value", "wrongtype"]);
    assert_eq!(errors["wrongtype"], 1, "{r}");
    assert_eq!(errors["not_an_integer_value"], 1, "{r}");
    assert_eq!(errors["unknown_command"], 1, "{r}");
    assert_eq!(r["protocol_errors"]["bad_bulk_length"], 1, "{r}");
    assert_eq!(r["keys"], 1);
    assert_eq!(
        shape(&r["pubsub"]),
        "{channels,patterns,messages_delivered,slow_subscribers_disconnected}"
    );
}

#[test]
fn a_log_adds_durability_in_its_documented_shape() {
    use serverlab_service::wal::{Durability, Options, Wal};
    let dir = std::env::temp_dir().join(format!("serverlab-stats-json-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let wal = Wal::open(&dir, Options::new(Durability::Always), |_| Ok(())).unwrap();
    let svc = KvService::new(
        serverlab_store::kv::new(StoreKind::Mutex),
        KvConfig::default(),
    )
    .with_log(wal);
    let r = svc.report();
    assert_eq!(
        shape(&r["durability"]),
        "{mode,dir,records,bytes,fsyncs,records_per_fsync{mean,median,p99,max},\
         commit_us{count,median,p99,max},recovered_records,dropped_bytes,compactions,failed}"
    );
    assert_eq!(r["durability"]["mode"], "always");
    assert_eq!(r["durability"]["failed"], Value::Null);
    let top: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(
        top,
        ["requests", "statuses", "misses", "keys", "durability"]
    );
    drop(svc);
    let _ = std::fs::remove_dir_all(dir);
}
