//! CSV for spreadsheets and pandas: one row per operation with the
//! summary's columns (`load --format csv`), and the per-second series
//! (`load --per-second FILE.csv`). Latencies in µs, as in the JSON; every
//! figure is the JSON's own number, written in full.

use crate::report::{LoadReport, OpSummary, Percentiles};

/// The columns of one set of percentiles, after `prefix`.
fn percentile_columns(prefix: &str) -> Vec<String> {
    ["mean", "p50", "p90", "p99", "p99_9", "p99_99", "max"]
        .iter()
        .map(|p| format!("{prefix}{p}_us"))
        .collect()
}

/// The columns of one set of intervals, after `prefix`: a low and a
/// high bound per percentile (`latency_p99_ci_lo_us`, …).
fn interval_columns(prefix: &str) -> Vec<String> {
    ["p50", "p90", "p99", "p99_9", "p99_99"]
        .iter()
        .flat_map(|p| ["lo", "hi"].map(|end| format!("{prefix}{p}_ci_{end}_us")))
        .collect()
}

/// The bounds of `p`'s intervals, empty where there is none.
fn interval_cells(p: &Percentiles) -> Vec<String> {
    let ci = p.ci95.clone().unwrap_or_default();
    ci.all()
        .iter()
        .flat_map(|b| match b {
            Some([lo, hi]) => [lo.to_string(), hi.to_string()],
            None => [String::new(), String::new()],
        })
        .collect()
}

fn percentile_cells(p: &Percentiles) -> Vec<String> {
    [p.mean, p.p50, p.p90, p.p99, p.p99_9, p.p99_99, p.max]
        .iter()
        .map(f64::to_string)
        .collect()
}

/// One row per operation: `op, count, rate_rps`, the latency's
/// percentiles (`latency_p99_us`, …: from the intended send time in an
/// open loop, from the send in a closed one) and, in an open loop, the
/// service time's (`service_p99_us`, …); then each percentile's 95%
/// interval (`latency_p99_ci_lo_us`, `latency_p99_ci_hi_us`, …, and the
/// service time's), empty where too few samples gave none.
pub fn operations(report: &LoadReport) -> String {
    operations_of(&report.results.operations)
}

fn operations_of(ops: &[OpSummary]) -> String {
    let open = ops.iter().any(|o| o.service_us.is_some());
    let mut header: Vec<String> = vec!["op".into(), "count".into(), "rate_rps".into()];
    header.extend(percentile_columns("latency_"));
    if open {
        header.extend(percentile_columns("service_"));
    }
    header.extend(interval_columns("latency_"));
    if open {
        header.extend(interval_columns("service_"));
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).expect("CSV to memory");
    for op in ops {
        w.write_record(operation_row(op, open))
            .expect("CSV to memory");
    }
    finish(w)
}

fn operation_row(op: &OpSummary, open: bool) -> Vec<String> {
    let mut row = vec![
        op.name.clone(),
        op.count.to_string(),
        op.rate_rps.to_string(),
    ];
    row.extend(percentile_cells(&op.latency_us));
    if open {
        let service = op.service_us.clone().unwrap_or_default();
        row.extend(percentile_cells(&service));
    }
    row.extend(interval_cells(&op.latency_us));
    if open {
        row.extend(interval_cells(&op.service_us.clone().unwrap_or_default()));
    }
    row
}

/// One row per second of the window: `second` (from 0), `requests`
/// answered in it and, in an open loop, that second's latency
/// (`p50_us`, `p99_us`, `max_us`; empty when no reply came).
pub fn per_second(report: &LoadReport) -> String {
    let r = &report.results;
    let latency = r.per_second_latency_us.as_deref();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["second", "requests"];
    if latency.is_some() {
        header.extend(["p50_us", "p99_us", "max_us"]);
    }
    w.write_record(&header).expect("CSV to memory");
    let cell = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    for (i, n) in r.per_second.iter().enumerate() {
        let mut row = vec![i.to_string(), n.to_string()];
        if let Some(l) = latency {
            let s = l.get(i).cloned().unwrap_or_default();
            row.extend([cell(s.p50), cell(s.p99), cell(s.max)]);
        }
        w.write_record(&row).expect("CSV to memory");
    }
    finish(w)
}

fn finish(w: csv::Writer<Vec<u8>>) -> String {
    let bytes = w.into_inner().expect("CSV to memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 cells")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, open: bool) -> OpSummary {
        let p = Percentiles {
            mean: 12.5,
            p50: 10.0,
            p90: 20.0,
            p99: 30.25,
            p99_9: 40.0,
            p99_99: 41.0,
            max: 50.0,
            ci95: Some(crate::report::Ci95 {
                p50: Some([9.5, 10.5]),
                p99: Some([29.0, 31.5]),
                ..Default::default()
            }),
        };
        OpSummary {
            name: name.into(),
            count: 7,
            rate_rps: 3.5,
            latency_us: p.clone(),
            service_us: open.then_some(p),
            histogram_us: vec![],
        }
    }

    fn ops(open: bool) -> Vec<OpSummary> {
        vec![op("get", open), op("put, \"quoted\"", open)]
    }

    #[test]
    fn a_row_per_operation_with_its_percentiles() {
        let text = operations_of(&ops(false));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "op,count,rate_rps,latency_mean_us,latency_p50_us,latency_p90_us,latency_p99_us,\
             latency_p99_9_us,latency_p99_99_us,latency_max_us,\
             latency_p50_ci_lo_us,latency_p50_ci_hi_us,latency_p90_ci_lo_us,latency_p90_ci_hi_us,\
             latency_p99_ci_lo_us,latency_p99_ci_hi_us,latency_p99_9_ci_lo_us,latency_p99_9_ci_hi_us,\
             latency_p99_99_ci_lo_us,latency_p99_99_ci_hi_us"
        );
        let cells = "12.5,10,20,30.25,40,41,50,9.5,10.5,,,29,31.5,,,,";
        assert_eq!(lines[1], format!("get,7,3.5,{cells}"));
        assert_eq!(lines[2], format!("\"put, \"\"quoted\"\"\",7,3.5,{cells}"));
        let open = operations_of(&ops(true));
        assert!(open
            .lines()
            .next()
            .unwrap()
            .ends_with(",service_max_us,latency_p50_ci_lo_us,latency_p50_ci_hi_us,latency_p90_ci_lo_us,latency_p90_ci_hi_us,latency_p99_ci_lo_us,latency_p99_ci_hi_us,latency_p99_9_ci_lo_us,latency_p99_9_ci_hi_us,latency_p99_99_ci_lo_us,latency_p99_99_ci_hi_us,service_p50_ci_lo_us,service_p50_ci_hi_us,service_p90_ci_lo_us,service_p90_ci_hi_us,service_p99_ci_lo_us,service_p99_ci_hi_us,service_p99_9_ci_lo_us,service_p99_9_ci_hi_us,service_p99_99_ci_lo_us,service_p99_99_ci_hi_us"));
        assert_eq!(open.lines().nth(1).unwrap().split(',').count(), 37);
    }
}
