//! The loop: `run_note_chat` calls the model at most `MAX_STEPS` times, dispatching its tool calls to the session
//! tools or the registry, and returns the reply, the proposed edits and a transcript.

use quire_core::{Actor, Workspace};
use quire_tools::{Effect, ToolActor, ToolRegistry};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

pub use crate::event::AgentEvent;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalRequest, Approver, Refusal};
use crate::context::NoteContext;
use crate::edit::Edit;
use crate::error::Error;
use crate::model::{ChatModel, ChatRequest, Message, ToolCall, Usage};
use crate::prompt::system_prompt;
use crate::session::{SessionTool, WorkingCopy};
use crate::toollist::{OfferedTool, Tier, ToolPolicy, build_tool_offer, search_deferred};

/// The most model calls one turn makes.
pub const MAX_STEPS: usize = 8;

/// Everything a turn needs besides the conversation.
pub struct AgentDeps<'a> {
    /// The model.
    pub model: &'a dyn ChatModel,
    /// The workspace tools.
    pub registry: &'a ToolRegistry,
    /// The workspace.
    pub workspace: &'a Workspace,
    /// The chat this turn belongs to (the actor's chat id).
    pub chat_id: String,
    /// The turn's number in the chat (the actor's turn).
    pub turn: u32,
    /// The client the turn acts as instead of the chat's agent (an automation): its reads and writes are recorded
    /// under that name, and a staged workspace ([`quire_core::Workspace::staged`]) stages its writes for review.
    pub client: Option<String>,
    /// What the application allows.
    pub policy: ToolPolicy,
    /// Who approves destructive calls.
    pub approver: &'a dyn Approver,
    /// Who answers the questions a call asks the person (a plugin's elicitation); none: they cannot be asked.
    pub asker: Option<Arc<dyn crate::question::Asker>>,
    /// Where events go, if anyone listens.
    pub events: Option<UnboundedSender<AgentEvent>>,
    /// Cancels the turn: it stops and its workspace writes are rolled back ([`Error::Cancelled`]).
    pub cancel: CancellationToken,
    /// Stops the turn and keeps what it already wrote ([`Error::Interrupted`]): for a user who leaves.
    pub interrupt: CancellationToken,
    /// The most tokens per model call.
    pub max_tokens: u32,
    /// The most tokens the turn may use (sent and generated, over all its model calls): once past it, the turn stops
    /// before its next model call ([`Error::TurnBudget`]). `None`: no budget.
    pub max_turn_tokens: Option<u64>,
}

/// One entry of a turn's transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TranscriptEntry {
    /// Text the model wrote at a step.
    ModelText {
        /// The step (1-based).
        step: usize,
        /// The text.
        text: String,
    },
    /// A tool call and its result.
    ToolCall {
        /// The step (1-based).
        step: usize,
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// Session or workspace; absent for a tool that was not offered.
        tier: Option<Tier>,
        /// The arguments as the model sent them.
        arguments: String,
        /// The result the model got.
        output: Value,
        /// Whether it failed.
        is_error: bool,
        /// Why it was not run, when it was a destructive call that was refused (absent otherwise).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refused: Option<Refusal>,
    },
}

/// What a turn did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TurnOutcome {
    /// The model's final text.
    pub reply: String,
    /// The session-tool edits, in order, for the editor to preview as one undo step.
    pub edits: Vec<Edit>,
    /// The model's texts and every tool call with its result.
    pub transcript: Vec<TranscriptEntry>,
    /// The messages this turn added to the conversation (the user's message first).
    pub messages: Vec<Message>,
    /// Tokens used.
    pub usage: Usage,
    /// How many model calls were made.
    pub steps: usize,
    /// The change set holding the turn's workspace writes, if it wrote anything.
    pub change_set_id: Option<String>,
}

/// A turn that stopped early, with what it did until then.
#[derive(Debug, thiserror::Error)]
#[error("{kind}")]
pub struct TurnError {
    /// Why it stopped.
    pub kind: Error,
    /// What it did until then (edits, transcript, messages).
    pub outcome: TurnOutcome,
}

