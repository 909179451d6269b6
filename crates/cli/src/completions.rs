//! `serverlab completions SHELL` and `serverlab man [DIR]`: shell
//! completions and man pages generated from the command line's own
//! definitions (clap_complete, clap_mangen), so they list every
//! subcommand and flag the binary takes.

use anyhow::Context;
use clap::CommandFactory;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for; source its output (bash: `source <(serverlab completions bash)`)
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// Write serverlab.1 and a page per subcommand (serverlab-load-board.1, …) into DIR;
    /// without it, serverlab.1 goes to stdout (`serverlab man | man -l -`)
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// The completion script for `args.shell`, on stdout.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = crate::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "serverlab", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// The man pages: the top page on stdout, or every page into a folder.
pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    // As generate_to renders every page: no `help` subcommand (it has no page).
    let mut cmd = crate::Cli::command().disable_help_subcommand(true);
    cmd.build();
    match args.dir {
        None => clap_mangen::Man::new(cmd)
            .render(&mut std::io::stdout())
            .context("cannot write the man page")?,
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
            eprintln!(
                "serverlab: man pages written to {} (read one with `man -l {}/serverlab.1`, or add \
                 the folder to MANPATH)",
                dir.display(),
                dir.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
