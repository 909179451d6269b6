//! Reading back an agent's HDR interval log ([`crate::output::hdrlog`]
//! writes it): every interval's histogram, exactly as recorded, with its
//! wall-clock start and the step of a search or scan it belongs to. The
//! merge reads a log a line at a time ([`each`]) and adds each interval
//! where it belongs at once, so a log is never held whole.

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::io::{BufRead, Read};

/// The longest line a log may have: an interval's histogram, encoded, is
/// a few KiB (a line past this is not one `load` wrote, or no log at all:
/// /dev/zero has no line end).
pub const MAX_LINE_BYTES: u64 = 1 << 20;

/// One tagged interval: `OP` (latency from the intended send time) or
/// `OP.service` (from the actual send).
#[derive(Debug, Clone)]
pub struct Interval {
    pub tag: String,
    /// Its start, in seconds since the Unix epoch.
    pub start_unix_s: f64,
    /// The step of a scan it was recorded in (counted from 0 as the log's
    /// `#step K:` comments count), if any.
    pub step: Option<usize>,
    pub histogram: Histogram<u64>,
}

/// Every interval of the log `text`, held (for tests and small logs).
pub fn read(text: &str) -> Result<Vec<Interval>, String> {
    let mut out = Vec::new();
    each(text.as_bytes(), |iv| {
        out.push(iv);
        Ok(())
    })?;
    Ok(out)
}

/// Each interval of the log read from `input`, in order, handed to `f`
/// (whose error stops the reading); how many there were. An error names
/// the line.
pub fn each(
    input: impl BufRead,
    mut f: impl FnMut(Interval) -> Result<(), String>,
) -> Result<usize, String> {
    let mut base = None;
    let mut step = None;
    let mut n = 0;
    let mut input = input;
    let mut bytes = Vec::new();
    for k in 0.. {
        let at = |e: String| format!("line {}: {e}", k + 1);
        let Some(line) = next_line(&mut input, &mut bytes).map_err(at)? else {
            break;
        };
        if let Some(rest) = line.strip_prefix("#[BaseTime: ") {
            let secs = rest.split_whitespace().next().unwrap_or_default();
            let secs = secs.parse::<f64>().ok().filter(|s| s.is_finite());
            base = Some(secs.ok_or_else(|| at("bad BaseTime".into()))?);
        } else if let Some(rest) = line.strip_prefix("#step ") {
            step = rest.split(':').next().and_then(|k| k.trim().parse().ok());
        } else if line.starts_with("Tag=") {
            let base = base.ok_or_else(|| at("an interval before the BaseTime header".into()))?;
            f(interval(line, base, step).map_err(at)?).map_err(at)?;
            n += 1;
        }
    }
    Ok(n)
}

/// The next line of `input` (without its line end), read into `bytes`;
/// None at the end. A line past [`MAX_LINE_BYTES`] is refused unread.
fn next_line<'a>(
    input: &mut impl BufRead,
    bytes: &'a mut Vec<u8>,
) -> Result<Option<&'a str>, String> {
    bytes.clear();
    let read = input
        .by_ref()
        .take(MAX_LINE_BYTES + 1)
        .read_until(b'\n', bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if read == 0 {
        return Ok(None);
    }
    if bytes.len() as u64 > MAX_LINE_BYTES {
        return Err(format!(
            "longer than {} MiB: not a log `load` wrote",
            MAX_LINE_BYTES >> 20
        ));
    }
    let line =
        std::str::from_utf8(bytes).map_err(|_| "not text: not a log `load` wrote".to_string())?;
    Ok(Some(line.trim_end_matches('\n').trim_end_matches('\r')))
}

/// `Tag=T,START,LENGTH,MAX,HISTOGRAM`.
fn interval(line: &str, base: f64, step: Option<usize>) -> Result<Interval, String> {
    use base64::Engine;
    let fields: Vec<&str> = line.splitn(5, ',').collect();
    let [tag, start, _length, _max, encoded] = fields[..] else {
        return Err("an interval line without its five fields".into());
    };
    let start = start
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite())
        .ok_or_else(|| format!("bad start '{start}'"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|e| format!("a histogram that is not base64: {e}"))?;
    let histogram: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("a histogram that does not decode: {e:?}"))?;
    Ok(Interval {
        tag: tag.trim_start_matches("Tag=").to_string(),
        start_unix_s: base + start,
        step,
        histogram,
    })
}
