//! `serverlab fit`: the Universal Scalability Law through a table of N
//! and X, read from a file or stdin, printed as text or JSON, drawn as PNG
//! or SVG; every kind of bad input exits 2 naming the file and line.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// SPEC SDM91 (R usl's `specsdm91`), as CSV with a header.
const SPECSDM91: &str = "load,throughput\n1,64.9\n18,995.9\n36,1652.4\n72,1853.2\n\
                         108,1828.9\n144,1775.0\n216,1702.2\n";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn fit(args: &[&str]) -> Output {
    run(&[&["fit"], args].concat())
}

/// `serverlab fit ARGS` with `input` on stdin.
fn fit_stdin(args: &[&str], input: &str) -> Output {
    with_stdin(Command::new(BIN).arg("fit").args(args), input, "the binary")
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn close(v: &serde_json::Value, want: f64, share: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"));
    assert!((got - want).abs() <= share * want.abs(), "{got} vs {want}");
}

#[test]
fn a_csv_with_a_header_prints_the_fit_with_its_errors_and_peak() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), "specsdm91.csv", SPECSDM91);
    let out = fit(&[file.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(
        stdout.contains("7 points at 7 distinct N, fitted by nls: nonlinear least squares"),
        "{stdout}"
    );
    assert!(
        stdout.contains("λ  89.995233") && stdout.contains(" ± 14.21 "),
        "{stdout}"
    );
    assert!(stdout.contains("σ  0.0277285 ± 0.00912"), "{stdout}");
    assert!(stdout.contains("κ  1.04365e-4 ± 1.988e-5"), "{stdout}");
    assert!(
        stdout.contains("peak N* = 96.52, X(N*) = 1884\n"),
        "{stdout}"
    );
    assert!(stdout.contains("Amdahl's limit 1/σ = 36.06"), "{stdout}");
    assert!(stdout.contains("R² = 0.9"), "{stdout}");
    assert!(
        stdout.contains("contention σ = 2.77% flattens it")
            && stdout.contains("coherency κ = 0.0104% makes it fall after N* = 96.5"),
        "{stdout}"
    );
}

#[test]
fn a_whitespace_table_without_a_header_and_stdin_read_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = SPECSDM91.lines().skip(1).map(|l| l.replace(',', "  "));
    let table: String = rows.map(|l| l + "\n").collect();
    let file = write(tmp.path(), "sdm.txt", &format!("# N X\n{table}"));
    let from_file = json_of(&fit(&[file.to_str().unwrap(), "--format", "json"]));
    let from_stdin = json_of(&fit_stdin(&["-", "--format", "json"], SPECSDM91));
    let headless = write(tmp.path(), "sdm.csv", SPECSDM91.split_once('\n').unwrap().1);
    let from_csv = json_of(&fit(&["--format", "json", headless.to_str().unwrap()]));
    assert_eq!(from_file, from_stdin);
    assert_eq!(from_file, from_csv);
    close(&from_file["sigma"], 0.027_728_5, 1e-5);
}

#[test]
fn json_has_every_field_and_predict_gives_x_at_other_n() {
    let out = fit_stdin(
        &["-", "--format", "json", "--predict", "300", "400"],
        SPECSDM91,
    );
    let j = json_of(&out);
    for field in [
        "lambda",
        "sigma",
        "kappa",
        "peak_n",
        "peak_x",
        "r2",
        "method",
        "lambda_se",
        "sigma_se",
        "kappa_se",
    ] {
        assert!(j.get(field).is_some(), "no {field} in {j}");
    }
    assert_eq!(j["method"], "nls");
    close(&j["lambda"], 89.995_233, 1e-7);
    close(&j["kappa"], 0.000_104_4, 1e-3);
    close(&j["peak_n"], 96.52, 1e-4);
    close(&j["peak_x"], 1884.0, 1e-3);
    close(&j["sigma_se"], 9.122e-3, 1e-3);
    close(&j["kappa_se"], 1.988e-5, 1e-3);
    close(&j["lambda_se"], 14.21, 1e-3);
    let (l, s, k) = (
        j["lambda"].as_f64().unwrap(),
        j["sigma"].as_f64().unwrap(),
        j["kappa"].as_f64().unwrap(),
    );
    let at = |n: f64| l * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0));
    assert_eq!(j["predict"][0]["n"], 300.0);
    close(&j["predict"][0]["x"], at(300.0), 1e-12);
    close(&j["predict"][1]["x"], at(400.0), 1e-12);
    let out = fit_stdin(&["-", "--predict", "300"], SPECSDM91);
    let stdout = text(&out.stdout);
    let said = stdout
        .lines()
        .find_map(|l| l.strip_prefix("X(300) = "))
        .unwrap_or_else(|| panic!("{stdout}"));
    close(
        &serde_json::json!(said.parse::<f64>().unwrap()),
        at(300.0),
        1e-5,
    );
}

