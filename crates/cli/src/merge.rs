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
}

/// Exit 0, or 1 when the merged run failed (errors, mismatches) or the
/// files cannot be merged.
pub fn run(a: MergeArgs) -> anyhow::Result<ExitCode> {
    use serverlab_load::merge;
    let agents = merge::read_dirs(&a.dirs).map_err(anyhow::Error::msg)?;
    let report = merge::merge(agents).map_err(anyhow::Error::msg)?;
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
