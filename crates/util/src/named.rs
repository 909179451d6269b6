//! The named-enum pattern behind every flag that picks one of a fixed set
//! (`--strategy`, `--store`, `--delay-unit`, `--exit-policy`, …): each
//! value has the one name users type, a line describing it, and the list
//! of all of them. [`named_enum_impls!`](crate::named_enum_impls) derives
//! `Display` and `FromStr` from that, so every such flag parses and
//! complains the same way.

/// A value users pick by name from a fixed list.
pub trait Named: Copy + PartialEq + 'static {
    /// What the values are, for messages: "strategy", "delay unit".
    const WHAT: &'static str;
    /// Every value, in the order lists and help show them.
    const ALL: &'static [Self];
    /// As users type it.
    fn name(self) -> &'static str;
    /// One line for `--help`; empty when the name says it all.
    fn describe(self) -> &'static str {
        ""
    }
}

/// Every name, comma-separated: "s, ms, us".
pub fn names<T: Named>() -> String {
    T::ALL
        .iter()
        .map(|v| v.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The value named `s`, or an error that lists the names.
pub fn parse<T: Named>(s: &str) -> Result<T, String> {
    T::ALL
        .iter()
        .copied()
        .find(|v| v.name() == s)
        .ok_or_else(|| {
            format!(
                "unknown {} '{s}' (expected one of: {})",
                T::WHAT,
                names::<T>()
            )
        })
}

/// `Display` (the name) and `FromStr` (by name) for a [`Named`] type.
#[macro_export]
macro_rules! named_enum_impls {
    ($t:ty) => {
        impl ::std::fmt::Display for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::Named::name(*self))
            }
        }

        impl ::std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                $crate::named::parse(s)
            }
        }
    };
}

/// Serde by name, for a [`Named`] field in a serialized result:
/// `#[serde(with = "serverlab_util::named::by_name")]`. It reads back only
/// the names `T` has, so a typed result cannot hold a value it never wrote.
pub mod by_name {
    use super::Named;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<T: Named, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(value.name())
    }

    pub fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let name = String::deserialize(d)?;
        super::parse(&name).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Colour {
        Red,
        Green,
    }

    impl Named for Colour {
        const WHAT: &'static str = "colour";
        const ALL: &'static [Self] = &[Colour::Red, Colour::Green];
        fn name(self) -> &'static str {
            match self {
                Colour::Red => "red",
                Colour::Green => "green",
            }
        }
    }

    crate::named_enum_impls!(Colour);

    #[test]
    fn round_trip_and_errors() {
        for c in Colour::ALL {
            assert_eq!(c.to_string().parse::<Colour>(), Ok(*c));
        }
        assert_eq!(
            "blue".parse::<Colour>(),
            Err("unknown colour 'blue' (expected one of: red, green)".into())
        );
        assert_eq!(names::<Colour>(), "red, green");
    }
}
