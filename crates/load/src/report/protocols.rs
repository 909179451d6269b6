//! The one list of protocols the harness runs, as results know them: each
//! one's typed results, written under its name in `results`
//! (`"kv": {…}`), and the lines it adds to the text output. Adding a
//! protocol adds one line to [`protocols!`] (docs/design.md).

use serde::{Deserialize, Serialize};

/// What a protocol's results type adds to the text output.
pub trait TextLines {
    /// Lines after the latency table, unindented.
    fn text_lines(&self) -> Vec<String>;
}

macro_rules! protocols {
    ($($variant:ident($results:ty) = $name:literal,)*) => {
        /// A protocol's own results, tagged with its name.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub enum ProtocolResults {
            $(#[serde(rename = $name)] $variant($results),)*
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
        }

        $(impl From<$results> for ProtocolResults {
            fn from(r: $results) -> Self {
                ProtocolResults::$variant(r)
            }
        })*
    };
}

protocols! {
    Board(crate::board::BoardResults) = "board",
    Bucket(crate::bucket::BucketResults) = "bucket",
    Kv(crate::kv::KvResults) = "kv",
}

impl ProtocolResults {
    /// `protocol`'s results from their JSON (`part`, without the tag).
    pub fn named(protocol: &str, part: serde_json::Value) -> serde_json::Result<Self> {
        let mut tagged = serde_json::Map::new();
        tagged.insert(protocol.into(), part);
        serde_json::from_value(serde_json::Value::Object(tagged))
    }
}
