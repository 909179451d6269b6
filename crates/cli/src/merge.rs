//! `serverlab merge DIR…`: the agents' results of a split load
//! (`load … --agent I/N --out DIR`) as one result, in a single run's
//! schema and text.

use crate::load::{emit, Format, OutputFiles, PlainFormat};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct MergeArgs {
    /// Directories holding agent-I-of-N.json and agent-I-of-N.hlog files (every agent's)
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// How to print the merged result
    #[arg(long, value_enum, default_value = "text")]
    format: PlainFormat,
    /// Also write the merged result as JSON to this file
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write the requests answered in each second, all agents, as CSV
    #[arg(long, value_name = "FILE.csv")]
    per_second: Option<PathBuf>,
    /// Merge the agents found when some are missing (flagged in the result), rather than refuse
    #[arg(long)]
    allow_missing: bool,
}

/// Exit 0, or 1 when the merged run failed (errors, mismatches) or the
/// files cannot be merged (a line `serverlab: FILE: why` for each).
pub fn run(a: MergeArgs) -> anyhow::Result<ExitCode> {
    use serverlab_load::merge;
    let options = merge::Options {
        allow_missing: a.allow_missing,
    };
    let merged = merge::read_dirs(&a.dirs).and_then(|agents| merge::merge(agents, options));
    let report = match merged {
        Ok(report) => report,
        Err(refused) => {
            for line in &refused.0 {
                eprintln!("serverlab: {line}");
            }
            return Ok(ExitCode::FAILURE);
        }
    };
    let format = Format::from(a.format);
    if let Some(flags) = report.results.merged.as_ref().map(|m| &m.flags) {
        if format != Format::Text {
            for f in flags {
                eprintln!("serverlab: flag: {f}");
            }
        }
    }
    let files = OutputFiles {
        json: a.json,
        per_second: a.per_second,
    };
    emit(&report, format, &files)
}
