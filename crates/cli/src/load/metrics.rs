//! `load … --metrics ADDR`: the load's totals ([`serverlab_load::live`])
//! for Prometheus, on the endpoint every `--metrics` shares
//! ([`crate::metrics`]). A scrape reads what the event loops handed over
//! at their last second; nothing here runs on a loop's thread. At the
//! end of a run, once its result is written, its verdict: whether it was
//! certified, and each check that decided (docs/measuring.md, "Certified
//! runs"); `--metrics-linger` keeps the endpoint up to be scraped then.

use crate::metrics::encode::{counters, gauge_f64, gauges, Labels};
use hdrhistogram::Histogram;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;
use serverlab_load::certify::verdict::Validity;
use serverlab_load::live::{Live, Totals, CAUSES};
use std::fmt::Error;
use std::sync::{Arc, OnceLock};

/// The run's verdict, set once at its end.
pub type Verdict = Arc<OnceLock<Validity>>;

/// Upper bounds of the latency histograms, 10 µs to 10 s (1, 2.5, 5 per
/// decade), as the server's.
pub const BOUNDS_S: [f64; 19] = [
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The load's totals, read at each scrape.
#[derive(Debug)]
pub struct LoadCollector {
    pub live: Arc<Live>,
    pub verdict: Verdict,
}

/// One histogram sample: buckets (each its own count, `+Inf` last), the
/// count and the sum in seconds.
struct HistogramSample {
    buckets: Vec<(f64, u64)>,
    count: u64,
    sum_s: f64,
}

fn sample(h: &Histogram<u64>) -> HistogramSample {
    let mut below = 0;
    let mut buckets = Vec::with_capacity(BOUNDS_S.len() + 1);
    for b in BOUNDS_S {
        let at_most = h.count_between(0, (b * 1e9) as u64);
        buckets.push((b, at_most - below));
        below = at_most;
    }
    buckets.push((f64::MAX, h.len() - below));
    let sum_s = if h.is_empty() {
        0.0
    } else {
        h.mean() * h.len() as f64 / 1e9
    };
    HistogramSample {
        buckets,
        count: h.len(),
        sum_s,
    }
}

/// A counter family's samples.
type Counted = Vec<(Labels, u64)>;

/// What a scrape writes, read under the totals' lock.
struct Scraped {
    sent: Counted,
    responses: Counted,
    errors: Counted,
    latency: Vec<(Labels, HistogramSample)>,
    service: Vec<(Labels, HistogramSample)>,
    behind_s: f64,
    rate: f64,
}

fn op(name: &str) -> Labels {
    vec![("op", name.to_string())]
}

fn scraped(t: &Totals) -> Scraped {
    let by_op = |v: &[u64]| -> Vec<(Labels, u64)> {
        t.ops.iter().zip(v).map(|(o, &n)| (op(o), n)).collect()
    };
    let mut errors = Vec::new();
    for (i, causes) in t.errors.iter().enumerate() {
        let name = t.ops.get(i).map_or("none", String::as_str);
        for (cause, &n) in CAUSES.iter().zip(causes).filter(|c| *c.1 > 0) {
            errors.push((
                vec![("op", name.to_string()), ("cause", cause.to_string())],
                n,
            ));
        }
    }
    let hists = |hs: &[Histogram<u64>]| -> Vec<(Labels, HistogramSample)> {
        t.ops
            .iter()
            .zip(hs)
            .map(|(o, h)| (op(o), sample(h)))
            .collect()
    };
    Scraped {
        sent: by_op(&t.sent),
        responses: by_op(&t.responses),
        errors,
        latency: hists(&t.latency),
        service: if t.open { hists(&t.service) } else { vec![] },
        behind_s: t.behind_ns as f64 / 1e9,
        rate: t.requested_rate.unwrap_or(0.0),
    }
}

fn histograms(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: &[(Labels, HistogramSample)],
) -> Result<(), Error> {
    if samples.is_empty() {
        return Ok(());
    }
    let mut family = enc.encode_descriptor(name, help, None, MetricType::Histogram)?;
    for (labels, h) in samples {
        family
            .encode_family(labels)?
            .encode_histogram::<Labels>(h.sum_s, h.count, &h.buckets, None)?;
    }
    Ok(())
}

impl Collector for LoadCollector {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), Error> {
        let Some(s) = self.live.read(scraped) else {
            // Before the run (the protocol's setup): nothing counted yet.
            return gauge_f64(&mut enc, RATE.0, RATE.1, 0.0);
        };
        let families: [(&str, &str, &Counted); 3] = [
            (
                "serverlab_load_requests_sent",
                "Requests sent in the measured window, by operation.",
                &s.sent,
            ),
            (
                "serverlab_load_responses",
                "Replies received in the measured window, by operation: the results' counts.",
                &s.responses,
            ),
            (
                "serverlab_load_errors",
                "Connections failed, by the operation left unanswered (none: nothing in flight) and cause.",
                &s.errors,
            ),
        ];
        for (name, help, samples) in families {
            counters(&mut enc, name, help, samples)?;
        }
        histograms(
            &mut enc,
            "serverlab_load_latency_seconds",
            "Latency of the replies in the window, by operation: from the intended send time in an open loop, from the send in a closed one.",
            &s.latency,
        )?;
        histograms(
            &mut enc,
            "serverlab_load_service_seconds",
            "Open loop: from the actual send to the reply, by operation.",
            &s.service,
        )?;
        gauge_f64(
            &mut enc,
            "serverlab_load_behind_schedule_seconds",
            "How late the generator is: the latest second's latest request, after its intended send time (open loop; 0 closed).",
            s.behind_s,
        )?;
        gauge_f64(&mut enc, RATE.0, RATE.1, s.rate)?;
        match self.verdict.get() {
            Some(v) => verdict(&mut enc, v),
            None => Ok(()),
        }
    }
}

/// `serverlab_load_certified` 1 or 0, and
/// `serverlab_load_check_passed{check}` 1 or 0 for each check that
/// decided (one not applicable or undecided is left out).
fn verdict(enc: &mut DescriptorEncoder, v: &Validity) -> Result<(), Error> {
    gauge_f64(
        enc,
        "serverlab_load_certified",
        "Whether the finished run was certified: 1 when no check failed, 0 when one did (absent until the run ends).",
        if v.certified { 1.0 } else { 0.0 },
    )?;
    let decided: Vec<(Labels, f64)> = v
        .checks
        .iter()
        .filter_map(|c| {
            let passed = c.passed?;
            Some((vec![("check", c.name.clone())], f64::from(u8::from(passed))))
        })
        .collect();
    if decided.is_empty() {
        return Ok(());
    }
    gauges(
        enc,
        "serverlab_load_check_passed",
        "Each check of the finished run's verdict: 1 passed, 0 failed (absent where not applicable or undecided).",
        &decided,
    )
}

const RATE: (&str, &str) = (
    "serverlab_load_requested_rate",
    "Requests per second this process was asked for (its share of --rate; 0 closed loop).",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_their_own_counts_and_inf_the_rest() {
        let mut h = serverlab_load::record::new_histogram();
        for ns in [5_000, 20_000, 20_000, 20_000_000_000] {
            h.record(ns).unwrap();
        }
        let s = sample(&h);
        assert_eq!(s.count, 4);
        assert_eq!(
            (s.buckets[0], s.buckets[1]),
            ((0.000_01, 1), (0.000_025, 2))
        );
        assert_eq!(s.buckets.last(), Some(&(f64::MAX, 1)));
        assert_eq!(s.buckets.iter().map(|b| b.1).sum::<u64>(), 4);
    }
}
