//! Secrets kept in quire's configuration directory (the MCP token, the web key): files only the user can read.

use std::path::Path;

use anyhow::Context;

/// A secret kept in the configuration directory (mode 0600), created on first use or when rotated. Two processes
/// that make it at once (`quire mcp --http` starting while `quire mcp token` runs) get the same one: the first
/// written wins, and the other reads it.
pub fn secret(dir: &Path, name: &str, rotate: bool) -> anyhow::Result<String> {
    let path = dir.join(name);
    let usable = |text: String| Some(text.trim().to_owned()).filter(|text| text.len() >= 32);
    // Read once, and decided on what was read: a file that appears meanwhile is another process's new secret.
    let found = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if !rotate && let Some(existing) = found.clone().and_then(usable) {
        return Ok(existing);
    }
    let token = new_secret()?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if rotate || found.is_some() {
        // Rotated, or damaged (too short to be one of quire's): replaced.
        write_private(&path, &token)?;
        return Ok(token);
    }
    let created =
        quire_loopback::create_private(&path, &token).with_context(|| format!("cannot write {}", path.display()))?;
    if created {
        return Ok(token);
    }
    std::fs::read_to_string(&path).ok().and_then(usable).with_context(|| {
        format!(
            "{} was being written by another quire and is not usable",
            path.display()
        )
    })
}

/// A new token: quire-loopback's secret, 32 random bytes in lower-case hex (the format the files have always held).
pub fn new_secret() -> anyhow::Result<String> {
    quire_loopback::new_secret().context("cannot make a token")
}

/// Writes `contents` to `path`, readable and writable by the user alone, in one rename.
pub fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    quire_loopback::write_private(path, contents).with_context(|| format!("cannot write {}", path.display()))
}
