//! The client's own share of each latency, measured: on the way out,
//! from the moment a request was due (its intended send time, or the
//! moment its connection had room for it; closed loop: the moment the
//! loop decided to send it) to the clock read just before the `send`
//! call that hands it to the kernel; on the way back, from the kernel's
//! receipt of the reply (the socket's software receive timestamp,
//! `SO_TIMESTAMPNS`: [`crate::driver`]) to the moment the client
//! stamped it as answered. Both are time the latency counts and the
//! server never saw. Measured on a sample: the replies of one batch in
//! [`crate::driver::stamp::EVERY`] on average, at random gaps
//! ([`crate::driver::stamp::Sampler`]), both sides of each; the others
//! are read with a plain `read(2)` and not recorded here. Bounded
//! memory: three small HdrHistograms per event loop, two significant
//! digits.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Shares are recorded in ns, two significant digits (1%), up to a
/// minute (longer ones saturate): 30 KiB a histogram.
fn new_share_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 2).expect("valid histogram bounds")
}

/// One loop's record of the client's share, per sampled reply recorded.
#[derive(Debug, Clone)]
pub struct ClientShare {
    /// From due to the send call.
    pub send_ns: Histogram<u64>,
    /// From the kernel's receipt to the client's stamp, where the kernel
    /// timed it.
    pub receive_ns: Histogram<u64>,
    /// Per reply, the two added (the send side alone where the kernel
    /// did not time the receipt).
    pub total_ns: Histogram<u64>,
    /// Replies whose receipt the kernel did not time.
    pub unstamped: u64,
}

impl Default for ClientShare {
    fn default() -> Self {
        ClientShare {
            send_ns: new_share_histogram(),
            receive_ns: new_share_histogram(),
            total_ns: new_share_histogram(),
            unstamped: 0,
        }
    }
}

impl ClientShare {
    /// A reply recorded: its request's `send` share and, where the
    /// kernel timed its receipt, its `receive` share.
    pub fn record(&mut self, send: Duration, receive: Option<Duration>) {
        let ns = |d: Duration| (d.as_nanos().min(u64::MAX as u128) as u64).max(1);
        self.send_ns.saturating_record(ns(send));
        let mut total = send;
        match receive {
            Some(r) => {
                self.receive_ns.saturating_record(ns(r));
                total += r;
            }
            None => self.unstamped += 1,
        }
        self.total_ns.saturating_record(ns(total));
    }

    pub fn merge(&mut self, o: &ClientShare) {
        self.send_ns.add(&o.send_ns).expect("same bounds");
        self.receive_ns.add(&o.receive_ns).expect("same bounds");
        self.total_ns.add(&o.total_ns).expect("same bounds");
        self.unstamped += o.unstamped;
    }

    /// The figures, or None where no reply was recorded.
    pub fn report(&self) -> Option<ClientShareReport> {
        if self.total_ns.is_empty() {
            return None;
        }
        Some(ClientShareReport {
            replies: self.total_ns.len(),
            kernel_stamped: self.receive_ns.len(),
            total_us: ShareFigures::of(&self.total_ns),
            send_us: ShareFigures::of(&self.send_ns),
            receive_us: (!self.receive_ns.is_empty()).then(|| ShareFigures::of(&self.receive_ns)),
        })
    }
}

/// The client's share, as the results give it (`results.client_share`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientShareReport {
    /// Replies it was measured on (the sampled ones among those recorded
    /// in the window: about one in [`crate::driver::stamp::EVERY`]).
    pub replies: u64,
    /// Of them, those whose receipt the kernel timed.
    pub kernel_stamped: u64,
    /// What the client added to each reply's latency, both sides
    /// together (the send side alone for a reply the kernel did not
    /// time).
    pub total_us: ShareFigures,
    /// From due to the send call.
    pub send_us: ShareFigures,
    /// From the kernel's receipt to the client's stamp; null where the
    /// kernel timed no receipt.
    pub receive_us: Option<ShareFigures>,
}

/// A share's distribution, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ShareFigures {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl ShareFigures {
    pub fn of(h: &Histogram<u64>) -> Self {
        let p = crate::report::Percentiles::of(h);
        let (mean, p50, p90, p99, max) = (p.mean, p.p50, p.p90, p.p99, p.max);
        ShareFigures {
            mean,
            p50,
            p90,
            p99,
            max,
        }
    }
}

impl ClientShareReport {
    /// `client adds p50 6 µs, p99 31 µs (…)`, the line the text output
    /// gives beside the latency.
    pub fn line(&self) -> String {
        use crate::output::micros;
        let pair = |f: &ShareFigures| format!("p50 {}, p99 {}", micros(f.p50), micros(f.p99));
        let receive = match &self.receive_us {
            Some(r) => format!(
                "from the kernel's receipt to the client's stamp {}",
                pair(r)
            ),
            None => "the receiving side unmeasured".into(),
        };
        let unstamped = self.replies - self.kernel_stamped;
        let partial = if unstamped > 0 && self.receive_us.is_some() {
            format!(
                "; the kernel timed {} of the {} receipts",
                self.kernel_stamped, self.replies
            )
        } else if unstamped > 0 {
            "; the kernel timed no receipt (its sockets give no receive timestamps)".into()
        } else {
            String::new()
        };
        format!(
            "client adds {} (from due to the send call {}; {receive}{partial})",
            pair(&self.total_us),
            pair(&self.send_us)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_adds_both_sides_per_reply_and_says_what_the_kernel_did_not_time() {
        let mut a = ClientShare::default();
        for i in 1..=100u64 {
            a.record(Duration::from_micros(2), Some(Duration::from_micros(4 * i)));
        }
        let mut b = ClientShare::default();
        b.record(Duration::from_micros(10), None);
        a.merge(&b);
        let r = a.report().unwrap();
        assert_eq!((r.replies, r.kernel_stamped), (101, 100));
        // Two significant digits: within 1%.
        assert!((r.send_us.p50 - 2.0).abs() < 0.02, "{r:?}");
        assert_eq!(r.send_us.max.round(), 10.0);
        // p50 of 2 + 4i µs (and one of 10 µs): 2 + 4·50 = 202 µs, to 1%.
        assert!((r.total_us.p50 - 202.0).abs() <= 2.0, "{r:?}");
        let rx = r.receive_us.unwrap();
        assert!((rx.p99 - 396.0).abs() <= 4.0, "{rx:?}");
        let line = r.line();
        assert!(line.starts_with("client adds p50 "), "{line}");
        assert!(
            line.ends_with("the kernel timed 100 of the 101 receipts)"),
            "{line}"
        );
        assert!(ClientShare::default().report().is_none());
        let mut none = ClientShare::default();
        none.record(Duration::from_micros(3), None);
        let line = none.report().unwrap().line();
        assert!(line.contains("the receiving side unmeasured"), "{line}");
        assert!(line.contains("the kernel timed no receipt"), "{line}");
    }
}
