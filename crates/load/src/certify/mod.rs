//! Figures that certify themselves: the statistics that say whether a
//! run's percentiles can be trusted, after Lancet (Kogias et al., USENIX
//! ATC 2019) — the confidence interval of each percentile, and the
//! checks of the run's validity (docs/measuring.md, "Certified runs").
//! Each statistic is a pure function in a file of its own, tested
//! against reference values computed with scipy.

pub mod anderson;
pub mod client;
pub mod ess;
pub mod merged;
pub mod quantile;
pub mod sample;
pub mod spearman;
pub mod trend;
pub mod verdict;
