//! Reading back an agent's HDR interval log ([`crate::output::hdrlog`]
//! writes it): every interval's histogram, exactly as recorded, with its
//! wall-clock start and the step of a search or scan it belongs to.

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

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

/// Every interval of the log `text`.
pub fn read(text: &str) -> Result<Vec<Interval>, String> {
    let mut base = None;
    let mut step = None;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("#[BaseTime: ") {
            let secs = rest.split_whitespace().next().unwrap_or_default();
            base = Some(
                secs.parse::<f64>()
                    .map_err(|_| format!("line {}: bad BaseTime", n + 1))?,
            );
        } else if let Some(rest) = line.strip_prefix("#step ") {
            step = rest.split(':').next().and_then(|k| k.trim().parse().ok());
        } else if line.starts_with("Tag=") {
            let base = base.ok_or("an interval before the BaseTime header")?;
            out.push(interval(line, base, step).map_err(|e| format!("line {}: {e}", n + 1))?);
        }
    }
    Ok(out)
}

/// `Tag=T,START,LENGTH,MAX,HISTOGRAM`.
fn interval(line: &str, base: f64, step: Option<usize>) -> Result<Interval, String> {
    use base64::Engine;
    let fields: Vec<&str> = line.splitn(5, ',').collect();
    let [tag, start, _length, _max, encoded] = fields[..] else {
        return Err("an interval line without its five fields".into());
    };
    let start: f64 = start.parse().map_err(|_| format!("bad start '{start}'"))?;
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
