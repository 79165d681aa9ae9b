//! What the plugin tests run as plugins: the official MCP SDK for Python (`mcp` from PyPI, in a virtual environment)
//! and the reference "everything" server (`@modelcontextprotocol/server-everything` from npm), and what the ACP tests
//! build their agent on (`@agentclientprotocol/sdk`) and run as a real agent (Codex's ACP adapter,
//! `@zed-industries/codex-acp`, against a mock of the Responses API), all under
//! target/plugin-runtimes, installed once. The folder reaches the tests as `QUIRE_PLUGIN_RUNTIMES`, which makes those
//! tests mandatory.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Pinned, so that every CI run talks to the same servers.
const PYTHON_PACKAGES: &[&str] = &["mcp==2.3.0"];
/// The everything server brings the MCP SDK for TypeScript, which the ACP test agent (`tests/acp/test-agent.mjs`) uses
/// beside the official ACP SDK.
const NPM_PACKAGES: &[&str] = &[
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@agentclientprotocol/sdk@2.4.0",
    "@zed-industries/codex-acp@0.16.0",
];

/// The Python of the virtual environment, relative to the folder.
pub(crate) const PYTHON: &str = "bin/python";
/// The ACP SDK's folder, relative to the folder.
pub(crate) const ACP_SDK: &str = "node_modules/@agentclientprotocol/sdk";
/// Codex's ACP adapter (the npm launcher of its platform's binary), relative to the folder.
pub(crate) const CODEX_ACP: &str = "node_modules/.bin/codex-acp";
/// The everything server's program, relative to the folder.
pub(crate) const EVERYTHING: &str = "node_modules/.bin/mcp-server-everything";

/// Returns the folder, installing what is missing.
pub(crate) fn ensure(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join("target/plugin-runtimes");
    let python = dir.join(PYTHON);
    let has_sdk = python.exists()
        && Command::new(&python)
            .args(["-c", "import mcp.server.mcpserver"])
            .status()
            .is_ok_and(|s| s.success());
    if !has_sdk {
        eprintln!("installing {} with pip", PYTHON_PACKAGES.join(", "));
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&dir)
            .status()
            .context("cannot run python3 -m venv")?;
        if !made.success() {
            bail!("python3 -m venv {} failed", dir.display());
        }
        let installed = Command::new(dir.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(PYTHON_PACKAGES)
            .status()
            .context("cannot run pip in the virtual environment")?;
        if !installed.success() {
            bail!("pip install {} failed", PYTHON_PACKAGES.join(" "));
        }
    }
    if !dir.join(EVERYTHING).exists() || !dir.join(ACP_SDK).exists() || !dir.join(CODEX_ACP).exists() {
        eprintln!("installing {} with npm", NPM_PACKAGES.join(", "));
        let installed = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&dir)
            .args(NPM_PACKAGES)
            .status()
            .context("cannot run npm")?;
        if !installed.success() || !dir.join(EVERYTHING).exists() {
            bail!("npm install {} failed", NPM_PACKAGES.join(" "));
        }
    }
    Ok(dir)
}