struct Turn<'a, 'd> {
    deps: &'d AgentDeps<'a>,
    offered: Vec<OfferedTool>,
    /// Plugin tools not offered yet: `find_tools` moves the ones it finds to `offered`.
    deferred: Vec<OfferedTool>,
    working: Option<WorkingCopy>,
    actor: ToolActor,
    outcome: TurnOutcome,
}

/// Runs one turn of the sidebar chat: `message` from the user about `context`, after `history`.
///
/// At most [`MAX_STEPS`] model calls. Tool calls go to the session tools or the registry by name; a call to a tool
/// not offered this turn is never executed (the model is told which tools it may use); tool errors go back to the
/// model and the loop goes on; every call id gets exactly one result. Read-only workspace calls of one step run
/// concurrently (a quick read of one note, such as `read_note`, runs as it is polled), everything else in order.
/// Destructive calls wait for `deps.approver`. All workspace writes of the turn form one change set; a cancelled
/// turn reverts it. A turn that has used more than `deps.max_turn_tokens` stops before its next model call.
pub async fn run_note_chat(
    context: &NoteContext,
    history: &[Message],
    message: &str,
    deps: &AgentDeps<'_>,
) -> Result<TurnOutcome, TurnError> {
    if let Some(note) = &context.note {
        // Whoever built the context, a protected note never reaches the model (see `focus_note`).
        if let Err(kind) = crate::context::focus_note(deps.workspace, &note.id) {
            return Err(TurnError {
                kind,
                outcome: TurnOutcome::default(),
            });
        }
    }
    let offer = build_tool_offer(context, deps.registry, &deps.policy);
    let system = system_prompt(context);
    let mut turn = Turn {
        deps,
        offered: offer.offered,
        deferred: offer.deferred,
        working: WorkingCopy::from_context(context),
        actor: match (&deps.client, &context.note) {
            (Some(client), _) => ToolActor::mcp(client.clone()),
            // The focused note's title and text change only through the session tools' previewed edits.
            (None, Some(note)) => {
                ToolActor::agent(deps.chat_id.clone(), deps.turn).with_note_in_editor(note.id.clone())
            }
            (None, None) => ToolActor::agent(deps.chat_id.clone(), deps.turn),
        },
        outcome: TurnOutcome::default(),
    };
    let mut messages = history.to_vec();
    messages.push(Message::User {
        content: message.to_owned(),
    });
    turn.outcome.messages.push(Message::User {
        content: message.to_owned(),
    });
    let events = deps.events.clone();
    let on_text = move |text: &str| {
        if let Some(events) = &events {
            let _ = events.send(AgentEvent::TextDelta { text: text.to_owned() });
        }
    };
    for step in 1..=MAX_STEPS {
        if deps.cancel.is_cancelled() {
            return Err(turn.stop(Error::Cancelled));
        }
        if deps.interrupt.is_cancelled() {
            return Err(turn.stop(Error::Interrupted));
        }
        let used = turn.outcome.usage.total();
        if let Some(budget) = deps.max_turn_tokens.filter(|budget| used > *budget) {
            return Err(turn.stop(Error::TurnBudget { used, budget }));
        }
        let request = ChatRequest {
            system: system.clone(),
            messages: messages.clone(),
            // Rebuilt at each step: `find_tools` may have added tools.
            tools: turn.offered.iter().map(|t| t.spec.clone()).collect(),
            max_tokens: deps.max_tokens,
        };
        let response = tokio::select! {
            response = deps.model.chat(&request, &on_text) => response,
            () = deps.cancel.cancelled() => return Err(turn.stop(Error::Cancelled)),
            () = deps.interrupt.cancelled() => return Err(turn.stop(Error::Interrupted)),
        };
        turn.outcome.steps = step;
        let response = match response {
            Ok(response) => response,
            Err(e) => return Err(turn.stop(Error::Model(e))),
        };
        turn.outcome.usage += response.usage;
        if !response.text.is_empty() {
            turn.outcome.transcript.push(TranscriptEntry::ModelText {
                step,
                text: response.text.clone(),
            });
        }
        let assistant = Message::Assistant {
            content: response.text.clone(),
            tool_calls: response.tool_calls.clone(),
        };
        messages.push(assistant.clone());
        turn.outcome.messages.push(assistant);
        if response.tool_calls.is_empty() {
            turn.outcome.reply = response.text;
            turn.outcome.change_set_id = turn.change_set_id();
            return Ok(turn.outcome);
        }
        let results = turn.dispatch(step, &response.tool_calls).await;
        for result in results {
            messages.push(result.clone());
            turn.outcome.messages.push(result);
        }
    }
    Err(turn.stop(Error::StepLimit { steps: MAX_STEPS }))
}

