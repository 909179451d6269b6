//! The seams the service's simulation (crates/service/tests/sim) drives:
//! a clock it sets, and planted bugs (mutants) it switches on one at a
//! time, to prove that the simulation catches each (docs/reliability.md,
//! "The service under simulation").
//!
//! Both are per thread: the simulation runs a whole server in its one
//! thread, so runs in parallel test threads do not see each other's
//! clock or mutant. They exist only with the `sim` feature, which only
//! the service's own tests turn on; without it (the shipped binary),
//! [`planted`] is the constant `false` and the clock is the system's.

/// A bug the simulation plants, one at a time, to see that it catches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// A reply is sent before the record of the write it shows commits:
    /// the service says it waits for nothing.
    AckBeforeFsync,
    /// A read's reply does not wait for the commit of the writes it saw.
    ReadSkipsWait,
    /// A write of several keys marks only its first as written, so a
    /// read of another does not wait for it.
    ForgetOneKey,
    /// SADD's undo, after a failed `fsync`, does nothing.
    SkipSetUndo,
    /// EXPIRE and its kin log the deadline relative to now, not absolute.
    RelativeDeadline,
    /// A blocking pop served by a writer is applied, not logged.
    UnloggedServedPop,
    /// After a failed `fsync`, the uncommitted writes are not taken back.
    NoRollback,
    /// After a failed `fsync`, the uncommitted writes are taken back
    /// oldest first, not newest first.
    RollbackOldestFirst,
    /// A command run alone logs no `SELECT` where its database changes:
    /// it replays into another database.
    LostSelect,
}

impl Mutant {
    /// Every mutant, in the order docs/reliability.md lists them.
    pub const ALL: [Mutant; 9] = [
        Mutant::AckBeforeFsync,
        Mutant::ReadSkipsWait,
        Mutant::ForgetOneKey,
        Mutant::SkipSetUndo,
        Mutant::RelativeDeadline,
        Mutant::UnloggedServedPop,
        Mutant::NoRollback,
        Mutant::RollbackOldestFirst,
        Mutant::LostSelect,
    ];

    /// Its name, as `MUTANT=` names it.
    pub fn name(self) -> &'static str {
        match self {
            Mutant::AckBeforeFsync => "ack-before-fsync",
            Mutant::ReadSkipsWait => "read-skips-wait",
            Mutant::ForgetOneKey => "forget-one-key",
            Mutant::SkipSetUndo => "skip-set-undo",
            Mutant::RelativeDeadline => "relative-deadline",
            Mutant::UnloggedServedPop => "unlogged-served-pop",
            Mutant::NoRollback => "no-rollback",
            Mutant::RollbackOldestFirst => "rollback-oldest-first",
            Mutant::LostSelect => "lost-select",
        }
    }
}

#[cfg(feature = "sim")]
mod switch {
    use super::Mutant;
    use std::cell::Cell;

    thread_local! {
        static MUTANT: Cell<Option<Mutant>> = const { Cell::new(None) };
        static CLOCK: Cell<Option<i64>> = const { Cell::new(None) };
    }

    /// Plants `m` in this thread (`None`: no bug).
    pub fn plant(m: Option<Mutant>) {
        MUTANT.with(|c| c.set(m));
    }

    /// Sets this thread's clock to `ms` since the Unix epoch (`None`: the
    /// system's).
    pub fn set_clock(ms: Option<i64>) {
        CLOCK.with(|c| c.set(ms));
    }

    /// Whether `m` is planted in this thread.
    pub(crate) fn planted(m: Mutant) -> bool {
        MUTANT.with(Cell::get) == Some(m)
    }

    /// This thread's clock, when the simulation set it.
    pub(crate) fn clock() -> Option<i64> {
        CLOCK.with(Cell::get)
    }
}

#[cfg(not(feature = "sim"))]
mod switch {
    use super::Mutant;

    /// No bug is ever planted without the `sim` feature.
    #[inline(always)]
    pub(crate) fn planted(_: Mutant) -> bool {
        false
    }

    /// The system's clock, always.
    #[inline(always)]
    pub(crate) fn clock() -> Option<i64> {
        None
    }
}

pub(crate) use switch::{clock, planted};
#[cfg(feature = "sim")]
pub use switch::{plant, set_clock};
