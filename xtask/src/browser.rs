//! `cargo xtask browser`: the web app's browser tests, Debian's Chromium driven by playwright-core against the real
//! `quire serve` of the build.

use std::path::Path;

use anyhow::{Context, bail};

use crate::install::CHROMIUM;
use crate::project_root;
use crate::web::{node, ui_dir};

/// `cargo xtask browser [--repeat N]`: builds what the tests run (a no-op after `cargo xtask ci` or `test`), then the
/// browser tests, N times; says which tests failed in any run.
pub(crate) fn run(repeat: u32) -> anyhow::Result<()> {
    let root = project_root();
    let installed = crate::install::Installed::fetch(&root, true)?;
    let build = crate::build::Instrumented::new(&root)?;
    build.build(crate::build::has_nextest())?;
    crate::coverage::forget_profiles(&root)?;
    let mut failed = Vec::new();
    let mut counts = crate::process::Counts::default();
    crate::repeat::runs(repeat, &mut failed, |failed| {
        run_once(&root, &build, &installed, &mut counts, failed)
    })?;
    println!("browser tests: {} passed, {} failed", counts.passed, counts.failed);
    Ok(())
}

/// The browser tests, once, against the `quire` binary of the build; screenshots land in `target/screenshots`.
pub(crate) fn run_once(
    root: &Path,
    build: &crate::build::Instrumented,
    installed: &crate::install::Installed,
    counts: &mut crate::process::Counts,
    failed: &mut Vec<String>,
) -> anyhow::Result<()> {
    let ui = ui_dir(root);
    if !Path::new(CHROMIUM).exists() {
        bail!("{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`); CI does");
    }
    let conformance = installed
        .browser
        .as_ref()
        .context("the browser tests' packages were not installed")?;
    let quire = crate::build::binary(root, "quire");
    anyhow::ensure!(quire.exists(), "{} is missing: the build comes first", quire.display());
    let mut tests = node(&ui, &["--test", "--test-concurrency=1", "tests/"]);
    tests
        .env("QUIRE_PLUGIN_RUNTIMES", &installed.plugins)
        .env("QUIRE_TEST_MODEL_DIR", &installed.model)
        .env("QUIRE_SYNC_SERVERS", &installed.servers)
        .env("QUIRE_CONFORMANCE_NODE", conformance.node_bin.join("node"))
        .env("QUIRE_CONFORMANCE_SUITE", &conformance.suite)
        .env("QUIRE_BIN", quire)
        // The instrumented `quire` writes its coverage profile where the tests' go: the report counts it.
        .env("LLVM_PROFILE_FILE", build.profile_file())
        .env("CHROMIUM", CHROMIUM)
        .env("QUIRE_SCREENSHOTS", root.join("target/screenshots"));
    crate::process::counted_with(&mut tests, counts, failed, &mut Vec::new())
}
