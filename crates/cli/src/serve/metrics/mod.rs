//! `serve … --metrics ADDR`: the server's counters for Prometheus, on the
//! endpoint every `--metrics` shares ([`crate::metrics`]). Nearly every
//! figure is a counter the server already keeps, read at scrape time by
//! a collector ([`collect`]).

pub mod collect;

pub use crate::metrics::bind;
use serverlab_service::Service;
use std::net::TcpListener;
use std::sync::Arc;

/// The labels every server metric carries.
pub struct ConstLabels {
    pub protocol: String,
    pub strategy: String,
    pub store: String,
}

/// Serve `GET /metrics` on `listener` from a thread of its own, for as
/// long as the process runs.
pub fn start<S: Service>(
    listener: TcpListener,
    svc: Arc<S>,
    labels: ConstLabels,
) -> anyhow::Result<()> {
    let collector = Box::new(collect::ServiceCollector::new(svc, &labels.protocol));
    let constant = vec![
        ("protocol", labels.protocol),
        ("strategy", labels.strategy),
        ("store", labels.store),
    ];
    crate::metrics::start(listener, constant, collector)
}
