#![no_main]
//! Whole RESP sessions: random bytes, split at random points, through a
//! server Session over the real RESP service and store, checked against
//! the model (strings, integers, lists, WRONGTYPE, protocol errors and
//! limits). Input: [max-inline, max-bulk, max-args, max-query, store,
//! split seed, stream…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_fuzz::model::{self, resp::Resp};
use serverlab_fuzz::session;
use serverlab_proto::resp::Limits;
use serverlab_service::resp::RespService;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let limits = Limits {
        max_inline: input.pick(&[0, 1, 4, 16, 64, 64 << 10]),
        max_bulk: input.pick(&[0, 1, 4, 64, 1 << 20]),
        max_args: input.pick(&[0, 1, 2, 3, 8, 1 << 20]),
        max_query: input.pick(&[1, 8, 64, 256, 1 << 30]),
    };
    let kind = input.pick(&serverlab_store::resp::KINDS);
    let mut plan = Plan::new(input.byte());
    let stream = input.rest();
    let t = session::drive(
        RespService::new(kind, limits, "fuzz".into()).expect("a RESP store kind"),
        stream,
        &mut plan,
    );
    model::check(&mut Resp::new(limits), &t, stream);
});
