//! [`Chat`]: one stored conversation and the lifecycle of its turns. It opens or creates the chat, holds its
//! history and the focused note, runs each message as the chat's next turn, stores what the turn said and the tokens
//! it used, and accepts the turn's edits; consumers (the terminal, the web sidebar) only say what to send and show
//! what comes back.

use quire_core::{Actor, ChatMessage, TurnUsage, Workspace};
use quire_tools::ToolRegistry;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::approval::Approver;
use crate::compact::{self, Summary, load_summary, store_summary};
use crate::context::{NoteContext, reading_agent};
use crate::edit::{AcceptRequest, Accepted, accept_edits, apply_edits, unified_diff};
use crate::error::Error;
use crate::model::{ChatModel, Message, Prices, Usage};
use crate::toollist::ToolPolicy;
use crate::turn::{AgentDeps, AgentEvent, TurnOutcome, run_note_chat};

/// The most tokens per model call of a chat turn, unless the caller says otherwise.
pub const MAX_TOKENS: u32 = 4096;

/// A stored conversation with the agent: its id, its history, and the note in focus for its next turns.
///
/// [`Chat::send`] runs a message as the next turn and stores the messages the turn added, whether it ran to its end
/// or stopped early, so that the chat can be resumed ([`Chat::open`]) from any consumer.
#[derive(Debug, Clone)]
pub struct Chat {
    workspace: Workspace,
    id: String,
    history: Vec<Message>,
    focus: NoteContext,
    /// The summary that stands for the chat's earlier turns in requests, when it grew past the budget.
    summary: Option<Summary>,
}

/// What a turn needs besides the message: the model, the tools, who approves, and how the caller follows and
/// stops it. [`TurnOptions::new`] gives the usual rest; set the other fields with struct update syntax.
pub struct TurnOptions<'a> {
    /// The model.
    pub model: &'a dyn ChatModel,
    /// The workspace tools.
    pub registry: &'a ToolRegistry,
    /// Who approves destructive calls.
    pub approver: &'a dyn Approver,
    /// Who answers the questions a call asks the person (a plugin's elicitation); `None`: nobody can be asked, and
    /// the call is told so.
    pub asker: Option<std::sync::Arc<dyn crate::question::Asker>>,
    /// What the application allows (default: every workspace tool).
    pub policy: ToolPolicy,
    /// Where the turn's events go as they happen, if anyone listens; the sender is dropped when the turn ends.
    pub events: Option<UnboundedSender<AgentEvent>>,
    /// Cancels the turn: it stops and its workspace writes are rolled back.
    pub cancel: CancellationToken,
    /// Stops the turn and keeps what it already wrote: for a user who leaves.
    pub interrupt: CancellationToken,
    /// The most tokens per model call.
    pub max_tokens: u32,
    /// The most tokens the whole turn may use (see [`AgentDeps::max_turn_tokens`]); `None`: no budget.
    pub max_turn_tokens: Option<u64>,
    /// The model's prices, to estimate what the turn cost; `None`: no estimate.
    pub prices: Option<Prices>,
}

impl<'a> TurnOptions<'a> {
    /// A turn with this model, these tools and this approver; every workspace tool offered, nobody listening, never
    /// stopped, [`MAX_TOKENS`] per model call, no budget for the turn, no prices.
    pub fn new(model: &'a dyn ChatModel, registry: &'a ToolRegistry, approver: &'a dyn Approver) -> TurnOptions<'a> {
        TurnOptions {
            model,
            registry,
            approver,
            asker: None,
            policy: ToolPolicy::default(),
            events: None,
            cancel: CancellationToken::new(),
            interrupt: CancellationToken::new(),
            max_tokens: MAX_TOKENS,
            max_turn_tokens: None,
            prices: None,
        }
    }
}

/// A chat's usage over all its turns, as stored with it: what the sidebar and `quire chat` show as the chat's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChatTotals {
    /// How many turns reached the model.
    pub turns: u64,
    /// Their tokens, summed.
    pub usage: Usage,
    /// The estimated cost of the turns whose model had prices; `None` when none had.
    pub cost: Option<f64>,
    /// How many turns had prices (when fewer than `turns`, `cost` leaves the others out).
    pub priced_turns: u64,
}

/// A turn of a [`Chat`] that ran, to its end or not, and was stored.
#[derive(Debug)]
pub struct ChatTurn {
    /// What the turn did; when it stopped early, what it did until then (a cancelled turn keeps no edits).
    pub outcome: TurnOutcome,
    /// Why the turn stopped early; or, when it ran to its end, why its messages could not be stored.
    pub error: Option<Error>,
    /// The turn's actor (`Actor::Agent { chat, turn }`): its writes form its change set, which accepted edits join.
    pub actor: Actor,
    /// The turn's estimated cost (its usage at the model's prices), when the model has prices.
    pub cost: Option<f64>,
    /// The summary written before this turn, when the chat had grown past its budget: it stands for the earlier
    /// turns from now on (the usage includes writing it).
    pub summarised: Option<Summary>,
    /// The chat's totals, this turn included (zero when they could not be read).
    pub totals: ChatTotals,
    /// The focus the turn ran with: its edits apply to this note's text.
    focus: NoteContext,
}

