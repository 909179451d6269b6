//! Small pieces every layer shares, written once: the duration grammar of
//! every flag and experiment file, CPU sets and pinning, the named-enum
//! pattern behind every `--strategy`-like flag, weighted operation mixes,
//! and the compacting input buffer every reader of a byte stream needs.

pub mod buf;
pub mod cpus;
pub mod duration;
pub mod mix;
pub mod named;

pub use buf::InputBuf;
pub use cpus::CpuSet;
pub use mix::Mix;
pub use named::Named;
