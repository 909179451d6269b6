//! `serverlab report DIR… [--out DIR] [--compare OTHER_DIR]
//! [--drop-outliers] [--allow-missing]`: statistics and plots of a sweep,
//! from its results on disk; of several shards' directories, every point
//! as a ratio to its own block's baseline, with the machine each shard ran
//! on. A shard of the split that no directory holds is named and fails
//! the report (exit 1) unless `--allow-missing` says to report anyway.

use clap::Args;
use serverlab_report::ReportError;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ReportArgs {
    /// A sweep's results directory (what `serverlab sweep --out` wrote), or
    /// the directories of its shards (`sweep --shard I/N`), read together
    #[arg(value_name = "DIR", required = true, num_args = 1..)]
    dirs: Vec<PathBuf>,
    /// Where the report of several shards goes [default: the directory
    /// that holds them all]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Another sweep's results: report the ratio per point with its 95%
    /// confidence interval (Welch's t on the logarithms), p-value, effect
    /// size (Hedges' g) and whether it is significant
    #[arg(long, value_name = "OTHER_DIR")]
    compare: Option<PathBuf>,
    /// Leave runs whose throughput lies beyond median ± 3 robust sds out of
    /// every number (they are listed either way)
    #[arg(long)]
    drop_outliers: bool,
    /// Of shards' directories: report even if shards of the split are
    /// missing (each is named, its runs counted as not run); without it
    /// a missing shard is an error (exit 1)
    #[arg(long)]
    allow_missing: bool,
}

pub fn run(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let opts = serverlab_report::Options {
        compare: a.compare.as_deref(),
        drop_outliers: a.drop_outliers,
        allow_missing: a.allow_missing,
    };
    let (out, generated) = match a.dirs.as_slice() {
        [dir] => match serverlab_report::shards::under(dir) {
            // A sharded sweep's parent directory: its shards, read as one.
            Some(shards) => {
                let out = a.out.clone().unwrap_or_else(|| dir.clone());
                let written = serverlab_report::generate_shards(&shards, &out, &opts);
                (out, written)
            }
            None => (dir.clone(), serverlab_report::generate_with(dir, &opts)),
        },
        dirs => {
            let out = a.out.clone().unwrap_or_else(|| common_parent(dirs));
            let written = serverlab_report::generate_shards(dirs, &out, &opts);
            (out, written)
        }
    };
    let written = match generated {
        Ok(w) => w,
        Err(e @ (ReportError::NotASweep { .. } | ReportError::Incomparable(_))) => {
            eprintln!("serverlab: {e}");
            return Ok(ExitCode::from(2));
        }
        Err(e @ ReportError::MissingShards(_)) => {
            eprintln!("serverlab: {e}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    };
    for line in &written.summary {
        println!("- {}", line.replace("**", ""));
    }
    println!();
    match &written.shards {
        Some(shards) => {
            for m in &shards.missing {
                println!("serverlab report: {m} (--allow-missing)");
            }
            println!("{}\n", shards.note);
            print!("{}", shards.table);
            if let Some(r) = &shards.ratios {
                println!();
                print!("{r}");
            }
        }
        None => print!("{}", written.throughput_table),
    }
    if let Some(t) = &written.comparison_table {
        println!();
        for note in &written.comparison_notes {
            println!("{note}");
        }
        print!("{t}");
    }
    println!();
    said_written(&written, &out);
    Ok(ExitCode::SUCCESS)
}

/// What the report wrote, and where: its files, plots and CSV, and how
/// many problems it lists.
fn said_written(written: &serverlab_report::Written, out: &std::path::Path) {
    println!(
        "serverlab report: wrote {} and {} with {} plots (SVG and PNG) in {}",
        written.markdown.display(),
        written.html.display(),
        written.plots.len(),
        out.join(serverlab_report::generate::PLOTS).display()
    );
    let csv: Vec<String> = written
        .csv
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    println!("serverlab report: the tables as CSV: {}", csv.join(", "));
    if written.problems > 0 {
        println!(
            "serverlab report: {} problems ({} failed, {} stale and {} missing runs among them) \
             are listed in the report",
            written.problems, written.failed_runs, written.stale_runs, written.missing_runs
        );
    }
}

/// The deepest directory that holds every one of `dirs` (`.` if none).
fn common_parent(dirs: &[PathBuf]) -> PathBuf {
    let absolute: Vec<PathBuf> = dirs
        .iter()
        .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
        .collect();
    let mut parent = absolute[0].parent().map(PathBuf::from).unwrap_or_default();
    while !absolute.iter().all(|d| d.starts_with(&parent)) {
        match parent.parent() {
            Some(p) => parent = p.to_path_buf(),
            None => break,
        }
    }
    parent
}
