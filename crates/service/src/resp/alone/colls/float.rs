//! Doubles as Redis 7.0 reads and writes them: C's `strtod` (glibc's
//! grammar: leading spaces, a sign, decimal or hexadecimal digits,
//! `inf`/`infinity`, `nan`), Redis's stricter `string2d` over it (what a
//! score argument must be), and `%.17g` (how a score is answered).

/// What `strtod` makes of the start of `s`: the value, how many bytes
/// it read (0: no number, as C's `eptr == s`), and whether it left the
/// range (C's `ERANGE`: too large, or too small to be anything but 0 or a
/// subnormal).
pub(crate) fn strtod(s: &[u8]) -> (f64, usize, bool) {
    let start = s.iter().take_while(|b| is_space(**b)).count();
    let mut i = start;
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let signed = |v: f64| if negative { -v } else { v };
    let rest = &s[i..];
    if let Some(n) = word(rest, b"infinity").or_else(|| word(rest, b"inf")) {
        return (signed(f64::INFINITY), i + n, false);
    }
    if let Some(n) = word(rest, b"nan") {
        return (f64::NAN, i + n + nan_payload(&rest[n..]), false);
    }
    let hex = matches!(rest, [b'0', b'x' | b'X', ..]);
    let parsed = if hex { hexadecimal(&rest[2..]) } else { None };
    let (v, n, erange) = match parsed {
        Some((v, n, erange)) => (v, n + 2, erange),
        None => match decimal(rest) {
            Some(r) => r,
            None => return (0.0, 0, false),
        },
    };
    (signed(v), i + n, erange)
}

/// Redis's `string2d`: all of `s` is one number, not NaN, with nothing
/// before it, and not out of range (a subnormal is accepted).
pub(crate) fn string2d(s: &[u8]) -> Option<f64> {
    if s.is_empty() || is_space(s[0]) {
        return None;
    }
    let (v, n, erange) = strtod(s);
    let out_of_range = erange && (v.is_infinite() || v == 0.0);
    (n == s.len() && !out_of_range && !v.is_nan()).then_some(v)
}

/// A score range's end as Redis reads it (`zslParseRange`): `strtod` up
/// to the end of the C string (a NUL ends it early), not NaN. An empty
/// one is 0, as there.
pub(crate) fn range_end(s: &[u8]) -> Option<f64> {
    let (v, n, _) = strtod(s);
    let ended = n == s.len() || s[n] == 0;
    (ended && !v.is_nan()).then_some(v)
}

