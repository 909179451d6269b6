//! Metric families written at scrape time by a collector, from values it
//! reads there.

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use std::fmt::Error;

/// Label pairs of one sample.
pub type Labels = Vec<(&'static str, String)>;

/// A counter family: one sample per label set.
pub fn counters(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: &[(Labels, u64)],
) -> Result<(), Error> {
    let mut family = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, value) in samples {
        ConstCounter::new(*value).encode(family.encode_family(labels)?)?;
    }
    Ok(())
}

/// A floating-point gauge family: one sample per label set.
pub fn gauges(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: &[(Labels, f64)],
) -> Result<(), Error> {
    let mut family = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, value) in samples {
        ConstGauge::new(*value).encode(family.encode_family(labels)?)?;
    }
    Ok(())
}

/// One unlabelled counter.
pub fn counter(enc: &mut DescriptorEncoder, name: &str, help: &str, v: u64) -> Result<(), Error> {
    let metric = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
    ConstCounter::new(v).encode(metric)
}

/// One unlabelled gauge.
pub fn gauge(enc: &mut DescriptorEncoder, name: &str, help: &str, v: i64) -> Result<(), Error> {
    let metric = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(v).encode(metric)
}

/// One unlabelled floating-point gauge.
pub fn gauge_f64(enc: &mut DescriptorEncoder, name: &str, help: &str, v: f64) -> Result<(), Error> {
    let metric = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(v).encode(metric)
}
