//! Every protocol's own results, typed: what each writes under its name
//! in `results` (`"kv": {…}`), the lines it adds to the text output, and
//! how each of its fields merges across the agents of a split load
//! ([`Merge`]). This module stands below the rest of the load crate: it
//! names no protocol module, no harness and no report, so the protocols,
//! the harness, the report and the merge all depend on it and it on none
//! of them.
//!
//! Adding a protocol adds its results type here and one line to
//! [`protocols!`] (docs/design.md).

mod across;
pub mod board;
pub mod bucket;
pub mod http;
pub mod kv;
pub mod pubsub;
pub mod resp;

pub use across::{Across, Merge, Part};

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// What a protocol's results type adds to the text output.
pub trait TextLines {
    /// Lines after the latency table, unindented.
    fn text_lines(&self) -> Vec<String>;

    /// Replies that said the request failed (a RESP error reply, a 5xx,
    /// a status not expected), for `--threshold 'errors<…'`. Every
    /// protocol says, so none is judged without its errors.
    fn error_replies(&self) -> u64;
}

/// The registry: each protocol's variant, its results type (which must
/// say how it prints, [`TextLines`], and how it merges, [`Merge`]) and its
/// name, the tag its results are written under.
macro_rules! protocols {
    ($($variant:ident($results:ty) = $name:path,)*) => {
        /// A protocol's own results, tagged with its name.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ProtocolResults {
            $($variant($results),)*
        }

        impl ProtocolResults {
            /// Every protocol's name, in the list's order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The protocol's name: the results' tag.
            pub fn name(&self) -> &'static str {
                match self {
                    $(ProtocolResults::$variant(_) => $name,)*
                }
            }

            pub fn text_lines(&self) -> Vec<String> {
                match self {
                    $(ProtocolResults::$variant(r) => r.text_lines(),)*
                }
            }

            /// Replies that said the request failed ([`TextLines::error_replies`]).
            pub fn error_replies(&self) -> u64 {
                match self {
                    $(ProtocolResults::$variant(r) => r.error_replies(),)*
                }
            }

            /// `protocol`'s results from their JSON (`part`, without the tag).
            pub fn named(protocol: &str, part: serde_json::Value) -> serde_json::Result<Self> {
                $(if protocol == $name {
                    return serde_json::from_value(part).map(ProtocolResults::$variant);
                })*
                Err(de::Error::custom(unknown(protocol)))
            }

            /// The agents' results (`parts`, in agent order) as one run's:
            /// each field as its type says ([`Merge`]). Results of
            /// different protocols are refused.
            pub fn merge(parts: &[&ProtocolResults], at: &Across<'_>) -> Result<Self, String> {
                let first = parts.first().ok_or("no agent's results to merge")?;
                match first {
                    $(ProtocolResults::$variant(_) => {
                        let typed = parts
                            .iter()
                            .enumerate()
                            .map(|(k, p)| match p {
                                ProtocolResults::$variant(r) => Ok(r),
                                #[allow(unreachable_patterns)]
                                other => Err(at.other_protocol(k, $name, other.name())),
                            })
                            .collect::<Result<Vec<_>, String>>()?;
                        <$results as Merge>::merge(&typed, at).map(ProtocolResults::$variant)
                    })*
                }
            }

            /// The results under their name, read from a map of one entry.
            fn from_entry<'de, A: MapAccess<'de>>(
                key: &str,
                map: &mut A,
            ) -> Result<Option<Self>, A::Error> {
                $(if key == $name {
                    return map.next_value().map(|r| Some(ProtocolResults::$variant(r)));
                })*
                Ok(None)
            }
        }

        impl Serialize for ProtocolResults {
            /// As `{"<name>": {…}}`, which a flattened field writes as
            /// `"<name>": {…}` among its neighbours.
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(Some(1))?;
                match self {
                    $(ProtocolResults::$variant(r) => map.serialize_entry($name, r)?,)*
                }
                map.end()
            }
        }

        $(impl From<$results> for ProtocolResults {
            fn from(r: $results) -> Self {
                ProtocolResults::$variant(r)
            }
        })*
    };
}

protocols! {
    Board(board::BoardResults) = serverlab_proto::board::NAME,
    Bucket(bucket::BucketResults) = serverlab_proto::bucket::NAME,
    Kv(kv::KvResults) = serverlab_proto::kv::NAME,
    Resp(resp::RespResults) = serverlab_proto::resp::NAME,
    Http(http::HttpResults) = crate::http::NAME,
}

fn unknown(protocol: &str) -> String {
    format!(
        "unknown protocol {protocol:?} (expected one of: {})",
        ProtocolResults::NAMES.join(", ")
    )
}

impl<'de> Deserialize<'de> for ProtocolResults {
    /// From `{"<name>": {…}}`: the one entry named after a protocol
    /// (other entries, as a flattened field sees its neighbours', are
    /// passed over).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Tagged;
        impl<'de> Visitor<'de> for Tagged {
            type Value = ProtocolResults;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a protocol's results under its name ({})",
                    ProtocolResults::NAMES.join(", ")
                )
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProtocolResults, A::Error> {
                let mut found: Option<ProtocolResults> = None;
                while let Some(key) = map.next_key::<String>()? {
                    match ProtocolResults::from_entry(&key, &mut map)? {
                        Some(r) => match &found {
                            Some(before) => {
                                return Err(de::Error::custom(format!(
                                    "results of two protocols, {} and {key}",
                                    before.name()
                                )))
                            }
                            None => found = Some(r),
                        },
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                found.ok_or_else(|| de::Error::custom(none_found()))
            }
        }
        fn none_found() -> String {
            format!(
                "no protocol's results (expected one of: {})",
                ProtocolResults::NAMES.join(", ")
            )
        }
        d.deserialize_map(Tagged)
    }
}

#[cfg(test)]
mod tests;
