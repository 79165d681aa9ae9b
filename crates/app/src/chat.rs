//! `quire chat`: the in-app agent in a terminal, interactive or one `--message` at a time with `--json`.

use std::io::{BufRead, IsTerminal, Write};
use std::pin::Pin;

use quire_agent::{
    AgentEvent, ApprovalRequest, Approver, Asker, AutoApprove, Chat, ChatModel, ChatTurn, NoteContext, Prices,
    Question, Refusal, TranscriptEntry, TurnOptions, focus_note,
};
use quire_core::Workspace;
use quire_tools::{Elicited, ToolRegistry};
use serde_json::json;

use quire_host::chat_models::{ModelChoice, configured_models};

/// The chat model to use: the first of [`configured_models`] (see quire_host::settings for the precedence), with its
/// prices if the configuration gives them.
pub(crate) fn configured_model(
    model: Option<String>,
    base_url: Option<String>,
) -> anyhow::Result<(Box<dyn ChatModel>, Option<Prices>)> {
    let Some(choice) = configured_models(model, base_url)?.into_iter().next() else {
        return Err(UsageError(format!("no model is configured. {}", quire_agent::HOW_TO_CONFIGURE)).into());
    };
    Ok((build_model(&choice)?, choice.prices))
}

/// What every turn of `quire chat` runs with besides its model: the model's prices and the turn's token budget.
#[derive(Clone, Copy)]
struct Spending {
    prices: Option<Prices>,
    max_turn_tokens: Option<u64>,
}

impl Spending {
    fn options<'a>(self, options: TurnOptions<'a>) -> TurnOptions<'a> {
        TurnOptions {
            prices: self.prices,
            max_turn_tokens: self.max_turn_tokens,
            ..options
        }
    }
}

/// The line on what a turn used and cost, and the chat so far.
fn usage_line(turn: &ChatTurn) -> String {
    crate::output::turn_usage(&turn.outcome.usage, turn.cost, &turn.totals)
}

/// Connects to a model choice (checking its provider and key).
pub(crate) fn build_model(choice: &ModelChoice) -> anyhow::Result<Box<dyn ChatModel>> {
    quire_host::chat_models::connect(choice)
        .map_err(|e| UsageError(format!("--model {}: {}", choice.settings.model, e.message)).into())
}

