#![no_main]
//! Whole kv sessions: random bytes, split at random points, through a
//! server Session over the real kv service and store, checked against the
//! model; now and then the header timeout fires. Input: [limits, store,
//! split seed, stream…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_fuzz::model::{self, kv::Kv};
use serverlab_fuzz::session;
use serverlab_service::kv::{KvConfig, KvService};
use serverlab_store::StoreKind;
use serverlab_util::Named;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let limits = model::kv::limits(input.byte());
    let store = serverlab_store::kv::new(input.pick(StoreKind::ALL));
    let mut plan = Plan::new(input.byte());
    let stream = input.rest();
    let cfg = KvConfig {
        limits,
        header_timeout: Duration::from_secs(10),
    };
    let t = session::drive(KvService::new(store, cfg), stream, &mut plan);
    model::check(&mut Kv::new(limits), &t, stream);
    model::kv::check_interim(&t, &limits);
});
