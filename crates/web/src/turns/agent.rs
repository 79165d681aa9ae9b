//! A sidebar turn run by an external agent over ACP (quire-agent's `acp`), chosen in the sidebar's picker as
//! `agent:NAME`: the same event stream, approval cards and Cancel as a model's turn. The agent's session lives as long
//! as its chat in this server (the agent keeps its own context between turns); the chat stores each message and
//! reply, so it reads back as any other. The agent reaches the notes only through the MCP server the session gives
//! it (`quire mcp`, limited and staged as its entry says): the note open in the editor is named in the message, never
//! sent.

use std::path::PathBuf;
use std::sync::Arc;

use axum::response::sse::Sse;
use axum::response::{IntoResponse, Response};
use quire_agent::acp::{AcpAgent, AcpSession, McpAttach};
use quire_agent::{AgentEvent, Chat, NoteContext, focus_note};
use quire_core::{Actor, Workspace};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::{AskTheBrowser, TurnDone, TurnRequest, TurnStarted, async_stream};
use crate::WebApp;
use crate::error::{ApiError, ErrorKind};

/// An external agent the sidebar may run, as quire-host made it ready: how to start it, and its MCP server.
#[derive(Debug, Clone)]
pub struct WebAgent {
    /// How to start it.
    pub agent: AcpAgent,
    /// quire's MCP server for its session.
    pub attach: McpAttach,
    /// Its working directory.
    pub cwd: PathBuf,
}

/// The external agents as the configuration holds them now, read at each use: one added or removed in a terminal
/// while the server runs is offered (or not) at the picker's next look.
#[derive(Clone)]
pub struct AgentSource(pub Arc<dyn Fn() -> Vec<WebAgent> + Send + Sync>);

impl Default for AgentSource {
    fn default() -> AgentSource {
        AgentSource(Arc::new(Vec::new))
    }
}

impl std::fmt::Debug for AgentSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentSource")
    }
}

/// The agents' sessions, by chat.
pub(crate) type Sessions = tokio::sync::Mutex<std::collections::HashMap<String, AcpSession>>;

/// The message as the agent gets it: with the note open in the editor named (its title and id), when the agent may
/// see it.
fn with_focus(ws: &Workspace, request: &TurnRequest) -> String {
    let named = request
        .note_id
        .as_deref()
        .and_then(|id| focus_note(ws, id).ok())
        .and_then(|context| context.note)
        .map(|note| format!("[The note open in quire: “{}” (note_id {})]\n\n", note.title, note.id));
    format!("{}{}", named.unwrap_or_default(), request.message)
}

pub(crate) async fn start(
    app: Arc<WebApp>,
    ws: Workspace,
    request: TurnRequest,
    name: &str,
) -> Result<Response, ApiError> {
    let Some(agent) = (app.agents.0)().into_iter().find(|a| a.agent.name == name) else {
        return Err(ApiError::invalid(format!(
            "No agent is named '{name}' (`quire agent list`)."
        )));
    };
    if crate::access::Access::current().device().is_some() {
        return Err(ApiError::new(
            ErrorKind::Forbidden,
            "External agents run on the computer that runs quire, not from another device.",
        ));
    }
    let mut chat = match &request.chat_id {
        Some(id) => Chat::open(&ws, id).map_err(|e| ApiError::new(ErrorKind::NotFound, e.to_string()))?,
        None => {
            Chat::create(&ws, NoteContext::none(), &request.message).map_err(|e| ApiError::internal(e.to_string()))?
        }
    };
    let message = with_focus(&ws, &request);
    let turn_id = format!("{}:{}", chat.id(), chat.next_turn());
    let cancel = CancellationToken::new();
    // A closed tab cancels an agent's turn (an agent has no interrupt that keeps its writes: they are staged).
    let (approvals, gone) = app.turns.begin(&turn_id, &cancel, &cancel);
    let (events, received) = tokio::sync::mpsc::unbounded_channel::<AgentEvent>();
    let (finished, outcome) = oneshot::channel::<TurnDone>();
    let started = TurnStarted {
        turn_id: turn_id.clone(),
        chat_id: chat.id().to_owned(),
        focus_refused: None,
    };
    let runner = app.clone();
    tokio::spawn(async move {
        let approver = AskTheBrowser { approvals };
        let chat_id = chat.id().to_owned();
        let kept = runner.agent_sessions.lock().await.remove(&chat_id);
        let session = match kept {
            Some(session) => Ok(session),
            None => AcpSession::start(&agent.agent, &agent.attach, &agent.cwd).await,
        };
        let (reply, error) = match session {
            Err(e) => (String::new(), Some(e.to_string())),
            Ok(mut session) => {
                let mut send = |event| {
                    let _ = events.send(event);
                };
                match session.prompt(&message, &mut send, &approver, &cancel).await {
                    Ok(turn) => {
                        runner.agent_sessions.lock().await.insert(chat_id, session);
                        let stopped = (turn.stop_reason == "cancelled").then(|| "the turn was cancelled".to_owned());
                        (turn.text, stopped)
                    }
                    Err(e) => {
                        session.close().await;
                        (String::new(), Some(e.to_string()))
                    }
                }
            }
        };
        drop(events);
        if let Err(e) = chat.record_exchange(&request.message, &reply) {
            tracing::warn!(error = %e, "an agent's turn was not stored in its chat");
        }
        runner.turns.end(&turn_id);
        let _ = finished.send(TurnDone {
            reply,
            edits: Vec::new(),
            usage: quire_agent::Usage::default(),
            cost: None,
            chat_usage: chat.totals().unwrap_or_default(),
            steps: 0,
            change_set_id: None,
            turn_actor: Actor::Mcp {
                client: format!("{} (ACP agent)", agent.agent.name),
            },
            error,
            summarised: None,
        });
    });
    Ok(Sse::new(async_stream(app.clone(), started, received, outcome, gone))
        .keep_alive(axum::response::sse::KeepAlive::new().interval(std::time::Duration::from_secs(1)))
        .into_response())
}
