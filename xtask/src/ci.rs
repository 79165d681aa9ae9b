//! `cargo xtask ci`: every check CI runs, in order, stopping at the first failure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::{cargo, project_root};

pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    let started = Instant::now();
    step("fmt", || {
        status(cargo().args(["fmt", "--all", "--", "--check"]))
    })?;
    step("tidy", || crate::report(crate::tidy::check(&root)))?;
    step("layering", || crate::report(crate::layering::check(&root)))?;
    step("clippy", || {
        status(cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ]))
    })?;
    step("tests", || tests(&root))?;
    step("rustdoc", || {
        status(cargo().env("RUSTDOCFLAGS", "-D warnings").args([
            "doc",
            "--workspace",
            "--no-deps",
            "--locked",
        ]))
    })?;
    eprintln!("\nxtask ci: all checks passed in {:.0?}", started.elapsed());
    Ok(())
}

fn step(name: &str, f: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    eprintln!("\n==> {name}");
    let started = Instant::now();
    f().with_context(|| format!("xtask ci: step '{name}' failed"))?;
    eprintln!("==> {name}: ok ({:.1?})", started.elapsed());
    Ok(())
}

fn status(command: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{command:?}");
    let status = command
        .status()
        .with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

/// The test suite with insta in check mode: a mismatching, new (pending) or unreferenced snapshot fails.
fn tests(root: &Path) -> anyhow::Result<()> {
    let references =
        std::env::temp_dir().join(format!("quire-insta-references-{}", std::process::id()));
    let _ = std::fs::remove_file(&references);
    let insta = |c: &mut Command| {
        c.env("INSTA_UPDATE", "no")
            .env("INSTA_FORCE_PASS", "0")
            .env("INSTA_SNAPSHOT_REFERENCES_FILE", &references);
    };
    // The end-to-end tests run the binary; build it before the test processes race to.
    status(cargo().args(["build", "--locked", "--package", "quire", "--bin", "quire"]))?;
    let nextest = cargo()
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if nextest {
        let mut run = cargo();
        run.args([
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ]);
        insta(&mut run);
        status(&mut run)?;
        // nextest does not run doctests.
        let mut doc = cargo();
        doc.args(["test", "--workspace", "--locked", "--doc"]);
        insta(&mut doc);
        status(&mut doc)?;
    } else {
        eprintln!("(cargo-nextest is not installed; using cargo test)");
        let mut run = cargo();
        run.args(["test", "--workspace", "--locked", "--no-fail-fast"]);
        insta(&mut run);
        status(&mut run)?;
    }
    let referenced: BTreeSet<PathBuf> = std::fs::read_to_string(&references)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| std::fs::canonicalize(l).ok())
        .collect();
    let _ = std::fs::remove_file(&references);
    let mut problems = Vec::new();
    for file in snapshot_files(root)? {
        let name = file.to_string_lossy().into_owned();
        if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
            problems.push(format!(
                "pending snapshot {name}: review it with `cargo insta review` and commit the result"
            ));
        } else if name.ends_with(".snap") && !referenced.contains(&std::fs::canonicalize(&file)?) {
            problems.push(format!(
                "unreferenced snapshot {name}: no test asserts it any more; delete it"
            ));
        }
    }
    crate::report(Ok(problems))
}

fn snapshot_files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("crates"), root.join("tests"), root.join("xtask")];
    while let Some(dir) = stack.pop() {
        if !dir.exists() {
            continue;
        }
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else if path.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.ends_with(".snap") || n.ends_with(".snap.new") || n.ends_with(".pending-snap")
            }) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}
