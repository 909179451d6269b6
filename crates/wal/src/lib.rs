//! Durability for serverlab's stores: a write-ahead log of opaque records,
//! each framed with its length and a CRC-32C bound to its directory, file
//! and offset; a manifest naming the newest segment; replay at open that
//! cuts the newest segment's torn tail and refuses what it cannot vouch
//! for (corruption, a damaged older segment or snapshot, a missing file,
//! an older format); `os`, `everysec` and
//! `always` durability, the last with group commit; and compaction into a
//! snapshot that a crash at any step recovers from. docs/durability.md
//! tells the same story for users.
//!
//! # What a server calls
//!
//! ```no_run
//! use std::sync::Arc;
//! use serverlab_wal::{Durability, Options, Wal};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut state = std::collections::BTreeMap::<Vec<u8>, Vec<u8>>::new();
//! // At start: replay rebuilds the state, record by record, in order.
//! let wal = Arc::new(Wal::open("data", Options::new(Durability::Always), |rec| {
//!     state.insert(rec.to_vec(), Vec::new()); // decode and apply
//!     Ok(())
//! })?);
//! println!("{}", wal.recovery()); // "replayed 12 records, dropped 0 bytes"
//!
//! // Per write: apply to the state and append, under the lock that orders
//! // writes to the same key; then wait for the ticket before replying.
//! let ticket = wal.append(b"PUT k v")?;
//! wal.wait(ticket)?; // thread per connection; or `wal.commit(ticket).await`,
//!                    // or `wal.register(ticket, &waker)` from an event loop
//!
//! // Now and then: compaction, when the caller's live size says it is due.
//! wal.set_live_bytes(4096);
//! if wal.compaction_due() {
//!     if let Some(c) = wal.begin_compaction()? { // under the writers' lock
//!         let copy: Vec<Vec<u8>> = state.keys().cloned().collect();
//!         c.write_snapshot(copy)?;                // on any thread
//!     }
//! }
//! let stats = wal.stats(); // records, fsyncs, records per fsync, commit latency
//! # Ok(()) }
//! ```
//!
//! `Durability::None` keeps no log: a server with it opens no `Wal`
//! ([`Wal::open`] refuses it with [`Error::NoLog`]).
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]
#![forbid(unsafe_code)]

mod commit;
mod compact;
mod dir;
mod error;
pub mod format;
mod log;
mod mode;
mod replay;
mod sealed;
mod stats;
pub mod vfs;

pub use commit::{Commit, Failure, FailureHook, Ticket};
pub use compact::{Compacted, Compaction, SnapshotWriter};
pub use dir::{LOCK_FILE, MANIFEST_FILE};
pub use error::Error;
pub use log::{Committer, Options, Wal};
pub use mode::{Durability, Recover};
pub use replay::{ApplyError, Cut, Recovery, Why};
pub use stats::Stats;
