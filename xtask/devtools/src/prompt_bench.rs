//! `cargo xtask bench prompt`: the tokens of the first model request of a chat turn, before the note's own text.
//!
//! The request is captured from `run_note_chat` itself (a model that records what it is sent), in the contexts the
//! agent knows (no note; a focused note; a selection; a note of 5,000 lines, whose view is counted whole), with every
//! built-in tool offered, and serialised with
//! both wire formats. The system prompt (the note's own text and selection taken out) and the `tools` array are
//! counted with the `o200k_base` tokenizer. The figures are written to [`SNAPSHOT`], so a change that grows them
//! shows in review; `cargo xtask ci` fails when a context is over [`BUDGET`] or the snapshot is stale.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context, bail};
use quire_agent::{
    AgentDeps, AutoApprove, ChatFuture, ChatModel, ChatRequest, ChatResponse, NoteContext, StopReason, TextSink,
    ToolPolicy, Usage, anthropic_request_body, openai_request_body, run_note_chat,
};
use quire_core::Workspace;
use quire_tools::ToolRegistry;
use serde_json::Value;

/// Where the figures are kept, relative to the project root.
pub(crate) const SNAPSHOT: &str = "xtask/snapshots/prompt-tokens.txt";

/// The most tokens the system prompt and the tool definitions of a first request may take together.
pub(crate) const BUDGET: usize = 3_000;

/// The most tokens a first request may take, all of it, focused on a note of 5,000 lines (whole, it is some 90,000):
/// the note's view (its outline and the part around the cursor) counts here.
pub(crate) const LONG_NOTE_BUDGET: usize = 6_000;

/// The most tokens any request of a 40-turn chat may take, everything counted.
pub(crate) const LONG_CHAT_BUDGET: usize = 12_000;

/// A model that answers every turn at length (about 600 tokens), and writes a summary when asked for one.
#[derive(Default)]
struct Talker(Mutex<Vec<ChatRequest>>);

impl ChatModel for Talker {
    fn chat<'a>(&'a self, request: &'a ChatRequest, _on_text: TextSink<'a>) -> ChatFuture<'a> {
        if let Ok(mut requests) = self.0.lock() {
            requests.push(request.clone());
        }
        let text = if request.tools.is_empty() {
            "We planned a trip: the user packs light, the list is in the note Packing list.".to_owned()
        } else {
            "A careful answer about what to pack, with the reasons for each thing and where it goes. ".repeat(30)
        };
        Box::pin(async move {
            Ok(ChatResponse {
                text,
                tool_calls: Vec::new(),
                stop: StopReason::EndTurn,
                usage: Usage::default(),
            })
        })
    }

    fn name(&self) -> String {
        "talker".into()
    }
}

/// The largest request, in tokens, of a 40-turn chat about a note (every request serialised as OpenAI's body).
fn long_chat(
    ws: &Workspace,
    registry: &ToolRegistry,
    runtime: &tokio::runtime::Runtime,
    count: &dyn Fn(&str) -> usize,
) -> anyhow::Result<usize> {
    let body = "- shoes\n- tent\n";
    let note = ws.write(&quire_core::Actor::User, |w| {
        w.create_note(quire_core::NewNote {
            title: "Packing list".into(),
            body: body.into(),
            ..Default::default()
        })
    })?;
    let focus = NoteContext::focused(&note.summary.id, "Packing list", body);
    let mut chat = quire_agent::Chat::create(ws, focus, "Packing")?;
    let model = Talker::default();
    let approver = AutoApprove(false);
    for turn in 0..40 {
        let done = runtime.block_on(chat.send(
            &format!("Turn {turn}: what else should I pack, and why?"),
            quire_agent::TurnOptions::new(&model, registry, &approver),
        ));
        if let Some(e) = done.error {
            bail!("turn {turn} of the long chat failed: {e}");
        }
    }
    let requests = model
        .0
        .into_inner()
        .map_err(|_| anyhow::anyhow!("the model's lock was poisoned"))?;
    // Ids are random: one stands for all, so that the count is the same at every run.
    let id = &note.summary.id;
    Ok(requests
        .iter()
        .map(|r| {
            let body = openai_request_body("model", r).to_string();
            count(&body.replace(id.as_str(), "6f1c0e2a9b8d4f7e3a5c1b0d9e8f7a6b"))
        })
        .max()
        .unwrap_or(0))
}

/// A note of 5,000 lines: 100 sections of a heading and 49 lines of prose.
fn long_note() -> String {
    let mut body = String::new();
    for i in 0..100 {
        let _ = write!(body, "## Section {i}\n\n");
        for j in 0..48 {
            let _ = writeln!(
                body,
                "Line {j} of section {i}: the plan, its steps and who does what, in a sentence."
            );
        }
    }
    body
}

/// A model that keeps the first request it is sent and answers at once.
#[derive(Default)]
struct Recorder(Mutex<Option<ChatRequest>>);

