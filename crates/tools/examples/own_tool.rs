//! quire-tools on its own: the built-in tools, plus a tool of your own registered at run time. Both are called the
//! way the agent and the MCP server call them, as a non-user actor, so core's guards apply to yours too.
//!
//! `cargo run -p quire-tools --example own_tool`
#![expect(clippy::print_stdout, reason = "an example shows its results on the terminal")]

use quire_core::{Actor, NewNote, Workspace};
use quire_tools::{PluginTool, ToolActor, ToolError, ToolRegistry};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ws = Workspace::open_in_memory()?;
    let note = ws.write(&Actor::User, |w| {
        w.create_note(NewNote::new(
            "Reading list",
            "Middlemarch, then The Rings of Saturn, then Stoner.",
        ))
    })?;

    let registry = ToolRegistry::builtin();
    // A read-only tool: it counts the words of a note, reading it as the plugin (protected notes stay out of reach).
    registry.register(PluginTool::read_only(
        "count_words",
        "Count words",
        "Counts the words in the body of a note.",
        json!({"type": "object", "properties": {"note_id": {"type": "string", "description": "The note."}},
               "required": ["note_id"]}),
        |call| {
            Box::pin(async move {
                let id = call.args["note_id"].as_str().unwrap_or_default().to_owned();
                // `call.workspace` of a read-only tool can only read; a mutating tool's can also write.
                let note = call.workspace.read(|r| r.note(&id)).map_err(ToolError::from)?;
                Ok(json!({ "note_id": id, "words": note.body.split_whitespace().count() }).into())
            })
        },
    ))?;
    println!(
        "{} tools, among them {:?}",
        registry.list().len(),
        registry.get("count_words").map(|t| t.title)
    );

    let actor = ToolActor::mcp("example");
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let counted =
        runtime.block_on(registry.call_async(&ws, &actor, "count_words", json!({ "note_id": note.summary.id })))?;
    println!("count_words -> {}", counted.value);

    // A built-in tool, through the same registry; a bad argument is an error result naming the field.
    let found = registry.call(&ws, &actor, "search_notes", json!({ "query": "saturn" }))?;
    println!("search_notes -> {} hit(s)", found.value["total"]);
    let wrong = registry.call(&ws, &actor, "read_note", json!({ "note_id": 42 }))?;
    println!(
        "read_note with a number -> is_error {}: {}",
        wrong.is_error, wrong.value["error"]
    );
    Ok(())
}
