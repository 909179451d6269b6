//! (being written)

use super::Ctx;
use crate::resp::Args;
use serverlab_proto::resp::Name;

/// DUMP and RESTORE.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Ctx, out: &mut Vec<u8>) {
    let _ = a;
    cx.error(
        out,
        &format!("ERR '{}' is not served yet", name.facts().name),
    );
}
