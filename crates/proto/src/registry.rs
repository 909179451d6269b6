//! The one list of protocols that serverlab serves, loads and checks.
//!
//! Each protocol is a module of this crate with its `NAME` (as every
//! subcommand spells it), its `DEFAULT_PORT` and its `Limits` (the bounds
//! a server enforces, which a checker must know). Registering one is one
//! line in [`for_each_protocol!`](crate::for_each_protocol): `serve`,
//! `load` and `check` make their subcommands from it, the checker's and
//! the load report's tests walk it, and the CLI's tests check that every
//! subcommand and docs page names it. Echo is not in it: it is the board's
//! framing served as a baseline (`serve echo`, loaded by `load board`);
//! [`Served`] names everything a server serves: the protocols, echo, and
//! another program's server (`serve external`).

use serverlab_util::Named;

/// The list of protocols: `$callback! { [$($extra)*] snake_name:
/// Variant, … }`, where `snake_name` is the protocol's module in every
/// crate that has one per protocol (`serverlab_proto::board`,
/// `serverlab_check::board`, the CLI's `serve::board`, …) and `Variant`
/// its name in enums. Extra tokens after the callback's name are passed
/// through in the brackets.
#[macro_export]
macro_rules! for_each_protocol {
    ($callback:ident $(, $($extra:tt)*)?) => {
        $callback! {
            [$($($extra)*)?]
            board: Board,
            bucket: Bucket,
            kv: Kv,
            resp: Resp,
        }
    };
}

macro_rules! protocol_kind {
    ([] $($snake:ident: $variant:ident),* $(,)?) => {
        /// A protocol, by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ProtocolKind {
            $($variant),*
        }

        impl Named for ProtocolKind {
            const WHAT: &'static str = "protocol";
            const ALL: &'static [ProtocolKind] = &[$(ProtocolKind::$variant),*];

            fn name(self) -> &'static str {
                match self {
                    $(ProtocolKind::$variant => $crate::$snake::NAME),*
                }
            }

            fn describe(self) -> &'static str {
                match self {
                    $(ProtocolKind::$variant => $crate::$snake::DESCRIBE),*
                }
            }
        }

        impl ProtocolKind {
            /// Where its servers listen unless told otherwise.
            pub fn default_port(self) -> u16 {
                match self {
                    $(ProtocolKind::$variant => $crate::$snake::DEFAULT_PORT),*
                }
            }
        }
    };
}

for_each_protocol!(protocol_kind);

serverlab_util::named_enum_impls!(ProtocolKind);

/// What a server serves (`serverlab serve <name>`, a sweep's
/// `[server] protocol`): one of the protocols, the board's framing
/// answered reversed as a baseline (`echo`), or another program started as
/// the server (`external`: no strategy of serverlab's, no threads to size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Served {
    Protocol(ProtocolKind),
    Echo,
    External,
}

impl Served {
    pub const ECHO: &'static str = "echo";
    pub const EXTERNAL: &'static str = "external";

    /// What `serve` calls it.
    pub fn name(self) -> &'static str {
        match self {
            Served::Protocol(p) => p.name(),
            Served::Echo => Served::ECHO,
            Served::External => Served::EXTERNAL,
        }
    }

    /// The one named `name`, if any.
    pub fn parse(name: &str) -> Option<Served> {
        match name {
            Served::ECHO => Some(Served::Echo),
            Served::EXTERNAL => Some(Served::External),
            _ => name.parse().ok().map(Served::Protocol),
        }
    }

    /// Whether serverlab's own server serves it, under a `--strategy`
    /// (whose threads a sweep may size).
    pub fn own_server(self) -> bool {
        !matches!(self, Served::External)
    }

    /// The flags of `serve` that only serverlab's own servers act on:
    /// `serve external` refuses them (rather than take and ignore them),
    /// and a sweep leaves them out of an external server's command line.
    /// In the order `serve external` looks for them.
    pub const OWN_SERVER_FLAGS: [OwnServerFlag; 6] = [
        OwnServerFlag {
            flag: "--uring-sqpoll",
            takes_value: false,
            why: "the program it runs makes its own system calls",
        },
        OwnServerFlag {
            flag: "--strategy",
            takes_value: true,
            why: "the program it runs serves with its own concurrency",
        },
        OwnServerFlag {
            flag: "--threads",
            takes_value: true,
            why: "the program it runs starts its own threads (give them in --command)",
        },
        OwnServerFlag {
            flag: "--time-all",
            takes_value: false,
            why: "serverlab times none of the requests the program it runs answers",
        },
        OwnServerFlag {
            flag: "--max-connections",
            takes_value: true,
            why: "the program it runs admits its own connections (give its limit in --command)",
        },
        OwnServerFlag {
            flag: "--write-timeout",
            takes_value: true,
            why: "the program it runs writes its own replies",
        },
    ];
}

/// A flag of `serve` only serverlab's own servers act on
/// ([`Served::OWN_SERVER_FLAGS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnServerFlag {
    /// As typed: `--strategy`.
    pub flag: &'static str,
    /// Whether it takes a value (`--strategy async`), or is a switch.
    pub takes_value: bool,
    /// Why `serve external` refuses it.
    pub why: &'static str,
}

impl OwnServerFlag {
    /// Its argument's id among `serve`'s flags: `strategy`,
    /// `time_all`.
    pub fn id(&self) -> String {
        self.flag.trim_start_matches("--").replace('-', "_")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are unique, round-trip, and are the modules' names.
    #[test]
    fn every_protocol_has_a_unique_name_its_module_s() {
        macro_rules! check {
            ([] $($snake:ident: $variant:ident),* $(,)?) => {
                $(assert_eq!(ProtocolKind::$variant.name(), stringify!($snake));)*
            };
        }
        for_each_protocol!(check);
        let mut names: Vec<&str> = ProtocolKind::ALL.iter().map(|p| p.name()).collect();
        for &p in ProtocolKind::ALL {
            assert_eq!(p.name().parse::<ProtocolKind>(), Ok(p));
            assert!(!p.describe().is_empty(), "{p}");
            assert_ne!(p.default_port(), 0, "{p}");
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ProtocolKind::ALL.len());
    }

    /// Every protocol, echo and external are served, by their names; only
    /// external is another program's server.
    #[test]
    fn what_is_served_round_trips_by_name() {
        let all = ProtocolKind::ALL
            .iter()
            .map(|&p| Served::Protocol(p))
            .chain([Served::Echo, Served::External]);
        for s in all {
            assert_eq!(Served::parse(s.name()), Some(s));
            assert_eq!(s.own_server(), s != Served::External, "{}", s.name());
        }
        assert_eq!(Served::parse("redis"), None);
    }
}
