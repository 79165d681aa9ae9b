//! Chat turns over server-sent events: `POST /api/turns` streams the agent's events as they happen and ends with
//! the outcome; `POST /api/turns/{id}/approve` answers an approval card; `POST /api/turns/{id}/answer` a plugin's
//! question; `POST /api/turns/{id}/cancel` stops the
//! turn and rolls its writes back; closing the stream (the user left the note or closed the tab) stops the turn and
//! keeps what it wrote, in its change set; `POST /api/notes/{id}/accept` saves the edits the user accepted.

pub(crate) mod agent;

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use axum::extract::{DefaultBodyLimit, Path, State};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use quire_agent::{
    AcceptRequest, Accepted, AgentEvent, ApprovalRequest, Approver, Asker, Chat, Edit, NoteContext, Question,
    TurnOptions, accept_edits, focus_note,
};
use quire_core::Actor;
use quire_tools::Elicited;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::WebApp;
use crate::api::NOTE_REQUEST_LIMIT;
use crate::error::{ApiError, ErrorKind};

/// The turns' routes and accepting edits, for the router in `lib.rs` to put under `/api`. A turn and an accept carry
/// the editor's text, so they take a whole note's worth of request.
pub(crate) fn routes() -> Router<Arc<WebApp>> {
    Router::new()
        .route(
            "/notes/{id}/accept",
            post(accept).layer(DefaultBodyLimit::max(NOTE_REQUEST_LIMIT)),
        )
        .route("/turns", post(start).layer(DefaultBodyLimit::max(NOTE_REQUEST_LIMIT)))
        .route("/turns/{id}/approve", post(approve))
        .route("/turns/{id}/answer", post(answer))
        .route("/turns/{id}/cancel", post(cancel))
}

/// The turns running now, by id: how to cancel each, and its approval cards waiting for an answer.
#[derive(Default)]
pub(crate) struct Turns {
    running: Mutex<HashMap<String, Running>>,
}

struct Running {
    cancel: CancellationToken,
    approvals: Approvals,
}

impl Turns {
    /// Registers the turn `turn_id` (Cancel reaches it through `cancel`) and returns its approval cards' place and
    /// what the event stream holds: when the browser goes away, `interrupt` stops the turn.
    fn begin(
        &self,
        turn_id: &str,
        cancel: &CancellationToken,
        interrupt: &CancellationToken,
    ) -> (Approvals, StopWhenGone) {
        let approvals: Approvals = Arc::new(Waiting::default());
        self.running.lock().unwrap_or_else(|e| e.into_inner()).insert(
            turn_id.to_owned(),
            Running {
                cancel: cancel.clone(),
                approvals: approvals.clone(),
            },
        );
        let gone = StopWhenGone {
            interrupt: interrupt.clone(),
            approvals: approvals.clone(),
        };
        (approvals, gone)
    }

    /// The turn `turn_id` ended: it is no longer running, and what still waits for an answer is refused.
    fn end(&self, turn_id: &str) {
        if let Some(ended) = self.running.lock().unwrap_or_else(|e| e.into_inner()).remove(turn_id) {
            refuse_waiting(&ended.approvals);
        }
    }
}

/// What a turn waits for from the person: approval cards by call id, and a plugin's questions by question id.
#[derive(Default)]
struct Waiting {
    approvals: Mutex<HashMap<String, oneshot::Sender<bool>>>,
    questions: Mutex<HashMap<String, oneshot::Sender<Elicited>>>,
    /// The turn is ending or gone: what is asked from now on is refused at once instead of waiting for an answer
    /// that can no longer come (a plugin's question may still arrive a moment after a Stop).
    closed: std::sync::atomic::AtomicBool,
}

type Approvals = Arc<Waiting>;

/// Refuses every approval card and dismisses every question still waiting, so a turn that is being stopped does not
/// wait for an answer.
fn refuse_waiting(waiting: &Approvals) {
    waiting.closed.store(true, std::sync::atomic::Ordering::SeqCst);
    waiting.approvals.lock().unwrap_or_else(|e| e.into_inner()).clear();
    waiting.questions.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// Held by the event stream: when the browser goes away (the stream is dropped), the turn stops and keeps what it
/// already wrote.
struct StopWhenGone {
    interrupt: CancellationToken,
    approvals: Approvals,
}

impl Drop for StopWhenGone {
    fn drop(&mut self) {
        self.interrupt.cancel();
        refuse_waiting(&self.approvals);
    }
}

/// Waits for the user's answer to an approval card (a refusal when the turn ends first).
struct AskTheBrowser {
    approvals: Approvals,
}

impl Approver for AskTheBrowser {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        if self.approvals.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Box::pin(std::future::ready(false));
        }
        let (answer, answered) = oneshot::channel();
        self.approvals
            .approvals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(request.call_id.clone(), answer);
        Box::pin(async move { answered.await.unwrap_or(false) })
    }
}

