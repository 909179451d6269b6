//! Which keys a load touches and how big the values it writes are, for
//! every protocol with keys: `--key-dist uniform|zipf:S|gaussian:MEAN,SD|
//! sequential` ([`KeyDist`], drawn by a [`KeyPicker`]; a sequential walk
//! is each client's own, a [`KeyWalk`]) and `--value-size 64`, `32..4096`
//! or `64:8,1024:1` ([`ValueSize`]), as memtier_benchmark's
//! `--key-pattern` and `--data-size-range` / `--data-size-list`.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How keys are drawn (serialized as spelled: `uniform`, `zipf:0.99`,
/// `gaussian:500,100`, `sequential`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyDist {
    Uniform,
    /// Key of rank i (from 1) drawn with weight 1/i^S: key0 is the hottest.
    Zipf(f64),
    /// A normal distribution over the key indices, of this mean and
    /// standard deviation (in keys); draws outside the keys are drawn
    /// again. None: memtier's default, centred with a sixth of the keys
    /// as its deviation.
    Gaussian(Option<(f64, f64)>),
    /// Each client walks its own keys in order, wrapping around: client
    /// k of n takes k, k + n, k + 2n, … (memtier's `P`).
    Sequential,
}

/// How the spellings are said in an error.
const SPELLINGS: &str = "uniform, zipf:S, gaussian, gaussian:MEAN,SD or sequential (examples: \
     zipf:0.99, gaussian:5000,500)";

impl FromStr for KeyDist {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uniform" => return Ok(KeyDist::Uniform),
            "sequential" => return Ok(KeyDist::Sequential),
            "gaussian" => return Ok(KeyDist::Gaussian(None)),
            _ => {}
        }
        if let Some(exponent) = s.strip_prefix("zipf:") {
            return match exponent.parse::<f64>() {
                Ok(e) if e.is_finite() && e > 0.0 && e <= 10.0 => Ok(KeyDist::Zipf(e)),
                _ => Err(format!("'{exponent}' is not a Zipf exponent in (0, 10]")),
            };
        }
        if let Some(params) = s.strip_prefix("gaussian:") {
            let bad = || {
                format!(
                    "'{params}' is not MEAN,SD: a mean key index and a positive standard \
                     deviation, in keys (example: gaussian:5000,500)"
                )
            };
            let (mean, sd) = params.split_once(',').ok_or_else(bad)?;
            let num = |t: &str| t.trim().parse::<f64>().ok().filter(|x| x.is_finite());
            return match (num(mean), num(sd)) {
                (Some(m), Some(d)) if m >= 0.0 && d > 0.0 => Ok(KeyDist::Gaussian(Some((m, d)))),
                _ => Err(bad()),
            };
        }
        Err(format!("'{s}' is not {SPELLINGS}"))
    }
}

impl KeyDist {
    /// Whether it can draw from `keys` keys: a Gaussian's mean must be one
    /// of them (a mean past the last would put every request on it, after
    /// drawing again and again).
    pub fn fits(&self, keys: usize) -> Result<(), String> {
        match self {
            KeyDist::Gaussian(Some((mean, _))) if *mean >= keys as f64 => Err(format!(
                "{self}: the mean is past the last key (the keys are 0 to {}): choose a mean \
                 below --keys {keys}",
                keys.saturating_sub(1)
            )),
            _ => Ok(()),
        }
    }
}

impl Serialize for KeyDist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for KeyDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDist::Uniform => f.write_str("uniform"),
            KeyDist::Zipf(e) => write!(f, "zipf:{e}"),
            KeyDist::Gaussian(None) => f.write_str("gaussian"),
            KeyDist::Gaussian(Some((m, d))) => write!(f, "gaussian:{m},{d}"),
            KeyDist::Sequential => f.write_str("sequential"),
        }
    }
}

/// Draws key indices in `0..keys` from a distribution. Shared by a run's
/// clients; a sequential walk is each client's own ([`KeyWalk`]).
pub struct KeyPicker {
    keys: usize,
    draw: Draw,
}

enum Draw {
    Uniform,
    /// Cumulative weights, normalised to end at 1.
    Zipf(Vec<f64>),
    Gaussian {
        mean: f64,
        sd: f64,
    },
    /// Clients without a walk of their own share this one.
    Sequential(AtomicUsize),
}

