//! A value that starts with `-` (`--duration -3s`) read as the value of
//! its flag, so its parser says what is wrong with it ("a bad value"),
//! instead of clap taking `-3s` for a flag of its own. Clap reads plain
//! negative numbers so already; a number with a unit needs this.

use std::collections::HashSet;
use std::ffi::OsString;

/// Every long flag, in any subcommand, that takes a value.
fn valued_flags(cmd: &clap::Command, into: &mut HashSet<String>) {
    for arg in cmd.get_arguments() {
        if let Some(long) = arg.get_long() {
            if arg.get_action().takes_values() {
                into.insert(format!("--{long}"));
            }
        }
    }
    for sub in cmd.get_subcommands() {
        valued_flags(sub, into);
    }
}

/// Whether `token` reads as a negative number, with or without a unit.
fn negative(token: &OsString) -> bool {
    let t = token.to_string_lossy();
    let mut chars = t.chars();
    chars.next() == Some('-') && chars.next().is_some_and(|c| c.is_ascii_digit() || c == '.')
}

/// `args` with `--flag -3s` joined as `--flag=-3s` wherever `--flag` takes
/// a value in `cmd`.
pub fn joined(cmd: &clap::Command, args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut flags = HashSet::new();
    valued_flags(cmd, &mut flags);
    let mut out: Vec<OsString> = Vec::new();
    for arg in args {
        let joins = out
            .last()
            .is_some_and(|prev| flags.contains(prev.to_string_lossy().as_ref()))
            && negative(&arg);
        match (joins, out.last_mut()) {
            (true, Some(prev)) => {
                prev.push("=");
                prev.push(arg);
            }
            _ => out.push(arg),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn join(args: &[&str]) -> Vec<String> {
        let args = args.iter().map(OsString::from);
        joined(&crate::Cli::command(), args)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn a_negative_value_stays_with_its_flag() {
        assert_eq!(
            join(&["serverlab", "load", "board", "--duration", "-3s"]),
            ["serverlab", "load", "board", "--duration=-3s"]
        );
        assert_eq!(
            join(&["serverlab", "load", "board", "--verify", "-3s"]),
            ["serverlab", "load", "board", "--verify", "-3s"],
            "a switch takes no value"
        );
        assert_eq!(
            join(&["serverlab", "load", "board", "--duration", "--verify"]),
            ["serverlab", "load", "board", "--duration", "--verify"]
        );
    }
}