/// A plugin's question waits for the form under its call (dismissed when the turn ends first).
impl Asker for AskTheBrowser {
    fn ask(&self, question: Question) -> Pin<Box<dyn Future<Output = Elicited> + Send + '_>> {
        if self.approvals.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Box::pin(std::future::ready(Elicited::Cancelled));
        }
        let (answer, answered) = oneshot::channel();
        self.approvals
            .questions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(question.question_id, answer);
        Box::pin(async move { answered.await.unwrap_or(Elicited::Cancelled) })
    }
}

/// A message to the agent, about the note open in the editor if any.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TurnRequest {
    pub(crate) message: String,
    /// The stored chat to continue.
    pub(crate) chat_id: Option<String>,
    /// The note open in the editor.
    pub(crate) note_id: Option<String>,
    /// The editor's text of that note, when it differs from the saved one.
    body: Option<String>,
    /// The selection in the editor, in characters.
    selection: Option<(usize, usize)>,
    /// Where the cursor is in the editor, in characters: a long note is shown to the model around it.
    cursor: Option<usize>,
    /// The name of the model to use (default: the first configured), or `agent:NAME` for an external agent.
    pub(crate) model: Option<String>,
    /// Plugins left out of this chat, by name.
    #[serde(default)]
    plugins_off: Vec<String>,
}

/// The `started` event: the ids the browser needs to cancel, answer and continue.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TurnStarted {
    /// The turn's id, for approve and cancel.
    pub turn_id: String,
    /// The chat it belongs to, for the next message.
    pub chat_id: String,
    /// Why the note in the editor is not in focus, when it is not (protected, in the trash).
    pub focus_refused: Option<String>,
}

/// The `done` event: how the turn ended.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TurnDone {
    /// The model's last reply.
    pub reply: String,
    /// The edits proposed for the focused note, in order (each on the text the previous ones left).
    pub edits: Vec<Edit>,
    /// Tokens used by the whole turn, as the provider counted them (cached ones apart).
    pub usage: quire_agent::Usage,
    /// The turn's estimated cost, when the model has prices (in the currency units they were given in).
    pub cost: Option<f64>,
    /// The chat's totals, this turn included.
    pub chat_usage: quire_agent::ChatTotals,
    /// How many model calls it made.
    pub steps: usize,
    /// The change set of its workspace writes, if it wrote.
    pub change_set_id: Option<String>,
    /// The turn's actor: pass it back when accepting its edits, so they join its change set.
    #[schemars(with = "Value")]
    pub turn_actor: Actor,
    /// Why it stopped early, if it did.
    pub error: Option<String>,
    /// The summary written before this turn, when the chat had grown long: it stands for the earlier turns now.
    pub summarised: Option<quire_agent::Summary>,
}

fn sse_event(kind: &str, data: &impl Serialize) -> Result<Event, Infallible> {
    let data = serde_json::to_string(data).unwrap_or_else(|_| "null".to_owned());
    Ok(Event::default().event(kind).data(data))
}

