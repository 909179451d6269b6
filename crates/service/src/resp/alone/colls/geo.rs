//! A position as GEOADD stores it: its sorted-set score, Redis 7.0's
//! 52-bit geohash of the longitude and latitude (`geohashEncodeWGS84` at
//! its largest step, 26 bits each, interleaved), so that the set holds
//! what Redis's holds.

use super::{float, Fail};
use serverlab_proto::resp::reply::NOT_FLOAT;

/// The range Redis indexes: longitudes from -180 to 180, latitudes from
/// -85.05112878 to 85.05112878 (Web Mercator's).
const LONG: (f64, f64) = (-180.0, 180.0);
const LAT: (f64, f64) = (-85.05112878, 85.05112878);

/// Bits per coordinate (Redis's `GEO_STEP_MAX`).
const STEP: u32 = 26;

/// The score of the position `longitude`, `latitude` (each read as
/// Redis's `getDoubleFromObject` reads a double), or Redis's errors: no
/// number, or a position outside the range.
pub(super) fn score(longitude: &[u8], latitude: &[u8]) -> Result<f64, Fail> {
    let lon = float::string2d(longitude).ok_or(Fail::Err(NOT_FLOAT))?;
    let lat = float::string2d(latitude).ok_or(Fail::Err(NOT_FLOAT))?;
    if !(LONG.0..=LONG.1).contains(&lon) || !(LAT.0..=LAT.1).contains(&lat) {
        return Err(Fail::Said(format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        )));
    }
    Ok(hash(lon, lat) as f64)
}

/// Redis's `geohashEncode`: each coordinate's offset in its range in
/// fixed point (truncated to 32 bits, as C converts it), the latitude's
/// bits at the even places and the longitude's at the odd ones.
fn hash(lon: f64, lat: f64) -> u64 {
    let scale = (1u64 << STEP) as f64;
    let lat_offset = (lat - LAT.0) / (LAT.1 - LAT.0) * scale;
    let lon_offset = (lon - LONG.0) / (LONG.1 - LONG.0) * scale;
    spread(lat_offset as u32) | (spread(lon_offset as u32) << 1)
}

/// `x`'s bits at the even places of a 64-bit word.
fn spread(x: u32) -> u64 {
    let mut x = u64::from(x);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redis 7.0.15's scores (ZSCORE after GEOADD) for its documentation's
    /// two cities and the corners of the range.
    #[test]
    fn scores_are_redis_s() {
        assert_eq!(hash(13.361389, 38.115556), 3479099956230698);
        assert_eq!(hash(15.087269, 37.502669), 3479447370796909);
        assert_eq!(hash(-180.0, -85.05112878), 0);
        assert_eq!(hash(180.0, 85.05112878), 13510798882111488);
        assert_eq!(spread(0b1011), 0b1000101);
    }
}
