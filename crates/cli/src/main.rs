//! `serverlab`: the command line. The only layer that knows about the
//! terminal, exit codes and flags; everything else is in the libraries.
// A test reads as one story; the 60-line limit is for the code under test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod args;
mod argv;
mod check;
mod completions;
mod demo;
mod fit;
mod limits;
mod load;
mod man;
mod merge;
mod metrics;
mod progress;
mod report;
mod serve;
mod sweep;
mod sweep_progress;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// `serverlab --version`: the crate's version and the commit it was
/// built from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("SERVERLAB_COMMIT"),
    ")"
);

#[derive(Parser)]
#[command(
    name = "serverlab",
    version = VERSION,
    about = "A laboratory for concurrent servers: serve a protocol under any concurrency strategy, \
             drive it with a checking load generator, and compare the numbers honestly."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a protocol under a chosen concurrency strategy and store.
    Serve(serve::ServeCmd),
    /// Drive load against any server speaking a protocol, and check replies.
    Load(Box<load::LoadCmd>),
    /// Run an experiment grid: every point × repetition on a fresh server, results on disk.
    Sweep(sweep::SweepArgs),
    /// Statistics and plots of a sweep's results (report.md, report.html, plots/).
    Report(report::ReportArgs),
    /// Merge the results of a load's agents (load … --agent I/N --out DIR) into one result.
    Merge(merge::MergeArgs),
    /// A short end-to-end run: a board server, 5 posters and 5 readers for 5 s.
    Demo(demo::DemoArgs),
    /// Verify any server against its protocol: named conformance cases, then linearizability under concurrency.
    Check(check::CheckCmd),
    /// Fit the Universal Scalability Law to a table of N and X: λ, σ, κ, their errors, the peak.
    Fit(fit::FitArgs),
    /// Print a shell's completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Print the man page, or write every subcommand's page into DIR.
    Man(completions::ManArgs),
}

impl Cli {
    /// `args` parsed, with clap's matches, which say where each value
    /// came from (a flag given, or a default), as `try_parse_from` does.
    fn parsed(args: Vec<std::ffi::OsString>) -> Result<(Cli, clap::ArgMatches), clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let mut cmd = Cli::command();
        let matches = cmd.try_get_matches_from_mut(args)?;
        let cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
        Ok((cli, matches))
    }

    /// Usage errors the flags' parsers cannot see alone (an error exits 2,
    /// as clap's own do).
    /// `matches`: clap's, of the whole command line.
    fn check(&self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        let (Command::Serve(cmd), Some(serve)) =
            (&self.command, matches.subcommand_matches("serve"))
        else {
            return Ok(());
        };
        cmd.check(serve).map_err(|msg| {
            usage_error_for(
                "serve",
                cmd.protocol(),
                clap::error::ErrorKind::ArgumentConflict,
                msg,
            )
        })
    }
}

/// A usage error of `serverlab <command> <protocol>` in clap's style:
/// `serve`, `load` and `check` each say theirs through this.
pub(crate) fn usage_error_for(
    command: &str,
    protocol: &str,
    kind: clap::error::ErrorKind,
    msg: String,
) -> clap::Error {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let sub = cmd
        .find_subcommand_mut(command)
        .and_then(|c| c.find_subcommand_mut(protocol))
        .cloned()
        .map(|c| c.bin_name(format!("serverlab {command} {protocol}")));
    sub.unwrap_or(cmd).error(kind, msg)
}

/// [`usage_error_for`], said, and exit 2.
pub(crate) fn usage_error_of(
    command: &str,
    protocol: &str,
    kind: clap::error::ErrorKind,
    msg: String,
) -> ! {
    usage_error_for(command, protocol, kind, msg).exit()
}

/// Exit codes: 0 ok, 1 the run failed, 2 bad usage (clap exits 2 itself).
fn main() -> ExitCode {
    let args = argv::joined(
        &<Cli as clap::CommandFactory>::command(),
        std::env::args_os(),
    );
    let (cli, matches) = Cli::parsed(args).unwrap_or_else(|e| load::said_of_the_form(e).exit());
    if let Err(e) = cli.check(&matches) {
        e.exit();
    }
    if !matches!(cli.command, Command::Serve(_)) {
        die_quietly_on_closed_stdout();
    }
    let result = match cli.command {
        Command::Serve(cmd) => serve::run(cmd),
        Command::Load(cmd) => load::run(*cmd),
        Command::Sweep(args) => sweep::run(args),
        Command::Report(args) => report::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Check(cmd) => check::run(cmd),
        Command::Fit(args) => fit::run(args),
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("serverlab: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// `serverlab load … | head` should end quietly, like any Unix tool, not
/// panic in `println!`. Rust ignores SIGPIPE; restore the default for the
/// commands that print results. (Servers keep ignoring it; socket writes
/// use MSG_NOSIGNAL either way.)
fn die_quietly_on_closed_stdout() {
    // SAFETY: resetting a signal disposition to its default before any
    // thread is started has no memory-safety implications.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