/// Draws outside the keys a Gaussian redraws, before it takes the
/// nearest key instead.
const REDRAWS: usize = 64;

impl KeyPicker {
    pub fn new(keys: usize, dist: KeyDist) -> Self {
        Self::of_share(keys, dist, keys)
    }

    /// A picker over `keys` that stand for `whole` keys (each client's
    /// own keys when verifying, an agent's share): a Gaussian's mean and
    /// deviation, given over the whole, scale to them.
    pub fn of_share(keys: usize, dist: KeyDist, whole: usize) -> Self {
        let keys = keys.max(1);
        let draw = match dist {
            KeyDist::Uniform => Draw::Uniform,
            KeyDist::Zipf(s) => {
                let mut acc = 0.0;
                let mut cdf: Vec<f64> = (1..=keys)
                    .map(|rank| {
                        acc += (rank as f64).powf(-s);
                        acc
                    })
                    .collect();
                cdf.iter_mut().for_each(|c| *c /= acc);
                Draw::Zipf(cdf)
            }
            KeyDist::Gaussian(params) => {
                let whole_f = whole.max(1) as f64;
                let (mean, sd) = params.unwrap_or((whole_f / 2.0, whole_f / 6.0));
                let scale = keys as f64 / whole_f;
                Draw::Gaussian {
                    mean: mean * scale,
                    sd: (sd * scale).max(f64::MIN_POSITIVE),
                }
            }
            KeyDist::Sequential => Draw::Sequential(AtomicUsize::new(0)),
        };
        KeyPicker { keys, draw }
    }

    /// A key index; a sequential picker walks one walk shared by every
    /// client that asks here (in order over all of them).
    pub fn pick(&self, rng: &mut fastrand::Rng) -> usize {
        match &self.draw {
            Draw::Uniform => rng.usize(0..self.keys),
            Draw::Zipf(cdf) => {
                let u = rng.f64();
                cdf.partition_point(|&c| c < u).min(self.keys - 1)
            }
            Draw::Gaussian { mean, sd } => self.gaussian(rng, *mean, *sd),
            // Relaxed: a counter handing out places; nothing is published.
            Draw::Sequential(next) => next.fetch_add(1, Ordering::Relaxed) % self.keys,
        }
    }

    /// A key index for the client walking `walk`: its next step when
    /// sequential, else a draw as [`KeyPicker::pick`].
    pub fn pick_walking(&self, rng: &mut fastrand::Rng, walk: &mut KeyWalk) -> usize {
        match &self.draw {
            Draw::Sequential(_) => walk.step(self.keys),
            _ => self.pick(rng),
        }
    }

    fn gaussian(&self, rng: &mut fastrand::Rng, mean: f64, sd: f64) -> usize {
        let top = (self.keys - 1) as f64;
        let mut x = mean;
        for _ in 0..REDRAWS {
            x = mean + sd * standard_normal(rng);
            let k = x.round();
            if (0.0..=top).contains(&k) {
                return k as usize;
            }
        }
        x.round().clamp(0.0, top) as usize
    }
}

