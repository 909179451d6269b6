//! (being written)

use super::Ctx;
use crate::resp::Args;

/// SORT.
pub(crate) fn run(a: &Args, cx: &mut Ctx, out: &mut Vec<u8>) {
    let _ = a;
    cx.error(out, "ERR 'sort' is not served yet");
}