impl ChatTurn {
    /// The focus the turn ran with: the note (and text) its edits apply to.
    pub fn focus(&self) -> &NoteContext {
        &self.focus
    }

    /// The turn's proposed edits as a unified diff of the focused note, named by its title; `None` when the turn
    /// proposed none (or no note was in focus).
    pub fn diff(&self) -> Result<Option<String>, Error> {
        let Some(note) = self.focus.note.as_ref().filter(|_| !self.outcome.edits.is_empty()) else {
            return Ok(None);
        };
        let proposed = apply_edits(&note.body, &self.outcome.edits)?;
        Ok(Some(unified_diff(&note.body, &proposed, &note.title)))
    }
}

impl Chat {
    /// The stored chat `id`, with its history, and no note in focus ([`Chat::focus`] sets one). A chat that does not
    /// exist is [`Error::Workspace`] with core's not-found error.
    pub fn open(workspace: &Workspace, id: &str) -> Result<Chat, Error> {
        Ok(Chat {
            workspace: workspace.clone(),
            id: id.to_owned(),
            history: load_history(workspace, id)?,
            focus: NoteContext::none(),
            summary: load_summary(workspace, id)?,
        })
    }

    /// Stores a new, empty chat about the note in `focus` (if any), titled after `first_message`, and focuses that
    /// note. A UI that streams the first turn has the chat's id before the turn has said anything.
    pub fn create(workspace: &Workspace, focus: NoteContext, first_message: &str) -> Result<Chat, Error> {
        let note_id = focus.note.as_ref().map(|n| n.id.as_str());
        // Chats are not workspace content (they never enter the change log); they are written as the agent.
        let id = workspace.write(&reading_agent(), |w| {
            Ok::<_, quire_core::Error>(w.create_chat(&chat_title(first_message), note_id)?.id)
        })?;
        Ok(Chat {
            workspace: workspace.clone(),
            id,
            history: Vec::new(),
            focus,
            summary: None,
        })
    }

    /// The chat's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its messages so far, oldest first.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The note in focus for the next turns (none, or a note with its text and selection).
    pub fn focused(&self) -> &NoteContext {
        &self.focus
    }

    /// Focuses a note for the next turns (build it with [`crate::focus_note`], which refuses a protected note).
    pub fn focus(&mut self, focus: NoteContext) {
        self.focus = focus;
    }

    /// The number the next turn gets: one more than the user messages so far.
    pub fn next_turn(&self) -> u32 {
        let users = self
            .history
            .iter()
            .filter(|m| matches!(m, Message::User { .. }))
            .count();
        u32::try_from(users + 1).unwrap_or(u32::MAX)
    }

    /// The summary standing for the chat's earlier turns in requests, if the chat grew past its budget.
    pub fn summary(&self) -> Option<&Summary> {
        self.summary.as_ref()
    }

    /// Drops the summary: the next turn sends the whole chat again (and summarises it anew if it is still over
    /// the budget).
    pub fn drop_summary(&mut self) -> Result<(), Error> {
        if self.summary.is_some() {
            let nothing = Summary {
                text: String::new(),
                covers: 0,
            };
            store_summary(&self.workspace, &self.id, &nothing)?;
            self.summary = None;
        }
        Ok(())
    }

    /// The chat's usage over its turns so far, as stored.
    pub fn totals(&self) -> Result<ChatTotals, Error> {
        Ok(chat_totals(&self.workspace, &self.id)?)
    }

    /// Stores a turn an external agent ran (see [`crate::acp`]): the person's message and the agent's reply, so the
    /// chat reads back as any other.
    pub fn record_exchange(&mut self, message: &str, reply: &str) -> Result<(), Error> {
        let exchange = [
            Message::User {
                content: message.to_owned(),
            },
            Message::Assistant {
                content: reply.to_owned(),
                tool_calls: Vec::new(),
            },
        ];
        append_messages(&self.workspace, &self.id, &exchange)?;
        self.history.extend(exchange);
        Ok(())
    }