/// A standard normal draw (Box–Muller).
fn standard_normal(rng: &mut fastrand::Rng) -> f64 {
    let u1 = 1.0 - rng.f64();
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// One client's place in a sequential walk: client `first` of `stride`
/// takes `first`, `first + stride`, … (wrapping around the keys).
#[derive(Debug, Clone, Default)]
pub struct KeyWalk {
    first: usize,
    stride: usize,
    taken: usize,
}

impl KeyWalk {
    /// Client `index` of `clients`.
    pub fn new(index: usize, clients: usize) -> Self {
        KeyWalk {
            first: index,
            stride: clients.max(1),
            taken: 0,
        }
    }

    /// Its next key of `keys`.
    fn step(&mut self, keys: usize) -> usize {
        let k = self
            .first
            .wrapping_add(self.taken.wrapping_mul(self.stride));
        self.taken = self.taken.wrapping_add(1);
        k % keys.max(1)
    }
}

/// How big the values written are: one size, uniform in a range
/// (`32..4096`), or a weighted list (`64:8,1024:1`).
#[derive(Debug, Clone, PartialEq)]
pub enum ValueSize {
    Fixed(usize),
    /// From the first to the second, both included.
    Range(usize, usize),
    /// Sizes by weight.
    List(Vec<(usize, u32)>),
}

impl ValueSize {
    /// A range `lo..hi` (both included) or a list `SIZE:WEIGHT,…`, each
    /// size read by `size`; else one size.
    pub fn parse(
        s: &str,
        size: impl Fn(&str) -> Result<usize, String>,
    ) -> Result<ValueSize, String> {
        if let Some((lo, hi)) = s.split_once("..") {
            let (lo, hi) = (size(lo)?, size(hi)?);
            if lo > hi {
                return Err(format!("'{s}': the range's first size is above its last"));
            }
            return Ok(if lo == hi {
                ValueSize::Fixed(lo)
            } else {
                ValueSize::Range(lo, hi)
            });
        }
        if !s.contains(':') {
            return size(s).map(ValueSize::Fixed);
        }
        let mut list = Vec::new();
        for part in s.split(',') {
            let (sz, w) = part.split_once(':').ok_or_else(|| {
                format!("'{part}' is not SIZE:WEIGHT (example: --value-size 64:8,1024:1)")
            })?;
            let w = w
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&w| w > 0)
                .ok_or_else(|| format!("'{w}' is not a positive weight"))?;
            list.push((size(sz)?, w));
        }
        let total: u64 = list.iter().map(|&(_, w)| u64::from(w)).sum();
        if total > u64::from(u32::MAX) {
            return Err(format!(
                "'{s}': the weights add up to more than {}",
                u32::MAX
            ));
        }
        Ok(ValueSize::List(list))
    }

    /// The largest value it writes.
    pub fn max(&self) -> usize {
        match self {
            ValueSize::Fixed(n) => *n,
            ValueSize::Range(_, hi) => *hi,
            ValueSize::List(l) => l.iter().map(|&(s, _)| s).max().unwrap_or(0),
        }
    }

    /// The smallest value it writes.
    pub fn min(&self) -> usize {
        match self {
            ValueSize::Fixed(n) => *n,
            ValueSize::Range(lo, _) => *lo,
            ValueSize::List(l) => l.iter().map(|&(s, _)| s).min().unwrap_or(0),
        }
    }

    /// Whether a value of `len` bytes is one of the sizes it writes.
    pub fn allows(&self, len: usize) -> bool {
        match self {
            ValueSize::Fixed(n) => len == *n,
            ValueSize::Range(lo, hi) => (*lo..=*hi).contains(&len),
            ValueSize::List(l) => l.iter().any(|&(s, _)| s == len),
        }
    }

    /// A size drawn with `rng`.
    pub fn pick(&self, rng: &mut fastrand::Rng) -> usize {
        match self {
            ValueSize::Fixed(n) => *n,
            ValueSize::Range(lo, hi) => rng.usize(*lo..=*hi),
            ValueSize::List(l) => {
                let total: u32 = l.iter().map(|&(_, w)| w).sum();
                let mut at = rng.u32(0..total);
                for &(size, w) in l {
                    if at < w {
                        return size;
                    }
                    at -= w;
                }
                l.last().map_or(0, |&(s, _)| s)
            }
        }
    }

    /// The size of the value made from `nonce`: drawn from it, so that
    /// whoever knows a value's nonce (a verifying client's mirror) knows
    /// its size too.
    pub fn for_nonce(&self, nonce: u64) -> usize {
        match self {
            ValueSize::Fixed(n) => *n,
            _ => self.pick(&mut fastrand::Rng::with_seed(nonce ^ 0x5125_0F5E_ED00_u64)),
        }
    }
}

impl fmt::Display for ValueSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueSize::Fixed(n) => write!(f, "{n}"),
            ValueSize::Range(lo, hi) => write!(f, "{lo}..{hi}"),
            ValueSize::List(l) => {
                let parts: Vec<String> = l.iter().map(|(s, w)| format!("{s}:{w}")).collect();
                f.write_str(&parts.join(","))
            }
        }
    }
}

