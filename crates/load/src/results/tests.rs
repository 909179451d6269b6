//! Every protocol's results merge across agents as one run's: a load
//! recorded once — each request's, reply's or session's outcome drawn at
//! random — built into the single run's results and, split among N
//! agents at random, into each agent's, by the functions the protocols
//! use; the agents' merged equal the single run's, field by field. And
//! what cannot be one run's is refused: counts past `u64::MAX`, settings
//! or server properties that differ, protocols that differ.

use super::board::{BoardResults, Reads};
use super::bucket::{BoundConfig, BucketResults, Counted};
use super::kv::{KvResults, Preload, SessionTimes, Sessions};
use super::resp::{RespResults, Setup};
use super::*;
use hdrhistogram::Histogram;
use proptest::prelude::*;
use serde_json::{json, Value};
use serverlab_proto::bucket::{DelayMode, DelayUnit};
use std::collections::BTreeMap;

/// The merged run's window, in seconds: every agent's and the single
/// run's throughput is its requests over it.
const WINDOW_S: f64 = 2.0;

/// Agents `0..n`, each with `config`, `cores` and its start offset.
fn agents<'a>(configs: &'a [Value], cores: &[usize], offsets: &[f64], requests: u64) -> Across<'a> {
    Across {
        parts: configs
            .iter()
            .enumerate()
            .map(|(k, config)| Part {
                name: format!("agent {k}"),
                config,
                cores_online: cores[k],
                start_offset_s: offsets[k],
            })
            .collect(),
        requests,
        throughput_rps: requests as f64 / WINDOW_S,
    }
}

/// `n` agents with the same configuration and cores, started together.
fn alike(n: usize, config: &Value, cores: usize) -> (Vec<Value>, Vec<usize>, Vec<f64>) {
    (vec![config.clone(); n], vec![cores; n], vec![0.0; n])
}

fn merge_all<R: Into<ProtocolResults> + Clone>(
    agents_results: &[R],
    at: &Across<'_>,
) -> Result<ProtocolResults, String> {
    let parts: Vec<ProtocolResults> = agents_results.iter().cloned().map(Into::into).collect();
    let refs: Vec<&ProtocolResults> = parts.iter().collect();
    ProtocolResults::merge(&refs, at)
}

/// Outcomes, each given to one of `n` agents: `(n, [(outcome, agent)])`.
fn split<T: std::fmt::Debug + Clone>(
    outcome: impl Strategy<Value = T> + Clone,
    most: usize,
) -> impl Strategy<Value = (usize, Vec<(T, usize)>)> {
    (1usize..=6).prop_flat_map(move |n| {
        (
            Just(n),
            proptest::collection::vec((outcome.clone(), 0..n), 0..most),
        )
    })
}