pub(crate) fn run(ws: Workspace, args: ChatArgs, json_output: bool) -> anyhow::Result<std::process::ExitCode> {
    let (model, prices) = configured_model(args.model.clone(), args.base_url.clone())?;
    let spending = Spending {
        prices,
        max_turn_tokens: quire_host::settings::max_turn_tokens()?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let registry = std::sync::Arc::new(ToolRegistry::builtin());
    // The plugins' tools join the built-in ones; their processes end with the chat.
    let plugins = runtime.block_on(quire_host::plugins::start(&ws, &registry))?;
    {
        let _entered = runtime.enter();
        plugins.announce("quire chat");
    }
    let outcome = match args.message.clone() {
        Some(message) => runtime.block_on(one_message(
            &ws,
            &registry,
            model.as_ref(),
            spending,
            &args,
            &message,
            json_output,
        )),
        None => runtime
            .block_on(interactive(&ws, &registry, model.as_ref(), spending, &args))
            .map(|()| std::process::ExitCode::SUCCESS),
    };
    runtime.block_on(plugins.shutdown());
    outcome
}

/// Exit code of `quire chat` when the arguments cannot be used: clap's code for usage errors, also used when the
/// note given with `--note` cannot be focused (protected, in the trash, missing) or a selection does not fit it.
pub(crate) const EXIT_USAGE: u8 = 2;

/// A problem with the arguments, reported with [`EXIT_USAGE`].
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The context the flags describe: a focused note, read through core as the agent (a protected note is refused),
/// and a selection.
fn context(ws: &Workspace, args: &ChatArgs) -> anyhow::Result<NoteContext> {
    let Some(id) = &args.note else {
        return Ok(NoteContext::none());
    };
    let context = match focus_note(ws, id) {
        Ok(context) => context.with_view_budget(quire_host::settings::note_view_tokens()?),
        Err(quire_agent::Error::Workspace(e)) if !e.is_caller_error() => return Err(e.into()),
        Err(e) => return Err(UsageError(format!("--note {id}: {e}")).into()),
    };
    let body = context.note.as_ref().map(|n| n.body.clone()).unwrap_or_default();
    if let Some(range) = &args.select {
        let (start, end) = range
            .split_once("..")
            .and_then(|(a, b)| Some((a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?)))
            .ok_or_else(|| UsageError("--select takes START..END, character offsets such as 0..42".into()))?;
        let length = body.chars().count();
        if start > end || end > length {
            return Err(UsageError(format!(
                "--select {start}..{end} does not fit the note, which has {length} characters (START..END with \
                 START <= END <= {length})"
            ))
            .into());
        }
        return Ok(context.with_selection(start, end));
    }
    if let Some(text) = &args.select_text {
        if text.is_empty() {
            return Err(UsageError("--select-text is empty; give the text to select".into()).into());
        }
        let found: Vec<usize> = body.match_indices(text.as_str()).map(|(i, _)| i).collect();
        let [byte] = found.as_slice() else {
            return Err(UsageError(format!(
                "--select-text must occur exactly once in the note; it occurs {} times",
                found.len()
            ))
            .into());
        };
        let start = body[..*byte].chars().count();
        return Ok(context.with_selection(start, start + text.chars().count()));
    }
    Ok(context)
}

/// The stored chat `--chat` names, focused on `focus`; a chat that does not exist is a usage error.
fn open_chat(ws: &Workspace, id: &str, focus: NoteContext) -> anyhow::Result<Chat> {
    match Chat::open(ws, id) {
        Ok(mut chat) => {
            chat.focus(focus);
            Ok(chat)
        }
        Err(quire_agent::Error::Workspace(quire_core::Error::NotFound(_))) => {
            Err(UsageError(format!("--chat {id}: no stored chat has this id")).into())
        }
        Err(e) => Err(e.into()),
    }
}

/// The line that tells how to take a turn's writes back, when it wrote.
fn undo_hint(change_set_id: Option<&str>) -> Option<String> {
    change_set_id.map(|id| format!("Changes saved as change set {id}; undo them with: quire undo {id}"))
}

async fn one_message(
    ws: &Workspace,
    registry: &ToolRegistry,
    model: &dyn ChatModel,
    spending: Spending,
    args: &ChatArgs,
    message: &str,
    json_output: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let context = context(ws, args)?;
    let mut chat = match &args.chat {
        Some(id) => open_chat(ws, id, context)?,
        None => Chat::create(ws, context, message)?,
    };
    let approver = AutoApprove(args.approve_destructive);
    // What a plugin reports while it runs goes to standard error as it comes (standard output holds the answer).
    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let reporter = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let Some(line) = report_line(&event) {
                eprintln!("{line}");
            }
        }
    });
    let options = TurnOptions {
        events: Some(sender),
        ..spending.options(TurnOptions::new(model, registry, &approver))
    };
    let turn = chat.send(message, options).await;
    let _ = reporter.await;
    let chat_id = chat.id().to_owned();
    let outcome = &turn.outcome;
    let error = turn.error.as_ref().map(ToString::to_string);
    let diff = turn.diff().ok().flatten();
    let mut change_set_id = outcome.change_set_id.clone();
    // Why the proposed edits were not saved, when there were some.
    let not_applied: Option<String> = if outcome.edits.is_empty() {
        None
    } else if !args.apply {
        Some("not asked to apply them (pass --apply)".into())
    } else if error.is_some() {
        Some("the turn did not finish".into())
    } else {
        match chat.accept(&turn) {
            Ok(accepted) => {
                change_set_id = accepted.change_set_id.or(change_set_id);
                None
            }
            Err(e) => Some(e.to_string()),
        }
    };
    let applied = !outcome.edits.is_empty() && not_applied.is_none();
    if json_output {
        // `applied` is null when the turn proposed no edits: there was nothing to apply.
        let applied = (!outcome.edits.is_empty()).then_some(applied);
        let value = json!({
            "reply": outcome.reply,
            "edits": outcome.edits,
            "diff": diff,
            "applied": applied,
            "not_applied_reason": not_applied,
            "transcript": outcome.transcript,
            "usage": outcome.usage,
            "cost": turn.cost,
            "chat_usage": turn.totals,
            // A summary written before this turn, when the chat had grown past its budget.
            "summarised": turn.summarised,
            "steps": outcome.steps,
            "chat_id": chat_id,
            "change_set_id": change_set_id,
            "undo": change_set_id.as_ref().map(|id| format!("quire undo {id}")),
            "error": error,
        });
        crate::output::json_value(&value)?;
    } else {
        let mut out = String::new();
        for entry in &outcome.transcript {
            if let TranscriptEntry::ToolCall {
                name,
                is_error,
                refused,
                ..
            } = entry
            {
                let shown = match (refused, is_error) {
                    (Some(Refusal::NeedsApproval), _) => {
                        " (not run: it needs your approval; pass --approve-destructive to allow it)"
                    }
                    (_, true) => " (failed; the agent was told why)",
                    (_, false) => "",
                };
                out.push_str(&format!("· {name}{shown}\n"));
            }
        }
        out.push_str(&outcome.reply);
        out.push('\n');
        if let Some(diff) = &diff {
            out.push_str(&format!(
                "\nProposed edits{}:\n{diff}",
                if applied { " (applied)" } else { "" }
            ));
        }
        if let Some(reason) = &not_applied {
            out.push_str(&format!("\nThe edits were not applied: {reason}.\n"));
        }
        if let Some(hint) = undo_hint(change_set_id.as_deref()) {
            out.push_str(&format!("\n{hint}\n"));
        }
        out.push_str(&format!("\n{}\n", usage_line(&turn)));
        crate::output::text(&out)?;
    }
    if let Some(e) = &error {
        eprintln!("error: {e}");
    }
    let failed = error.is_some() || (args.apply && !outcome.edits.is_empty() && !applied);
    Ok(if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    })
}