#[test]
fn the_methods_are_chosen_by_name() {
    let j = json_of(&fit_stdin(
        &["-", "--format", "json", "--method", "gcp"],
        SPECSDM91,
    ));
    assert_eq!(j["method"], "gcp");
    close(&j["sigma"], 0.01705, 1e-3);
    close(&j["kappa"], 7.892e-5, 1e-3);
    assert_eq!(j["lambda"], 64.9);
    assert!(j["lambda_se"].is_null(), "one run at N = 1: {j}");
    let j = json_of(&fit_stdin(
        &["-", "--format", "json", "--method", "relative"],
        SPECSDM91,
    ));
    assert_eq!(j["method"], "relative");
    let out = fit_stdin(&["-", "--method", "ols"], SPECSDM91);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nls"), "{}", text(&out.stderr));
}

/// Repeated N are repetitions: every run is fitted, and λ at N = 1 is
/// their mean under gcp, with a standard error.
#[test]
fn repeated_n_are_repetitions() {
    let table = "N X\n1 10\n1 10.4\n2 19\n2 19.6\n4 33\n4 34\n8 48\n8 50\n16 52\n16 55\n";
    let j = json_of(&fit_stdin(&["-", "--format", "json"], table));
    assert_eq!(j["observations"], 10);
    let j = json_of(&fit_stdin(
        &["-", "--format", "json", "--method", "gcp"],
        table,
    ));
    close(&j["lambda"], 10.2, 1e-12);
    close(&j["lambda_se"], 0.2, 1e-9);
}

/// σ < 0: said, with where it falls back below the linear ideal.
#[test]
fn a_superlinear_table_says_so() {
    let law = |n: f64| 10.0 * n / (1.0 - 0.04 * (n - 1.0) + 0.0015 * n * (n - 1.0));
    let table: String = (1..=32)
        .map(|n| format!("{n},{}\n", law(f64::from(n))))
        .collect();
    let out = fit_stdin(&["-"], &table);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("superlinear: σ = -0.0400 < 0"), "{stdout}");
    assert!(
        stdout.contains("below the linear ideal past N = 26.7"),
        "{stdout}"
    );
    let j = json_of(&fit_stdin(&["-", "--format", "json"], &table));
    assert_eq!(j["superlinear"], true);
    close(&j["payback_n"], 0.04 / 0.0015, 1e-6);
}

/// Each bad input: exit 2, nothing on stdout, and stderr names the file
/// and, where there is one, the line.
#[test]
fn bad_input_exits_2_naming_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        ("one-column.csv", "1\n2\n3\n", ":1: one column"),
        (
            "text.csv",
            "N,X\n1,10\n2,ten\n4,30\n",
            ":3: 'ten' is not a number",
        ),
        (
            "negative-n.txt",
            "1 10\n-2 19\n4 30\n",
            ":2: N = -2: N must be positive",
        ),
        (
            "zero-n.txt",
            "0 10\n2 19\n4 30\n",
            ":1: N = 0: N must be positive",
        ),
        (
            "zero-x.txt",
            "1 10\n2 0\n4 30\n",
            ":2: X = 0: X must be positive",
        ),
        (
            "negative-x.txt",
            "1 10\n2 19\n4 -30\n",
            ":3: X = -30: X must be positive",
        ),
        (
            "two-n.csv",
            "1,10\n2,19\n2,20\n1,11\n",
            ":4: 2 distinct N (1, 2)",
        ),
        ("empty.csv", "", ": no data: the table is empty"),
        ("header-only.csv", "N,X\n", ":1: a header and no data"),
    ];
    for (name, content, want) in cases {
        let file = write(tmp.path(), name, content);
        let path = file.to_str().unwrap();
        let out = fit(&[path]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}: {}", text(&out.stdout));
        assert!(
            stderr.contains(&format!("{path}{want}")),
            "{name}: {stderr}"
        );
    }
    let missing = tmp.path().join("missing.csv");
    let out = fit(&[missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{}: cannot read", missing.display())),
        "{stderr}"
    );
    // A file that never ends is cut at the limit, not read until memory
    // runs out.
    let out = fit(&["/dev/zero"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("/dev/zero: 268435457 bytes or more, past the 256 MiB"),
        "{stderr}"
    );
    let out = fit_stdin(&["-"], "1 10\n2 x\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("stdin:2: 'x' is not a number"));
    // A law that cannot be: each core costs more than it gives (σ ≥ 1).
    let out = fit_stdin(&["-"], "1 100\n2 40\n4 20\n8 10\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("stdin: cannot fit: non-physical"));
    // No N = 1 for gcp.
    let out = fit_stdin(&["-", "--method", "gcp"], "2 20\n4 35\n8 50\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nothing measured at N = 1"));
    // A plot that is neither PNG nor SVG is a usage error.
    let out = fit_stdin(&["-", "--plot", "fit.jpg"], SPECSDM91);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("neither .png nor .svg"));
}

/// The PNG decodes, at the report's width, and is not blank.
fn check_png(bytes: &[u8]) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).expect("a PNG that decodes");
    assert!(
        info.width == 960 && info.height > 500,
        "{}×{}",
        info.width,
        info.height
    );
    let first = &pixels[..3];
    assert!(
        pixels.chunks(3).any(|p| p != first),
        "the plot is one colour"
    );
}