    /// Runs `message` as the chat's next turn about the focused note, then stores the messages the turn added and the
    /// tokens it used (also when it stopped early) and keeps the messages in the history.
    pub async fn send(&mut self, message: &str, options: TurnOptions<'_>) -> ChatTurn {
        let turn = self.next_turn();
        // A long chat is sent compacted: older tool results shortened, older turns summarised past the budget.
        let (sent, summarised, summary_usage) =
            compact::prepare(options.model, &self.history, self.summary.as_ref(), options.max_tokens).await;
        if let Some(summary) = &summarised
            && store_summary(&self.workspace, &self.id, summary).is_ok()
        {
            self.summary = Some(summary.clone());
        }
        let deps = AgentDeps {
            model: options.model,
            client: None,
            registry: options.registry,
            workspace: &self.workspace,
            chat_id: self.id.clone(),
            turn,
            policy: options.policy,
            approver: options.approver,
            asker: options.asker,
            events: options.events,
            cancel: options.cancel,
            interrupt: options.interrupt,
            max_tokens: options.max_tokens,
            max_turn_tokens: options.max_turn_tokens,
        };
        let result = run_note_chat(&self.focus, &sent, message, &deps).await;
        // Listeners see the end of the events before the turn is stored.
        drop(deps);
        let (mut outcome, stopped) = match result {
            Ok(outcome) => (outcome, None),
            Err(e) => (e.outcome, Some(e.kind)),
        };
        outcome.usage += summary_usage;
        let cost = options.prices.map(|prices| prices.cost(&outcome.usage));
        let saved = append_messages(&self.workspace, &self.id, &outcome.messages).and_then(|()| {
            // A turn that reached the model is recorded even when it stopped early: its tokens were spent.
            if outcome.steps == 0 {
                return Ok(());
            }
            let usage = TurnUsage {
                turn,
                model: options.model.name(),
                input_tokens: outcome.usage.input_tokens,
                cached_input_tokens: outcome.usage.cached_input_tokens,
                cache_write_tokens: outcome.usage.cache_write_tokens,
                output_tokens: outcome.usage.output_tokens,
                cost,
            };
            self.workspace
                .write(&reading_agent(), |w| w.record_chat_usage(&self.id, &usage))
                .map_err(Error::from)
        });
        self.history.extend(outcome.messages.iter().cloned());
        let totals = chat_totals(&self.workspace, &self.id).unwrap_or_default();
        ChatTurn {
            outcome,
            error: stopped.or(saved.err()),
            actor: Actor::Agent {
                chat: self.id.clone(),
                turn,
            },
            cost,
            summarised,
            totals,
            focus: self.focus.clone(),
        }
    }

    /// Accepts every edit `turn` proposed, onto the note it ran with, as the user's write recorded in the turn's
    /// change set (see [`accept_edits`]). When that note is still in focus, its text becomes the accepted text and
    /// its selection is dropped, so the next turn works on what was saved.
    pub fn accept(&mut self, turn: &ChatTurn) -> Result<Accepted, Error> {
        let note = turn
            .focus
            .note
            .as_ref()
            .ok_or_else(|| Error::InvalidEdits("no note is focused".into()))?;
        let accepted = accept_edits(
            &self.workspace,
            AcceptRequest {
                note_id: &note.id,
                base: &note.body,
                edits: &turn.outcome.edits,
                turn: Some(&turn.actor),
            },
        )?;
        if let Some(focused) = &mut self.focus.note
            && focused.id == note.id
        {
            focused.body = accepted.body.clone();
            focused.selection = None;
        }
        Ok(accepted)
    }
}

/// The messages of a stored chat, oldest first. Messages this version cannot read are skipped.
pub fn load_history(workspace: &Workspace, chat_id: &str) -> Result<Vec<Message>, quire_core::Error> {
    let chat = workspace.read(&Actor::User, |r| r.chat(chat_id))?;
    Ok(chat
        .messages
        .into_iter()
        .filter_map(|m| serde_json::from_value(m.content).ok())
        .collect())
}

/// A stored chat's usage over its turns (see [`Chat::totals`]).
pub fn chat_totals(workspace: &Workspace, chat_id: &str) -> Result<ChatTotals, quire_core::Error> {
    let stored = workspace.read(&Actor::User, |r| r.chat_usage(chat_id))?;
    Ok(ChatTotals {
        turns: stored.turns,
        usage: Usage {
            input_tokens: stored.input_tokens,
            cached_input_tokens: stored.cached_input_tokens,
            cache_write_tokens: stored.cache_write_tokens,
            output_tokens: stored.output_tokens,
        },
        cost: stored.cost,
        priced_turns: stored.priced_turns,
    })
}

/// Appends a turn's messages to a stored chat.
fn append_messages(workspace: &Workspace, chat_id: &str, messages: &[Message]) -> Result<(), Error> {
    let stored: Vec<ChatMessage> = messages
        .iter()
        .map(|m| ChatMessage {
            role: match m {
                Message::User { .. } => "user",
                Message::Assistant { .. } => "assistant",
                Message::Tool { .. } => "tool",
            }
            .to_owned(),
            content: serde_json::to_value(m).unwrap_or_default(),
        })
        .collect();
    workspace.write(&reading_agent(), |w| w.append_chat_messages(chat_id, &stored))?;
    Ok(())
}

/// The first line of the opening message, at most 80 characters; "Chat" when it is blank.
fn chat_title(first_message: &str) -> String {
    let title: String = first_message.lines().next().unwrap_or("").chars().take(80).collect();
    if title.trim().is_empty() {
        "Chat".to_owned()
    } else {
        title
    }
}
