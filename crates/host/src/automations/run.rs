//! One run of an automation: its row in the run log begun (or not, when another run of it runs or its slot ran),
//! its prompt run by its chat model (quire's own agent loop, acting as the client "NAME (automation)" on a handle
//! limited to its notebooks, staged unless it applies its writes) or by its external agent (over ACP, quire's MCP
//! server attached under the same name and limits), and the row ended with what it said, its steps, its review set
//! or change set, its tokens and cost.

use std::sync::Arc;

use anyhow::Context;
use quire_agent::{AgentDeps, AutoApprove, NoteContext, TranscriptEntry, run_note_chat};
use quire_core::automation_runs::{AutomationRun, Begun, RunEnd, RunMark, RunStart};
use quire_core::{Scope, Workspace};
use quire_tools::ToolRegistry;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::Automation;

/// What a run is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occasion {
    /// Its slot in the run log (a schedule's time, a trigger's news, a run by hand).
    pub slot: String,
    /// Why it runs, in words.
    pub reason: String,
    /// What the prompt is told besides the time: the notes that started it, the tasks due.
    pub context: Vec<String>,
}

impl Occasion {
    /// A run asked for now (`quire automation run`, Run now in Settings).
    pub fn by_hand() -> Occasion {
        Occasion {
            slot: format!("hand:{}", jiff::Timestamp::now().as_millisecond()),
            reason: "run by hand".into(),
            context: Vec::new(),
        }
    }
}

/// What became of a run asked for.
#[derive(Debug, Clone)]
pub enum Ran {
    /// It ran: its row in the log.
    Ran(Box<AutomationRun>),
    /// Another run of the automation runs now (this process or another): this one did not start.
    Overlaps(Box<AutomationRun>),
    /// Its slot ran already (another process ran it).
    SlotTaken,
}

/// `quire automation run NAME`: runs the automation named `name` now, on a runtime of its own with the plugins'
/// tools, and waits for it. Ctrl-C (or a termination signal) stops it, logged as failed; a second one ends quire at
/// once. No agent it started outlives it.
pub fn by_hand(ws: &Workspace, name: &str) -> anyhow::Result<Ran> {
    let automation = super::find(name)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let registry = Arc::new(ToolRegistry::builtin());
    let plugins = runtime.block_on(crate::plugins::start(ws, &registry))?;
    let cancel = CancellationToken::new();
    let signals = {
        let _entered = runtime.enter();
        crate::agents::stop_on_signals(Arc::new(std::sync::Mutex::new(cancel.clone())))
    };
    let ran = runtime.block_on(run(ws, &registry, &automation, &Occasion::by_hand(), &cancel));
    signals.abort();
    runtime.block_on(plugins.shutdown());
    quire_agent::acp::end_all();
    ran
}

/// Runs `automation` for `occasion` on `ws`, with `registry`'s tools for a model; `cancel` stops it (recorded as
/// failed, its writes rolled back).
pub async fn run(
    ws: &Workspace,
    registry: &Arc<ToolRegistry>,
    automation: &Automation,
    occasion: &Occasion,
    cancel: &CancellationToken,
) -> anyhow::Result<Ran> {
    let begun = ws.begin_automation_run(&RunStart {
        automation: automation.name().to_owned(),
        slot: occasion.slot.clone(),
        reason: occasion.reason.clone(),
        runner: automation.runner(),
    })?;
    let mark = match begun {
        Begun::Started(mark) => mark,
        Begun::Overlaps(other) => return Ok(Ran::Overlaps(Box::new(other))),
        Begun::SlotTaken => return Ok(Ran::SlotTaken),
    };
    let id = mark.id();
    let started = quire_core::Timestamp::now();
    let prompt = prompt(automation, occasion);
    let mut end = match &automation.config.agent {
        Some(agent) => by_agent(ws, automation, agent, &prompt, cancel, started).await,
        None => by_model(ws, registry, automation, &prompt, cancel, id).await,
    };
    // What it applied (each write of an MCP client is a change set of its own), for the log and `quire undo`.
    if let Ok(end) = &mut end
        && automation.applies_writes()
    {
        let sets = applied_since(ws, &automation.client_name(), started)?;
        end.change_set = (!sets.is_empty()).then(|| sets.join(" "));
    }
    finish(mark, end)?;
    let row = ws
        .automation_runs(Some(automation.name()), 20)?
        .into_iter()
        .find(|r| r.id == id)
        .with_context(|| format!("{} was removed while it ran: its log went with it", automation.name()))?;
    Ok(Ran::Ran(Box::new(row)))
}