/// Asks on the terminal before a destructive call.
pub(crate) struct AskOnTerminal;

impl Approver for AskOnTerminal {
    fn approve<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        let question = format!(
            "\nThe agent wants to run {} with {}. Allow? [y/N] ",
            request.title, request.arguments
        );
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask(&question))
                .await
                .unwrap_or(false)
        })
    }
}

/// A plugin's question, asked on the terminal field by field: an empty answer to a required field declines it.
impl Asker for AskOnTerminal {
    fn ask(&self, question: Question) -> Pin<Box<dyn std::future::Future<Output = Elicited> + Send + '_>> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask_form(&question))
                .await
                .unwrap_or(Elicited::Cancelled)
        })
    }
}

fn ask_form(question: &Question) -> Elicited {
    let mut stderr = std::io::stderr();
    let _ = writeln!(stderr, "\nA plugin asks: {}", question.message);
    let empty = serde_json::Map::new();
    let properties = question.schema["properties"].as_object().unwrap_or(&empty);
    if properties.is_empty() {
        return if ask("Yes? [y/N] ") {
            Elicited::Accepted(json!({}))
        } else {
            Elicited::Declined
        };
    }
    let required: Vec<&str> = question.schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let mut values = serde_json::Map::new();
    for (name, property) in properties {
        let label = property["title"].as_str().unwrap_or(name);
        let choices = property["enum"].as_array().map(|c| {
            c.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect::<Vec<_>>()
        });
        let kind = property["type"].as_str().unwrap_or("string");
        let hint = match (&choices, kind) {
            (Some(choices), _) => format!(" ({})", choices.join(", ")),
            (None, "boolean") => " [y/N]".to_owned(),
            _ => property["description"]
                .as_str()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default(),
        };
        let _ = write!(stderr, "{label}{hint}: ");
        let _ = stderr.flush();
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return Elicited::Cancelled;
        }
        let text = line.trim();
        if text.is_empty() {
            if required.contains(&name.as_str()) {
                let _ = writeln!(stderr, "Declined: {label} is needed.");
                return Elicited::Declined;
            }
            continue;
        }
        let value = match (&choices, kind) {
            (Some(listed), _) => match listed.iter().position(|c| c == text) {
                // The choice as the schema gives it (a number stays a number).
                Some(i) => property["enum"][i].clone(),
                None => {
                    let _ = writeln!(stderr, "Declined: {label} is one of {}.", listed.join(", "));
                    return Elicited::Declined;
                }
            },
            (None, "boolean") => json!(matches!(text, "y" | "Y" | "yes")),
            (None, "integer") => match text.parse::<i64>() {
                Ok(n) => json!(n),
                Err(_) => {
                    let _ = writeln!(stderr, "Declined: {label} needs a whole number.");
                    return Elicited::Declined;
                }
            },
            (None, "number") => match text.parse::<f64>() {
                Ok(n) => json!(n),
                Err(_) => {
                    let _ = writeln!(stderr, "Declined: {label} needs a number.");
                    return Elicited::Declined;
                }
            },
            _ => json!(text),
        };
        values.insert(name.clone(), value);
    }
    Elicited::Accepted(serde_json::Value::Object(values))
}