pub(crate) async fn start(
    State(app): State<Arc<WebApp>>,
    Json(request): Json<TurnRequest>,
) -> Result<Response, ApiError> {
    let ws = crate::access::workspace(&app)?;
    if let Some(agent) = request.model.as_deref().and_then(|m| m.strip_prefix("agent:")) {
        let agent = agent.to_owned();
        return agent::start(app, ws, request, &agent).await;
    }
    let models = app.models();
    let chosen = match &request.model {
        Some(name) => models.iter().find(|m| &m.name == name),
        None => models.first(),
    };
    let Some((model, prices)) = chosen.map(|m| (m.chat.clone(), m.prices)) else {
        let error = match &request.model {
            Some(name) if !models.is_empty() => format!("No model is named '{name}'."),
            _ => app.setup_hint.clone(),
        };
        return Err(ApiError::invalid(error));
    };
    // A protected (or trashed) note is never given to the agent: the turn runs with no note focused, and says so.
    let mut focus_refused = None;
    let context = match &request.note_id {
        None => NoteContext::none(),
        Some(id) => match focus_note(&ws, id) {
            Ok(mut context) => {
                if let (Some(note), Some(body)) = (&mut context.note, &request.body) {
                    note.body = body.clone();
                }
                if let Some(note) = &mut context.note {
                    note.cursor = request.cursor.filter(|&c| c <= note.body.chars().count());
                }
                if let Some(tokens) = app.note_view_tokens {
                    context = context.with_view_budget(tokens);
                }
                match request.selection {
                    Some((start, end)) => context.with_selection(start, end),
                    None => context,
                }
            }
            Err(e) => {
                focus_refused = Some(refusal_in_words(&ws, id, &e));
                NoteContext::none()
            }
        },
    };
    let mut chat = match &request.chat_id {
        Some(id) => match Chat::open(&ws, id) {
            Ok(mut chat) => {
                chat.focus(context);
                chat
            }
            Err(e) => return Err(ApiError::new(ErrorKind::NotFound, e.to_string())),
        },
        None => match Chat::create(&ws, context, &request.message) {
            Ok(chat) => chat,
            Err(e) => return Err(ApiError::internal(e.to_string())),
        },
    };
    // The sidebar says under its title that a protected note is not in focus; the chat says it once, at its first
    // turn, not again at every turn.
    if !chat.history().is_empty() {
        focus_refused = None;
    }
    let turn_id = format!("{}:{}", chat.id(), chat.next_turn());
    let cancel = CancellationToken::new();
    let interrupt = CancellationToken::new();
    let (approvals, gone) = app.turns.begin(&turn_id, &cancel, &interrupt);
    let (events, received) = tokio::sync::mpsc::unbounded_channel::<AgentEvent>();
    let (finished, outcome) = oneshot::channel::<TurnDone>();
    let runner = app.clone();
    let started = TurnStarted {
        turn_id: turn_id.clone(),
        chat_id: chat.id().to_owned(),
        focus_refused,
    };
    tokio::spawn(async move {
        let approver = Arc::new(AskTheBrowser { approvals });
        let options = TurnOptions {
            events: Some(events),
            cancel,
            interrupt,
            prices,
            max_turn_tokens: runner.max_turn_tokens,
            policy: quire_agent::ToolPolicy {
                plugins_off: request.plugins_off.iter().cloned().collect(),
                ..quire_agent::ToolPolicy::default()
            },
            asker: Some(approver.clone() as Arc<dyn Asker>),
            ..TurnOptions::new(model.as_ref(), &runner.tools, &*approver)
        };
        // The chat stores the turn; a cancelled turn's writes are reverted and its edits are not offered.
        let turn = chat.send(&request.message, options).await;
        runner.turns.end(&turn_id);
        let outcome = turn.outcome;
        let _ = finished.send(TurnDone {
            reply: outcome.reply,
            edits: outcome.edits,
            usage: outcome.usage,
            cost: turn.cost,
            chat_usage: turn.totals,
            steps: outcome.steps,
            change_set_id: outcome.change_set_id,
            turn_actor: turn.actor,
            error: turn.error.map(|e| e.to_string()),
            summarised: turn.summarised,
        });
    });
    // A comment every second while the model thinks: writing it is how a closed tab is noticed (and the turn
    // stopped) even when the turn has nothing to say for a while.
    Ok(Sse::new(async_stream(app.clone(), started, received, outcome, gone))
        .keep_alive(axum::response::sse::KeepAlive::new().interval(std::time::Duration::from_secs(1)))
        .into_response())
}

/// `started`, then every agent event as it happens, then `done` with the outcome.
fn async_stream(
    app: Arc<WebApp>,
    started: TurnStarted,
    events: tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
    outcome: oneshot::Receiver<TurnDone>,
    gone: StopWhenGone,
) -> impl futures::Stream<Item = Result<Event, Infallible>> {
    enum Stage {
        Started(TurnStarted),
        Events,
        Done,
    }
    futures::stream::unfold(
        (Stage::Started(started), events, Some(outcome), gone),
        move |(stage, mut events, mut outcome, gone)| {
            let app = app.clone();
            async move {
                match stage {
                    Stage::Started(value) => {
                        Some((sse_event("started", &value), (Stage::Events, events, outcome, gone)))
                    }
                    Stage::Events => match events.recv().await {
                        Some(mut event) => {
                            crate::plugins::serve_views(&app, &mut event);
                            Some((sse_event("agent", &event), (Stage::Events, events, outcome, gone)))
                        }
                        None => {
                            let done = match outcome.take() {
                                Some(receiver) => receiver.await.ok(),
                                None => None,
                            };
                            Some((sse_event("done", &done), (Stage::Done, events, outcome, gone)))
                        }
                    },
                    Stage::Done => None,
                }
            }
        },
    )
}

