//! (being written)

use super::Ctx;
use crate::resp::keyspace::{Kept, Keyspace};
use crate::resp::Args;
use serverlab_proto::resp::Name;

/// Serves `name`.
pub(crate) fn run(name: Name, a: &Args, cx: &mut Ctx, out: &mut Vec<u8>) {
    let _ = a;
    cx.error(out, &format!("ERR '{}' is not served yet", name.facts().name));
}

/// What a command changes outside its own database (MOVE's key in the
/// other database, COPY … DB's destination), as it was.
pub(crate) fn kept_elsewhere(name: Name, a: &Args, ks: &Keyspace, db: usize) -> Vec<Kept> {
    let _ = (name, a, ks, db);
    Vec::new()
}
