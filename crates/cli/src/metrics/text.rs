//! The Prometheus text format (0.0.4) for clients that do not ask for
//! OpenMetrics, from the OpenMetrics text prometheus-client writes. The
//! two differ, for what this exporter writes, in three things only: a
//! counter's family is named with its `_total` in Prometheus' format (its
//! samples are `_total` in both), there is no `# UNIT` line, and no
//! `# EOF`.

use std::collections::HashSet;

/// `open`, an OpenMetrics exposition, in the Prometheus text format.
pub fn prometheus_text(open: &str) -> String {
    let counters: HashSet<&str> = open
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(open.len());
    for line in open.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|p| {
            let rest = line.strip_prefix(p)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{p}{name}_total {tail}"))
        });
        match renamed {
            Some(l) => out += &l,
            None => out += line,
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_with_total_and_eof_goes() {
        let open = "# HELP a_requests Requests.\n# TYPE a_requests counter\n\
                    a_requests_total{op=\"GET\"} 3\n# HELP b Open.\n# TYPE b gauge\n\
                    # UNIT b bytes\nb 2\n# EOF\n";
        assert_eq!(
            prometheus_text(open),
            "# HELP a_requests_total Requests.\n# TYPE a_requests_total counter\n\
             a_requests_total{op=\"GET\"} 3\n# HELP b Open.\n# TYPE b gauge\nb 2\n"
        );
    }
}