pub(crate) fn ask(question: &str) -> bool {
    let mut stderr = std::io::stderr();
    let _ = write!(stderr, "{question}");
    let _ = stderr.flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes")
}

async fn interactive(
    ws: &Workspace,
    registry: &ToolRegistry,
    model: &dyn ChatModel,
    spending: Spending,
    args: &ChatArgs,
) -> anyhow::Result<()> {
    let context = context(ws, args)?;
    // A new chat is stored at the first message, titled after it.
    let mut chat = match &args.chat {
        Some(id) => Some(open_chat(ws, id, context.clone())?),
        None => None,
    };
    if let Some(chat) = &chat {
        eprintln!("{}", crate::output::chat_usage(&chat.totals()?));
    }
    let color = std::io::stdout().is_terminal();
    eprintln!(
        "quire chat with {} — type a message, or /quit (/summary shows what stands for the earlier turns of a long \
         chat, /forget-summary drops it). {}",
        model.name(),
        match &context.note {
            Some(note) => format!("Focused note: {}", note.title),
            None => "No note focused (--note ID focuses one).".to_owned(),
        }
    );
    loop {
        eprint!("\n> ");
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line)? == 0 || line.trim() == "/quit" {
            return Ok(());
        }
        let message = line.trim();
        if message.is_empty() {
            continue;
        }
        if message == "/summary" || message == "/forget-summary" {
            match chat.as_mut().and_then(|c| c.summary().cloned().map(|s| (c, s))) {
                None => eprintln!("The chat is sent whole: it has no summary."),
                Some((_, summary)) if message == "/summary" => eprintln!(
                    "The first {} messages of this chat are sent as this summary the model wrote:\n{}",
                    summary.covers, summary.text
                ),
                Some((current, _)) => {
                    current.drop_summary()?;
                    eprintln!(
                        "Summary dropped: the next turn sends the whole chat (and summarises it again if it is still too long)."
                    );
                }
            }
            continue;
        }
        let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
        let printer = tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                show_event(event);
            }
        });
        let current = match chat.take() {
            Some(chat) => chat,
            None => Chat::create(ws, context.clone(), message)?,
        };
        let current = chat.insert(current);
        let options = TurnOptions {
            events: Some(sender),
            asker: Some(std::sync::Arc::new(AskOnTerminal)),
            ..spending.options(TurnOptions::new(model, registry, &AskOnTerminal))
        };
        let turn = current.send(message, options).await;
        let _ = printer.await;
        crate::output::text("\n")?;
        if let Some(e) = &turn.error {
            eprintln!("error: {e}");
        }
        if let Some(summary) = &turn.summarised {
            eprintln!(
                "(The chat had grown long: its first {} messages are now sent as a summary the model wrote. /summary \
                 shows it, /forget-summary drops it.)",
                summary.covers
            );
        }
        eprintln!("{}", usage_line(&turn));
        let Some(diff) = turn.diff()? else {
            if let Some(hint) = undo_hint(turn.outcome.change_set_id.as_deref()) {
                eprintln!("{hint}");
            }
            continue;
        };
        for line in diff.lines() {
            let paint = match line.chars().next() {
                Some('+') if color && !line.starts_with("+++") => "\x1b[32m",
                Some('-') if color && !line.starts_with("---") => "\x1b[31m",
                _ => "",
            };
            crate::output::text(&format!(
                "{paint}{line}{}\n",
                if paint.is_empty() { "" } else { "\x1b[0m" }
            ))?;
        }
        let accepted = args.apply
            || tokio::task::spawn_blocking(|| ask("Apply these edits? [y/N] "))
                .await
                .unwrap_or(false);
        let mut change_set_id = turn.outcome.change_set_id.clone();
        if accepted {
            match current.accept(&turn) {
                Ok(done) => {
                    eprintln!("Applied.");
                    change_set_id = done.change_set_id.or(change_set_id);
                }
                Err(e) => eprintln!("The edits were not applied: {e}."),
            }
        }
        if let Some(hint) = undo_hint(change_set_id.as_deref()) {
            eprintln!("{hint}");
        }
    }
}

