//! `quire-devtools tool-names`: every tool named in prose a model or a person reads (the MCP instructions, the system
//! prompt, tool descriptions and schemas, README, the welcome note, docs) exists in the registry.

use std::path::Path;

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
pub(crate) fn check(root: &Path) -> anyhow::Result<Vec<String>> {
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
    let mut files = vec![root.join("README.md"), root.join("crates/host/assets/welcome.md")];
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_tool_named_in_prose_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::create_dir_all(dir.path().join("crates/host/assets")).unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "Use search_notes, then read_note; not find_note or read_notes.",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("crates/host/assets/welcome.md"),
            "Set read_only = true.",
        )
        .unwrap();
        std::fs::write(dir.path().join("docs/x.md"), "update_notes is old").unwrap();
        let problems = super::check(dir.path()).unwrap();
        assert_eq!(
            problems,
            [
                "README.md names a tool `read_notes` that does not exist",
                "docs/x.md names a tool `update_notes` that does not exist",
            ]
        );
    }

    #[test]
    fn the_project_names_only_tools_that_exist() {
        let problems = super::check(&crate::project_root()).unwrap();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
