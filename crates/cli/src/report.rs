//! `serverlab report DIR [--compare OTHER_DIR] [--drop-outliers]`:
//! statistics and plots of a sweep, from its results on disk.

use clap::Args;
use serverlab_report::ReportError;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ReportArgs {
    /// A sweep's results directory (what `serverlab sweep --out` wrote)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Another sweep's results: report the ratio per point with its 95%
    /// confidence interval (Welch's t on the logarithms), p-value, effect
    /// size (Hedges' g) and whether it is significant
    #[arg(long, value_name = "OTHER_DIR")]
    compare: Option<PathBuf>,
    /// Leave runs whose throughput lies beyond median ± 3 robust sds out of
    /// every number (they are listed either way)
    #[arg(long)]
    drop_outliers: bool,
}

pub fn run(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let opts = serverlab_report::Options {
        compare: a.compare.as_deref(),
        drop_outliers: a.drop_outliers,
    };
    let written = match serverlab_report::generate_with(&a.dir, &opts) {
        Ok(w) => w,
        Err(e @ (ReportError::NotASweep { .. } | ReportError::Incomparable(_))) => {
            eprintln!("serverlab: {e}");
            return Ok(ExitCode::from(2));
        }
        Err(e) => return Err(e.into()),
    };
    for line in &written.summary {
        println!("- {}", line.replace("**", ""));
    }
    println!();
    print!("{}", written.throughput_table);
    if let Some(t) = &written.comparison_table {
        println!();
        for note in &written.comparison_notes {
            println!("{note}");
        }
        print!("{t}");
    }
    println!();
    println!(
        "serverlab report: wrote {} and {} with {} plots (SVG and PNG) in {}",
        written.markdown.display(),
        written.html.display(),
        written.plots.len(),
        a.dir.join(serverlab_report::generate::PLOTS).display()
    );
    if written.problems > 0 {
        println!(
            "serverlab report: {} problems ({} failed, {} stale and {} missing runs among them) \
             are listed in the report",
            written.problems, written.failed_runs, written.stale_runs, written.missing_runs
        );
    }
    Ok(ExitCode::SUCCESS)
}
