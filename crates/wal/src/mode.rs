//! The two choices a user makes: how durable a write is before its reply
//! (`--durability`), and what replay does with corruption before the tail
//! (`--recover`).

use serverlab_util::Named;

/// When a write counts as done (`--durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Durability {
    /// No log: the state lives in memory only.
    #[default]
    None,
    /// Each record is written (`write(2)`) before the reply and never
    /// `fsync`ed: it survives the process dying, not the machine.
    Os,
    /// Written before the reply, `fsync`ed once a second by a background
    /// thread: a power loss loses about the last second.
    EverySec,
    /// A write is acknowledged only once its record is on disk; records
    /// appended while an `fsync` runs share the next one (group commit).
    Always,
}

impl Named for Durability {
    const WHAT: &'static str = "durability";
    const ALL: &'static [Self] = &[
        Durability::None,
        Durability::Os,
        Durability::EverySec,
        Durability::Always,
    ];

    fn name(self) -> &'static str {
        match self {
            Durability::None => "none",
            Durability::Os => "os",
            Durability::EverySec => "everysec",
            Durability::Always => "always",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Durability::None => "no log; a restart starts empty",
            Durability::Os => {
                "each write reaches the kernel before its reply; survives a process crash"
            }
            Durability::EverySec => {
                "as os, and fsync once a second; a power loss loses about a second"
            }
            Durability::Always => "each write is on disk before its reply (group commit)",
        }
    }
}

serverlab_util::named_enum_impls!(Durability);

/// What replay does with a bad record that has good records after it
/// (`--recover`). A torn tail is always cut, in either mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Recover {
    /// Refuse to open, naming the file and byte offset.
    #[default]
    Strict,
    /// Cut the file at the bad record (dropping the good records after it
    /// in that file) and go on; the cut is reported.
    Truncate,
}

impl Named for Recover {
    const WHAT: &'static str = "recovery mode";
    const ALL: &'static [Self] = &[Recover::Strict, Recover::Truncate];

    fn name(self) -> &'static str {
        match self {
            Recover::Strict => "strict",
            Recover::Truncate => "truncate",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Recover::Strict => "refuse a log corrupt before its tail, naming the offset",
            Recover::Truncate => "cut a log at its first bad record and start",
        }
    }
}

serverlab_util::named_enum_impls!(Recover);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Durability::ALL {
            assert_eq!(d.to_string().parse::<Durability>(), Ok(*d));
        }
        for r in Recover::ALL {
            assert_eq!(r.to_string().parse::<Recover>(), Ok(*r));
        }
        assert!("sometimes"
            .parse::<Durability>()
            .unwrap_err()
            .contains("none, os, everysec, always"));
    }
}
