//! The storage servers sync's tests run against: wsgidav (WebDAV) and moto (an S3 server), from PyPI into a Python
//! virtual environment under target/sync-servers, made once. The tests start them on loopback themselves; the
//! directory of their programs reaches the tests as `QUIRE_SYNC_SERVERS`, which also makes those tests mandatory.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Pinned, so that every CI run talks to the same servers.
const PACKAGES: &[&str] = &["wsgidav==4.4.0", "cheroot==11.1.2", "moto[server]==5.2.5"];

/// Returns the directory holding `wsgidav` and `moto_server`, installing them when missing.
pub(crate) fn ensure(root: &Path) -> anyhow::Result<PathBuf> {
    let venv = root.join("target/sync-servers");
    let bin = venv.join("bin");
    if bin.join("wsgidav").exists() && bin.join("moto_server").exists() {
        return Ok(bin);
    }
    eprintln!("installing {} with pip", PACKAGES.join(", "));
    let venv_made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success())
        && bin.join("pip").exists();
    if venv_made {
        let installed = Command::new(bin.join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(PACKAGES)
            .status()
            .context("cannot run pip in the virtual environment")?;
        if installed.success() && bin.join("wsgidav").exists() && bin.join("moto_server").exists() {
            return Ok(bin);
        }
        bail!("pip install {} failed", PACKAGES.join(" "));
    }
    // No venv module (a Python without ensurepip): the packages in a folder of their own, and two small scripts
    // that run them from it.
    let lib = venv.join("lib-target");
    let installed = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&lib)
        .args(PACKAGES)
        .status()
        .context("cannot run python3 -m pip")?;
    if !installed.success() {
        bail!("pip install --target {} failed", lib.display());
    }
    std::fs::create_dir_all(&bin)?;
    for (name, module) in [("wsgidav", "wsgidav.server.server_cli"), ("moto_server", "moto.server")] {
        let script = format!(
            "#!/bin/sh\nPYTHONPATH='{}' exec python3 -m {module} \"$@\"\n",
            lib.display()
        );
        let path = bin.join(name);
        std::fs::write(&path, script)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(bin)
}