impl ChatModel for Recorder {
    fn chat<'a>(&'a self, request: &'a ChatRequest, _on_text: TextSink<'a>) -> ChatFuture<'a> {
        if let Ok(mut first) = self.0.lock() {
            first.get_or_insert_with(|| request.clone());
        }
        Box::pin(async {
            Ok(ChatResponse {
                text: "Done.".into(),
                tool_calls: Vec::new(),
                stop: StopReason::EndTurn,
                usage: Usage::default(),
            })
        })
    }

    fn name(&self) -> String {
        "recorder".into()
    }
}

/// The built-in tools and 60 plugin tools: six plugins of ten tools each, with descriptions and schemas of the
/// size MCP servers publish (a sentence or two, two or three parameters).
fn plugin_registry() -> anyhow::Result<ToolRegistry> {
    let registry = ToolRegistry::builtin();
    let plugins = ["calendar", "github", "weather", "files", "mail", "tasks"];
    let verbs = [
        "list", "get", "create", "update", "delete", "search", "move", "archive", "share", "export",
    ];
    for plugin in plugins {
        for verb in verbs {
            let name = format!("{plugin}__{verb}_item");
            let description = format!(
                "{} an item in the user's {plugin}: give its id or a query; returns the item with its fields, dates and \
                 links, or an error that says what was wrong with the request.",
                verb[..1].to_uppercase() + &verb[1..]
            );
            let schema = serde_json::json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "The item's id, as listed."},
                    "query": {"type": "string", "description": "Words to find it by, when the id is not known."},
                    "limit": {"type": "integer", "description": "At most this many results.", "minimum": 1}
                }
            });
            let tool = quire_tools::PluginTool::read_only(name, verb, description, schema, |_| {
                Box::pin(async { Ok(serde_json::json!({}).into()) })
            })
            .in_plugin(plugin);
            registry.register(tool).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    Ok(registry)
}

/// One row of the figures.
struct Row {
    context: &'static str,
    format: &'static str,
    tools: usize,
    system_tokens: usize,
    tool_tokens: usize,
}

