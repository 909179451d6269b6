//! The commit a binary was built from, for `serverlab --version`
//! (`serverlab 0.1.0 (commit 1c7a316)`): `SERVERLAB_COMMIT` if set (a
//! build without the repository, as in deploy/Dockerfile's context, which
//! leaves .git out), else `git rev-parse` of HEAD when built (changes not
//! yet committed are not counted); "unknown" without either.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=SERVERLAB_COMMIT");
    let given = std::env::var("SERVERLAB_COMMIT").ok();
    let commit = given.filter(|c| !c.is_empty()).or_else(|| {
        // Rebuilt when HEAD moves: a commit, a checkout.
        if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
            println!("cargo:rerun-if-changed={dir}/HEAD");
            if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
                println!("cargo:rerun-if-changed={dir}/{head}");
            }
        }
        git(&["rev-parse", "--short=7", "HEAD"])
    });
    println!(
        "cargo:rustc-env=SERVERLAB_COMMIT={}",
        commit.unwrap_or_else(|| "unknown".into())
    );
}
