//! Reading back an agent's HDR interval log ([`crate::output::hdrlog`]
//! writes it): every interval's histogram, exactly as recorded, with its
//! wall-clock start and the step of a search or scan it belongs to. The
//! merge reads a log a line at a time ([`each`]) and adds each interval
//! where it belongs at once, so a log is never held whole.

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::io::BufRead;

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
    for (k, line) in input.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}", k + 1);
        let line = line.map_err(|e| at(format!("cannot read it: {e}")))?;
        if let Some(rest) = line.strip_prefix("#[BaseTime: ") {
            let secs = rest.split_whitespace().next().unwrap_or_default();
            let secs = secs.parse::<f64>().ok().filter(|s| s.is_finite());
            base = Some(secs.ok_or_else(|| at("bad BaseTime".into()))?);
        } else if let Some(rest) = line.strip_prefix("#step ") {
            step = rest.split(':').next().and_then(|k| k.trim().parse().ok());
        } else if line.starts_with("Tag=") {
            let base = base.ok_or_else(|| at("an interval before the BaseTime header".into()))?;
            f(interval(&line, base, step).map_err(at)?).map_err(at)?;
            n += 1;
        }
    }
    Ok(n)
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
