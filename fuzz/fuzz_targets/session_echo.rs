#![no_main]
//! Whole echo sessions: random bytes, split at random points, through a
//! server Session over the real echo service, checked against the model.
//! Input: [max-request choice, split seed, stream…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_fuzz::model::{self, echo::Echo};
use serverlab_fuzz::session;
use serverlab_service::echo::EchoService;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let max_request = input.pick(&[1, 2, 7, 64, 65535]);
    let mut plan = Plan::new(input.byte());
    let stream = input.rest();
    let t = session::drive(EchoService::new(max_request), stream, &mut plan);
    model::check(&mut Echo { max_request }, &t, stream);
});