/// A plugin's progress report or log message as a line of the terminal.
/// A turn's event as the terminal shows it: the words on standard output, the rest on standard error.
pub(crate) fn show_event(event: AgentEvent) {
    match event {
        AgentEvent::TextDelta { text } => {
            let _ = crate::output::text(&text);
        }
        AgentEvent::ToolStarted { title, name, .. } => eprintln!("\n· {title} ({name})"),
        AgentEvent::ToolProgress { .. } | AgentEvent::ToolLog { .. } => {
            if let Some(line) = report_line(&event) {
                eprintln!("{line}");
            }
        }
        AgentEvent::ToolFinished {
            is_error: true,
            name,
            output,
            ..
        } => {
            // Why, when the result says it in words (an external agent's failed step, a tool's error).
            let why = output
                .as_str()
                .or_else(|| output["error"].as_str())
                .or_else(|| output["message"].as_str())
                .map(|text| text.chars().take(200).collect::<String>());
            match why {
                Some(why) => eprintln!("  {name} failed: {why}"),
                None => eprintln!("  {name} failed; the agent was told why"),
            }
        }
        AgentEvent::Plan { steps } => {
            eprintln!("\nPlan:");
            for step in steps {
                let mark = match step.status.as_str() {
                    "completed" => "✓",
                    "in_progress" => "→",
                    _ => "·",
                };
                eprintln!("  {mark} {}", step.text);
            }
        }
        _ => {}
    }
}

fn report_line(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::ToolProgress {
            progress,
            total,
            message,
            ..
        } => {
            let count = total.map_or(format!("{progress}"), |total| format!("{progress} of {total}"));
            Some(match message {
                Some(message) => format!("  … {message} ({count})"),
                None => format!("  … {count}"),
            })
        }
        AgentEvent::ToolLog { level, message, .. } => Some(format!("  [{level}] {message}")),
        // Asked in an interactive chat by the asker itself; a one-message chat cannot ask, and the plugin hears so.
        AgentEvent::QuestionAsked { .. } => None,
        _ => None,
    }
}

/// `quire chat`.
#[derive(Debug, clap::Args)]
pub(crate) struct ChatArgs {
    /// Send this one message and exit (for scripts); without it the chat is interactive.
    #[arg(long, short, allow_hyphen_values = true)]
    pub(crate) message: Option<String>,
    /// Focus a note, as if it were open in the editor: the agent can then propose edits of its text.
    #[arg(long, value_name = "ID")]
    pub(crate) note: Option<String>,
    /// Select characters START..END of the focused note: the agent then edits only the selection.
    #[arg(long, value_name = "START..END", requires = "note", conflicts_with = "select_text")]
    pub(crate) select: Option<String>,
    /// Select this text of the focused note (it must occur once).
    #[arg(long, value_name = "TEXT", requires = "note")]
    pub(crate) select_text: Option<String>,
    /// Apply the proposed edits of the focused note without asking (saved as your write, with a revision).
    #[arg(long)]
    pub(crate) apply: bool,
    /// Let the agent move notes to the trash without asking.
    #[arg(long)]
    pub(crate) approve_destructive: bool,
    /// The model: openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, ollama:qwen3, openai-compatible:NAME.
    #[arg(long, env = "QUIRE_MODEL", value_name = "PROVIDER:MODEL")]
    pub(crate) model: Option<String>,
    /// The API's base URL (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, a proxy).
    #[arg(long, env = "QUIRE_BASE_URL", value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Continue a stored chat.
    #[arg(long, value_name = "CHAT_ID")]
    pub(crate) chat: Option<String>,
    /// Chat with this external agent (`quire agent list`) instead of a model.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with_all = ["model", "base_url", "chat", "note", "apply", "approve_destructive", "select", "select_text"]
    )]
    pub(crate) agent: Option<String>,
}