/// An answer to an approval card.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    call_id: String,
    allow: bool,
}

pub(crate) async fn approve(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(answer): Json<Answer>,
) -> Result<Json<Answered>, ApiError> {
    let waiting = {
        let running = app.turns.running.lock().unwrap_or_else(|e| e.into_inner());
        running.get(&id).and_then(|turn| {
            turn.approvals
                .approvals
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&answer.call_id)
        })
    };
    let sender = waiting
        .ok_or_else(|| ApiError::new(ErrorKind::NotFound, "No call of a running turn waits for this answer."))?;
    let _ = sender.send(answer.allow);
    Ok(Json(Answered { answered: true }))
}

/// An answer to a plugin's question: the form's values (`accept`), or `decline` or `cancel`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QuestionAnswer {
    question_id: String,
    action: AnswerAction,
    /// The form's values, with `accept`.
    #[serde(default)]
    content: Option<Value>,
}

/// What the person did with a question.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AnswerAction {
    Accept,
    Decline,
    Cancel,
}

/// `POST /api/turns/{id}/answer`: the person's answer to a plugin's question, handed to the waiting call.
pub(crate) async fn answer(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(answer): Json<QuestionAnswer>,
) -> Result<Json<Answered>, ApiError> {
    let elicited = match (answer.action, answer.content) {
        (AnswerAction::Accept, Some(Value::Object(values))) => Elicited::Accepted(Value::Object(values)),
        (AnswerAction::Accept, _) => {
            return Err(ApiError::new(
                ErrorKind::Invalid,
                "An accepted question needs its form's values, an object, as content.",
            ));
        }
        (AnswerAction::Decline, _) => Elicited::Declined,
        (AnswerAction::Cancel, _) => Elicited::Cancelled,
    };
    let waiting = {
        let running = app.turns.running.lock().unwrap_or_else(|e| e.into_inner());
        running.get(&id).and_then(|turn| {
            turn.approvals
                .questions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&answer.question_id)
        })
    };
    let sender = waiting.ok_or_else(|| {
        ApiError::new(
            ErrorKind::NotFound,
            "No call of a running turn waits for an answer to this question.",
        )
    })?;
    let _ = sender.send(elicited);
    Ok(Json(Answered { answered: true }))
}

/// The answer to an approval card reached the waiting call.
#[derive(Debug, Serialize)]
pub(crate) struct Answered {
    answered: bool,
}

/// The turn was told to stop.
#[derive(Debug, Serialize)]
pub(crate) struct Cancelled {
    cancelled: bool,
}

pub(crate) async fn cancel(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
) -> Result<Json<Cancelled>, ApiError> {
    let running = app.turns.running.lock().unwrap_or_else(|e| e.into_inner());
    let turn = running
        .get(&id)
        .ok_or_else(|| ApiError::new(ErrorKind::NotFound, "No such turn is running."))?;
    turn.cancel.cancel();
    refuse_waiting(&turn.approvals);
    Ok(Json(Cancelled { cancelled: true }))
}

/// The edits the user accepted, with the editor's text they apply to.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AcceptBody {
    base: String,
    edits: Vec<Edit>,
    /// The `turn_actor` of the turn's outcome, so the save joins the turn's change set.
    turn_actor: Option<Actor>,
}

pub(crate) async fn accept(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(body): Json<AcceptBody>,
) -> Result<Json<Accepted>, ApiError> {
    let ws = crate::access::workspace(&app)?;
    let accepted = tokio::task::spawn_blocking(move || {
        accept_edits(
            &ws,
            AcceptRequest {
                note_id: &id,
                base: &body.base,
                edits: &body.edits,
                turn: body.turn_actor.as_ref(),
            },
        )
    })
    .await??;
    // Stale edits are a conflict (409), a protected note a refusal (403), anything else a request to change (400).
    Ok(Json(accepted))
}

/// Why the open note is not in focus, in words and by its title (core's message names the note by its id too).
pub(crate) fn refusal_in_words(workspace: &quire_core::Workspace, id: &str, error: &impl std::fmt::Display) -> String {
    match workspace.read(&Actor::User, |r| r.note_summary(id)) {
        Ok(note) if note.is_protected => format!(
            "\u{201c}{}\u{201d} is protected, so the assistant does not see it. To ask about it, unprotect it with the \
             Unprotect button beside its title.",
            note.title
        ),
        Ok(note) if note.deleted.is_some() => format!(
            "\u{201c}{}\u{201d} is in the trash, so the assistant does not see it. Restore it to ask about it.",
            note.title
        ),
        _ => error.to_string(),
    }
}
