//! `cargo xtask web`: the web app's UI. Its TypeScript sources (`crates/web/ui/src`) are bundled by esbuild into
//! `crates/web/assets/app.js`, which is committed so that `cargo build` needs no Node; `--check` fails when the
//! committed bundle differs from a fresh build, or the sources do not type-check. `cargo xtask browser` runs the
//! browser tests: Debian's Chromium driven by playwright-core against the real `quire serve`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::{cargo, project_root};

fn ui_dir(root: &Path) -> PathBuf {
    root.join("crates/web/ui")
}

/// `npm ci` when `node_modules` does not match `package-lock.json` (a copy of the lock marks a finished install).
fn install(ui: &Path) -> anyhow::Result<()> {
    let lock = std::fs::read(ui.join("package-lock.json")).context("crates/web/ui/package-lock.json is missing")?;
    let stamp = ui.join("node_modules/.quire-installed-lock");
    if std::fs::read(&stamp).is_ok_and(|installed| installed == lock) {
        return Ok(());
    }
    crate::process::status(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(ui),
    )
    .context("npm ci in crates/web/ui (Node 20 and npm are needed)")?;
    std::fs::write(&stamp, lock)?;
    Ok(())
}

fn node(ui: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("node");
    command.args(args).current_dir(ui);
    command
}

/// Type-checks the sources and rebuilds the bundle (`check`: compares it with the committed one instead).
pub(crate) fn run(check: bool) -> anyhow::Result<()> {
    let ui = ui_dir(&project_root());
    install(&ui)?;
    crate::process::status(&mut node(&ui, &["node_modules/typescript/bin/tsc", "--noEmit"]))
        .context("the UI's TypeScript does not type-check")?;
    let mut build = node(&ui, &["build.mjs"]);
    if check {
        build.arg("--check");
    }
    crate::process::status(&mut build)
}

/// The system Chromium the browser tests drive (Playwright's own downloads cannot be used here).
const CHROMIUM: &str = "/usr/bin/chromium";

/// The browser tests, against the `quire` binary of this build; screenshots land in `target/screenshots`.
pub(crate) fn browser(counts: &mut crate::process::Counts) -> anyhow::Result<()> {
    let root = project_root();
    let ui = ui_dir(&root);
    if !Path::new(CHROMIUM).exists() {
        bail!("{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`); .ci/run does");
    }
    install(&ui)?;
    // The plugin tests run the official Python SDK and the reference "everything" server as plugins.
    let plugins = crate::plugin_runtimes::ensure(&root)?;
    // The conformance suite's authorization scenarios need a browser to give consent: they run here.
    let conformance = crate::conformance::install(&root)?;
    crate::process::status(cargo().args(["build", "--locked", "--package", "quire", "--bin", "quire"]))?;
    let mut tests = node(&ui, &["--test", "--test-concurrency=1", "tests/"]);
    tests
        .env("QUIRE_PLUGIN_RUNTIMES", plugins)
        .env("QUIRE_CONFORMANCE_NODE", conformance.node_bin.join("node"))
        .env("QUIRE_CONFORMANCE_SUITE", conformance.suite)
        .env("QUIRE_BIN", root.join("target/debug/quire"))
        .env("CHROMIUM", CHROMIUM)
        .env("QUIRE_SCREENSHOTS", root.join("target/screenshots"));
    crate::process::counted(&mut tests, counts)
}
