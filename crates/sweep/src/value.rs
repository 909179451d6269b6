//! One flag value from an experiment file, and how it becomes command-line
//! arguments.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A single value a flag (or a matrix variable) can take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Scalar {
    /// From a TOML value that is not a table or an array.
    pub fn from_toml(v: &toml::Value) -> Option<Scalar> {
        match v {
            toml::Value::Boolean(b) => Some(Scalar::Bool(*b)),
            toml::Value::Integer(i) => Some(Scalar::Int(*i)),
            toml::Value::Float(f) => Some(Scalar::Float(*f)),
            toml::Value::String(s) => Some(Scalar::Str(s.clone())),
            _ => None,
        }
    }

    /// The arguments `--flag` with this value becomes: a true boolean is
    /// the bare flag, a false one is no argument at all.
    pub fn args(&self, flag: &str) -> Vec<String> {
        let name = format!("--{flag}");
        match self {
            Scalar::Bool(true) => vec![name],
            Scalar::Bool(false) => vec![],
            // `--duration=-3s`: a value that starts with `-` stays the
            // flag's, so the flag's parser judges it.
            other if other.to_string().starts_with('-') => vec![format!("{name}={other}")],
            other => vec![name, other.to_string()],
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    pub fn from_json(v: &serde_json::Value) -> Option<Scalar> {
        serde_json::from_value(v.clone()).ok()
    }

    /// The value as a number, if it is one (or a string that reads as one).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(f) => Some(*f),
            Scalar::Str(s) => s.trim().parse().ok(),
            Scalar::Bool(_) => None,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Str(s) => f.write_str(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Scalar;

    #[test]
    fn flags_from_values() {
        assert_eq!(Scalar::Int(5).args("posters"), ["--posters", "5"]);
        assert_eq!(Scalar::Bool(true).args("verify"), ["--verify"]);
        assert!(Scalar::Bool(false).args("verify").is_empty());
        assert_eq!(Scalar::Str("1-3".into()).args("delay"), ["--delay", "1-3"]);
        assert_eq!(Scalar::Float(0.5).args("throttle"), ["--throttle", "0.5"]);
    }

    #[test]
    fn json_round_trip_keeps_the_type() {
        for v in [
            Scalar::Int(3),
            Scalar::Float(2.5),
            Scalar::Str("0-1".into()),
            Scalar::Bool(true),
        ] {
            assert_eq!(Scalar::from_json(&v.to_json()), Some(v));
        }
    }
}