impl Turn<'_, '_> {
    /// What a call's tool may tell the sidebar while it runs (a plugin's progress and log messages): events of the
    /// turn, under the call's id.
    fn call_context(&self, call_id: &str) -> Option<Arc<dyn quire_tools::CallContext>> {
        let events = self.deps.events.as_ref()?.downgrade();
        Some(Arc::new(crate::reports::SidebarCall {
            call_id: call_id.to_owned(),
            events,
            asker: self.deps.asker.clone(),
        }))
    }

    fn emit(&self, event: AgentEvent) {
        if let Some(events) = &self.deps.events {
            let _ = events.send(event);
        }
    }

    fn change_set_id(&self) -> Option<String> {
        self.deps
            .workspace
            .read(&Actor::User, |r| r.open_change_set_of(self.actor.actor()))
            .ok()
            .flatten()
            .map(|s| s.id)
    }

    /// Ends the turn early. A cancelled turn's workspace writes are reverted, so no half-made change set remains,
    /// and its proposed edits are dropped: Cancel leaves nothing of the turn on offer, in every consumer.
    fn stop(mut self, kind: Error) -> TurnError {
        let open = self.change_set_id();
        if matches!(kind, Error::Cancelled) {
            self.outcome.edits.clear();
            if let Some(id) = &open {
                let reverted = self
                    .deps
                    .workspace
                    .write(self.actor.actor(), |w| w.revert_change_set(id));
                if let Err(e) = reverted {
                    tracing::warn!(error = %e, "could not revert the writes of a cancelled turn");
                }
            }
            self.outcome.change_set_id = None;
        } else {
            self.outcome.change_set_id = open;
        }
        TurnError {
            kind,
            outcome: self.outcome,
        }
    }

    /// Answers every call, in order. Runs of read-only workspace calls run concurrently (quick reads of one note as
    /// they are polled, one after another).
    async fn dispatch(&mut self, step: usize, calls: &[ToolCall]) -> Vec<Message> {
        let mut answers: Vec<Option<Answer>> = vec![None; calls.len()];
        let mut i = 0;
        while i < calls.len() {
            let concurrent = |c: &ToolCall| {
                self.offered
                    .iter()
                    .any(|t| t.spec.name == c.name && t.tier == Tier::Workspace && t.effect == Effect::ReadOnly)
                    && parse_arguments(&c.arguments).is_ok()
            };
            if concurrent(&calls[i]) {
                let mut j = i;
                while j < calls.len() && concurrent(&calls[j]) {
                    j += 1;
                }
                let batch = &calls[i..j];
                for call in batch {
                    self.started(call);
                }
                let futures = batch.iter().map(|call| {
                    let args = parse_arguments(&call.arguments).unwrap_or(Value::Null);
                    self.deps.registry.call_async_with(
                        self.deps.workspace,
                        &self.actor,
                        &call.name,
                        args,
                        self.call_context(&call.id),
                    )
                });
                // A plugin's read may take long (up to its time limit): the turn's Stop does not wait for it. The
                // built-in reads of the batch only read, so nothing is left half-done by dropping them.
                let plugins = batch.iter().any(|c| self.is_plugin(&c.name));
                let results = if plugins {
                    self.unless_stopped(futures::future::join_all(futures)).await
                } else {
                    Some(futures::future::join_all(futures).await)
                };
                let Some(results) = results else {
                    for (k, call) in batch.iter().enumerate() {
                        answers[i + k] = Some(Answer::error(stopped_message(&call.name), Some(Tier::Workspace)));
                    }
                    i = j;
                    continue;
                };
                for (k, result) in results.into_iter().enumerate() {
                    answers[i + k] = Some(match result {
                        Ok(r) => Answer::of(r.value, r.is_error, Tier::Workspace).with_content(r.content),
                        Err(e) => Answer::error(e.to_string(), Some(Tier::Workspace)),
                    });
                }
                i = j;
            } else {
                let call = &calls[i];
                answers[i] = Some(self.run_one(call).await);
                i += 1;
            }
        }
        // What read_note showed of the focused note counts as read: edits may quote it now.
        if let Some(working) = &mut self.working {
            for (call, answer) in calls.iter().zip(&answers) {
                if call.name == "read_note"
                    && let Some(answer) = answer
                    && !answer.is_error
                    && answer.output["note_id"].as_str() == Some(working.id.as_str())
                    && let Some(body) = answer.output["body"].as_str()
                {
                    working.saw(body);
                }
            }
        }
        calls
            .iter()
            .zip(answers)
            .map(|(call, answer)| {
                let Answer {
                    output,
                    is_error,
                    tier,
                    refused,
                    content,
                } = answer.unwrap_or_else(|| Answer::error("The call was not run.".to_owned(), None));
                let render = parse_arguments(&call.arguments)
                    .ok()
                    .filter(|_| !is_error)
                    .and_then(|input| self.deps.registry.render(&call.name, &input, &output));
                self.emit(AgentEvent::ToolFinished {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    is_error,
                    output: output.clone(),
                    render,
                    content,
                });
                self.outcome.transcript.push(TranscriptEntry::ToolCall {
                    step,
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    tier,
                    arguments: call.arguments.clone(),
                    output: output.clone(),
                    is_error,
                    refused,
                });
                Message::Tool {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content: output.to_string(),
                    is_error,
                }
            })
            .collect()
    }