/// `d` as Redis 7.0 answers a double: `inf`, `-inf`, else C's `%.17g`.
pub(crate) fn format(d: f64) -> String {
    if d.is_infinite() {
        return if d > 0.0 { "inf" } else { "-inf" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // %g: the exponent X of the %e form, rounded to 17 digits, decides.
    let e = format!("{d:.16e}");
    let (mantissa, exp) = e.split_once('e').expect("an exponent");
    let x: i32 = exp.parse().expect("a decimal exponent");
    if !(-4..17).contains(&x) {
        let m = trim_fraction(mantissa);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", x.unsigned_abs())
    } else {
        let prec = (16 - x) as usize;
        trim_fraction(&format!("{d:.prec$}")).to_string()
    }
}

/// A fraction's trailing zeros, and then a bare point, cut off.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// `w`'s length if `s` begins with it, in any case.
fn word(s: &[u8], w: &[u8]) -> Option<usize> {
    (s.len() >= w.len() && s[..w.len()].eq_ignore_ascii_case(w)).then_some(w.len())
}

/// `(n-char-sequence)` after `nan`: its length, or 0.
fn nan_payload(s: &[u8]) -> usize {
    if s.first() != Some(&b'(') {
        return 0;
    }
    let inner = s[1..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    if s.get(1 + inner) == Some(&b')') {
        inner + 2
    } else {
        0
    }
}

fn digits(s: &[u8], at: usize, hex: bool) -> usize {
    s[at..]
        .iter()
        .take_while(|b| {
            if hex {
                b.is_ascii_hexdigit()
            } else {
                b.is_ascii_digit()
            }
        })
        .count()
}

/// An exponent (`e`/`p`, a sign, digits) at `at`: its length (0 if
/// there is none; a bare `e` is not read).
fn exponent(s: &[u8], at: usize, mark: u8) -> usize {
    if !s.get(at).is_some_and(|b| b.eq_ignore_ascii_case(&mark)) {
        return 0;
    }
    let sign = usize::from(matches!(s.get(at + 1), Some(b'+' | b'-')));
    match digits(s, at + 1 + sign, false) {
        0 => 0,
        n => 1 + sign + n,
    }
}

/// Digits, a point, digits (at least one digit in all): the lengths of
/// the whole part, and of the part with the point and fraction.
fn mantissa(s: &[u8], hex: bool) -> Option<(usize, usize)> {
    let whole = digits(s, 0, hex);
    let frac = if s.get(whole) == Some(&b'.') {
        1 + digits(s, whole + 1, hex)
    } else {
        0
    };
    (whole + frac.saturating_sub(1) > 0).then_some((whole, whole + frac))
}

/// A decimal number at the start of `s` (no sign): value, length, range.
fn decimal(s: &[u8]) -> Option<(f64, usize, bool)> {
    let (_, m) = mantissa(s, false)?;
    let n = m + exponent(s, m, b'e');
    let text = std::str::from_utf8(&s[..n]).ok()?;
    let v: f64 = text.parse().ok()?;
    let nonzero = s[..m].iter().any(|b| (b'1'..=b'9').contains(b));
    let erange = v.is_infinite() || (nonzero && (v == 0.0 || v.abs() < f64::MIN_POSITIVE));
    Some((v, n, erange))
}

/// A hexadecimal number after `0x` (no sign): value, length, range.
/// Exact while its digits fit 64 bits; beyond, the rest are dropped.
fn hexadecimal(s: &[u8]) -> Option<(f64, usize, bool)> {
    let (whole, m) = mantissa(s, true)?;
    let mut bits: u64 = 0;
    let mut scale: i64 = 0;
    for (i, b) in s[..m].iter().enumerate() {
        let Some(d) = (*b as char).to_digit(16) else {
            continue;
        };
        if bits >> 60 == 0 {
            bits = bits << 4 | u64::from(d);
            if i > whole {
                scale -= 4;
            }
        } else if i < whole {
            scale += 4;
        }
    }
    let ex = exponent(s, m, b'p');
    if ex > 0 {
        let text = std::str::from_utf8(&s[m + 1..m + ex]).ok()?;
        let p: i64 = text.parse().unwrap_or(if text.starts_with('-') {
            -100_000
        } else {
            100_000
        });
        scale = scale.saturating_add(p.clamp(-100_000, 100_000));
    }
    let v = ldexp(bits as f64, scale);
    let erange = v.is_infinite() || (bits != 0 && (v == 0.0 || v < f64::MIN_POSITIVE));
    Some((v, m + ex, erange))
}

/// `x` times 2 to the `e`, in steps that stay in range.
fn ldexp(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 && x.is_finite() && x != 0.0 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 && x != 0.0 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_as_redis_string2d() {
        for (s, want) in [
            ("1.5", Some(1.5)),
            ("-2", Some(-2.0)),
            ("+.5", Some(0.5)),
            ("5.", Some(5.0)),
            ("1e20", Some(1e20)),
            ("1E+3", Some(1000.0)),
            ("inf", Some(f64::INFINITY)),
            ("+Inf", Some(f64::INFINITY)),
            ("-infinity", Some(f64::NEG_INFINITY)),
            ("0x10", Some(16.0)),
            ("0x1.8p1", Some(3.0)),
            ("-0X.8", Some(-0.5)),
            ("1e-310", Some(1e-310)),
            ("-0", Some(-0.0)),
            ("", None),
            (" 1", None),
            ("1 ", None),
            ("nan", None),
            ("-nan", None),
            ("abc", None),
            ("1e400", None),
            ("-1e400", None),
            ("1e-400", None),
            ("1e", None),
            ("0x", None),
            (".", None),
            ("infinit", None),
            ("1\u{0}", None),
        ] {
            let got = string2d(s.as_bytes());
            assert_eq!(
                got.map(f64::to_bits),
                want.map(f64::to_bits),
                "{s:?}: {got:?}"
            );
        }
    }

    #[test]
    fn range_ends_read_as_zsl_parse_range() {
        assert_eq!(range_end(b"1.5"), Some(1.5));
        assert_eq!(range_end(b" 2"), Some(2.0));
        assert_eq!(range_end(b"1e400"), Some(f64::INFINITY));
        assert_eq!(range_end(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(range_end(b""), Some(0.0));
        assert_eq!(range_end(b"3\0junk"), Some(3.0));
        assert_eq!(range_end(b"nan"), None);
        assert_eq!(range_end(b"1x"), None);
        assert_eq!(range_end(b" "), None);
    }

    #[test]
    fn doubles_print_as_percent_17g() {
        for (d, want) in [
            (1.5, "1.5"),
            (1e20, "1e+20"),
            (1e17, "1e+17"),
            (1e16, "10000000000000000"),
            (123456789.0, "123456789"),
            (0.1, "0.10000000000000001"),
            (-2.5, "-2.5"),
            (1e-5, "1.0000000000000001e-05"),
            (0.0001, "0.0001"),
            (-0.0, "-0"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "4.9406564584124654e-324"),
            (1e15 + 0.25, "1000000000000000.2"),
            (3.0, "3"),
        ] {
            assert_eq!(format(d), want, "{d:e}");
        }
    }
}
