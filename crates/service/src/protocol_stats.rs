//! Each protocol's own statistics, typed: what it counts beside
//! [`Common`](crate::Common)'s connections and service time. A service
//! returns them from [`Service::stats`](crate::Service::stats); their
//! serialization is the `protocol` part of the final statistics (`serve
//! --stats-json`), in the shape each protocol documents in
//! docs/protocols/, and the metrics (`serve --metrics`) read their
//! requests and errors through [`ProtocolStats`], naming no protocol.
//!
//! A new protocol must say what its statistics are (`Service::Stats` has
//! no default) and how they count requests and errors (the trait's
//! methods have none): one that forgets does not compile.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// A protocol's statistics at one moment.
pub trait ProtocolStats: Serialize {
    /// Requests answered, by operation: each named as the service's
    /// [`Service::OPS`](crate::Service::OPS) names it, with its count.
    /// Requests refused before they had an operation are not here (they
    /// are [`ProtocolStats::errors`]).
    fn requests(&self) -> Vec<(&'static str, u64)>;

    /// Requests answered with an error or refused, by operation and
    /// reason.
    fn errors(&self) -> Vec<ErrorCount>;

    /// Further metrics the protocol keeps (RESP's pub/sub), each exported
    /// as it is by `serve --metrics`.
    fn more(&self) -> Vec<Metric> {
        Vec::new()
    }
}

/// One further metric of a protocol ([`ProtocolStats::more`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metric {
    /// Its full name (`serverlab_…`; a counter's without `_total`).
    pub name: &'static str,
    pub help: &'static str,
    pub value: u64,
    /// A gauge (a level now); else a counter (a count so far).
    pub gauge: bool,
}

impl Metric {
    pub fn counter(name: &'static str, help: &'static str, value: u64) -> Self {
        Metric {
            name,
            help,
            value,
            gauge: false,
        }
    }

    pub fn gauge(name: &'static str, help: &'static str, value: u64) -> Self {
        Metric {
            name,
            help,
            value,
            gauge: true,
        }
    }
}

/// The op of an error the protocol does not count by operation.
pub const ANY_OP: &str = "any";

/// How many requests of one operation got one kind of error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCount {
    /// One of the service's [`Service::OPS`](crate::Service::OPS), or
    /// [`ANY_OP`].
    pub op: &'static str,
    /// Why, as a metric label: lower case, words joined by `_`.
    pub reason: String,
    pub count: u64,
}

impl ErrorCount {
    /// `count` errors of `reason`, not counted by operation.
    pub fn any(reason: impl Into<String>, count: u64) -> Self {
        ErrorCount {
            op: ANY_OP,
            reason: reason.into(),
            count,
        }
    }
}

/// Counts by name, in order: written as a JSON object of them
/// (`{"GET": 3, "PUT": 1}`; a number as a name is written as a string,
/// as JSON's keys are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts<K = &'static str>(pub Vec<(K, u64)>);

impl<K: PartialEq> Counts<K> {
    /// The count of `name`; 0 if it has none.
    pub fn get(&self, name: K) -> u64 {
        self.0.iter().find(|(k, _)| *k == name).map_or(0, |e| e.1)
    }

    /// The sum of every count.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|e| e.1).sum()
    }
}

impl<K: Copy> Counts<K> {
    /// Each count not counted by operation, its reason named by
    /// `reason` (`None`: not an error).
    pub fn errors(&self, reason: impl Fn(K) -> Option<String>) -> Vec<ErrorCount> {
        self.0
            .iter()
            .filter_map(|&(k, n)| Some(ErrorCount::any(reason(k)?, n)))
            .collect()
    }
}

impl<K: Serialize> Serialize for Counts<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, n) in &self.0 {
            map.serialize_entry(k, n)?;
        }
        map.end()
    }
}

/// Requests refused for their size (board and echo framing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FrameLimits {
    /// Requests longer than `--max-request`: each closed its connection.
    pub oversize_frames: u64,
}

impl FrameLimits {
    pub fn errors(&self) -> ErrorCount {
        ErrorCount::any("oversize_frame", self.oversize_frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_write_as_an_object_in_order_and_numbers_as_names() {
        let c = Counts(vec![("b", 2), ("a", 1)]);
        assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"b":2,"a":1}"#);
        assert_eq!((c.get("a"), c.get("z"), c.total()), (1, 0, 3));
        let codes = Counts(vec![(200u16, 4), (404, 1)]);
        assert_eq!(
            serde_json::to_string(&codes).unwrap(),
            r#"{"200":4,"404":1}"#
        );
        let errors = codes.errors(|code| (code >= 400).then(|| format!("status_{code}")));
        assert_eq!(errors, vec![ErrorCount::any("status_404", 1)]);
    }
}
