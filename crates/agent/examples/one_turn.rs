//! quire-agent with a model of your own: any type implementing `ChatModel` drives the loop. This one looks up the
//! focused note's tags with a workspace tool, then appends a line with a session tool, then answers. The turn
//! returns the proposed edits (the note is not changed until the application applies them) and a diff.
//!
//! `cargo run -p quire-agent --example one_turn`
#![expect(clippy::print_stdout, reason = "an example shows its results on the terminal")]

use quire_agent::{
    AgentDeps, AutoApprove, ChatFuture, ChatModel, ChatRequest, ChatResponse, Message, NoteContext, StopReason,
    TextSink, ToolCall, ToolPolicy, Usage, apply_edits, run_note_chat, unified_diff,
};
use quire_core::{Actor, NewNote, Workspace};
use quire_tools::ToolRegistry;
use serde_json::json;

/// Decides from the conversation so far: no tool result yet, read the note; one, append; two, answer.
struct MyModel {
    note_id: String,
}

impl ChatModel for MyModel {
    fn chat<'a>(&'a self, request: &'a ChatRequest, on_text: TextSink<'a>) -> ChatFuture<'a> {
        let results = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Tool { .. }))
            .count();
        let call = |name: &str, arguments: serde_json::Value| ChatResponse {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: format!("call_{results}"),
                name: name.into(),
                arguments: arguments.to_string(),
            }],
            stop: StopReason::ToolUse,
            usage: Usage::default(),
        };
        let response = match results {
            0 => call("read_note", json!({ "note_id": self.note_id })),
            1 => call("append_to_note", json!({ "text": "- Ask about the spare key." })),
            _ => {
                on_text("I added a reminder about the key.");
                ChatResponse {
                    text: "I added a reminder about the key.".into(),
                    tool_calls: Vec::new(),
                    stop: StopReason::EndTurn,
                    usage: Usage::default(),
                }
            }
        };
        Box::pin(async move { Ok(response) })
    }

    fn name(&self) -> String {
        "my-model".into()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ws = Workspace::open_in_memory()?;
    let note = ws.write(&Actor::User, |w| {
        w.create_note(NewNote::new("Moving day", "- Book the van\n- Pack the kitchen"))
    })?;
    let context = NoteContext::focused(&note.summary.id, &note.summary.title, &note.body);
    let registry = ToolRegistry::builtin();
    let model = MyModel {
        note_id: note.summary.id.clone(),
    };
    let deps = AgentDeps {
        model: &model,
        client: None,
        registry: &registry,
        workspace: &ws,
        chat_id: "example".into(),
        turn: 1,
        policy: ToolPolicy::default(),
        approver: &AutoApprove(false),
        asker: None,
        events: None,
        cancel: tokio_util::sync::CancellationToken::new(),
        interrupt: tokio_util::sync::CancellationToken::new(),
        max_tokens: 1_000,
        max_turn_tokens: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let outcome = runtime.block_on(run_note_chat(&context, &[], "Remind me about the key.", &deps))?;
    println!("reply: {}", outcome.reply);
    let proposed = apply_edits(&note.body, &outcome.edits)?;
    print!("{}", unified_diff(&note.body, &proposed, &note.summary.title));
    Ok(())
}
