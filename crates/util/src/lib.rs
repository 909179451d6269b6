//! Small pieces every layer shares, written once: the grammar of a server
//! address, the duration grammar of every flag and experiment file, CPU
//! sets and pinning, the named-enum pattern behind every `--strategy`-like
//! flag, who holds a port, counts with their nouns, weighted operation mixes, the compacting input
//! buffer every reader of a byte stream needs, files read bounded, the ledger file of
//! acknowledged writes, and the shape of a server's
//! final statistics (the server writes it, the report reads it).
#![forbid(unsafe_code)]
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod addr;
pub mod buf;
pub mod child;
pub mod cpus;
pub mod duration;
pub mod file;
pub mod ledger;
pub mod mix;
pub mod named;
pub mod plural;
pub mod port_holder;
pub mod proc_stat;
pub mod server_stats;
pub mod strategies;

pub use buf::InputBuf;
pub use cpus::CpuSet;
pub use mix::Mix;
pub use named::Named;
pub use plural::plural;
