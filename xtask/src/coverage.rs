//! `cargo xtask coverage`: line coverage per crate with cargo-llvm-cov, and the files that must be fully covered.
//!
//! The tool handlers (`crates/tools/src/<area>/*.rs`) and core's guard code reach every line: the seed asks the
//! spec tests to chase the specification to 100%, and a guard branch no test takes is a guard nobody checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::{cargo, project_root};

/// cargo-llvm-cov, pinned; installed from crates.io under `target/tools` on first use.
const LLVM_COV_VERSION: &str = "0.9.1";

/// Files every line of which the tests must run.
fn must_be_complete(file: &str) -> bool {
    let handler = file
        .strip_prefix("crates/tools/src/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(_, name)| name != "mod.rs" && !name.contains('/'));
    handler || matches!(file, "crates/core/src/guard.rs" | "crates/core/src/write/guards.rs")
}

/// `cargo xtask coverage`: the tests under instrumentation, then the report.
pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    let mut tests = test_command(&root)?;
    tests.env("INSTA_UPDATE", "no");
    crate::process::status(&mut tests)?;
    check(&root)
}

/// The workspace's tests (nextest when installed) built with coverage instrumentation, leaving the profiles for
/// [`check`]. CI runs its test suite this way, once: a second, uninstrumented run would build every test binary
/// again into a second target directory, doubling the disk it needs and the time it takes.
pub(crate) fn test_command(root: &Path) -> anyhow::Result<Command> {
    let tool = ensure_tools(root)?;
    let model = crate::model::ensure(root)?;
    // Profiles of an earlier run would add to this one's counts.
    crate::process::status(
        cargo()
            .env("PATH", path_with(&tool))
            .args(["llvm-cov", "clean", "--workspace"]),
    )?;
    let nextest = cargo()
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    let mut command = cargo();
    command
        .env("PATH", path_with(&tool))
        .env("QUIRE_TEST_MODEL_DIR", &model)
        .arg("llvm-cov");
    if nextest {
        command.arg("nextest");
    } else {
        eprintln!("(cargo-nextest is not installed; using cargo test)");
        command.arg("test");
    }
    command.args([
        "--workspace",
        "--all-features",
        "--locked",
        "--no-report",
        "--no-fail-fast",
    ]);
    Ok(command)
}

/// Reads the profiles of the last instrumented run: coverage per crate, and the files that must be complete.
pub(crate) fn check(root: &Path) -> anyhow::Result<()> {
    let tool = ensure_tools(root)?;
    let report = root.join("target/coverage.json");
    let mut command = cargo();
    command
        .env("PATH", path_with(&tool))
        .args(["llvm-cov", "report", "--json", "--output-path"])
        .arg(&report);
    crate::process::status(&mut command)?;
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&report)?)?;
    let files = data["data"][0]["files"]
        .as_array()
        .context("no files in the coverage report")?;
    let mut per_crate: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut incomplete = Vec::new();
    for file in files {
        let name = file["filename"].as_str().unwrap_or_default();
        let relative = Path::new(name)
            .strip_prefix(root)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| name.to_owned());
        let lines = &file["summary"]["lines"];
        let (covered, count) = (
            lines["covered"].as_u64().unwrap_or(0),
            lines["count"].as_u64().unwrap_or(0),
        );
        if let Some(krate) = relative.strip_prefix("crates/").and_then(|r| r.split('/').next())
            && relative.contains("/src/")
        {
            let entry = per_crate.entry(krate.to_owned()).or_default();
            entry.0 += covered;
            entry.1 += count;
        }
        if must_be_complete(&relative) && covered < count {
            incomplete.push(format!("{relative}: {covered} of {count} lines"));
        }
    }
    eprintln!("\nline coverage (unit, integration and end-to-end tests):");
    for (krate, (covered, count)) in &per_crate {
        eprintln!(
            "  {krate:<7} {:>5.1}%  ({covered} of {count} lines)",
            percent(*covered, *count)
        );
    }
    let (covered, count) = per_crate.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    eprintln!(
        "  {:<7} {:>5.1}%  ({covered} of {count} lines)",
        "all",
        percent(covered, count)
    );
    if !incomplete.is_empty() {
        // Show the lines no test runs, for the files that must be complete.
        let _ = crate::process::status(cargo().env("PATH", path_with(&tool)).args([
            "llvm-cov",
            "report",
            "--show-missing-lines",
        ]));
        bail!(
            "tool handlers and core's guards must be covered line by line:\n  {}",
            incomplete.join("\n  ")
        );
    }
    eprintln!("every tool handler and core's guard code: 100% of lines");
    Ok(())
}

fn percent(covered: u64, count: u64) -> f64 {
    if count == 0 {
        100.0
    } else {
        100.0 * covered as f64 / count as f64
    }
}

/// `llvm-tools` (rustup) and cargo-llvm-cov (crates.io, pinned), each installed once. Returns cargo-llvm-cov's
/// directory.
fn ensure_tools(root: &Path) -> anyhow::Result<PathBuf> {
    let installed = std::process::Command::new("rustup")
        .args(["component", "list", "--installed"])
        .output()
        .context("cannot run rustup, which installs llvm-tools")?;
    if !String::from_utf8_lossy(&installed.stdout)
        .lines()
        .any(|l| l.starts_with("llvm-tools"))
    {
        crate::process::status(std::process::Command::new("rustup").args(["component", "add", "llvm-tools"]))?;
    }
    let dir = root.join("target/tools");
    let bin = dir.join("bin");
    let current = std::process::Command::new(bin.join("cargo-llvm-cov"))
        .args(["llvm-cov", "--version"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(LLVM_COV_VERSION));
    if !current {
        crate::process::status(
            cargo()
                .args([
                    "install",
                    "--locked",
                    "--quiet",
                    "--version",
                    LLVM_COV_VERSION,
                    "--root",
                ])
                .arg(&dir)
                .arg("cargo-llvm-cov"),
        )?;
    }
    Ok(bin)
}

fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(paths).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_files_that_must_be_complete() {
        for (file, expected) in [
            ("crates/tools/src/notes/read_note.rs", true),
            ("crates/tools/src/notes/mod.rs", false),
            ("crates/tools/src/registry.rs", false),
            ("crates/core/src/guard.rs", true),
            ("crates/core/src/write/guards.rs", true),
            ("crates/core/src/write/notes.rs", false),
        ] {
            assert_eq!(super::must_be_complete(file), expected, "{file}");
        }
    }
}
