//! `serverlab fit FILE [--n COLUMN --x COLUMN] [--method nls|relative|gcp]
//! [--format text|json] [--plot FILE.png|FILE.svg] [--predict N…]
//! [--allow-poor-fit]`: the Universal Scalability Law through a table of
//! N and X (`-` reads stdin), as the report fits each series of a sweep
//! with a cores axis (docs/experiments.md). Bad input exits 2 naming the
//! file and line; a poor fit (R² below [`usl::POOR_R2`]) exits 5 and
//! concludes nothing.

use clap::{Args, ValueEnum};
use serverlab_report::usl::table::{Choice, Column};
use serverlab_report::usl::{self, table, Fit, Method};
use serverlab_util::Named;
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
    /// The column holding N: its header's name or its position from 1
    /// (with --x; without both, the table's two columns of numbers)
    #[arg(long = "n", value_name = "COLUMN", requires = "x_column", value_parser = column)]
    n_column: Option<Column>,
    /// The column holding X: its header's name or its position from 1
    #[arg(long = "x", value_name = "COLUMN", requires = "n_column", value_parser = column)]
    x_column: Option<Column>,
    /// Fit only the rows whose COLUMN (a name or position) holds VALUE,
    /// as written (several: all must); `--where readers=1` picks one
    /// series of a report's table
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = filter)]
    filters: Vec<(Column, String)>,
    /// Print a poor fit (R² below 0.9) and exit 0 rather than 5; it still
    /// concludes nothing
    #[arg(long)]
    allow_poor_fit: bool,
}

fn filter(text: &str) -> Result<(Column, String), String> {
    match text.split_once('=') {
        Some((c, v)) if !c.trim().is_empty() => Ok((Column::parse(c), v.trim().to_string())),
        _ => Err(format!("'{text}' is not COLUMN=VALUE")),
    }
}

