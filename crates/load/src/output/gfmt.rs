//! Numbers as C++ `std::cout` prints a double by default (`%g`, 6
//! significant digits), so `caps` output matches the reference client.

/// Format like `printf("%g", x)`.
pub fn g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    // Round to 6 significant digits first: the exponent is the rounded one.
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').expect("scientific format");
    let exp: i32 = exp.parse().expect("exponent");
    if !(-4..6).contains(&exp) {
        let mantissa = trim_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{x:.decimals$}")).to_string()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::g;

    #[test]
    fn matches_printf() {
        let cases = [
            (10585.9, "10585.9"),
            (36283.3, "36283.3"),
            (10422.31, "10422.3"),
            (10.0001, "10.0001"),
            (10.000012, "10"),
            (96515.3 / 10.0001, "9651.43"),
            (0.5, "0.5"),
            (100.0, "100"),
            (123456.4, "123456"),
            (999999.5, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (-2.5, "-2.5"),
            (0.0, "0"),
        ];
        for (x, want) in cases {
            assert_eq!(g(x), want, "{x}");
        }
    }
}
