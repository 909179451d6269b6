//! Figures that certify themselves: the statistics that say whether a
//! run's percentiles can be trusted, after Lancet (Kogias et al., USENIX
//! ATC 2019) — the confidence interval of each percentile, and the
//! checks of the run's validity (docs/measuring.md, "Certified runs").
//! Each statistic is a pure function in a file of its own, tested
//! against reference values computed with scipy.

/// Whether the load does certification's work per request: the kernel's
/// receive timestamps, the clock read before each send call, the client's
/// share, the thinned series, the send gaps and lags. Always, except in a
/// build made with `RUSTFLAGS="--cfg serverlab_uncertified"`, whose load
/// does none of it (and certifies nothing): the build before
/// certification that `benches/certify_cost.py` compares against, at the
/// same commit, so that the comparison isolates certification's cost.
pub const PER_REQUEST: bool = !cfg!(serverlab_uncertified);

pub mod anderson;
pub mod client;
pub mod ess;
pub mod merged;
pub mod quantile;
pub mod sample;
pub mod spearman;
pub mod trend;
pub mod verdict;
