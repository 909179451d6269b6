//! What the TLS handshakes took, from each connection's connect to the
//! end of its handshake: recorded per event loop, merged, and reported
//! apart from the requests' latency (`results.tls`).

use crate::certify::client::ShareFigures;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One loop's handshakes, in ns, two significant digits, up to a minute.
#[derive(Debug, Clone, Default)]
pub struct Handshakes {
    /// None until the first handshake: a plain run pays nothing.
    took_ns: Option<Histogram<u64>>,
}

impl Handshakes {
    pub fn record(&mut self, took: Duration) {
        let ns = (took.as_nanos().min(u64::MAX as u128) as u64).max(1);
        self.took_ns
            .get_or_insert_with(|| {
                Histogram::new_with_bounds(1, 60_000_000_000, 2).expect("valid histogram bounds")
            })
            .saturating_record(ns);
    }

    pub fn merge(&mut self, o: &Handshakes) {
        let Some(theirs) = &o.took_ns else {
            return;
        };
        match &mut self.took_ns {
            Some(ours) => ours.add(theirs).expect("same bounds"),
            None => self.took_ns = Some(theirs.clone()),
        }
    }

    /// The figures; None when no handshake was made (a plain run).
    pub fn report(&self, insecure: bool) -> Option<HandshakeReport> {
        let h = self.took_ns.as_ref()?;
        Some(HandshakeReport {
            handshakes: h.len(),
            handshake_us: ShareFigures::of(h),
            insecure,
        })
    }
}

/// The handshakes, as the results give them (`results.tls`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandshakeReport {
    /// Handshakes completed: each connection's, those opened before the
    /// window included.
    pub handshakes: u64,
    /// From the start of the connect to the end of the handshake, µs.
    pub handshake_us: ShareFigures,
    /// The server's certificate was not checked (`--insecure`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
}

impl HandshakeReport {
    /// The text output's lines: the handshakes, and a warning when the
    /// certificate went unchecked.
    pub fn lines(&self) -> Vec<String> {
        use crate::output::micros;
        let f = &self.handshake_us;
        let mut lines = vec![format!(
            "TLS: {}, each from its connect's start: p50 {}, p90 {}, p99 {}, max {} \
             (apart from the latency above)",
            serverlab_util::plural(self.handshakes, "handshake", "handshakes"),
            micros(f.p50),
            micros(f.p90),
            micros(f.p99),
            micros(f.max),
        )];
        if self.insecure {
            lines.push(INSECURE.to_string());
        }
        lines
    }
}

/// What `--insecure` is said as, in the output and before the run.
pub const INSECURE: &str = "WARNING: --insecure: the server's certificate was NOT checked \
    (anyone between here and the server could have answered)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_run_reports_no_handshakes_and_merges_keep_every_one() {
        let mut a = Handshakes::default();
        assert!(a.report(false).is_none());
        let mut b = Handshakes::default();
        b.record(Duration::from_micros(300));
        b.record(Duration::from_micros(900));
        a.merge(&Handshakes::default());
        assert!(a.report(false).is_none());
        a.merge(&b);
        a.merge(&b);
        let r = a.report(true).unwrap();
        assert_eq!(r.handshakes, 4);
        assert!((r.handshake_us.max - 900.0).abs() < 10.0, "{r:?}");
        assert!((r.handshake_us.p50 - 300.0).abs() < 5.0, "{r:?}");
        assert!(r.insecure);
    }
}
