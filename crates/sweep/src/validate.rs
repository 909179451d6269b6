//! Checking every command line of a plan before anything runs, with the
//! command-line parser the binary itself uses (passed in by the CLI, which
//! is the only layer that knows the flags).

use crate::error::SpecError;
use crate::plan::Plan;
use crate::side::Side;
use std::collections::HashSet;

/// The command lines the runner will use, with placeholder addresses and
/// files, checked by `check` (which returns the parser's complaint).
pub fn validate(
    plan: &Plan,
    file: &str,
    check: &dyn Fn(&[String]) -> Result<(), String>,
) -> Result<(), SpecError> {
    let mut seen = HashSet::new();
    for point in plan.block() {
        let baseline = plan.baseline.as_ref().is_some_and(|b| b.slug == point.slug);
        // Placeholders where the runner puts a real port and files: the
        // parser checks their form, not their value.
        for side in Side::BOTH {
            let args = argv(match side {
                Side::Server => point.serve_args("/dev/null"),
                Side::Load => point.load_args("127.0.0.1:1", "/dev/null"),
            });
            // What the experiment wrote, without the flags the sweep adds.
            let (command, protocol, flags) = match side {
                Side::Server => ("serve", &point.server_protocol, &point.server_flags),
                Side::Load => ("load", &point.load_protocol, &point.load_flags),
            };
            let shown = format!("serverlab {command} {protocol} {}", flags.join(" "));
            let side = side.name();
            if !seen.insert(args.clone()) {
                continue;
            }
            if let Err(complaint) = check(&args) {
                let whose = if baseline {
                    format!("[baseline.{side}]")
                } else {
                    format!("[{side}] of point {}", point.slug)
                };
                let message = match misspelt_key(&complaint) {
                    Some(said) => format!("{whose}: {said}"),
                    None => format!(
                        "{whose}: `{}` is rejected: {}",
                        shown.trim_end(),
                        first_line(&complaint)
                    ),
                };
                return Err(SpecError {
                    file: file.to_string(),
                    message,
                });
            }
        }
    }
    Ok(())
}

/// As the parser sees it: the binary's name first.
fn argv(args: Vec<String>) -> Vec<String> {
    std::iter::once("serverlab".to_string())
        .chain(args)
        .collect()
}

/// A key the parser does not know, said as a key, with the parser's
/// nearest flag as a did-you-mean: `no key \`duratoin\`; did you mean
/// \`duration\`?`.
fn misspelt_key(complaint: &str) -> Option<String> {
    let quoted = |line: &str, head: &str| -> Option<String> {
        let rest = line.split(head).nth(1)?;
        Some(rest.split('\'').next()?.to_string())
    };
    let key = complaint
        .lines()
        .find_map(|l| quoted(l, "unexpected argument '--"))?;
    let near = complaint
        .lines()
        .find_map(|l| quoted(l, "a similar argument exists: '--"));
    Some(match near {
        Some(near) => format!("no key `{key}`; did you mean `{near}`?"),
        None => format!("no key `{key}` (`serverlab … --help` lists the flags it can set)"),
    })
}

/// A parser's message without its usage block.
fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or(text);
    line.trim().trim_start_matches("error: ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Experiment;

    #[test]
    fn names_the_point_and_the_complaint() {
        let e = Experiment::parse(
            "t.toml",
            "protocol = \"board\"\n[load]\nposters = [1, 2]\nbogus = 3",
        )
        .unwrap();
        let plan = Plan::new(e).unwrap();
        let seen = std::cell::RefCell::new(Vec::new());
        let check = |args: &[String]| -> Result<(), String> {
            seen.borrow_mut().push(args.to_vec());
            if args.contains(&"--bogus".to_string()) {
                Err("error: unexpected argument '--bogus' found\n\nUsage: …".into())
            } else {
                Ok(())
            }
        };
        let err = validate(&plan, "t.toml", &check).unwrap_err().to_string();
        assert!(err.contains("posters=1"), "{err}");
        assert!(err.contains("no key `bogus`"), "{err}");
        assert!(!err.contains("Usage"), "{err}");
        let seen = seen.borrow();
        assert_eq!(seen[0][..3], ["serverlab", "serve", "board"]);
        assert!(seen[1].ends_with(&["--posters".into(), "1".into(), "--bogus".into(), "3".into()]));
    }

    #[test]
    fn the_baseline_is_checked_too() {
        let e = Experiment::parse("t.toml", "protocol = \"board\"\n[baseline.load]\nbogus = 1")
            .unwrap();
        let check = |args: &[String]| -> Result<(), String> {
            match args.contains(&"--bogus".to_string()) {
                true => Err("error: unexpected argument '--bogus' found".into()),
                false => Ok(()),
            }
        };
        let err = validate(&Plan::new(e).unwrap(), "t.toml", &check).unwrap_err();
        assert!(err.to_string().contains("[baseline.load]"), "{err}");
    }

    #[test]
    fn a_misspelt_key_gets_a_did_you_mean_and_no_flags_of_the_sweeps_own() {
        let e = Experiment::parse("t.toml", "protocol = \"board\"\n[load]\nduration = \"-3s\"")
            .unwrap();
        let check = |args: &[String]| -> Result<(), String> {
            match args.iter().any(|a| a == "--duration=-3s") {
                true => Err(
                    "error: invalid value '-3s' for '--duration <T>': must be positive\n".into(),
                ),
                false => Ok(()),
            }
        };
        let err = validate(&Plan::new(e).unwrap(), "t.toml", &check).unwrap_err();
        let err = err.to_string();
        assert!(
            err.contains("`serverlab load board --duration=-3s` is rejected"),
            "{err}"
        );
        assert!(
            !err.contains("127.0.0.1:1") && !err.contains("/dev/null"),
            "{err}"
        );
        let said = misspelt_key(
            "error: unexpected argument '--duratoin' found\n\n  tip: a similar argument \
             exists: '--duration'\n\nUsage: …",
        );
        assert_eq!(
            said.as_deref(),
            Some("no key `duratoin`; did you mean `duration`?")
        );
    }
}