    fn started(&self, call: &ToolCall) {
        let title = self
            .offered
            .iter()
            .find(|t| t.spec.name == call.name)
            .map(|t| t.title.clone())
            .unwrap_or_default();
        self.emit(AgentEvent::ToolStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            title,
            arguments: call.arguments.clone(),
        });
    }

    async fn run_one(&mut self, call: &ToolCall) -> Answer {
        let Some(tool) = self.offered.iter().find(|t| t.spec.name == call.name).cloned() else {
            // Never executed: the model only gets told what it may use.
            let names: Vec<&str> = self.offered.iter().map(|t| t.spec.name.as_str()).collect();
            let load = if self.deferred.iter().any(|t| t.spec.name == call.name) {
                format!(" Call {} first to load it.", crate::toollist::FIND_TOOLS)
            } else {
                String::new()
            };
            let error = format!(
                "The tool '{}' is not available in this turn, so it was not run.{load} You may use: {}.",
                call.name,
                names.join(", ")
            );
            return Answer::error(error, None);
        };
        self.started(call);
        let args = match parse_arguments(&call.arguments) {
            Ok(args) => args,
            Err(e) => {
                let error = format!(
                    "The arguments of {} are not valid JSON ({}). Send one JSON object.",
                    call.name,
                    e.message()
                );
                return Answer::error(error, Some(tool.tier));
            }
        };
        match tool.tier {
            Tier::Search => Answer::of(self.find_tools(&args), false, Tier::Search),
            Tier::Session => {
                let Some(working) = &mut self.working else {
                    return Answer::error("No note is open in the editor.".to_owned(), Some(Tier::Session));
                };
                let Some(session_tool) = SessionTool::from_name(&call.name) else {
                    return Answer::error("Not a session tool.".to_owned(), Some(Tier::Session));
                };
                match working.run(session_tool, &args) {
                    Ok((edit, summary)) => {
                        self.emit(AgentEvent::EditProposed { edit: edit.clone() });
                        self.outcome.edits.push(edit);
                        Answer::of(summary, false, Tier::Session)
                    }
                    Err(refused) => Answer::error(refused.message().to_owned(), Some(Tier::Session)),
                }
            }
            Tier::Workspace => {
                if tool.needs_approval {
                    let request = ApprovalRequest {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        title: tool.title.clone(),
                        arguments: args.clone(),
                    };
                    self.emit(AgentEvent::ApprovalNeeded {
                        request: request.clone(),
                    });
                    if !self.deps.approver.approve(&request).await {
                        let refusal = self.deps.approver.refusal();
                        return Answer {
                            refused: Some(refusal),
                            ..Answer::error(refusal.message(&call.name), Some(Tier::Workspace))
                        };
                    }
                }
                // A built-in call is short and runs to its end even if the turn is cancelled meanwhile: its
                // transaction is then reverted with the rest of the turn, never left half-done. A plugin's call may
                // take up to its time limit and writes nothing here: Stop does not wait for it.
                let call_future = self.deps.registry.call_async_with(
                    self.deps.workspace,
                    &self.actor,
                    &call.name,
                    args,
                    self.call_context(&call.id),
                );
                let result = if tool.plugin.is_some() {
                    match self.unless_stopped(call_future).await {
                        Some(result) => result,
                        None => return Answer::error(stopped_message(&call.name), Some(Tier::Workspace)),
                    }
                } else {
                    call_future.await
                };
                match result {
                    Ok(result) => {
                        Answer::of(result.value, result.is_error, Tier::Workspace).with_content(result.content)
                    }
                    Err(e) => Answer::error(e.to_string(), Some(Tier::Workspace)),
                }
            }
        }
    }

    /// Whether an offered tool is a plugin's.
    fn is_plugin(&self, name: &str) -> bool {
        self.offered.iter().any(|t| t.spec.name == name && t.plugin.is_some())
    }

    /// Runs `future` unless the turn is cancelled or interrupted first (then `None`, and the future is dropped).
    async fn unless_stopped<T>(&self, future: impl std::future::Future<Output = T>) -> Option<T> {
        tokio::select! {
            value = future => Some(value),
            () = self.deps.cancel.cancelled() => None,
            () = self.deps.interrupt.cancelled() => None,
        }
    }

    /// `find_tools`: the deferred tools matching the query join the offer for the rest of the turn.
    fn find_tools(&mut self, args: &Value) -> Value {
        let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
        let found: Vec<String> = search_deferred(&self.deferred, query, 5)
            .into_iter()
            .map(|t| t.spec.name.clone())
            .collect();
        let mut listed = Vec::new();
        for name in &found {
            if let Some(at) = self.deferred.iter().position(|t| &t.spec.name == name) {
                let tool = self.deferred.remove(at);
                listed.push(json!({"name": tool.spec.name, "description": tool.spec.description}));
                self.offered.push(tool);
            }
        }
        if listed.is_empty() {
            let names: Vec<&str> = self.deferred.iter().take(40).map(|t| t.spec.name.as_str()).collect();
            return json!({
                "found": [],
                "hint": format!("No tool matched. Tools not loaded yet: {}. Ask again with words of one.", names.join(", "))
            });
        }
        json!({ "found": listed, "hint": "These tools can be called now." })
    }
}

