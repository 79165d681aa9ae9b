//! `cargo xtask web`: the web app's UI. Its TypeScript sources (`crates/web/ui/src`) are bundled by esbuild into
//! `crates/web/assets/app.js`, which is committed so that `cargo build` needs no Node; `--check` fails when the
//! committed bundle differs from a fresh build, or the sources do not type-check. The browser tests are `browser.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::project_root;

pub(crate) fn ui_dir(root: &Path) -> PathBuf {
    root.join("crates/web/ui")
}

/// `npm ci` when `node_modules` does not match `package-lock.json` (a copy of the lock marks a finished install).
pub(crate) fn install(ui: &Path) -> anyhow::Result<()> {
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

pub(crate) fn node(ui: &Path, args: &[&str]) -> Command {
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
