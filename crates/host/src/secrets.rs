//! Secrets kept in quire's configuration directory (the MCP token, the web key): files only the user can read.

use std::path::Path;

use anyhow::Context;

/// A secret kept in the configuration directory (mode 0600), created on first use or when rotated.
pub fn secret(dir: &Path, name: &str, rotate: bool) -> anyhow::Result<String> {
    let path = dir.join(name);
    if !rotate && let Ok(existing) = std::fs::read_to_string(&path) {
        let existing = existing.trim();
        if existing.len() >= 32 {
            return Ok(existing.to_owned());
        }
    }
    let token = new_secret()?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_private(&path, &token)?;
    Ok(token)
}

/// A new token: quire-loopback's secret, 32 random bytes in lower-case hex (the format the files have always held).
pub fn new_secret() -> anyhow::Result<String> {
    quire_loopback::new_secret().context("cannot make a token")
}

/// Writes `contents` to `path`, readable and writable by the user alone, in one rename.
pub fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    quire_loopback::write_private(path, contents).with_context(|| format!("cannot write {}", path.display()))
}
