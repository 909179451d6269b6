//! `--expect-status`: the statuses a response may have (`2xx` by default);
//! any other is an error, counted by status.

use std::fmt;
use std::str::FromStr;

/// Statuses allowed, as ranges; written as given (`2xx,301`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    ranges: Vec<(u16, u16)>,
    text: String,
}

impl Default for Expect {
    fn default() -> Self {
        "2xx".parse().expect("a valid default")
    }
}

impl Expect {
    pub fn allows(&self, status: u16) -> bool {
        self.ranges
            .iter()
            .any(|&(lo, hi)| (lo..=hi).contains(&status))
    }
}

impl FromStr for Expect {
    type Err = String;

    /// `2xx`, `200`, `200-299`, or several apart by commas.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |item: &str| {
            format!(
                "'{item}' is not a status: write a class (2xx), a status (204), a range \
                 (200-299), or several apart by commas (2xx,301)"
            )
        };
        let status = |t: &str| t.parse::<u16>().ok().filter(|n| (100..=599).contains(n));
        let mut ranges = Vec::new();
        for item in s.split(',').map(str::trim) {
            let range = if let Some(class) = item.strip_suffix("xx") {
                let c = class.parse::<u16>().ok().filter(|c| (1..=5).contains(c));
                c.map(|c| (c * 100, c * 100 + 99))
            } else if let Some((lo, hi)) = item.split_once('-') {
                status(lo).zip(status(hi)).filter(|(l, h)| l <= h)
            } else {
                status(item).map(|n| (n, n))
            };
            ranges.push(range.ok_or_else(|| bad(item))?);
        }
        Ok(Expect {
            ranges,
            text: s.to_string(),
        })
    }
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl serde::Serialize for Expect {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_and_match() {
        let e = Expect::default();
        assert!(e.allows(200) && e.allows(299) && !e.allows(301) && !e.allows(404));
        let e: Expect = "2xx, 301,400-404".parse().unwrap();
        assert!(e.allows(204) && e.allows(301) && e.allows(404) && !e.allows(302));
        assert_eq!(e.to_string(), "2xx, 301,400-404");
        for bad in ["", "6xx", "0xx", "20", "600", "404-400", "2xx,", "abc"] {
            assert!(bad.parse::<Expect>().is_err(), "{bad}");
        }
    }
}
