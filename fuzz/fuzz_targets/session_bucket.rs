#![no_main]
//! Whole bucket sessions: random bytes, split at random points, through a
//! server Session over the real bucket service and store, checked against
//! the model. Delays are recorded, not performed. Input: [max-line,
//! max-delay, buckets, store, close-after-reply, split seed, stream…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_fuzz::model::{self, bucket::Bucket};
use serverlab_fuzz::session;
use serverlab_proto::bucket::DelayUnit;
use serverlab_service::bucket::{BucketConfig, BucketService, Timing};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let cfg = BucketConfig {
        max_line: input.pick(&[1, 3, 8, 64]),
        max_delay: input.pick(&[0, 1, 60, 1000]),
        timing: Timing::sleep(DelayUnit::Micros),
        close_after_reply: input.byte() % 4 == 1,
    };
    let buckets = input.pick(&[1, 2, 5]);
    let store = serverlab_store::bucket::new(input.pick(&serverlab_store::bucket::KINDS), buckets)
        .expect("a bucket store kind");
    let mut plan = Plan::new(input.byte());
    let stream = input.rest();
    let t = session::drive(BucketService::new(store, cfg), stream, &mut plan);
    let mut bucket = Bucket {
        max_line: cfg.max_line,
        max_delay: cfg.max_delay,
        close_after_reply: cfg.close_after_reply,
        buckets: vec![0; buckets],
    };
    model::check(&mut bucket, &t, stream);
});
