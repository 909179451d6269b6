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
                return Err(SpecError {
                    file: file.to_string(),
                    message: format!(
                        "{whose}: `serverlab {}` is rejected: {}",
                        args[1..].join(" "),
                        first_line(&complaint)
                    ),
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
        assert!(err.contains("unexpected argument '--bogus'"), "{err}");
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
}
