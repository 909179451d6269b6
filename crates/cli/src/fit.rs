//! `serverlab fit FILE [--method nls|relative|gcp] [--format text|json]
//! [--plot FILE.png|FILE.svg] [--predict N…]`: the Universal Scalability
//! Law through a table of N and X (`-` reads stdin), as the report fits
//! each series of a sweep with a cores axis (docs/experiments.md). Bad
//! input exits 2 naming the file and line.

use clap::{Args, ValueEnum};
use serverlab_report::usl::{self, table, Fit, Method};
use serverlab_util::Named;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct FitArgs {
    /// A table of N and X: CSV or blank-separated columns, an optional
    /// header line, N repeated for repetitions; `-` reads stdin
    #[arg(value_name = "FILE")]
    file: String,
    /// How to fit
    #[arg(long, default_value = "nls", value_parser = crate::args::named::<Method>())]
    method: Method,
    /// How to print the fit
    #[arg(long, value_enum, default_value = "text")]
    format: FitFormat,
    /// Draw the points, the fitted curve, the linear ideal and the peak
    /// (PNG or SVG, by the name's extension)
    #[arg(long, value_name = "FILE.png|FILE.svg", value_parser = plot_path)]
    plot: Option<PathBuf>,
    /// Also give X at these N (several, or comma-separated)
    #[arg(long, value_name = "N", num_args = 1.., value_delimiter = ',', value_parser = positive)]
    predict: Vec<f64>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FitFormat {
    /// The parameters with their standard errors, the peak, R², a sentence
    Text,
    /// One JSON object
    Json,
}

fn plot_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    match path.extension().and_then(|e| e.to_str()) {
        Some("png" | "svg") => Ok(path),
        _ => Err(format!(
            "'{text}' ends in neither .png nor .svg: the extension says which to draw"
        )),
    }
}

fn positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{text}' is not a positive number")),
    }
}

/// Exit 0; 2 for input that cannot be read or fitted; 1 where the plot
/// cannot be written.
pub fn run(a: FitArgs) -> anyhow::Result<ExitCode> {
    let name = if a.file == "-" {
        "stdin"
    } else {
        a.file.as_str()
    };
    let rows = match read(&a.file).and_then(|text| {
        table::parse(&text).map_err(|bad| match bad.line {
            Some(line) => format!("{name}:{line}: {}", bad.message),
            None => format!("{name}: {}", bad.message),
        })
    }) {
        Ok(rows) => rows,
        Err(message) => return Ok(bad_input(message)),
    };
    let points: Vec<(f64, f64)> = rows.iter().map(|r| (r.n, r.x)).collect();
    let fit = match usl::fit_points(&points, a.method) {
        Ok(fit) => fit,
        Err(why) => return Ok(bad_input(format!("{name}: {why}"))),
    };
    match a.format {
        FitFormat::Text => print!("{}", text(name, &points, &fit, &a.predict)),
        FitFormat::Json => println!("{}", json(&fit, &a.predict)),
    }
    if let Some(path) = &a.plot {
        plot(path, name, &points, &fit)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The file's text (stdin's for `-`), or why not.
fn read(file: &str) -> Result<String, String> {
    if file == "-" {
        let mut text = String::new();
        return std::io::stdin()
            .read_to_string(&mut text)
            .map(|_| text)
            .map_err(|e| format!("stdin: cannot read: {e}"));
    }
    std::fs::read_to_string(file).map_err(|e| format!("{file}: cannot read: {e}"))
}

/// Input that cannot be fitted: say why, exit 2.
fn bad_input(message: String) -> ExitCode {
    eprintln!("serverlab: {message}");
    ExitCode::from(2)
}

/// A parameter and its standard error: `0.02773 ± 0.009122`.
fn with_se(v: f64, se: Option<f64>, digits: usize) -> String {
    let v = usl::significant(v, digits);
    match se {
        Some(se) => format!("{v} ± {}", usl::significant(se, 4)),
        None => v,
    }
}

/// The text form.
fn text(name: &str, points: &[(f64, f64)], fit: &Fit, predict: &[f64]) -> String {
    let (law, se) = (fit.law, fit.se);
    let distinct = usl::group(points).len();
    let mut out = format!(
        "{name}: {} points at {distinct} distinct N, fitted by {}: {}\n",
        points.len(),
        fit.method,
        fit.method.describe()
    );
    out += &format!(
        "λ  {:<28} throughput at N = 1\n",
        with_se(law.lambda, se.lambda, 9)
    );
    out += &format!("σ  {:<28} contention\n", with_se(law.sigma, se.sigma, 6));
    out += &format!("κ  {:<28} coherency\n", with_se(law.kappa, se.kappa, 6));
    out += &match fit.peak() {
        Some((n, x)) => format!(
            "peak N* = {}, X(N*) = {}\n",
            usl::significant(n, 4),
            usl::significant(x, 4)
        ),
        None => "peak none: κ = 0\n".into(),
    };
    if let Some(limit) = law.amdahl() {
        out += &format!(
            "Amdahl's limit 1/σ = {} (X → λ/σ = {})\n",
            usl::significant(limit, 4),
            usl::significant(law.lambda * limit, 4)
        );
    }
    if let Some(n) = law.payback() {
        out += &format!(
            "above the linear ideal λN until N = −σ/κ = {}\n",
            usl::significant(n, 4)
        );
    }
    out += &format!("R² = {:.6}\n", fit.r2);
    for &n in predict {
        out += &format!("X({n}) = {}\n", usl::significant(law.throughput(n), 6));
    }
    out + &usl::in_words(&law) + ".\n"
}

/// The JSON form: one object.
fn json(fit: &Fit, predict: &[f64]) -> serde_json::Value {
    let (law, se) = (fit.law, fit.se);
    let peak = fit.peak();
    serde_json::json!({
        "method": fit.method.name(),
        "lambda": law.lambda,
        "sigma": law.sigma,
        "kappa": law.kappa,
        "lambda_se": se.lambda,
        "sigma_se": se.sigma,
        "kappa_se": se.kappa,
        "peak_n": peak.map(|p| p.0),
        "peak_x": peak.map(|p| p.1),
        "amdahl_limit": law.amdahl(),
        "superlinear": law.superlinear(),
        "payback_n": law.payback(),
        "r2": fit.r2,
        "observations": fit.observations,
        "predict": predict
            .iter()
            .map(|&n| serde_json::json!({"n": n, "x": law.throughput(n)}))
            .collect::<Vec<_>>(),
        "summary": usl::in_words(&law),
    })
}

/// The figure, as PNG or SVG by `path`'s extension.
fn plot(path: &Path, name: &str, points: &[(f64, f64)], fit: &Fit) -> anyhow::Result<()> {
    let figure = usl::plot::figure(points, fit, &format!("Universal Scalability Law: {name}"));
    let drawn = if path.extension().is_some_and(|e| e == "png") {
        figure.png(path).map_err(anyhow::Error::from)
    } else {
        figure
            .svg()
            .map_err(anyhow::Error::from)
            .and_then(|svg| Ok(std::fs::write(path, svg)?))
    };
    drawn.map_err(|e| e.context(format!("cannot draw {}", path.display())))
}