#[test]
fn plot_draws_a_png_and_an_svg() {
    let tmp = tempfile::tempdir().unwrap();
    let png = tmp.path().join("fit.png");
    let out = fit_stdin(&["-", "--plot", png.to_str().unwrap()], SPECSDM91);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_png(&std::fs::read(&png).unwrap());
    let svg = tmp.path().join("fit.svg");
    let out = fit_stdin(&["-", "--plot", svg.to_str().unwrap()], SPECSDM91);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc = std::fs::read_to_string(&svg).unwrap();
    assert!(
        doc.starts_with("<svg") || doc.starts_with("<?xml"),
        "{}",
        &doc[..80]
    );
    assert!(doc.trim_end().ends_with("</svg>"));
    for label in [
        "measured",
        "USL fit (nls)",
        "linear ideal",
        "peak N* = 96.52",
    ] {
        assert!(doc.contains(label), "no {label} in the SVG");
    }
}

/// A table laid out as `serverlab report` writes `report-throughput.csv`:
/// the axes, then throughput's statistics (issue 39: `fit` took posters
/// and readers as N and X and printed a conclusion).
const REPORT_CSV: &str = "posters,readers,n,mean_rps,geomean_rps,median_rps,min_rps,max_rps,\
sd_rps,cv,ci_low_rps,ci_high_rps\n\
1,1,4,8000,8000,8000,7900,8100,100,0.0125,7841,8159\n\
1,2,4,12000,12000,12000,11900,12100,100,0.008,11841,12159\n\
2,1,4,12100,12100,12100,12000,12200,100,0.008,11941,12259\n\
2,2,4,16000,16000,16000,15900,16100,100,0.006,15841,16159\n\
3,1,4,15800,15800,15800,15700,15900,100,0.006,15641,15959\n\
3,2,4,19000,19000,19000,18900,19100,100,0.005,18841,19159\n\
4,1,4,19500,19500,19500,19400,19600,100,0.005,19341,19659\n\
4,2,4,21000,21000,21000,20900,21100,100,0.005,20841,21159\n\
5,1,4,22000,22000,22000,21900,22100,100,0.004,21841,22159\n\
5,2,4,,,,,,,,,\n";

