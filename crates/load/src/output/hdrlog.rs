//! An HDR interval log, in the text format HdrHistogram's own tools
//! (`HistogramLogReader`, `HistogramLogProcessor`, HistogramLogAnalyzer,
//! the Python and Rust ports) read: a header, then one line per tagged
//! interval — its start (seconds from the base time), its length, its
//! largest value, and its histogram, compressed (V2 + deflate) and in
//! base64. The interval lines are hdrhistogram's own writer's.
//!
//! Values are nanoseconds, as the Java tools assume (their default output
//! unit ratio, 10⁶, prints milliseconds); the `Interval_Max` column is in
//! milliseconds, as Java's writer puts it.

use crate::intervals::{IntervalLog, LogEntry};
use crate::record::new_histogram;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use std::io::{self, Write};
use std::time::UNIX_EPOCH;

/// Write `log` to `w`; `about` goes in the first comment line.
pub fn write(log: &IntervalLog, about: &str, w: &mut impl Write) -> io::Result<()> {
    let base = log
        .base
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    // The header as Java's HistogramLogWriter writes it (hdrhistogram's
    // builder has no legend line).
    writeln!(w, "#[{about}]")?;
    writeln!(w, "#[Histogram log format version 1.3]")?;
    writeln!(w, "#[StartTime: {base:.3} (seconds since epoch)]")?;
    writeln!(w, "#[BaseTime: {base:.3} (seconds since epoch)]")?;
    writeln!(
        w,
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
    )?;
    let mut serializer = V2DeflateSerializer::new();
    let mut writer = IntervalLogWriterBuilder::new()
        .with_max_value_divisor(1e6)
        .begin_log_with(w, &mut serializer)?;
    let mut h = new_histogram();
    for entry in &log.entries {
        match entry {
            LogEntry::Comment(text) => writer.write_comment(text)?,
            LogEntry::Interval {
                start,
                length,
                tag,
                buckets,
            } => {
                h.reset();
                for &(value, count) in buckets {
                    h.saturating_record_n(value, count);
                }
                let clean: String = tag
                    .chars()
                    .map(|c| if ", \r\n".contains(c) { '_' } else { c })
                    .collect();
                writer
                    .write_histogram(&h, *start, *length, Tag::new(&clean))
                    .map_err(|e| io::Error::other(e.to_string()))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry as Read};
    use std::time::{Duration, SystemTime};

    fn decode(text: &str) -> Vec<u8> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap()
    }

    #[test]
    fn hdrhistogram_reads_back_what_is_written() {
        let mut log = IntervalLog::new(SystemTime::now());
        log.comment("step 1".into());
        let mut h = new_histogram();
        for us in 1..=100u64 {
            h.record(us * 1000).unwrap();
        }
        let buckets = crate::intervals::buckets(&h);
        log.push(
            Duration::from_secs(3),
            Duration::from_secs(1),
            "GET".into(),
            buckets,
        );
        log.push(
            Duration::from_secs(4),
            Duration::from_millis(500),
            "GET.service".into(),
            vec![],
        );
        let mut out = Vec::new();
        write(&log, "serverlab test", &mut out).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.starts_with("#[serverlab test]\n#[Histogram log format version 1.3]\n"));
        assert!(text.contains("\n#step 1\n"), "{text}");
        assert!(text.contains("\nTag=GET,3.000,1.000,0.100,HISTF"), "{text}");
        let intervals: Vec<_> = IntervalLogIterator::new(&out)
            .filter_map(|e| match e.unwrap() {
                Read::Interval(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(intervals.len(), 2);
        assert_eq!(intervals[0].tag().unwrap().as_str(), "GET");
        assert_eq!(intervals[1].duration(), Duration::from_millis(500));
        let mut d = hdrhistogram::serialization::Deserializer::new();
        let back: hdrhistogram::Histogram<u64> = d
            .deserialize(&mut decode(intervals[0].encoded_histogram()).as_slice())
            .unwrap();
        assert_eq!(back.len(), 100);
        assert_eq!(back.value_at_quantile(0.99), h.value_at_quantile(0.99));
    }
}
