//! INCRBYFLOAT's numbers as Redis computes them: C's `long double`, which
//! on x86-64 is the x87 80-bit extended format (a 64-bit significand).
//! Redis reads a number with `strtold`, adds in that precision, and
//! writes the sum with `%.17Lf`, trailing zeros (and a bare `.`) cut and
//! `-0` written `0` (its `ld2string`, human mode). An `f64` would answer
//! differently (0.1 + 0.2 is `0.30000000000000004` in doubles and `0.3`
//! in Redis), so the format is done here in integers: each step exact,
//! then rounded to nearest, ties to even, as the hardware and glibc round.

use std::cmp::Ordering;

/// The exponent of the lowest significand bit: of the least subnormal
/// (2^-16445), and of the largest finite value ((2^64 - 1) × 2^16320).
const LOW_MIN: i64 = -16445;
const LOW_MAX: i64 = 16320;

/// Redis's `MAX_LONG_DOUBLE_CHARS`: a longer number is not read.
const MAX_CHARS: usize = 5 * 1024;

/// An 80-bit extended value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Ld {
    /// `m × 2^e`; a normal value has the top bit of `m` set.
    Finite {
        neg: bool,
        m: u64,
        e: i64,
    },
    Inf {
        neg: bool,
    },
    NaN,
}

impl Ld {
    pub(crate) const ZERO: Ld = Ld::Finite {
        neg: false,
        m: 0,
        e: 0,
    };

    fn zero(neg: bool) -> Ld {
        Ld::Finite { neg, m: 0, e: 0 }
    }

    pub(crate) fn is_finite(self) -> bool {
        matches!(self, Ld::Finite { .. })
    }
}

/// Reads `text` as Redis's `string2ld` does: all of it a number `strtold`
/// takes (decimal, hexadecimal, `inf`, `infinity`), no leading space, not
/// NaN, not out of range (a finite number that overflows, or a nonzero
/// one that underflows to zero, is refused: `ERANGE`).
pub(crate) fn parse(text: &[u8]) -> Option<Ld> {
    if text.is_empty() || text.len() >= MAX_CHARS || text.contains(&0) {
        return None;
    }
    if matches!(text[0], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        return None;
    }
    let (neg, body) = match text[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        return Some(Ld::Inf { neg });
    }
    let hex = body.len() > 2 && body[0] == b'0' && (body[1] | 0x20) == b'x';
    let v = if hex {
        number(neg, &body[2..], 16)?
    } else {
        number(neg, body, 10)?
    };
    match v {
        Ld::Inf { .. } | Ld::NaN => None,
        _ => Some(v),
    }
}

/// A number's digits, point, and exponent (`e` for decimal, `p` for
/// hexadecimal); `Inf` for an overflow, `NaN` for an underflow to zero.
fn number(neg: bool, s: &[u8], radix: u32) -> Option<Ld> {
    let digit = |c: u8| (c as char).to_digit(radix);
    let int_len = s.iter().take_while(|&&c| digit(c).is_some()).count();
    let mut at = int_len;
    let mut frac_len = 0;
    if s.get(at) == Some(&b'.') {
        at += 1;
        frac_len = s[at..].iter().take_while(|&&c| digit(c).is_some()).count();
        at += frac_len;
    }
    if int_len + frac_len == 0 {
        return None;
    }
    let mut exp: i64 = 0;
    if at < s.len() {
        let mark = if radix == 16 { b'p' } else { b'e' };
        if s[at] | 0x20 != mark {
            return None;
        }
        exp = exponent(&s[at + 1..])?;
    }
    let mut digits = s[..int_len].to_vec();
    if frac_len > 0 {
        digits.extend_from_slice(&s[int_len + 1..int_len + 1 + frac_len]);
    }
    let frac_len = frac_len as i64;
    Some(if radix == 16 {
        from_hex(neg, &digits, exp.saturating_sub(4 * frac_len))
    } else {
        from_decimal(neg, &digits, exp.saturating_sub(frac_len))
    })
}

/// An exponent's text (all of what is left): a sign and digits; a huge
/// one saturates (it means an overflow or an underflow either way).
fn exponent(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = digits.iter().fold(0i64, |v, &d| {
        v.saturating_mul(10)
            .saturating_add(i64::from(d - b'0'))
            .min(1 << 40)
    });
    Some(if neg { -v } else { v })
}

