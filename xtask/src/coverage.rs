//! `cargo xtask coverage`: line coverage per crate with cargo-llvm-cov, and the files that must be fully covered.
//!
//! The tool handlers (`crates/tools/src/<area>/*.rs`) and core's guard code reach every line: the seed asks the
//! spec tests to chase the specification to 100%, and a guard branch no test takes is a guard nobody checked.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::project_root;

/// Files every line of which the tests must run.
fn must_be_complete(file: &str) -> bool {
    let handler = file
        .strip_prefix("crates/tools/src/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(_, name)| name != "mod.rs" && !name.contains('/'));
    handler || matches!(file, "crates/core/src/guard.rs" | "crates/core/src/write/guards.rs")
}

/// `cargo xtask coverage`: the tests of the instrumented build, then the report.
pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    let installed = crate::install::Installed::fetch(&root, false)?;
    let build = crate::build::Instrumented::new(&root)?;
    let nextest = crate::build::has_nextest();
    build.build(nextest)?;
    forget_profiles(&root)?;
    let mut tests = build.test_command(&root, nextest);
    installed.apply(&mut tests).env("INSTA_UPDATE", "no");
    crate::process::status(&mut tests)?;
    check(&root, &build)
}

/// Removes the profiles of earlier runs, which would add to this one's counts, and those not counted.
pub(crate) fn forget_profiles(root: &Path) -> anyhow::Result<()> {
    let dir = root.join(crate::build::TARGET);
    let _ = std::fs::remove_dir_all(dir.join("profiles-not-counted"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "profraw" || e == "profdata") {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Reads the profiles of the last instrumented run: coverage per crate, and the files that must be complete.
pub(crate) fn check(root: &Path, build: &crate::build::Instrumented) -> anyhow::Result<()> {
    let torn = drop_torn_profiles(root)?;
    if torn > 0 {
        eprintln!(
            "({torn} torn coverage profile(s) left out: a process killed while it wrote its profile, as crash tests do)"
        );
    }
    let stale = drop_stale_programs(root, build)?;
    if stale > 0 {
        eprintln!("({stale} program(s) of earlier builds removed, whose maps of older sources would count as missed)");
    }
    let report = root.join("target/coverage.json");
    let mut command = build.cargo();
    command
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
        let _ = crate::process::status(build.cargo().args(["llvm-cov", "report", "--show-missing-lines"]));
        bail!(
            "tool handlers and core's guards must be covered line by line:\n  {}",
            incomplete.join("\n  ")
        );
    }
    eprintln!("every tool handler and core's guard code: 100% of lines");
    Ok(())
}

/// Removes the programs of earlier builds from the build's `deps` and `examples` folders, and says how many. cargo-llvm-cov reads every
/// program there, and one built from older sources (a test file since merged into `tests/it`, a test program before
/// a change) brings its own map of those sources, whose lines no profile of this run covers: LLVM warns of "functions
/// with mismatched data", and files look less covered than they are (CI failed locally that way; a fresh clone has
/// none of them). What this build made is what `cargo test --no-run` names, up to date and built by now.
fn drop_stale_programs(root: &Path, build: &crate::build::Instrumented) -> anyhow::Result<usize> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

    let output = build
        .cargo()
        .args([
            "test",
            "--no-run",
            "--workspace",
            "--all-features",
            "--locked",
            "--message-format",
            "json",
        ])
        .output()
        .context("cannot run cargo test --no-run")?;
    anyhow::ensure!(
        output.status.success(),
        "cargo test --no-run failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The programs of this build, by inode: a binary's path is its copy outside `deps`, a hard link of the one inside.
    let mut current = std::collections::HashSet::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(program) = message["executable"].as_str()
            && let Ok(meta) = std::fs::metadata(program)
        {
            current.insert(meta.ino());
        }
    }
    anyhow::ensure!(!current.is_empty(), "cargo test --no-run named no program");
    let mut removed = 0;
    for dir in ["debug/deps", "debug/examples"] {
        let Ok(entries) = std::fs::read_dir(root.join(crate::build::TARGET).join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            let Ok(meta) = std::fs::metadata(&path) else { continue };
            let program = meta.is_file() && path.extension().is_none() && meta.permissions().mode() & 0o111 != 0;
            if program && !current.contains(&meta.ino()) {
                std::fs::remove_file(&path)?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// Removes the profiles that LLVM cannot read, and says how many. A test that kills `quire` on purpose (kill -9 at
/// every step of a sync or a sealing) can land while the dying process writes its profile; the torn file would fail
/// the whole report, at random. `llvm-profdata merge --failure-mode=all` reads them all and names each one it cannot.
fn drop_torn_profiles(root: &Path) -> anyhow::Result<usize> {
    let dir = root.join(crate::build::TARGET);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(0);
    };
    let mut profiles = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "profraw") {
            profiles.push(path);
        }
    }
    if profiles.is_empty() {
        return Ok(0);
    }
    let list = dir.join("profiles-to-check.txt");
    let names: Vec<String> = profiles.iter().map(|p| p.display().to_string()).collect();
    std::fs::write(&list, names.join("\n"))?;
    let output = std::process::Command::new(llvm_profdata()?)
        .args(["merge", "--failure-mode=all", "-sparse", "-f"])
        .arg(&list)
        .arg("-o")
        .arg(dir.join("profiles-checked.profdata"))
        .output()
        .context("cannot run llvm-profdata")?;
    let _ = std::fs::remove_file(&list);
    let _ = std::fs::remove_file(dir.join("profiles-checked.profdata"));
    let said = String::from_utf8_lossy(&output.stderr);
    let mut torn = 0;
    for path in &profiles {
        let named = path.display().to_string();
        if said.lines().any(|line| line.contains(&named)) {
            std::fs::remove_file(path)?;
            torn += 1;
        }
    }
    Ok(torn)
}

/// rustup's `llvm-profdata` (the llvm-tools component, which `build.rs` installs).
fn llvm_profdata() -> anyhow::Result<std::path::PathBuf> {
    let rustc = |args: &[&str]| -> anyhow::Result<String> {
        let out = std::process::Command::new("rustc")
            .args(args)
            .output()
            .context("cannot run rustc")?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let sysroot = rustc(&["--print", "sysroot"])?;
    let version = rustc(&["-vV"])?;
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .context("rustc -vV names no host")?;
    Ok(Path::new(sysroot.trim())
        .join("lib/rustlib")
        .join(host.trim())
        .join("bin/llvm-profdata"))
}

fn percent(covered: u64, count: u64) -> f64 {
    if count == 0 {
        100.0
    } else {
        100.0 * covered as f64 / count as f64
    }
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