/// The change sets `client` wrote since `since`, oldest first.
fn applied_since(ws: &Workspace, client: &str, since: quire_core::Timestamp) -> anyhow::Result<Vec<String>> {
    let actor = quire_core::Actor::Mcp {
        client: client.to_owned(),
    };
    let page = quire_core::Page { offset: 0, limit: 100 };
    let sets = ws.read(&quire_core::Actor::User, |r| r.change_sets(page))?;
    Ok(sets
        .items
        .into_iter()
        .filter(|s| s.actor == actor && s.created >= since)
        .map(|s| s.id)
        .rev()
        .collect())
}

fn finish(mark: RunMark, end: anyhow::Result<RunEnd>) -> anyhow::Result<()> {
    let end = end.unwrap_or_else(|e| RunEnd {
        failed: true,
        summary: format!("{e:#}"),
        ..RunEnd::default()
    });
    Ok(mark.end(&end)?)
}

/// The prompt as sent: the entry's, then what the run is for and when it is.
fn prompt(automation: &Automation, occasion: &Occasion) -> String {
    let now = jiff::Zoned::now();
    let mut text = format!(
        "{}\n\n(This is the automation “{}”, {}. It is {} ({}).",
        automation.config.prompt.trim(),
        automation.name(),
        occasion.reason,
        now.strftime("%A %-d %B %Y, %H:%M"),
        now.time_zone().iana_name().unwrap_or("local time"),
    );
    if !automation.applies_writes() {
        text.push_str(" Your changes wait for the person's review.");
    }
    // Where today's note is, for a prompt that writes into it ("a morning summary into the daily note").
    if let Ok(settings) = crate::settings::periodic(quire_core::Period::Day)
        && let Ok((notebook, title)) = quire_core::periodic_place(quire_core::Period::Day, now.date(), &settings)
    {
        let place = if notebook.is_empty() {
            "at the top level".to_owned()
        } else {
            format!("in the notebook “{notebook}”")
        };
        text.push_str(&format!(" Today's daily note is titled “{title}”, {place}."));
    }
    text.push(')');
    for line in &occasion.context {
        text.push('\n');
        text.push_str(line);
    }
    text
}

/// The handle an automation works through: limited to its notebooks, and staged unless it applies its writes.
pub fn handle(ws: &Workspace, automation: &Automation) -> anyhow::Result<Workspace> {
    let scoped = if automation.config.notebooks.is_empty() {
        ws.clone()
    } else {
        let notebooks = crate::mcp::resolve_notebooks(ws, &automation.config.notebooks)
            .with_context(|| format!("the automation {}'s notebooks", automation.name()))?;
        ws.scoped(Scope::notebooks(notebooks.into_iter().map(|n| n.id)))
    };
    Ok(if automation.applies_writes() {
        scoped
    } else {
        scoped.staged()
    })
}