/// `digits × 10^exp10`, rounded.
fn from_decimal(neg: bool, digits: &[u8], exp10: i64) -> Ld {
    let digits = &digits[digits.iter().take_while(|&&d| d == b'0').count()..];
    if digits.is_empty() {
        return Ld::zero(neg);
    }
    // Beyond these the value is over 10^4933 (past the largest, about
    // 1.19e4932) or under 10^-4952 (under half the least subnormal).
    let magnitude = digits.len() as i64 + exp10;
    if magnitude > 4934 {
        return Ld::Inf { neg };
    }
    if magnitude < -4951 {
        return Ld::NaN;
    }
    let mut d = Big::default();
    for chunk in digits.chunks(9) {
        let v = chunk
            .iter()
            .fold(0u32, |v, &c| v * 10 + u32::from(c - b'0'));
        d.mul_small(10u32.pow(chunk.len() as u32));
        d.add_small(v);
    }
    let v = if exp10 >= 0 {
        d.mul_pow10(exp10 as u32);
        round(neg, &d, 0, false)
    } else {
        let mut den = Big::from_u64(1);
        den.mul_pow10((-exp10) as u32);
        // A quotient of at least 66 bits: its last two lie below the
        // significand, so the remainder is only the sticky bit.
        // The divisor is scaled instead where the digits are many.
        let s = den.bits() as i64 + 66 - d.bits() as i64;
        let (q, inexact) = if s >= 0 {
            d.shl(s as u64).div(&den)
        } else {
            d.div(&den.shl((-s) as u64))
        };
        round(neg, &q, -s, inexact)
    };
    underflow_is_nan(v)
}

/// Hexadecimal `digits × 2^exp2`, rounded.
fn from_hex(neg: bool, digits: &[u8], exp2: i64) -> Ld {
    let mut h = Big::default();
    for &c in digits {
        h.mul_small(16);
        h.add_small((c as char).to_digit(16).unwrap_or(0));
    }
    if h.is_zero() {
        return Ld::zero(neg);
    }
    let top = h.bits() as i64 + exp2;
    if top > LOW_MAX + 66 {
        return Ld::Inf { neg };
    }
    if top < LOW_MIN - 2 {
        return Ld::NaN;
    }
    underflow_is_nan(round(neg, &h, exp2, false))
}

/// A nonzero number read as zero is out of range (`NaN` stands for it).
fn underflow_is_nan(v: Ld) -> Ld {
    match v {
        Ld::Finite { m: 0, .. } => Ld::NaN,
        v => v,
    }
}

/// `(n + sticky fraction) × 2^e` to the nearest extended value, ties to
/// even; `sticky` says the true value lies strictly above `n × 2^e` by
/// less than `2^e` (only where `n` has bits below the significand).
fn round(neg: bool, n: &Big, e: i64, sticky: bool) -> Ld {
    if n.is_zero() {
        return Ld::zero(neg);
    }
    let bits = n.bits() as i64;
    let mut low = (e + bits - 64).max(LOW_MIN);
    let shift = low - e;
    let mut m;
    if shift <= 0 {
        debug_assert!(!sticky, "a sticky bit under an exact significand");
        m = n.low_u64() << (-shift);
    } else {
        let shift = shift as u64;
        m = n.shr(shift).low_u64();
        let half = n.bit(shift - 1);
        let above_half = sticky || !n.zero_below(shift - 1);
        if half && (above_half || m & 1 == 1) {
            m = match m.checked_add(1) {
                Some(m) => m,
                None => {
                    low += 1;
                    1 << 63
                }
            };
        }
    }
    if m == 0 {
        return Ld::zero(neg);
    }
    if low > LOW_MAX {
        return Ld::Inf { neg };
    }
    Ld::Finite { neg, m, e: low }
}

/// `a + b`, rounded once.
pub(crate) fn add(a: Ld, b: Ld) -> Ld {
    match (a, b) {
        (Ld::NaN, _) | (_, Ld::NaN) => Ld::NaN,
        (Ld::Inf { neg: x }, Ld::Inf { neg: y }) if x != y => Ld::NaN,
        (Ld::Inf { neg }, _) | (_, Ld::Inf { neg }) => Ld::Inf { neg },
        (
            Ld::Finite {
                neg: na,
                m: ma,
                e: ea,
            },
            Ld::Finite {
                neg: nb,
                m: mb,
                e: eb,
            },
        ) => {
            if ma == 0 && mb == 0 {
                return Ld::zero(na && nb);
            }
            if mb == 0 {
                return a;
            }
            if ma == 0 {
                return b;
            }
            let e = ea.min(eb);
            let x = Big::from_u64(ma).shl((ea - e) as u64);
            let y = Big::from_u64(mb).shl((eb - e) as u64);
            if na == nb {
                return round(na, &x.plus(&y), e, false);
            }
            match x.cmp(&y) {
                Ordering::Equal => Ld::ZERO,
                Ordering::Greater => round(na, &x.minus(&y), e, false),
                Ordering::Less => round(nb, &y.minus(&x), e, false),
            }
        }
    }
}

