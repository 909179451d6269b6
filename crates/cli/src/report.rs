//! `serverlab report DIR [--compare OTHER_DIR]`: statistics and plots of a
//! sweep, from its results on disk.

use clap::Args;
use serverlab_report::ReportError;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ReportArgs {
    /// A sweep's results directory (what `serverlab sweep --out` wrote)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Another sweep's results: report the difference per point, with its
    /// 95% confidence interval and whether it is significant
    #[arg(long, value_name = "OTHER_DIR")]
    compare: Option<PathBuf>,
}

pub fn run(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let written = match serverlab_report::generate(&a.dir, a.compare.as_deref()) {
        Ok(w) => w,
        Err(e @ (ReportError::NotASweep { .. } | ReportError::Incomparable(_))) => {
            eprintln!("serverlab: {e}");
            return Ok(ExitCode::from(2));
        }
        Err(e) => return Err(e.into()),
    };
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
    if written.failed_runs + written.missing_runs + written.stale_runs > 0 {
        println!(
            "serverlab report: {} failed, {} stale and {} missing runs are listed in the report",
            written.failed_runs, written.stale_runs, written.missing_runs
        );
    }
    Ok(ExitCode::SUCCESS)
}