async fn by_model(
    ws: &Workspace,
    registry: &Arc<ToolRegistry>,
    automation: &Automation,
    prompt: &str,
    cancel: &CancellationToken,
    run_id: i64,
) -> anyhow::Result<RunEnd> {
    let models = crate::chat_models::configured_models(None, None)?;
    let choice = match &automation.config.model {
        Some(name) => models
            .iter()
            .find(|m| &m.name == name)
            .with_context(|| format!("no chat model is named {name:?} any more (`quire model list`)"))?,
        None => models
            .first()
            .context("no chat model is configured (`quire model add`, or name an agent)")?,
    };
    let model = crate::chat_models::connect(choice)?;
    let handle = handle(ws, automation)?;
    let staged = handle.is_staged();
    let deps = AgentDeps {
        model: model.as_ref(),
        registry,
        workspace: &handle,
        chat_id: format!("automation:{}", automation.name()),
        turn: u32::try_from(run_id).unwrap_or(u32::MAX),
        client: Some(automation.client_name()),
        policy: quire_agent::ToolPolicy::default(),
        // Nobody is there to ask: staged steps wait for review anyway; a destructive one that would apply is refused.
        approver: &AutoApprove(staged),
        asker: None,
        events: None,
        cancel: cancel.clone(),
        interrupt: CancellationToken::new(),
        max_tokens: quire_agent::MAX_TOKENS,
        max_turn_tokens: crate::settings::max_turn_tokens()?,
    };
    let result = run_note_chat(&NoteContext::none(), &[], prompt, &deps).await;
    let (outcome, stopped) = match result {
        Ok(outcome) => (outcome, None),
        Err(e) => (e.outcome, Some(e.kind)),
    };
    let report = handle.staging_report().unwrap_or_default();
    Ok(RunEnd {
        failed: stopped.is_some(),
        summary: match &stopped {
            Some(e) => format!("stopped: {e}"),
            None => outcome.reply.clone(),
        },
        steps: Some(steps(&outcome.transcript).to_string()),
        review_set: report.staged.last().copied(),
        change_set: outcome.change_set_id.clone(),
        input_tokens: Some(outcome.usage.input_tokens),
        output_tokens: Some(outcome.usage.output_tokens),
        cost: choice.prices.as_ref().map(|p| p.cost(&outcome.usage)),
    })
}

/// The steps of a turn as the log keeps them: each tool call (name, arguments cut short, whether it failed) and
/// each text the model wrote; not the tools' results (the notes they returned).
fn steps(transcript: &[TranscriptEntry]) -> serde_json::Value {
    let cut = |text: &str| -> String {
        if text.chars().count() > 300 {
            format!("{}…", text.chars().take(300).collect::<String>())
        } else {
            text.to_owned()
        }
    };
    transcript
        .iter()
        .map(|entry| match entry {
            TranscriptEntry::ModelText { text, .. } => json!({ "kind": "text", "text": cut(text) }),
            TranscriptEntry::ToolCall {
                name,
                arguments,
                is_error,
                refused,
                ..
            } => json!({
                "kind": "tool",
                "name": name,
                "arguments": cut(arguments),
                "failed": is_error,
                "refused": refused.is_some(),
            }),
            #[allow(unreachable_patterns, reason = "kinds added later are kept by name only")]
            _ => json!({ "kind": "other" }),
        })
        .collect()
}

async fn by_agent(
    ws: &Workspace,
    automation: &Automation,
    agent: &str,
    prompt: &str,
    cancel: &CancellationToken,
    started: quire_core::Timestamp,
) -> anyhow::Result<RunEnd> {
    let mut entry = crate::agents::find(agent)?;
    // The automation's limits, not the agent's own entry's.
    entry.notebooks = automation.config.notebooks.clone();
    entry.writes = automation.config.writes;
    let client = automation.client_name();
    let mut session = crate::agents::start_as(ws, &entry, &client).await?;
    let mut steps = Vec::new();
    let mut record = |event: quire_agent::AgentEvent| {
        if let quire_agent::AgentEvent::ToolFinished { name, is_error, .. } = event {
            steps.push(json!({ "kind": "tool", "name": name, "failed": is_error }));
        }
    };
    // Nobody is there to answer an agent's permission requests: they are refused. Its writes through quire need none
    // (they wait for review, or apply, as the automation says); what it asks for is its own (a command, a file).
    let turn = session.prompt(prompt, &mut record, &AutoApprove(false), cancel).await;
    session.close().await;
    let turn = turn?;
    let review_set = ws
        .read(&quire_core::Actor::User, |r| r.review_sets(false, 50))?
        .into_iter()
        .find(|s| s.client == client && s.updated >= started);
    let failed = turn.stop_reason == "cancelled" || turn.stop_reason == "refusal";
    Ok(RunEnd {
        failed,
        summary: if turn.text.is_empty() {
            format!("the agent ended its turn ({}) without a message", turn.stop_reason)
        } else {
            turn.text
        },
        steps: Some(serde_json::Value::Array(steps).to_string()),
        review_set: review_set.map(|s| s.id),
        ..RunEnd::default()
    })
}
