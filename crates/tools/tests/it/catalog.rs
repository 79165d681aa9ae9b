//! The catalog as a whole: its snapshot, portable schemas, and the registry listing every tool file.

use quire_tools::{Effect, ToolRegistry, check_portable_schema};
use serde_json::json;

#[test]
fn catalog_snapshot() {
    let catalog: Vec<_> = ToolRegistry::builtin()
        .list()
        .into_iter()
        .map(|t| {
            json!({
                "name": t.name, "title": t.title, "effect": t.effect, "description": t.description,
                "input_schema": t.input_schema, "output_schema": t.output_schema,
            })
        })
        .collect();
    insta::assert_json_snapshot!("catalog", catalog);
}

#[test]
fn every_input_schema_is_accepted_by_every_provider() {
    for tool in ToolRegistry::builtin().list() {
        let problems = check_portable_schema(&tool.input_schema);
        assert!(
            problems.is_empty(),
            "{}: {problems:#?}\n{:#}",
            tool.name,
            tool.input_schema
        );
        assert_eq!(
            tool.output_schema.as_ref().and_then(|s| s["type"].as_str()),
            Some("object"),
            "{}",
            tool.name
        );
    }
}

/// Every `format` in a tool's schemas is one of JSON Schema's own: MCP clients validate output schemas (the
/// TypeScript SDK with Ajv) and warn about formats such as `uint64`.
#[test]
fn schemas_use_only_standard_formats() {
    fn formats(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(f) = map.get("format").and_then(|f| f.as_str()) {
                    out.push(f.to_owned());
                }
                map.values().for_each(|v| formats(v, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
            _ => {}
        }
    }
    for tool in ToolRegistry::builtin().list() {
        let mut found = Vec::new();
        formats(&tool.input_schema, &mut found);
        if let Some(output) = &tool.output_schema {
            formats(output, &mut found);
        }
        found.retain(|f| !quire_tools::STANDARD_FORMATS.contains(&f.as_str()));
        assert!(found.is_empty(), "{}: non-standard formats {found:?}", tool.name);
    }
}

#[test]
fn the_portability_check_catches_what_providers_reject() {
    let bad = json!({
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"], "description": "x"},
            "b": {"$ref": "#/$defs/B"},
            "c": {"type": "string"},
            "d": {"type": "string", "format": "uuid", "description": "y"},
        },
        "required": ["z"],
    });
    let problems = check_portable_schema(&bad);
    assert_eq!(
        problems,
        vec![
            "root: required names \"z\", which is not a property",
            "root.a: type must be one JSON type name, found Some(Array [String(\"string\"), String(\"null\")])",
            "root.b: every argument needs a description for the model",
            "root.b: keyword '$ref' is not accepted by every provider",
            "root.b: type must be one JSON type name, found None",
            "root.c: every argument needs a description for the model",
            "root.d: keyword 'format' is not accepted by every provider",
        ]
    );
    assert_eq!(
        check_portable_schema(&json!({"type": "array"})),
        vec!["root: type must be \"object\"", "root: properties must be an object"]
    );
}

#[test]
fn names_titles_and_effects() {
    let tools = ToolRegistry::builtin().list();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "list() is sorted by name");
    for tool in &tools {
        assert!(
            tool.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{}: snake_case",
            tool.name
        );
        let first = tool.title.split(' ').next().unwrap_or_default();
        assert!(
            [
                "Search", "Read", "List", "Get", "Create", "Update", "Move", "Delete", "Restore", "Manage", "Rename",
                "Query", "Complete", "Set"
            ]
            .contains(&first),
            "{}: the title '{}' starts with an imperative verb",
            tool.name,
            tool.title
        );
        assert!(
            // Short is good (every word is paid on every model request) but a sentence it must be.
            tool.description.len() >= 15 && !tool.description.starts_with(' ') && tool.description.ends_with('.'),
            "{}: a real description",
            tool.name
        );
        let expected = match tool.name.as_str() {
            "search_notes"
            | "semantic_search_notes"
            | "read_note"
            | "list_notebooks"
            | "list_notes"
            | "list_tags"
            | "get_attributes"
            | "read_attachment"
            | "get_backlinks"
            | "recent_changes"
            | "query_notes"
            | "list_tasks" => Effect::ReadOnly,
            "delete_note" => Effect::Destructive,
            _ => Effect::Mutating,
        };
        assert_eq!(tool.effect, expected, "{}", tool.name);
    }
    let destructive: Vec<&str> = tools
        .iter()
        .filter(|t| t.effect == Effect::Destructive)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(destructive, vec!["delete_note"]);
}

/// Footgun #3 of the seed: a tool module that exists but is not wired in is invisible to both consumers.
#[test]
fn every_tool_file_is_registered() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for area in [
        "notes",
        "notebooks",
        "tags",
        "attributes",
        "attachments",
        "history",
        "structure",
    ] {
        for entry in std::fs::read_dir(src.join(area)).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if stem != "mod" {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    text.contains(&format!("name: \"{stem}\"")),
                    "{}: the tool's name must be its file name",
                    path.display()
                );
                files.push(stem);
            }
        }
    }
    files.sort();
    let registered = ToolRegistry::builtin().names();
    assert_eq!(
        files, registered,
        "every file under src/<area>/ is one tool, and the catalog lists them all"
    );
}