/// One size as a number (as before ranges and lists), else as spelled.
impl Serialize for ValueSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ValueSize::Fixed(n) => s.serialize_u64(*n as u64),
            _ => s.collect_str(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> Result<usize, String> {
        s.trim().parse().map_err(|_| format!("'{s}' is not a size"))
    }

    #[test]
    fn distributions_parse_and_print_as_spelled() {
        for s in [
            "uniform",
            "zipf:0.99",
            "gaussian",
            "gaussian:5000,500",
            "sequential",
        ] {
            assert_eq!(s.parse::<KeyDist>().unwrap().to_string(), s);
        }
        for bad in [
            "zipf",
            "zipf:0",
            "gaussian:1",
            "gaussian:5,0",
            "gaussian:-1,3",
            "gaussian:a,b",
            "normal",
        ] {
            let e = bad.parse::<KeyDist>().unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!("normal"
            .parse::<KeyDist>()
            .unwrap_err()
            .contains("sequential"));
    }

    #[test]
    fn a_gaussian_centres_on_its_mean_within_the_keys() {
        let mut rng = fastrand::Rng::with_seed(3);
        let g = KeyPicker::new(1000, "gaussian:300,20".parse().unwrap());
        let draws: Vec<usize> = (0..20_000).map(|_| g.pick(&mut rng)).collect();
        let mean = draws.iter().sum::<usize>() as f64 / draws.len() as f64;
        assert!((mean - 300.0).abs() < 2.0, "{mean}");
        let within = draws.iter().filter(|&&k| k.abs_diff(300) <= 40).count();
        assert!(within as f64 > 0.93 * draws.len() as f64, "{within}");
        // Over a share (a connection's own keys, one in ten), centred the same.
        let share = KeyPicker::of_share(100, "gaussian:300,20".parse().unwrap(), 1000);
        let m = (0..10_000).map(|_| share.pick(&mut rng)).sum::<usize>() as f64 / 1e4;
        assert!((m - 30.0).abs() < 1.0, "{m}");
        // A mean past the keys is refused where the keys are known (the
        // picker would keep its draws in them, every one on the last).
        let past: KeyDist = "gaussian:50,1".parse().unwrap();
        assert!(past.fits(10).unwrap_err().contains("past the last key"));
        assert!(past.fits(51).is_ok());
        let edge = KeyPicker::new(10, past);
        assert!((0..100).all(|_| edge.pick(&mut rng) == 9));
    }

    #[test]
    fn sequential_clients_walk_their_own_strides() {
        let p = KeyPicker::new(10, KeyDist::Sequential);
        let mut rng = fastrand::Rng::with_seed(1);
        let mut w = KeyWalk::new(1, 4);
        let walked: Vec<usize> = (0..5).map(|_| p.pick_walking(&mut rng, &mut w)).collect();
        assert_eq!(walked, [1, 5, 9, 3, 7]);
        let shared: Vec<usize> = (0..12).map(|_| p.pick(&mut rng)).collect();
        assert_eq!(shared, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
        // Other distributions ignore the walk.
        let u = KeyPicker::new(3, KeyDist::Uniform);
        assert!((0..50).all(|_| u.pick_walking(&mut rng, &mut w) < 3));
    }

    #[test]
    fn value_sizes_parse_draw_and_follow_their_nonce() {
        assert_eq!(ValueSize::parse("64", bytes), Ok(ValueSize::Fixed(64)));
        let range = ValueSize::parse("32..4096", bytes).unwrap();
        assert_eq!((range.min(), range.max()), (32, 4096));
        assert_eq!(range.to_string(), "32..4096");
        let list = ValueSize::parse("64:8,1024:1", bytes).unwrap();
        assert_eq!(list, ValueSize::List(vec![(64, 8), (1024, 1)]));
        assert_eq!(list.to_string(), "64:8,1024:1");
        for bad in ["9..3", "64:0", "64:x", "64:1,", "x..9"] {
            assert!(ValueSize::parse(bad, bytes).is_err(), "{bad}");
        }
        let mut rng = fastrand::Rng::with_seed(5);
        let big = (0..9000).filter(|_| list.pick(&mut rng) == 1024).count();
        assert!((800..1200).contains(&big), "{big}");
        assert!((0..1000).all(|_| (32..=4096).contains(&range.pick(&mut rng))));
        assert_eq!(range.for_nonce(77), range.for_nonce(77));
        assert!(range.allows(32) && range.allows(4096) && !range.allows(4097));
        assert!(list.allows(1024) && !list.allows(100) && ValueSize::Fixed(5).allows(5));
        let sizes: std::collections::HashSet<usize> = (0..50).map(|n| range.for_nonce(n)).collect();
        assert!(sizes.len() > 40, "sizes vary with the nonce");
        assert_eq!(serde_json::to_string(&ValueSize::Fixed(64)).unwrap(), "64");
        assert_eq!(serde_json::to_string(&range).unwrap(), "\"32..4096\"");
    }
}