fn column(text: &str) -> Result<Column, String> {
    if text.trim().is_empty() {
        return Err("a column is a header's name or a position from 1".into());
    }
    Ok(Column::parse(text))
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

/// Exit 0; 2 for input that cannot be read or fitted; 5 for a poor fit
/// (unless --allow-poor-fit); 1 where the plot cannot be written.
pub fn run(a: FitArgs) -> anyhow::Result<ExitCode> {
    let name = if a.file == "-" {
        "stdin"
    } else {
        a.file.as_str()
    };
    let choice = Choice {
        n: a.n_column.clone(),
        x: a.x_column.clone(),
        filters: a.filters.clone(),
    };
    let table = match read(&a.file).and_then(|text| {
        table::parse_with(&text, &choice).map_err(|bad| match bad.line {
            Some(line) => format!("{name}:{line}: {}", bad.message),
            None => format!("{name}: {}", bad.message),
        })
    }) {
        Ok(table) => table,
        Err(message) => return Ok(bad_input(message)),
    };
    if !table.empty.is_empty() {
        eprintln!("serverlab: {name}: {}", skipped(&table.empty));
    }
    let points: Vec<(f64, f64)> = table.rows.iter().map(|r| (r.n, r.x)).collect();
    drop(table.rows);
    let series = usl::group(&points);
    let fit = match usl::fit_with(&series, a.method) {
        Ok(fit) => fit,
        Err(why) => return Ok(bad_input(format!("{name}: {why}"))),
    };
    let residuals = usl::residuals(&fit.law, &series);
    let distinct = series.len();
    drop(series);
    let heading = format!("{name} (N = {}, X = {})", table.names.0, table.names.1);
    match a.format {
        FitFormat::Text => print!(
            "{}",
            text(
                &heading,
                (points.len(), distinct),
                &fit,
                &residuals,
                &a.predict
            )
        ),
        FitFormat::Json => println!("{}", json(&fit, &residuals, &a.predict)),
    }
    if let Some(path) = &a.plot {
        plot(path, name, &points, &fit)?;
    }
    if fit.poor() && !a.allow_poor_fit {
        eprintln!(
            "serverlab: {name}: a poor fit (R² = {:.3} < {}): the law does not describe \
             these points; exit 5 (--allow-poor-fit exits 0)",
            fit.r2,
            usl::POOR_R2
        );
        return Ok(ExitCode::from(5));
    }
    Ok(ExitCode::SUCCESS)
}

/// The lines left out for an empty N or X cell, said once.
fn skipped(lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().take(8).map(usize::to_string).collect();
    let more = if lines.len() > 8 { ", …" } else { "" };
    format!(
        "{} line(s) left out, their N or X cell empty (line {}{more})",
        lines.len(),
        shown.join(", ")
    )
}

/// The most a table to fit may have (a million rows is some 30 MB).
const MAX_TABLE: u64 = 256 << 20;

/// The file's text (stdin's for `-`), at most [`MAX_TABLE`] bytes, or why
/// not.
fn read(file: &str) -> Result<String, String> {
    use serverlab_util::file::{read_at_most, read_text_capped};
    if file == "-" {
        let bytes =
            read_at_most(std::io::stdin().lock(), MAX_TABLE).map_err(|e| format!("stdin: {e}"))?;
        return String::from_utf8(bytes).map_err(|e| format!("stdin: cannot read it: {e}"));
    }
    read_text_capped(std::path::Path::new(file), MAX_TABLE).map_err(|e| format!("{file}: {e}"))
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
fn text(
    name: &str,
    (points, distinct): (usize, usize),
    fit: &Fit,
    residuals: &usl::Residuals,
    predict: &[f64],
) -> String {
    let (law, se) = (fit.law, fit.se);
    let mut out = format!(
        "{name}: {points} points at {distinct} distinct N, fitted by {}: {}\n",
        fit.method,
        fit.method.describe()
    );
    out += &format!(
        "λ  {:<28} throughput at N = 1\n",
        with_se(law.lambda, se.lambda, 9)
    );
    out += &format!("σ  {:<28} contention\n", with_se(law.sigma, se.sigma, 6));
    out += &format!("κ  {:<28} coherency\n", with_se(law.kappa, se.kappa, 6));
    if !fit.poor() {
        out += &conclusions(fit);
    }
    out += &format!("R² = {:.6}\n", fit.r2);
    out += &format!("{}\n", residuals.describe());
    for &n in predict {
        out += &format!("X({n}) = {}\n", usl::significant(law.throughput(n), 6));
    }
    if fit.poor() {
        return out + &poor(fit) + "\n";
    }
    if residuals.systematic() {
        out += "caution: the residuals run in long stretches of one sign, so the law misses \
                the shape of these points; what follows is the law's reading, not surely theirs\n";
    }
    out + &usl::in_words(&law) + ".\n"
}

/// What a fit that describes its points says: the peak, Amdahl's limit,
/// the payback of a superlinear law.
fn conclusions(fit: &Fit) -> String {
    let law = fit.law;
    let mut out = match fit.peak() {
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
    out
}

/// A poor fit's sentence, in place of a conclusion.
fn poor(fit: &Fit) -> String {
    format!(
        "a poor fit: R² = {:.3} is below {}, so the law does not describe these points; \
         no conclusion is drawn (no peak, no contention or superlinearity verdict).",
        fit.r2,
        usl::POOR_R2
    )
}

/// The JSON form: one object; a poor fit's conclusions are null.
fn json(fit: &Fit, residuals: &usl::Residuals, predict: &[f64]) -> serde_json::Value {
    let (law, se) = (fit.law, fit.se);
    let sure = !fit.poor();
    let peak = fit.peak().filter(|_| sure);
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
        "amdahl_limit": law.amdahl().filter(|_| sure),
        "superlinear": sure.then(|| law.superlinear()),
        "payback_n": law.payback().filter(|_| sure),
        "r2": fit.r2,
        "r2_threshold": usl::POOR_R2,
        "poor_fit": !sure,
        "residuals": {
            "signs": residuals.pattern(),
            "runs": residuals.runs,
            "expected_runs": residuals.expected,
            "z": residuals.z,
            "systematic": residuals.systematic(),
        },
        "observations": fit.observations,
        "predict": predict
            .iter()
            .map(|&n| serde_json::json!({"n": n, "x": law.throughput(n)}))
            .collect::<Vec<_>>(),
        "summary": if sure { usl::in_words(&law) } else { poor(fit) },
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
