//! Tidy checks: every Rust file opens with a `//!` line, no banned test attributes, layering comments in manifests,
//! no source file over [`MAX_LINES`] lines (a longer one has become a catch-all: split it by responsibility), no
//! cycle between the modules of a crate (`cycles.rs`), and
//! every tool named in prose (MCP instructions, the system prompt, tool descriptions, README, docs) exists.

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
    problems.extend(long_files(root)?);
    problems.extend(crate::cycles::check(root)?);
    problems.extend(tool_names_in_prose(root)?);
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

/// The first words of tool names (`verb_noun`): a snake_case word starting with one of them, in prose a model or a
/// person reads, must name a tool that exists.
const TOOL_VERBS: &[&str] = &[
    "append", "create", "delete", "edit", "get", "insert", "list", "manage", "move", "read", "recent", "rename",
    "replace", "restore", "rewrite", "search", "semantic", "set", "update",
];

/// Words of that shape that are not tool names (configuration keys).
/// (`update_links` is an argument of update_note.)
const NOT_TOOLS: &[&str] = &["read_only", "update_links"];

/// Tool names in prose that no tool has: a renamed or removed tool leaves instructions that mislead models.
fn tool_names_in_prose(root: &Path) -> anyhow::Result<Vec<String>> {
    let registry = quire_tools::ToolRegistry::builtin();
    let mut known: Vec<String> = registry.names();
    known.extend(quire_agent::SessionTool::ALL.iter().map(|t| t.name().to_owned()));
    let mut texts: Vec<(String, String)> = vec![("the MCP instructions".into(), quire_mcp::INSTRUCTIONS.into())];
    let focused = quire_agent::NoteContext::focused("n", "Note", "Body with ```mermaid\ngraph\n```\n");
    for (name, context) in [
        ("no note", quire_agent::NoteContext::none()),
        ("a focused note", focused.clone()),
        ("a selection", focused.with_selection(0, 4)),
    ] {
        texts.push((
            format!("the system prompt ({name})"),
            quire_agent::system_prompt(&context),
        ));
    }
    for tool in registry.list() {
        texts.push((format!("the description of {}", tool.name), tool.description.clone()));
        texts.push((
            format!("the input schema of {}", tool.name),
            tool.input_schema.to_string(),
        ));
    }
    for tool in quire_agent::SessionTool::ALL {
        texts.push((
            format!("the description of {}", tool.name()),
            tool.description().to_owned(),
        ));
    }
    let mut files = vec![root.join("README.md"), root.join("crates/app/assets/welcome.md")];
    for entry in std::fs::read_dir(root.join("docs"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    for file in files {
        let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        texts.push((shown, std::fs::read_to_string(&file)?));
    }
    let mut problems = Vec::new();
    for (place, text) in texts {
        for word in text.split(|c: char| !(c.is_ascii_lowercase() || c == '_')) {
            let Some((verb, rest)) = word.split_once('_') else {
                continue;
            };
            let is_tool_shaped = TOOL_VERBS.contains(&verb) && !rest.is_empty() && !rest.ends_with('_');
            if is_tool_shaped && !NOT_TOOLS.contains(&word) && !known.iter().any(|k| k == word) {
                problems.push(format!("{place} names a tool `{word}` that does not exist"));
            }
        }
    }
    problems.sort();
    problems.dedup();
    Ok(problems)
}

/// The most lines a hand-written source file may have (Rust, TypeScript, the browser tests' JavaScript).
pub(crate) const MAX_LINES: usize = 700;

/// Source files longer than [`MAX_LINES`]; generated files (`generated.ts`, the built bundle) are left out.
fn long_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    for top in ["crates", "xtask", "tests"] {
        walk(&root.join(top), &mut files)?;
    }
    let generated = |f: &Path| {
        f.file_name().is_some_and(|n| n == "generated.ts") || f.components().any(|c| c.as_os_str() == "assets")
    };
    let mut problems = Vec::new();
    for file in files {
        let source = file.extension().is_some_and(|e| e == "rs" || e == "ts" || e == "mjs");
        if !source || generated(&file) {
            continue;
        }
        let lines = std::fs::read_to_string(&file)?.lines().count();
        if lines > MAX_LINES {
            let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
            problems.push(format!(
                "{shown}: {lines} lines, more than {MAX_LINES}: split it by responsibility, one module per concern"
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

    #[test]
    fn a_source_file_over_the_limit_is_named_and_generated_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let ui = dir.path().join("crates/web/ui/src");
        std::fs::create_dir_all(&ui).unwrap();
        std::fs::create_dir_all(dir.path().join("crates/web/assets")).unwrap();
        let long = "x\n".repeat(super::MAX_LINES + 1);
        std::fs::write(ui.join("main.ts"), &long).unwrap();
        std::fs::write(ui.join("short.ts"), "x\n".repeat(super::MAX_LINES)).unwrap();
        std::fs::write(ui.join("generated.ts"), &long).unwrap();
        std::fs::write(dir.path().join("crates/web/assets/app.js"), &long).unwrap();
        std::fs::write(dir.path().join("crates/web/ui/notes.md"), &long).unwrap();
        let problems = super::long_files(dir.path()).unwrap();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("crates/web/ui/src/main.ts: 701 lines"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_tool_named_in_prose_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::create_dir_all(dir.path().join("crates/app/assets")).unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "Use search_notes, then read_note; not find_note or read_notes.",
        )
        .unwrap();
        std::fs::write(dir.path().join("crates/app/assets/welcome.md"), "Set read_only = true.").unwrap();
        std::fs::write(dir.path().join("docs/x.md"), "update_notes is old").unwrap();
        let problems = super::tool_names_in_prose(dir.path()).unwrap();
        assert_eq!(
            problems,
            [
                "README.md names a tool `read_notes` that does not exist",
                "docs/x.md names a tool `update_notes` that does not exist",
            ]
        );
    }
}
