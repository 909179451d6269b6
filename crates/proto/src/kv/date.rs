//! The `Date` header's format (IMF-fixdate, RFC 9110 §5.6.7), from Unix
//! seconds: `Sun, 06 Nov 1994 08:49:37 GMT`.

/// Length of an IMF-fixdate.
pub const DATE_LEN: usize = 29;

/// Format `unix_secs` (UTC) as an IMF-fixdate.
pub fn imf_fixdate(unix_secs: u64) -> [u8; DATE_LEN] {
    const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let days = unix_secs / 86_400;
    let secs = unix_secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    out[..3].copy_from_slice(DAYS[(days % 7) as usize]);
    two(&mut out[5..7], day);
    out[8..11].copy_from_slice(MONTHS[(month - 1) as usize]);
    let year = year.min(9999);
    two(&mut out[12..14], year / 100);
    two(&mut out[14..16], year % 100);
    two(&mut out[17..19], secs / 3600);
    two(&mut out[20..22], secs / 60 % 60);
    two(&mut out[23..25], secs % 60);
    out
}

fn two(out: &mut [u8], n: u64) {
    out[0] = b'0' + (n / 10) as u8;
    out[1] = b'0' + (n % 10) as u8;
}

/// Days since 1970-01-01 to (year, month 1..=12, day 1..=31), after Howard
/// Hinnant's `civil_from_days`, for dates from 1970 on.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(&imf_fixdate(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
        // RFC 9110's example.
        assert_eq!(&imf_fixdate(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
        // A leap day, and the last second of a century leap year.
        assert_eq!(&imf_fixdate(951_782_400), b"Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(&imf_fixdate(978_307_199), b"Sun, 31 Dec 2000 23:59:59 GMT");
        assert_eq!(
            &imf_fixdate(1_709_208_000),
            b"Thu, 29 Feb 2024 12:00:00 GMT"
        );
    }
}