/// The result a tool call gets, and what the transcript records of it.
#[derive(Debug, Clone)]
struct Answer {
    /// The result the model gets (the output object, or `{"error": ...}`).
    output: Value,
    is_error: bool,
    /// Absent for a tool that was not offered.
    tier: Option<Tier>,
    refused: Option<Refusal>,
    /// Media for the user.
    content: Vec<quire_tools::ContentItem>,
}

impl Answer {
    /// The output of a call that ran (and may have failed).
    fn of(output: Value, is_error: bool, tier: Tier) -> Answer {
        Answer {
            output,
            is_error,
            tier: Some(tier),
            refused: None,
            content: Vec::new(),
        }
    }

    fn with_content(mut self, content: Vec<quire_tools::ContentItem>) -> Answer {
        self.content = content;
        self
    }

    /// A failure, with the message the model reads to correct the call.
    fn error(message: String, tier: Option<Tier>) -> Answer {
        Answer {
            output: json!({ "error": message }),
            is_error: true,
            tier,
            refused: None,
            content: Vec::new(),
        }
    }
}

/// What a plugin call the turn stopped waiting for answers.
fn stopped_message(name: &str) -> String {
    format!("The turn was stopped while {name} ran, so its result is not known.")
}

/// A call's arguments as the model sent them: one JSON object (nothing, or `null`, is an empty one).
fn parse_arguments(text: &str) -> Result<Value, quire_tools::ToolError> {
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(Value::Null) => Ok(json!({})),
        Ok(_) => Err(quire_tools::ToolError::new("not an object")),
        Err(e) => Err(quire_tools::ToolError::new(e.to_string())),
    }
}
