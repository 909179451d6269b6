//! What the kv load sends: the mix of methods, which keys (uniform or
//! Zipf), and values that carry their own checksum so any reply can be
//! checked on its own.

use serverlab_proto::kv::Method;
use serverlab_util::Named;

/// The methods the load sends: each has its own slot in the recorder
/// (`Op as usize` indexes [`super::OPS`]). A method the store does not
/// answer (`Method::Other`) cannot be asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Head,
    Put,
    Post,
    Delete,
}

impl Op {
    pub fn method(self) -> Method {
        match self {
            Op::Get => Method::Get,
            Op::Head => Method::Head,
            Op::Put => Method::Put,
            Op::Post => Method::Post,
            Op::Delete => Method::Delete,
        }
    }

    /// Its index in [`super::OPS`] and the recorder.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl Named for Op {
    const WHAT: &'static str = "method";
    const ALL: &'static [Op] = &[Op::Get, Op::Head, Op::Put, Op::Post, Op::Delete];
    fn name(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Head => "head",
            Op::Put => "put",
            Op::Post => "post",
            Op::Delete => "delete",
        }
    }
}

/// Methods by weight (`get=80,put=15,delete=5`).
pub type Mix = serverlab_util::Mix<Op>;

/// `get=80,put=15,delete=5`.
pub fn default_mix() -> Mix {
    Mix::of(&[(Op::Get, 80), (Op::Put, 15), (Op::Delete, 5)]).expect("positive weights")
}

pub use crate::keyspace::{KeyDist, KeyPicker};

/// The name of key `i`.
pub fn key_name(i: usize) -> Vec<u8> {
    let mut name = Vec::new();
    write_key(&mut name, i);
    name
}

/// Put the name of key `i` in `out` (reusing its allocation).
pub fn write_key(out: &mut Vec<u8>, i: usize) {
    out.clear();
    out.extend_from_slice(b"key");
    serverlab_proto::number::push_u64(out, i as u64);
}

/// Bytes of framing a self-checking value adds to its key.
const CHECK_OVERHEAD: usize = 1 + 16 + 1 + 16;

/// The smallest value size that can carry its key and checksum.
pub fn min_checked_size(key_len: usize) -> usize {
    key_len + CHECK_OVERHEAD
}

/// Write a value of exactly `size` bytes for `key`: `key:nonce:filler`
/// then the FNV-1a checksum of everything before it, all in hex and
/// letters. Below [`min_checked_size`] it is filler only (not checkable).
pub fn write_value(out: &mut Vec<u8>, key: &[u8], nonce: u64, size: usize) {
    out.clear();
    let checked = size >= min_checked_size(key.len());
    if checked {
        out.extend_from_slice(key);
        out.extend_from_slice(format!(":{nonce:016x}:").as_bytes());
    }
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut x = nonce.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let fill_to = if checked { size - 16 } else { size };
    while out.len() < fill_to {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(ALPHABET[(x % ALPHABET.len() as u64) as usize]);
    }
    if checked {
        let sum = fnv1a(out);
        out.extend_from_slice(format!("{sum:016x}").as_bytes());
    }
}

/// Check a value read back for `key`: its prefix names the key and its
/// checksum matches. `Err` describes what is wrong.
pub fn check_value(key: &[u8], value: &[u8]) -> Result<(), String> {
    if value.len() < min_checked_size(key.len()) {
        return Err(format!(
            "{} bytes: too short to be a value this load wrote",
            value.len()
        ));
    }
    let (payload, sum) = value.split_at(value.len() - 16);
    if !payload.starts_with(key) || payload.get(key.len()) != Some(&b':') {
        return Err("it does not start with its key: another key's value".into());
    }
    let want = format!("{:016x}", fnv1a(payload));
    if sum != want.as_bytes() {
        return Err("its checksum does not match: the value was corrupted".into());
    }
    Ok(())
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_parses_and_picks_by_weight() {
        assert_eq!("get=80,put=15,delete=5".parse::<Mix>(), Ok(default_mix()));
        assert_eq!(default_mix().to_string(), "get=80,put=15,delete=5");
        let only_head: Mix = "head=1".parse().unwrap();
        let mut rng = fastrand::Rng::with_seed(1);
        assert!((0..100).all(|_| only_head.pick(&mut rng) == Op::Head));
        let mix: Mix = "get=3,post=1".parse().unwrap();
        let posts = (0..10_000)
            .filter(|_| mix.pick(&mut rng) == Op::Post)
            .count();
        assert!((2000..3000).contains(&posts), "{posts}");
        for bad in ["get=0", "patch=1", "get", "get=-1", "get=4294967295,put=1"] {
            assert!(bad.parse::<Mix>().is_err(), "{bad}");
        }
    }

    #[test]
    fn ops_index_the_names() {
        for op in [Op::Get, Op::Head, Op::Put, Op::Post, Op::Delete] {
            assert_eq!(super::super::OPS[op.index()], op.method().name());
        }
    }

    #[test]
    fn key_distributions() {
        assert_eq!("uniform".parse(), Ok(KeyDist::Uniform));
        assert_eq!("zipf:0.99".parse(), Ok(KeyDist::Zipf(0.99)));
        for bad in ["zipf", "zipf:0", "zipf:-1", "zipf:nan", "normal"] {
            assert!(bad.parse::<KeyDist>().is_err(), "{bad}");
        }
        let mut rng = fastrand::Rng::with_seed(7);
        let zipf = KeyPicker::new(100, KeyDist::Zipf(1.2));
        let mut counts = [0usize; 100];
        for _ in 0..20_000 {
            counts[zipf.pick(&mut rng)] += 1;
        }
        assert!(counts[0] > counts[1] && counts[1] > counts[10] && counts[10] > counts[99]);
        let uniform = KeyPicker::new(3, KeyDist::Uniform);
        assert!((0..100).all(|_| uniform.pick(&mut rng) < 3));
        let one = KeyPicker::new(1, KeyDist::Zipf(1.0));
        assert!((0..100).all(|_| one.pick(&mut rng) == 0));
    }

    #[test]
    fn values_check_themselves() {
        let mut v = Vec::new();
        for size in [min_checked_size(4), 100, 4096] {
            write_value(&mut v, b"key7", 42, size);
            assert_eq!(v.len(), size);
            assert_eq!(check_value(b"key7", &v), Ok(()));
            assert!(check_value(b"key8", &v).is_err());
            let mut bad = v.clone();
            bad[size / 2] ^= 1;
            assert!(check_value(b"key7", &bad).is_err());
            assert!(check_value(b"key7", &v[..size - 1]).is_err());
        }
        write_value(&mut v, b"key7", 1, 5);
        assert_eq!(v.len(), 5);
        let mut w = Vec::new();
        write_value(&mut w, b"key7", 2, 100);
        write_value(&mut v, b"key7", 1, 100);
        assert_ne!(v, w, "nonces make distinct values");
    }
}