/// Redis's human form of a finite value: `%.17Lf`, trailing zeros and a
/// bare point cut, `-0` as `0`.
pub(crate) fn human(v: Ld) -> String {
    let Ld::Finite { neg, m, e } = v else {
        unreachable!("only finite values are written")
    };
    const SCALE: u128 = 100_000_000_000_000_000; // 10^17
    let (int, frac) = if e >= 0 {
        (Big::from_u64(m).shl(e as u64).to_decimal(), 0)
    } else {
        // m × 10^17 < 2^121: the fraction's digits in a u128.
        let n = u128::from(m) * SCALE;
        let s = (-e) as u32;
        let q = if s >= 122 {
            0
        } else {
            let q = n >> s;
            let rem = n & ((1u128 << s) - 1);
            let half = 1u128 << (s - 1);
            if rem > half || (rem == half && q & 1 == 1) {
                q + 1
            } else {
                q
            }
        };
        ((q / SCALE).to_string(), (q % SCALE) as u64)
    };
    let mut text = format!("{}{int}.{frac:017}", if neg { "-" } else { "" });
    let cut = text.trim_end_matches('0').trim_end_matches('.').len();
    text.truncate(cut);
    if text == "-0" {
        text = "0".into();
    }
    text
}

/// A natural number, little-endian in 32-bit words, no zero words on top.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => self.0.len() as u64 * 32 - u64::from(top.leading_zeros()),
        }
    }

    fn bit(&self, i: u64) -> bool {
        let w = (i / 32) as usize;
        w < self.0.len() && self.0[w] >> (i % 32) & 1 == 1
    }

    /// Every bit below `i` is zero.
    fn zero_below(&self, i: u64) -> bool {
        let w = ((i / 32) as usize).min(self.0.len());
        if self.0[..w].iter().any(|&x| x != 0) {
            return false;
        }
        let r = i % 32;
        w == self.0.len() || r == 0 || self.0[w] & ((1 << r) - 1) == 0
    }

    fn low_u64(&self) -> u64 {
        let w = |i: usize| u64::from(self.0.get(i).copied().unwrap_or(0));
        w(0) | w(1) << 32
    }

    fn mul_small(&mut self, k: u32) {
        let mut carry = 0u64;
        for w in &mut self.0 {
            let v = u64::from(*w) * u64::from(k) + carry;
            *w = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    fn add_small(&mut self, k: u32) {
        let mut carry = u64::from(k);
        for w in &mut self.0 {
            if carry == 0 {
                break;
            }
            let v = u64::from(*w) + carry;
            *w = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut k: u32) {
        while k > 0 {
            let step = k.min(9);
            self.mul_small(10u32.pow(step));
            k -= step;
        }
    }

    fn shl(&self, n: u64) -> Big {
        if self.is_zero() {
            return Big::default();
        }
        let (words, r) = ((n / 32) as usize, n % 32);
        let mut out = vec![0u32; words];
        let mut carry = 0u32;
        for &w in &self.0 {
            if r == 0 {
                out.push(w);
            } else {
                out.push(w << r | carry);
                carry = w >> (32 - r);
            }
        }
        if carry != 0 {
            out.push(carry);
        }
        Big(out)
    }

    fn shr(&self, n: u64) -> Big {
        let (words, r) = ((n / 32) as usize, n % 32);
        if words >= self.0.len() {
            return Big::default();
        }
        let src = &self.0[words..];
        let mut out: Vec<u32> = (0..src.len())
            .map(|i| {
                let hi = src.get(i + 1).copied().unwrap_or(0);
                if r == 0 {
                    src[i]
                } else {
                    src[i] >> r | hi << (32 - r)
                }
            })
            .collect();
        while out.last() == Some(&0) {
            out.pop();
        }
        Big(out)
    }

    fn plus(&self, o: &Big) -> Big {
        let n = self.0.len().max(o.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let v = u64::from(self.0.get(i).copied().unwrap_or(0))
                + u64::from(o.0.get(i).copied().unwrap_or(0))
                + carry;
            out.push(v as u32);
            carry = v >> 32;
        }
        if carry != 0 {
            out.push(carry as u32);
        }
        Big(out)
    }

    /// `self - o`, `o` being no greater.
    fn minus(&self, o: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let mut v = i64::from(self.0[i]) - i64::from(o.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = 0;
            if v < 0 {
                v += 1 << 32;
                borrow = 1;
            }
            out.push(v as u32);
        }
        let mut b = Big(out);
        b.trim();
        b
    }

    /// The quotient, and whether the division left a remainder (by
    /// shifting and subtracting: quotients here are short).
    fn div(&self, den: &Big) -> (Big, bool) {
        let mut rem = self.clone();
        let mut q = Big::default();
        if self.bits() >= den.bits() {
            let top = self.bits() - den.bits();
            for i in (0..=top).rev() {
                let t = den.shl(i);
                if rem.cmp(&t) != Ordering::Less {
                    rem = rem.minus(&t);
                    q = q.plus(&Big::from_u64(1).shl(i));
                }
            }
        }
        (q, !rem.is_zero())
    }

    /// Divides by `d` in place; the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for w in self.0.iter_mut().rev() {
            let v = rem << 32 | u64::from(*w);
            *w = (v / u64::from(d)) as u32;
            rem = v % u64::from(d);
        }
        self.trim();
        rem as u32
    }

    fn to_decimal(&self) -> String {
        let mut n = self.clone();
        let mut groups = Vec::new();
        while !n.is_zero() {
            groups.push(n.div_small(1_000_000_000));
        }
        let Some((top, rest)) = groups.split_last() else {
            return "0".into();
        };
        let mut s = top.to_string();
        for g in rest.iter().rev() {
            s += &format!("{g:09}");
        }
        s
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Big {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(a: &str, b: &str) -> Option<String> {
        let v = add(parse(a.as_bytes())?, parse(b.as_bytes())?);
        Some(if v.is_finite() {
            human(v)
        } else {
            "NaN or Infinity".into()
        })
    }

    /// Replies of redis-server 7.0.15 (x86-64) to `SET f A`, then
    /// `INCRBYFLOAT f B`.
    #[test]
    fn sums_as_redis_writes_them() {
        for (a, b, want) in [
            ("0.1", "0.2", "0.3"),
            ("1", "-1.1", "-0.1"),
            ("17179869184", "1.5", "17179869185.5"),
            ("0", "3.0e3", "3000"),
            ("0", "1e30", "1000000000000000000024696061952"),
            ("0", "1e-20", "0"),
            ("0", "-1e-20", "0"),
            ("0", "0x1p-3", "0.125"),
            ("0", "5.0e-4940", "0"),
            ("0", ".5", "0.5"),
            ("0", "5.", "5"),
            ("0", "+3", "3"),
            ("0", "0.1234567890123456789", "0.12345678901234568"),
            ("10.5", "0.25", "10.75"),
            ("3", "0.3333333333333333333333", "3.33333333333333333"),
            (
                "0",
                "123456789012345678901234567890",
                "123456789012345678899921813504",
            ),
            ("0", "-0.0", "0"),
            ("0", "0.000000000000000005", "0"),
            ("0", "0.000000000000000015", "0.00000000000000002"),
            ("0", "0.000000000000000025", "0.00000000000000002"),
            ("0", "1.00000000000000000000000000001", "1"),
            ("0", "9.99999999999999999999", "10"),
            ("0", "18446744073709551617", "18446744073709551616"),
            ("0", "36893488147419103233", "36893488147419103232"),
            ("0", "3.6e-4951", "0"),
            ("1", "inf", "NaN or Infinity"),
            ("0", "INFINITY", "NaN or Infinity"),
            ("0", "-Inf", "NaN or Infinity"),
            ("0.024390243902439025", "-0.024390243902439025", "0"),
        ] {
            assert_eq!(sum(a, b).as_deref(), Some(want), "{a} + {b}");
        }
        // Long ones by their ends and length.
        for (b, len, head, tail) in [
            (
                "1e4932",
                4933,
                "1000000000000000000006018949387963891",
                "163141086538418113791886622720",
            ),
            (
                "1.5e4000",
                4001,
                "1500000000000000000027904697205491382",
                "3022083339964297684975616",
            ),
        ] {
            let big = sum("0", b).unwrap();
            assert_eq!(big.len(), len, "{b}");
            assert!(big.starts_with(head) && big.ends_with(tail), "{b}: {big}");
        }
    }

    #[test]
    fn refuses_what_string2ld_refuses() {
        for bad in [
            "",
            " 1",
            "1 ",
            "0x",
            "1e",
            "nan",
            "NaN",
            "1e-5000",
            "1e5000",
            "1.2e4932",
            "1.0e-4951",
            "abc",
            ".",
            "-",
            "1\u{0}2",
            "infinit",
            "1e+",
            "0x1p",
            "1.5.2",
        ] {
            assert_eq!(parse(bad.as_bytes()), None, "{bad:?}");
        }
        assert_eq!(parse(&[b'1'; MAX_CHARS]), None);
        assert!(
            parse(&[b'1'; MAX_CHARS - 1]).is_none(),
            "about 1e5119: out of range"
        );
        assert_eq!(parse(b"0e99999999999999999999"), Some(Ld::ZERO));
    }

    #[test]
    fn integers_are_exact() {
        for n in [0, 1, -1, i64::MAX, i64::MIN, 1 << 53 | 1] {
            let v = round(n < 0, &Big::from_u64(n.unsigned_abs()), 0, false);
            assert_eq!(human(v), n.to_string());
        }
    }
}