/// Measures every context and format, as the snapshot's text.
fn measure() -> anyhow::Result<(String, Vec<String>)> {
    let bpe = tiktoken_rs::o200k_base().map_err(|e| anyhow::anyhow!("cannot load the o200k_base tokenizer: {e}"))?;
    let count = |text: &str| bpe.encode_ordinary(text).len();
    let dir = tempfile::tempdir()?;
    let ws = Workspace::open(dir.path().join("prompt.quire"))?;
    let registry = ToolRegistry::builtin();
    let policy = ToolPolicy::default();
    // Every built-in tool is offered at once but the query and task tools, which may wait for `find_tools` when
    // the first request would pass the agent's budget.
    let every = registry.list().iter().filter(|t| !t.on_request).count();
    // A fenced block, so that the focused-note context offers replace_structured_block too (its largest tool list).
    let body = "# Trip\n\nPack the bags.\n\n```json\n{\"days\": 3}\n```\n";
    let note = ws.write(&quire_core::Actor::User, |w| {
        w.create_note(quire_core::NewNote {
            title: "Trip".into(),
            body: body.into(),
            ..Default::default()
        })
    })?;
    let id = note.summary.id;
    let long = long_note();
    let long_id = ws
        .write(&quire_core::Actor::User, |w| {
            w.create_note(quire_core::NewNote {
                title: "Plan".into(),
                body: long.clone(),
                ..Default::default()
            })
        })?
        .summary
        .id;
    let mut at_cursor = NoteContext::focused(&long_id, "Plan", long.as_str());
    if let Some(note) = &mut at_cursor.note {
        note.cursor = Some(long.chars().count() / 2);
    }
    let with_plugins = plugin_registry()?;
    let contexts = [
        ("no note", NoteContext::none(), &registry),
        ("focused note", NoteContext::focused(&id, "Trip", body), &registry),
        (
            "selection",
            NoteContext::focused(&id, "Trip", body).with_selection(8, 22),
            &registry,
        ),
        ("long note", at_cursor, &registry),
        ("60 plugin t.", NoteContext::none(), &with_plugins),
        ("60 p.t., note", NoteContext::focused(&id, "Trip", body), &with_plugins),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let approver = AutoApprove(false);
    let mut rows = Vec::new();
    let mut focused_tools = Vec::new();
    for (name, context, registry) in contexts {
        let model = Recorder::default();
        let deps = AgentDeps {
            model: &model,
            client: None,
            registry,
            workspace: &ws,
            chat_id: "prompt".into(),
            turn: 1,
            policy: policy.clone(),
            approver: &approver,
            asker: None,
            events: None,
            cancel: tokio_util::sync::CancellationToken::new(),
            interrupt: tokio_util::sync::CancellationToken::new(),
            max_tokens: 1_000,
            max_turn_tokens: None,
        };
        runtime
            .block_on(run_note_chat(&context, &[], "Hello.", &deps))
            .map_err(|e| anyhow::anyhow!("the turn failed: {e}"))?;
        let request = model
            .0
            .into_inner()
            .ok()
            .flatten()
            .context("the model was sent no request")?;
        let builtin_tools = request
            .tools
            .iter()
            .filter(|t| {
                registry
                    .get(&t.name)
                    .is_some_and(|t| t.plugin.is_none() && !t.on_request)
            })
            .count();
        anyhow::ensure!(
            builtin_tools == every,
            "{name}: {builtin_tools} of the {every} built-in tools offered at once were offered"
        );
        if std::ptr::eq(registry, &with_plugins) {
            // The plugins' tools wait for find_tools: none of them is in the first request.
            anyhow::ensure!(
                request.tools.iter().any(|t| t.name == quire_agent::FIND_TOOLS)
                    && !request.tools.iter().any(|t| t.name.contains("__")),
                "{name}: the plugin tools were not deferred behind find_tools"
            );
        }
        // The note's own text is the user's, not the prompt's: take it out before counting.
        let mut system = request.system.clone();
        if let Some(note) = &context.note {
            if let Some(selected) = context.selected_text() {
                system = system.replacen(&format!("<selection>\n{selected}\n"), "<selection>\n", 1);
            }
            system = system.replacen(&format!("<note>\n{}\n", note.body), "<note>\n", 1);
            // Ids are random: one stands for all, so that the count is the same at every run.
            system = system.replace(&note.id, "6f1c0e2a9b8d4f7e3a5c1b0d9e8f7a6b");
        }
        if name == "focused note" {
            focused_tools = request.tools.clone();
        }
        for (format, body) in [
            ("openai", openai_request_body("model", &request)),
            ("anthropic", anthropic_request_body("model", &request)),
        ] {
            let tools = body.get("tools").map(Value::to_string).unwrap_or_default();
            rows.push(Row {
                context: name,
                format,
                tools: request.tools.len(),
                system_tokens: count(&system),
                tool_tokens: count(&tools),
            });
        }
    }
    let mut per_tool = String::new();
    let _ = writeln!(
        per_tool,
        "\n{:<26} {:>12} {:>8}",
        "tool (focused note)", "description", "schema"
    );
    for spec in &focused_tools {
        let _ = writeln!(
            per_tool,
            "{:<26} {:>12} {:>8}",
            spec.name,
            count(&spec.description),
            count(&spec.parameters.to_string())
        );
    }
    let mut text = String::from(
        "# Tokens (o200k_base) of the first model request of a chat turn, the note's own text excluded.\n\
         # Written by `cargo xtask bench prompt`; `cargo xtask ci` checks it is current and under budget.\n",
    );
    let _ = writeln!(
        text,
        "# budget: {BUDGET} tokens a context; the long note ({} lines, its view counted): {LONG_NOTE_BUDGET}\n",
        long.lines().count()
    );
    let _ = writeln!(
        text,
        "{:<14} {:<10} {:>6} {:>8} {:>8} {:>8}",
        "context", "format", "tools", "system", "tools", "total"
    );
    let mut over = Vec::new();
    for row in &rows {
        let total = row.system_tokens + row.tool_tokens;
        let _ = writeln!(
            text,
            "{:<14} {:<10} {:>6} {:>8} {:>8} {:>8}",
            row.context, row.format, row.tools, row.system_tokens, row.tool_tokens, total
        );
        let budget = if row.context == "long note" {
            LONG_NOTE_BUDGET
        } else {
            BUDGET
        };
        if total > budget {
            over.push(format!("{} ({}): {total} tokens", row.context, row.format));
        }
    }
    let largest = long_chat(&ws, &registry, &runtime, &count)?;
    let _ = writeln!(
        text,
        "\n40-turn chat: its largest request, everything counted (openai): {largest} tokens (budget {LONG_CHAT_BUDGET})"
    );
    if largest > LONG_CHAT_BUDGET {
        over.push(format!("the 40-turn chat: {largest} tokens"));
    }
    text.push_str(&per_tool);
    Ok((text, over))
}

/// `cargo xtask bench prompt`: prints the figures and writes the snapshot.
pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let (text, over) = measure()?;
    print!("{text}");
    let path = root.join(SNAPSHOT);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, &text)?;
    if !over.is_empty() {
        bail!("over the budget of {BUDGET} tokens: {}", over.join("; "));
    }
    Ok(())
}

/// For `cargo xtask ci`: every context under budget, and the snapshot up to date.
pub(crate) fn check(root: &Path) -> anyhow::Result<()> {
    let (text, over) = measure()?;
    if !over.is_empty() {
        bail!(
            "the first request of a chat turn is over the budget of {BUDGET} tokens: {}\n{text}",
            over.join("; ")
        );
    }
    let kept = std::fs::read_to_string(root.join(SNAPSHOT)).unwrap_or_default();
    if kept != text {
        bail!("{SNAPSHOT} is not current: run `cargo xtask bench prompt` and commit it. Now:\n{text}");
    }
    Ok(())
}
