//! `load --format csv` and `--per-second FILE.csv`: read back with a CSV
//! reader, every cell is the JSON's number for the same run.

use crate::support::*;
use serde_json::Value;

/// The rows of a CSV text, each as header → cell.
fn rows(csv_text: &str) -> Vec<Vec<(String, String)>> {
    let mut r = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.expect("a CSV record");
            assert_eq!(rec.len(), header.len(), "{csv_text}");
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn cell<'a>(row: &'a [(String, String)], name: &str) -> &'a str {
    &row.iter()
        .find(|(h, _)| h == name)
        .unwrap_or_else(|| panic!("no {name}: {row:?}"))
        .1
}

/// `a` and `b` are one number: the CSV's text is the shortest that reads
/// back as the figure, as the JSON's is, but serde_json's own parser may
/// land one unit in the last place away.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

fn number(row: &[(String, String)], name: &str) -> f64 {
    cell(row, name)
        .parse()
        .unwrap_or_else(|_| panic!("{name}: {row:?}"))
}

/// Every operation's row against its JSON, `views` the percentile sets
/// ("latency" and, open loop, "service").
fn operations_match(csv_text: &str, json: &Value, views: &[&str]) {
    let ops = json["results"]["operations"].as_array().unwrap();
    let rows = rows(csv_text);
    assert_eq!(rows.len(), ops.len(), "{csv_text}");
    for (row, op) in rows.iter().zip(ops) {
        assert_eq!(cell(row, "op"), op["name"].as_str().unwrap());
        assert_eq!(number(row, "count"), op["count"].as_f64().unwrap());
        let rate = op["rate_rps"].as_f64().unwrap();
        assert!(same(number(row, "rate_rps"), rate), "{csv_text}");
        for view in views {
            let p = &op[format!("{view}_us")];
            for stat in ["mean", "p50", "p90", "p99", "p99_9", "p99_99", "max"] {
                let got = number(row, &format!("{view}_{stat}_us"));
                let want = p[stat].as_f64().unwrap();
                assert!(same(got, want), "{view} {stat}: {got} {want}: {csv_text}");
            }
        }
    }
}

/// `load <protocol> <args> --format csv --json … --per-second …`: its
/// stdout, its JSON and its per-second CSV.
fn csv_run(server: &ServerProc, protocol: &str, args: &[&str]) -> (String, Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let per_second = tmp.path().join("seconds.csv");
    let mut all = args.to_vec();
    all.extend([
        "--format",
        "csv",
        "--per-second",
        per_second.to_str().unwrap(),
    ]);
    let (stdout, json) = server.load_json(protocol, &all);
    let seconds = std::fs::read_to_string(&per_second).expect("the --per-second file");
    (stdout, json, seconds)
}

#[test]
fn a_closed_loop_board_run_as_csv_is_its_json() {
    let server = ServerProc::start("board", &["--strategy", "pool-locked"]);
    let (stdout, json, seconds) = csv_run(
        &server,
        "board",
        &words("--posters 2 --readers 2 --duration 2s --warmup 200ms"),
    );
    assert!(
        stdout.starts_with("op,count,rate_rps,latency_mean_us,"),
        "{stdout}"
    );
    operations_match(&stdout, &json, &["latency"]);
    let per_second = json["results"]["per_second"].as_array().unwrap();
    let rows = rows(&seconds);
    assert!(!rows.is_empty(), "{seconds}");
    assert_eq!(rows.len(), per_second.len(), "{seconds}");
    for (i, (row, n)) in rows.iter().zip(per_second).enumerate() {
        assert_eq!(number(row, "second"), i as f64);
        assert_eq!(number(row, "requests"), n.as_f64().unwrap());
    }
}

#[test]
fn an_open_loop_kv_run_as_csv_has_service_times_and_each_seconds_latency() {
    let server = ServerProc::start("kv", &["--strategy", "pool-locked"]);
    let (stdout, json, seconds) = csv_run(
        &server,
        "kv",
        &words("--rate 400 --sessions 40 --requests-per-session 20"),
    );
    operations_match(&stdout, &json, &["latency", "service"]);
    let latency = json["results"]["per_second_latency_us"].as_array().unwrap();
    let rows = rows(&seconds);
    assert_eq!(rows.len(), latency.len(), "{seconds}");
    for (row, second) in rows.iter().zip(latency) {
        assert_eq!(
            number(row, "requests"),
            second["requests"].as_f64().unwrap()
        );
        for stat in ["p50", "p99", "max"] {
            match second[stat].as_f64() {
                Some(v) => assert!(same(number(row, &format!("{stat}_us")), v), "{seconds}"),
                None => assert_eq!(cell(row, &format!("{stat}_us")), ""),
            }
        }
    }
}

/// `report` writes its tables as CSV beside report.md: a row per point,
/// its throughput's statistics those of the runs' load.json files. The
/// runs measure 1 s windows: a run that measured no request fails, and on
/// a busy machine one round trip can outlast 200 ms.
#[test]
fn a_reports_tables_as_csv_are_its_runs_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("csv.toml");
    std::fs::write(
        &exp,
        "name = \"csv\"\nprotocol = \"board\"\nrepetitions = 3\n[server]\nstrategy = \
         \"pool-locked\"\nthreads = 1\n[load]\nposters = [1, 2]\nreaders = 1\nduration = \
         \"1s\"\nwarmup = \"100ms\"\n",
    )
    .unwrap();
    let out = tmp.path().join("results");
    let swept = run(&[
        "sweep",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(swept.status.success(), "{}", text(&swept.stderr));
    let reported = run(&["report", out.to_str().unwrap()]);
    let said = text(&reported.stdout);
    assert!(
        reported.status.success(),
        "{said}{}",
        text(&reported.stderr)
    );
    assert!(said.contains("report-throughput.csv"), "{said}");
    let throughput = std::fs::read_to_string(out.join("report-throughput.csv")).unwrap();
    let rows = rows(&throughput);
    assert_eq!(rows.len(), 2, "{throughput}");
    for row in &rows {
        let posters = cell(row, "posters");
        let mut runs: Vec<f64> = (1..=3)
            .map(|rep| {
                let path = out.join(format!("runs/posters={posters}/rep-{rep}/load.json"));
                read_json(&path)["results"]["throughput_rps"]
                    .as_f64()
                    .unwrap()
            })
            .collect();
        runs.sort_by(f64::total_cmp);
        assert_eq!(number(row, "n"), 3.0, "{throughput}");
        let mean = runs.iter().sum::<f64>() / 3.0;
        assert!(
            same(number(row, "mean_rps"), mean),
            "{throughput}: {runs:?}"
        );
        assert!(same(number(row, "median_rps"), runs[1]), "{throughput}");
        assert!(same(number(row, "min_rps"), runs[0]), "{throughput}");
        assert!(same(number(row, "max_rps"), runs[2]), "{throughput}");
        let (low, high) = (number(row, "ci_low_rps"), number(row, "ci_high_rps"));
        assert!(low <= high, "{throughput}");
    }
    let latency = std::fs::read_to_string(out.join("report-latency.csv")).unwrap();
    let rows = self::rows(&latency);
    let percentiles: Vec<&str> = rows.iter().map(|r| cell(r, "percentile")).collect();
    assert_eq!(
        percentiles,
        ["p50", "p90", "p99", "p99.9", "p50", "p90", "p99", "p99.9"],
        "{latency}"
    );
    assert!(
        rows.iter().all(|r| number(r, "median_us") > 0.0),
        "{latency}"
    );
}