/// N and X are chosen by name or position, rows by `--where`; a table
/// with more than two columns of numbers and no choice is refused, as is
/// a name the header lacks.
#[test]
fn columns_are_chosen_by_name_or_position() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), "report-throughput.csv", REPORT_CSV);
    let path = file.to_str().unwrap();
    let out = fit(&[path]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        stderr.contains(":2: 12 columns hold numbers ('posters', 'readers', 'n', 'mean_rps'")
            && stderr.contains("--n and --x"),
        "{stderr}"
    );
    let by_name = fit(&words(&format!(
        "{path} --n posters --x mean_rps --where readers=1"
    )));
    let stdout = text(&by_name.stdout);
    assert!(by_name.status.success(), "{}", text(&by_name.stderr));
    assert!(
        stdout.contains("(N = 'posters', X = 'mean_rps'): 5 points at 5 distinct N"),
        "{stdout}"
    );
    let j = |args: &[&str]| json_of(&fit(&[&[path, "--format", "json"], args].concat()));
    let named = j(&["--n", "posters", "--x", "mean_rps", "--where", "readers=1"]);
    let numbered = j(&["--n", "1", "--x", "4", "--where", "2=1"]);
    assert_eq!(named, numbered);
    assert_eq!(named["observations"], 5);
    // Both series: each posters value twice, and the empty row (a point
    // with no runs) left out, said on stderr.
    let both = fit(&words(&format!(
        "{path} --n posters --x mean_rps --allow-poor-fit"
    )));
    assert!(
        text(&both.stderr).contains("1 line(s) left out, their N or X cell empty (line 11)"),
        "{}",
        text(&both.stderr)
    );
    assert!(text(&both.stdout).contains("9 points at 5 distinct N"));
    for (args, want) in [
        (
            vec!["--n", "poster", "--x", "mean_rps"],
            "--n 'poster': the header names no such column (it has 'posters', 'readers'",
        ),
        (
            vec!["--n", "posters", "--x", "13"],
            "--x 13: the table has 12 column(s)",
        ),
        (
            vec!["--n", "posters", "--x", "mean_rps", "--where", "readers=9"],
            "--where 'readers=9': no line matches",
        ),
    ] {
        let out = fit(&[&[path], &args[..]].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(want), "{}", text(&out.stderr));
    }
    let out = fit(&[path, "--n", "posters"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--x"), "{}", text(&out.stderr));
    let out = fit_stdin(&["-", "--n", "load", "--x", "2"], "1 10\n2 19\n4 30\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no header line, so name its columns by position"),
        "{}",
        text(&out.stderr)
    );
}

/// R² under 0.9: exit 5 with the fit printed and no conclusion drawn
/// (no peak, no verdict); `--allow-poor-fit` exits 0 and still concludes
/// nothing. The residuals' signs are printed, and a systematic run of
/// them is called one.
#[test]
fn a_poor_fit_exits_5_and_concludes_nothing() {
    let scatter = "1 100\n2 250\n3 150\n4 420\n5 260\n6 560\n7 330\n8 640\n";
    let out = fit_stdin(&["-"], scatter);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(5), "{stdout}{stderr}");
    assert!(stdout.contains("R² = 0.6"), "{stdout}");
    assert!(
        stdout.contains("a poor fit: R² = 0.639 is below 0.9"),
        "{stdout}"
    );
    assert!(
        stdout.contains("residuals by N: ++−+−+−+: 7 runs"),
        "{stdout}"
    );
    for conclusion in [
        "peak N*",
        "Amdahl",
        "superlinear:",
        "flattens",
        "never falls",
    ] {
        assert!(!stdout.contains(conclusion), "{conclusion}: {stdout}");
    }
    assert!(stderr.contains("a poor fit (R² = 0.639 < 0.9)"), "{stderr}");
    let allowed = fit_stdin(&["-", "--allow-poor-fit"], scatter);
    assert_eq!(allowed.status.code(), Some(0));
    assert_eq!(text(&allowed.stdout), stdout);
    let j = json_of(&fit_stdin(
        &["-", "--allow-poor-fit", "--format", "json"],
        scatter,
    ));
    assert_eq!(j["poor_fit"], true);
    assert_eq!(j["r2_threshold"], 0.9);
    for field in [
        "peak_n",
        "peak_x",
        "superlinear",
        "amdahl_limit",
        "payback_n",
    ] {
        assert!(j[field].is_null(), "{field}: {j}");
    }
    assert_eq!(j["residuals"]["signs"], "++−+−+−+");
    // Straight to N = 12, then flat: the law bends through it, its
    // residuals in long runs of one sign.
    let bent: String = (1..=24)
        .map(|n| {
            format!(
                "{n} {}\n",
                if n <= 12 {
                    100 * n
                } else {
                    1200 + 5 * (n - 12)
                }
            )
        })
        .collect();
    let out = fit_stdin(&["-"], &bent);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("5 runs of one sign over 24 N") && stdout.contains("systematic"),
        "{stdout}"
    );
    assert!(stdout.contains("caution: the residuals run"), "{stdout}");
    let j = json_of(&fit_stdin(&["-", "--format", "json"], &bent));
    assert_eq!(j["residuals"]["systematic"], true);
    assert_eq!(j["poor_fit"], false);
}

