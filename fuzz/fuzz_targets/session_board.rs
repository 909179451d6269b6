#![no_main]
//! Whole board sessions: random bytes, split at random points, through a
//! server Session over the real board service and store, checked against
//! the model. Input: [max-request, store, exit policy, split seed, stream…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::{Input, Plan};
use serverlab_fuzz::model::{self, board::Board};
use serverlab_fuzz::session;
use serverlab_service::board::{BoardService, ExitPolicy};
use serverlab_store::StoreKind;
use serverlab_util::Named;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let max_request = input.pick(&[1, 4, 16, 64, 65535]);
    let store = serverlab_store::board::new(input.pick(StoreKind::ALL));
    let policy = input.pick(ExitPolicy::ALL);
    let mut plan = Plan::new(input.byte());
    let stream = input.rest();
    let svc = BoardService::new(store, max_request, policy);
    let t = session::drive(svc, stream, &mut plan);
    // The session's peer is loopback: EXIT stops the server unless `never`.
    let mut board = Board::new(max_request, policy != ExitPolicy::Never);
    model::check(&mut board, &t, stream);
});
