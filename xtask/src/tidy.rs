//! Tidy checks: every Rust file opens with a `//!` line, no banned test attributes, layering comments in manifests.

use std::path::{Path, PathBuf};

/// Returns one line per problem found under `root`.
pub(crate) fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    // Built from pieces so that this file does not trip its own check.
    let banned = [
        format!("#[{}]", "ignore"),
        format!("#[{}", "should_panic"),
        format!("#[{}(", "ignore"),
    ];
    for file in rust_files(root)? {
        let text = std::fs::read_to_string(&file)?;
        let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if !first.starts_with("//!") {
            problems.push(format!(
                "{shown}: must start with a `//!` comment saying what the file holds"
            ));
        }
        for (n, line) in text.lines().enumerate() {
            if banned.iter().any(|b| line.contains(b.as_str())) {
                problems.push(format!(
                    "{shown}:{}: no ignored or should-panic tests: assert the behaviour instead",
                    n + 1
                ));
            }
        }
    }
    for manifest in manifests(root)? {
        let text = std::fs::read_to_string(&manifest)?;
        if text.contains("[dependencies]") && !text.contains("# Layering:") {
            let shown = manifest.strip_prefix(root).unwrap_or(&manifest).display().to_string();
            problems.push(format!(
                "{shown}: put a `# Layering:` comment above [dependencies] (see ARCHITECTURE.md)"
            ));
        }
    }
    Ok(problems)
}

fn rust_files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for top in ["crates", "xtask", "tests"] {
        walk(&root.join(top), &mut files)?;
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "rs"));
    files.sort();
    Ok(files)
}

fn manifests(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for top in ["crates", "xtask", "tests"] {
        walk(&root.join(top), &mut files)?;
    }
    files.retain(|f| f.file_name().is_some_and(|n| n == "Cargo.toml"));
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') && name != "node_modules" {
                walk(&path, out)?;
            }
        } else {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn tidy() {
        let problems = super::check(&crate::project_root()).unwrap();
        assert!(problems.is_empty(), "tidy problems:\n{}", problems.join("\n"));
    }
}