/// Agent `k`'s outcomes.
fn of_agent<T: Clone>(all: &[(T, usize)], k: usize) -> Vec<T> {
    all.iter()
        .filter(|o| o.1 == k)
        .map(|o| o.0.clone())
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

// ---- board ----

#[derive(Debug, Clone, Copy, PartialEq)]
enum BoardOutcome {
    Hit,
    Miss,
    Post,
}

/// A board run's results from its outcomes, as the board load makes them
/// (`board::shared::Board::results`).
fn board_of(outcomes: &[BoardOutcome]) -> BoardResults {
    let n = |o: BoardOutcome| outcomes.iter().filter(|x| **x == o).count() as u64;
    BoardResults {
        reads: Reads::of(n(BoardOutcome::Hit), n(BoardOutcome::Miss)),
        posts_acknowledged: n(BoardOutcome::Post),
    }
}

fn board_outcome() -> impl Strategy<Value = BoardOutcome> + Clone {
    prop_oneof![
        Just(BoardOutcome::Hit),
        Just(BoardOutcome::Miss),
        Just(BoardOutcome::Post)
    ]
}

proptest! {
    #[test]
    fn a_board_load_split_merges_to_the_single_runs((n, all) in split(board_outcome(), 300)) {
        let outcomes: Vec<BoardOutcome> = all.iter().map(|o| o.0).collect();
        let single = board_of(&outcomes);
        let each: Vec<BoardResults> = (0..n).map(|k| board_of(&of_agent(&all, k))).collect();
        let (configs, cores, offsets) = alike(n, &json!({}), 2);
        let at = agents(&configs, &cores, &offsets, outcomes.len() as u64);
        prop_assert_eq!(merge_all(&each, &at).unwrap(), single.into());
    }
}

// ---- bucket ----

/// A bucket request: its delay in units (0: a read), and whether it
/// opened a connection.
type BucketOutcome = (u64, bool);

fn bucket_load(cfg: &BoundConfig) -> Value {
    let mut load =
        crate::bucket::BucketLoad::new("127.0.0.1:1".parse::<std::net::SocketAddr>().unwrap());
    load.connections = cfg.connections as usize;
    load.delay_unit = cfg.delay_unit;
    load.delay_mode = cfg.delay_mode;
    load.server_concurrency = cfg.server_concurrency;
    load.server_cores = cfg.server_cores;
    serde_json::to_value(&load).unwrap()
}

/// A bucket run's results from its requests, as the bucket load makes
/// them (`BucketResults::of`).
fn bucket_of(cfg: &BoundConfig, requests: &[BucketOutcome], cores: usize) -> BucketResults {
    let counted = Counted {
        requests: requests.len() as u64,
        delay_units: requests.iter().map(|r| r.0).sum(),
        connections_opened: requests.iter().filter(|r| r.1).count() as u64,
        throughput_rps: requests.len() as f64 / WINDOW_S,
    };
    BucketResults::of(cfg, counted, cores)
}

fn bound_config() -> impl Strategy<Value = BoundConfig> {
    (
        1u64..64,
        prop_oneof![
            Just(DelayUnit::Seconds),
            Just(DelayUnit::Millis),
            Just(DelayUnit::Micros)
        ],
        prop_oneof![
            Just(DelayMode::Spin),
            Just(DelayMode::Sleep),
            Just(DelayMode::Work)
        ],
        proptest::option::of(1u64..32),
        proptest::option::of(1u64..16),
    )
        .prop_map(
            |(connections, delay_unit, delay_mode, server_concurrency, server_cores)| BoundConfig {
                connections,
                delay_unit,
                delay_mode,
                server_concurrency,
                server_cores,
            },
        )
}

proptest! {
    #[test]
    fn a_bucket_load_split_merges_to_the_single_runs(
        cfg in bound_config(),
        cores in 1usize..64,
        (n, all) in split((0u64..5, any::<bool>()), 300),
    ) {
        let requests: Vec<BucketOutcome> = all.iter().map(|o| o.0).collect();
        let single = bucket_of(&cfg, &requests, cores);
        let each: Vec<BucketResults> =
            (0..n).map(|k| bucket_of(&cfg, &of_agent(&all, k), cores)).collect();
        let (configs, cores, offsets) = alike(n, &bucket_load(&cfg), cores);
        let at = agents(&configs, &cores, &offsets, requests.len() as u64);
        prop_assert_eq!(merge_all(&each, &at).unwrap(), single.into());
    }
}

/// The run: `--connections 16 --server-concurrency 4` split into
/// 4 agents. Each agent's bound is the whole load's (4 at once), so the
/// merged bound is too: not 16 at once (their sum), nor 4 times the rate.
#[test]
fn a_bucket_load_split_four_ways_keeps_the_single_runs_bound() {
    let cfg = BoundConfig {
        connections: 16,
        delay_unit: DelayUnit::Millis,
        delay_mode: DelayMode::Sleep,
        server_concurrency: Some(4),
        server_cores: None,
    };
    // 867 requests per agent over 2 s, about 1.989 ms each.
    let agent = |delays: u64| Counted {
        requests: 867,
        delay_units: delays,
        connections_opened: 4,
        throughput_rps: 867.0 / WINDOW_S,
    };
    let each: Vec<BucketResults> = [1724, 1725, 1724, 1725]
        .into_iter()
        .map(|d| BucketResults::of(&cfg, agent(d), 2))
        .collect();
    let whole = Counted {
        requests: 4 * 867,
        delay_units: 6898,
        connections_opened: 16,
        throughput_rps: 4.0 * 867.0 / WINDOW_S,
    };
    let single = BucketResults::of(&cfg, whole, 2);
    let (configs, cores, offsets) = alike(4, &bucket_load(&cfg), 2);
    let at = agents(&configs, &cores, &offsets, whole.requests);
    let merged = merge_all(&each, &at).unwrap();
    let ProtocolResults::Bucket(b) = &merged else {
        panic!("{merged:?}")
    };
    assert_eq!(b.bound.concurrency, 4);
    assert_eq!(
        b.bound.limited_by,
        "min(16 client connections, 4 server concurrency)"
    );
    let mean_s = 6898.0 / 3468.0 * 1e-3;
    assert!(
        close(b.bound.rate_rps.unwrap(), 4.0 / mean_s),
        "{:?}",
        b.bound
    );
    // 2011.0 req/s; reached 86.2%, as one run of the whole load says.
    let line = &merged.text_lines()[0];
    assert!(line.ends_with("= 2011.0 req/s; reached 86.2%"), "{line}");
    assert_eq!(
        merged.text_lines(),
        ProtocolResults::from(single.clone()).text_lines()
    );
    assert_eq!(merged, single.into());
}

/// In work mode without `--server-cores`, the bound assumes the server
/// has the cores online where the load ran: merged, the most of any
/// agent's machine.
#[test]
fn a_merged_bound_assumes_the_most_cores_of_any_agent() {
    let cfg = BoundConfig {
        connections: 16,
        delay_unit: DelayUnit::Millis,
        delay_mode: DelayMode::Work,
        server_concurrency: None,
        server_cores: None,
    };
    let each = [
        bucket_of(&cfg, &[(2, true); 10], 2),
        bucket_of(&cfg, &[(2, true); 10], 8),
    ];
    let configs = vec![bucket_load(&cfg); 2];
    let at = agents(&configs, &[2, 8], &[0.0, 0.0], 20);
    let ProtocolResults::Bucket(b) = merge_all(&each, &at).unwrap() else {
        panic!()
    };
    assert_eq!(b.bound.concurrency, 8);
    assert!(
        b.bound
            .notes
            .iter()
            .any(|n| n.contains("assumed all 8 cores")),
        "{:?}",
        b.bound
    );
}

// ---- kv ----

/// A kv session: completed (with its time in ns) or failed, and the
/// statuses of the responses it got.
#[derive(Debug, Clone)]
struct KvSession {
    time_ns: Option<u64>,
    statuses: Vec<u16>,
}

fn kv_session() -> impl Strategy<Value = KvSession> + Clone {
    (
        proptest::option::weighted(0.9, 10_000u64..50_000_000),
        proptest::collection::vec(prop_oneof![Just(200u16), Just(404), Just(500)], 0..6),
    )
        .prop_map(|(time_ns, statuses)| KvSession { time_ns, statuses })
}

fn session_times(sessions: &[KvSession]) -> Histogram<u64> {
    // The kv load's session histogram's bounds.
    let mut h = Histogram::new_with_bounds(1_000, 3_600_000_000_000, 3).unwrap();
    for t in sessions.iter().filter_map(|s| s.time_ns) {
        h.record(t).unwrap();
    }
    h
}

/// A kv run's results from its sessions, as the kv load makes them:
/// `total_time_s` from its start to its last session's end, `planned`
/// its sessions unless timed, and a preload of `preload` keys.
fn kv_of(
    sessions: &[KvSession],
    total_time_s: f64,
    timed: bool,
    preload: Option<Preload>,
) -> KvResults {
    let mut statuses = BTreeMap::new();
    for s in sessions.iter().flat_map(|s| &s.statuses) {
        *statuses.entry(*s).or_insert(0) += 1;
    }
    let requests = sessions.iter().map(|s| s.statuses.len() as u64).sum();
    let times = session_times(sessions);
    KvResults::of(
        total_time_s,
        requests,
        statuses,
        Sessions {
            planned: if timed { 0 } else { sessions.len() as u64 },
            completed: times.len(),
            failed: sessions.iter().filter(|s| s.time_ns.is_none()).count() as u64,
            time_ms: SessionTimes::of(&times),
        },
        preload,
    )
}

proptest! {
    #[test]
    fn a_kv_load_split_merges_to_the_single_runs(
        (n, all) in split(kv_session(), 200),
        timed in any::<bool>(),
        preloaded in any::<bool>(),
        // Each agent's start after the first's, its run's length, and its
        // share of the preload and how long it took.
        clocks in proptest::collection::vec((0.0f64..0.01, 0.5f64..3.0, 0u64..1000, 0.0f64..1.0), 6),
    ) {
        let sessions: Vec<KvSession> = all.iter().map(|o| o.0.clone()).collect();
        let preload = |k: usize| preloaded.then(|| Preload { keys: clocks[k].2, time_s: clocks[k].3 });
        let each: Vec<KvResults> = (0..n)
            .map(|k| kv_of(&of_agent(&all, k), clocks[k].1, timed, preload(k)))
            .collect();
        // The single run: from the first agent's start to the last one's
        // end; its preload every agent's keys, written at once.
        let offsets: Vec<f64> = (0..n).map(|k| if k == 0 { 0.0 } else { clocks[k].0 }).collect();
        let total = (0..n).map(|k| offsets[k] + clocks[k].1).fold(0.0, f64::max);
        let whole_preload = preloaded.then(|| Preload {
            keys: (0..n).map(|k| clocks[k].2).sum(),
            time_s: (0..n).map(|k| clocks[k].3).fold(0.0, f64::max),
        });
        let single = kv_of(&sessions, total, timed, whole_preload);
        let requests = sessions.iter().map(|s| s.statuses.len() as u64).sum();
        let configs = vec![json!({}); n];
        let at = agents(&configs, &vec![2; n], &offsets, requests);
        let ProtocolResults::Kv(mut merged) = merge_all(&each, &at).unwrap() else {
            panic!()
        };
        let (got, want) = (&merged.sessions.time_ms, &single.sessions.time_ms);
        prop_assert!(close(got.mean, want.mean), "mean {} vs {}", got.mean, want.mean);
        // The median is not exact: the single run's and the merged one
        // both lie between the least and the greatest agent's median.
        let medians: Vec<f64> = each
            .iter()
            .filter(|r| r.sessions.completed > 0)
            .map(|r| r.sessions.time_ms.median)
            .collect();
        let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !medians.is_empty() {
            for m in [got.median, want.median] {
                prop_assert!(lo - 1e-9 <= m && m <= hi + 1e-9, "median {} not in [{}, {}]", m, lo, hi);
            }
        }
        merged.sessions.time_ms.mean = want.mean;
        merged.sessions.time_ms.median = want.median;
        prop_assert_eq!(merged, single);
    }
}

// ---- resp ----

#[derive(Debug, Clone, Copy, PartialEq)]
enum RespReply {
    Error,
    Nil,
    Value,
    Board(BoardOutcome),
}

/// A RESP run's results from its replies, as the RESP load makes them:
/// `setup` when it wrote keys (`(keys, seconds)`), the board's figures
/// in the board workload.
fn resp_of(replies: &[RespReply], board: bool, setup: (u64, f64)) -> RespResults {
    let n = |r: RespReply| replies.iter().filter(|x| **x == r).count() as u64;
    let outcomes: Vec<BoardOutcome> = replies
        .iter()
        .filter_map(|r| match r {
            RespReply::Board(o) => Some(*o),
            _ => None,
        })
        .collect();
    RespResults {
        workload: if board { "board" } else { "keys" }.into(),
        error_replies: n(RespReply::Error),
        error_prefixes: Default::default(),
        null_replies: n(RespReply::Nil),
        setup: (setup.0 > 0).then_some(Setup {
            keys_written: setup.0,
            time_s: setup.1,
        }),
        board: board.then(|| board_of(&outcomes)),
        pubsub: None,
    }
}

proptest! {
    #[test]
    fn a_resp_load_split_merges_to_the_single_runs(
        board in any::<bool>(),
        (n, all) in split(
            prop_oneof![
                Just(RespReply::Error),
                Just(RespReply::Nil),
                Just(RespReply::Value),
                board_outcome().prop_map(RespReply::Board),
            ],
            300,
        ),
        // Each agent's keys written before the run (often none), and how
        // long that took.
        setups in proptest::collection::vec((prop_oneof![Just(0u64), 1u64..100], 0.0f64..1.0), 6),
    ) {
        let replies: Vec<RespReply> = all.iter().map(|o| o.0).collect();
        let each: Vec<RespResults> =
            (0..n).map(|k| resp_of(&of_agent(&all, k), board, setups[k])).collect();
        // The single run's setup: every agent's keys, written at once.
        let whole = (
            setups[..n].iter().map(|s| s.0).sum(),
            setups[..n].iter().filter(|s| s.0 > 0).map(|s| s.1).fold(0.0, f64::max),
        );
        let single = resp_of(&replies, board, whole);
        let (configs, cores, offsets) = alike(n, &json!({}), 2);
        let at = agents(&configs, &cores, &offsets, replies.len() as u64);
        prop_assert_eq!(merge_all(&each, &at).unwrap(), single.into());
    }
}

// ---- what cannot be one run's ----

#[test]
fn counts_that_pass_the_largest_count_are_refused_not_wrapped() {
    let board = |hits| BoardResults {
        reads: Reads::of(hits, 0),
        posts_acknowledged: 0,
    };
    let (configs, cores, offsets) = alike(2, &json!({}), 2);
    let at = agents(&configs, &cores, &offsets, 0);
    let e = merge_all(&[board(u64::MAX), board(u64::MAX)], &at).unwrap_err();
    assert!(e.starts_with("reads.hits: the agents' counts"), "{e}");
    assert!(
        e.contains("18446744073709551615, 18446744073709551615"),
        "{e}"
    );
    assert!(merge_all(&[board(u64::MAX), board(0)], &at).is_ok());

    let kv = |n| {
        let mut r = kv_of(&[], 1.0, true, None);
        r.statuses.insert(200, n);
        r
    };
    let e = merge_all(&[kv(u64::MAX), kv(1)], &at).unwrap_err();
    assert!(e.starts_with("statuses.200: "), "{e}");
}

#[test]
fn a_server_property_that_differs_between_agents_is_refused() {
    let cfg = BoundConfig {
        connections: 16,
        delay_unit: DelayUnit::Millis,
        delay_mode: DelayMode::Sleep,
        server_concurrency: Some(4),
        server_cores: None,
    };
    let one = bucket_of(&cfg, &[(2, false); 10], 2);
    // The results say another unit than their configs.
    let mut other = one.clone();
    other.delay_unit = DelayUnit::Micros;
    let (configs, cores, offsets) = alike(2, &bucket_load(&cfg), 2);
    let at = agents(&configs, &cores, &offsets, 20);
    let e = merge_all(&[one.clone(), other], &at).unwrap_err();
    assert_eq!(
        e,
        "delay_unit differs between the agents: ms in agent 0 but us in agent 1"
    );
    // The configs say another server concurrency.
    let configs = vec![
        bucket_load(&cfg),
        bucket_load(&BoundConfig {
            server_concurrency: Some(8),
            ..cfg.clone()
        }),
    ];
    let at = agents(&configs, &cores, &offsets, 20);
    let e = merge_all(&[one.clone(), one], &at).unwrap_err();
    assert_eq!(
        e,
        "config.server_concurrency differs between the agents: 4 in agent 0 but 8 in agent 1"
    );
}

#[test]
fn parts_that_settings_decide_are_in_every_agent_or_none() {
    let (configs, cores, offsets) = alike(2, &json!({}), 2);
    let at = agents(&configs, &cores, &offsets, 0);
    let preload = Some(Preload {
        keys: 5,
        time_s: 0.1,
    });
    let e = merge_all(
        &[kv_of(&[], 1.0, true, preload), kv_of(&[], 1.0, true, None)],
        &at,
    )
    .unwrap_err();
    assert_eq!(e, "preload: agent 0 has one but agent 1 has none");
    let e = merge_all(
        &[resp_of(&[], true, (0, 0.0)), resp_of(&[], false, (0, 0.0))],
        &at,
    )
    .unwrap_err();
    assert_eq!(
        e,
        "workload differs between the agents: board in agent 0 but keys in agent 1"
    );
}

#[test]
fn results_of_different_protocols_are_refused() {
    let (configs, cores, offsets) = alike(2, &json!({}), 2);
    let at = agents(&configs, &cores, &offsets, 0);
    let parts = [
        ProtocolResults::from(board_of(&[])),
        ProtocolResults::from(kv_of(&[], 1.0, true, None)),
    ];
    let e = ProtocolResults::merge(&[&parts[0], &parts[1]], &at).unwrap_err();
    assert_eq!(
        e,
        "the agents ran different protocols: board in agent 0 but kv in agent 1"
    );
}

/// The registry's serde: `{"<name>": {…}}`, by the protocol's name.
#[test]
fn results_are_written_and_read_under_their_protocols_name() {
    let r = ProtocolResults::from(board_of(&[BoardOutcome::Hit]));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        [serverlab_proto::board::NAME]
    );
    assert_eq!(serde_json::from_value::<ProtocolResults>(v).unwrap(), r);
    let e = serde_json::from_value::<ProtocolResults>(json!({"nope": {}})).unwrap_err();
    assert!(e.to_string().contains("no protocol's results"), "{e}");
    let e = ProtocolResults::named("nope", json!({})).unwrap_err();
    assert!(e.to_string().contains("unknown protocol \"nope\""), "{e}");
}