/// NaN, infinities, 1e400, absurd N and X, a ragged row: exit 2 naming
/// the line; a 50 MB field is quoted in a few dozen bytes.
#[test]
fn hostile_tables_are_refused_naming_the_line() {
    let cases = [
        (
            "N X\n1 10\nNaN 19\n4 30\n",
            ":3: 'NaN' is not a finite number (N, column 1)",
        ),
        (
            "1 10\n2 inf\n4 30\n",
            ":2: 'inf' is not a finite number (X, column 2)",
        ),
        (
            "1,10\n2,-inf\n4,30\n",
            ":2: '-inf' is not a finite number (X",
        ),
        (
            "1 10\n1e400 19\n4 30\n",
            ":2: '1e400' is not a finite number (N",
        ),
        (
            "nan 10\n2 19\n4 30\n",
            ":1: 'nan' is not a finite number (N",
        ),
        (
            "1 10\n1e300 19\n4 30\n",
            ":2: N = 1e300: beyond any plausible concurrency (N ≤ 1e9)",
        ),
        (
            "1 10\n2 1e300\n4 30\n",
            ":2: X = 1e300: beyond any plausible throughput",
        ),
        (
            "1 10\n2 1e-300\n4 30\n",
            ":2: X = 1e-300: beyond any plausible",
        ),
        (
            "N,X\n1,10\n2,19,7\n4,30\n",
            ":3: 3 cell(s) where line 1 has 2: every line needs the same columns",
        ),
    ];
    for (table, want) in cases {
        let out = fit_stdin(&["-"], table);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{table}: {stderr}");
        assert!(out.stdout.is_empty(), "{table}");
        assert!(
            stderr.contains(&format!("stdin{want}")),
            "{table}: {stderr}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    for (name, field) in [("letters", "a"), ("digits", "7")] {
        let big = field.repeat(50 << 20);
        let file = write(tmp.path(), name, &format!("N,X\n1,10\n2,{big}\n4,30\n"));
        let out = fit(&[file.to_str().unwrap()]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(
            stderr.len() < 300,
            "{name}: {} bytes of error",
            stderr.len()
        );
        let quoted = format!("'{}…' (52428800 bytes)", &big[..32]);
        assert!(
            stderr.contains(&format!(":3: {quoted}")),
            "{name}: {stderr}"
        );
    }
}

/// `fit FILE` with stdout and stderr to files, its peak RSS watched; the
/// exit code (None: killed at `limit`, a hang guard) and the peak in KiB.
fn watched_fit(file: &Path, limit: std::time::Duration) -> (Option<i32>, u64, String) {
    let err = file.with_extension("err");
    let mut child = Command::new(BIN)
        .arg("fit")
        .arg(file)
        .stdout(std::fs::File::create(file.with_extension("out")).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("run serverlab");
    let (code, hwm) = wait_watching_peak(&mut child, limit);
    let out = std::fs::read_to_string(file.with_extension("out")).unwrap_or_default();
    (
        code,
        hwm,
        out + &std::fs::read_to_string(err).unwrap_or_default(),
    )
}

/// A million rows at a million distinct N (grouping them was quadratic:
/// 100k took 2.6 s and 1M did not finish in 300 s) and a million at 32
/// N: each fitted, within a hang guard and under 1 GiB of memory.
#[test]
fn a_million_rows_are_fitted_in_bounded_time_and_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let law = |n: f64| 100.0 * n / (1.0 + 0.05 * (n - 1.0) + 1e-4 * n * (n - 1.0));
    let mut distinct = String::from("N,X\n");
    let mut repeated = String::from("N,X\n");
    for i in 1..=1_000_000u32 {
        let n = f64::from(i) * 1e-3;
        let wobble = 1.0 + 0.01 * f64::from(i % 7) - 0.03;
        distinct += &format!("{n},{}\n", law(n) * wobble);
        let n = f64::from(1 + i % 32);
        repeated += &format!("{n},{}\n", law(n) * wobble);
    }
    for (name, table, points) in [
        (
            "distinct.csv",
            distinct,
            "1000000 points at 1000000 distinct N",
        ),
        ("repeated.csv", repeated, "1000000 points at 32 distinct N"),
    ] {
        let file = write(tmp.path(), name, &table);
        drop(table);
        let (code, hwm, said) = watched_fit(&file, std::time::Duration::from_secs(200));
        assert_eq!(code, Some(0), "{name}: {said}");
        assert!(said.contains(points), "{name}: {said}");
        let sigma: f64 = said
            .lines()
            .find_map(|l| {
                l.strip_prefix("σ  ")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("{name}: no σ in {said}"));
        assert!((sigma - 0.05).abs() < 0.001, "{name}: σ {sigma}: {said}");
        assert!(hwm > 0 && hwm < 1 << 20, "{name}: peak RSS {hwm} KiB");
    }
}
