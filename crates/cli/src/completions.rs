//! `serverlab completions SHELL` and `serverlab man [DIR]`: shell
//! completions and man pages generated from the command line's own
//! definitions (clap_complete, clap_mangen), so they list every
//! subcommand and flag the binary takes.

use anyhow::Context;
use clap::CommandFactory;
use std::io::Write;
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
    let mut cmd = with_values();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "serverlab", &mut script);
    let mut script = String::from_utf8(script).context("a completion script not UTF-8")?;
    if args.shell == clap_complete::Shell::Bash {
        script = sweep_takes_tomls(&script);
    }
    std::io::stdout()
        .write_all(script.as_bytes())
        .context("cannot write the completion script")?;
    Ok(ExitCode::SUCCESS)
}

/// The command line with the values of flags whose parsers take free
/// text offered to the shells: `check P --only/--skip` the protocol's
/// cases, `load resp/kv --mix` each operation (`get=1`, a mix of its
/// own), `sweep` an experiment file. Only the scripts see these (the
/// parsers are the command line's own).
fn with_values() -> clap::Command {
    use clap::builder::PossibleValuesParser;
    let mut cmd = crate::Cli::command();
    cmd = cmd.mut_subcommand("check", |mut check| {
        for (protocol, names) in crate::check::case_names() {
            check = check.mut_subcommand(protocol, |c| {
                let names = PossibleValuesParser::new(names);
                c.mut_arg("only", |a| a.value_parser(names.clone()))
                    .mut_arg("skip", |a| a.value_parser(names))
            });
        }
        check
    });
    let mixes = [
        (
            serverlab_proto::resp::NAME,
            mix_words::<serverlab_load::resp::Op>(),
        ),
        (
            serverlab_proto::kv::NAME,
            mix_words::<serverlab_load::kv::Op>(),
        ),
    ];
    cmd = cmd.mut_subcommand("load", |mut load| {
        for (protocol, words) in mixes {
            load = load.mut_subcommand(protocol, |l| {
                l.mut_arg("mix", |a| a.value_parser(PossibleValuesParser::new(words)))
            });
        }
        load
    });
    cmd.mut_subcommand("sweep", |s| {
        s.mut_arg("experiment", |a| a.value_hint(clap::ValueHint::FilePath))
    })
}

/// Each operation of a mix alone (`get=1`, a mix of one operation).
/// (clap takes static names; this runs once, to print a script.)
fn mix_words<T: serverlab_util::Named>() -> Vec<&'static str> {
    T::ALL
        .iter()
        .map(|op| &*Box::leak(format!("{}=1", op.name()).into_boxed_str()))
        .collect()
}

/// clap's bash script offers `sweep`'s flags where its experiment goes:
/// there, `sweep` completes `.toml` files (and folders, to reach them);
/// a word that begins with `-` still completes its flags.
fn sweep_takes_tomls(script: &str) -> String {
    const CASE: &str = "serverlab__subcmd__sweep)";
    let Some(at) = script.find(CASE) else {
        return script.to_string();
    };
    let (head, tail) = script.split_at(at + CASE.len());
    let tail = tail
        .replacen(" || ${COMP_CWORD} -eq 2 ]]", " ]]", 1)
        .replacen(
            "*)\n                    COMPREPLY=()\n                    ;;\n            esac\n            \
             COMPREPLY=( $(compgen -W \"${opts}\" -- \"${cur}\") )",
            "*)\n                    COMPREPLY=( $(compgen -f -X '!*.toml' -- \"${cur}\") \
             $(compgen -d -- \"${cur}\") )\n                    return 0\n                    ;;\n            \
             esac\n            COMPREPLY=( $(compgen -W \"${opts}\" -- \"${cur}\") )",
            1,
        );
    format!("{head}{tail}")
}

/// The man pages: the top page on stdout, or every page into a folder.
/// Each has clap_mangen's sections and EXIT STATUS, EXAMPLES and SEE ALSO
/// of ours ([`crate::man`]).
pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    // As clap_mangen renders every page: no `help` subcommand (it has no page).
    let mut cmd = crate::Cli::command().disable_help_subcommand(true);
    cmd.build();
    match args.dir {
        None => {
            let page = crate::man::page(&cmd, &cmd, &[]).context("cannot render the man page")?;
            std::io::stdout()
                .write_all(&page)
                .context("cannot write the man page")?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            crate::man::write_pages(&cmd, &dir)
                .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
            // man finds pages in the man1 folder of a MANPATH entry.
            let manpath = match (dir.file_name(), dir.parent()) {
                (Some(n), Some(p)) if n == "man1" && !p.as_os_str().is_empty() => {
                    format!(", or add {} to MANPATH", p.display())
                }
                _ => String::new(),
            };
            eprintln!(
                "serverlab: man pages written to {} (read one with `man -l {}`{manpath})",
                dir.display(),
                dir.join("serverlab.1").display(),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
