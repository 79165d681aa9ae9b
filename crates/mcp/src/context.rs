//! The call context quire's tools and prompts get over MCP: progress and log notifications, and requests to the
//! client. In a session (`2025-11-25`) a request goes to the client at once; in the stateless era (`2026-07-28`)
//! the call ends with an `InputRequiredResult` and is run again with the client's answers (multi round-trip
//! requests), the answers of earlier rounds travelling in a sealed `requestState`.
#![expect(
    deprecated,
    reason = "sampling, roots and logging are deprecated in 2026-07-28 and still served to 2025-11-25"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quire_tools::{
    BoxFuture, CallContext, ClientError, ClientKind, ClientReply, ClientRequest, Elicited, LogLevel, Progress, Root,
};
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How long a sealed `requestState` stays valid: a person answering a form may take a while.
const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// The prefix of the keys of the server's own questions to the client.
pub(crate) const SERVER_KEY_PREFIX: &str = "quire_";

/// The name of the logger in `notifications/message`.
const LOGGER: &str = "quire";

/// Seals and opens the `requestState` of multi round-trip calls with a key made when the server starts, so a client
/// can neither read nor change what earlier rounds answered, nor reuse a state for another call.
pub(crate) struct StateSeal(RequestStateCodec);

impl StateSeal {
    pub(crate) fn new() -> StateSeal {
        // Without the system's randomness a fixed key would let a client forge states: refuse to serve instead.
        #[expect(
            clippy::expect_used,
            reason = "no server should start without randomness for its keys"
        )]
        let key = quire_loopback::new_key().expect("the system's random source is unavailable");
        StateSeal(RequestStateCodec::new(key.to_vec()))
    }
}

/// What a sealed state holds: the answers so far and the keys asked in the last round.
#[derive(Debug, Default, Serialize, Deserialize)]
struct RoundState {
    answers: BTreeMap<String, Value>,
    asked: Vec<String>,
}

/// Which request a state belongs to: the method, the tool or prompt name and its arguments.
pub(crate) fn call_binding(method: &str, name: &str, args: &Value) -> Vec<u8> {
    format!("{method}\u{0}{name}\u{0}{args}").into_bytes()
}

/// One call's context.
pub(crate) struct McpCall {
    peer: Peer<RoleServer>,
    capabilities: ClientCapabilities,
    /// The queue of this call's notifications, and the task that sends them in order; `flush` closes both.
    notices: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Notice>>>,
    sender_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    progress: bool,
    log_level: Option<LogLevel>,
    mode: Mode,
}

enum Mode {
    /// A `2025-11-25` session: requests go to the client now.
    Session,
    /// The stateless era: answers come with the retried request.
    Rounds(Mutex<Rounds>),
}

#[derive(Default)]
struct Rounds {
    answers: BTreeMap<String, Value>,
    pending: InputRequests,
    unsupported: Option<ClientKind>,
}

enum Notice {
    Progress(Progress),
    Log(LogLevel, String),
}

/// Why a call that asked the client something did not complete.
pub(crate) enum Unfinished {
    /// The client must answer these first (stateless era).
    InputRequired(InputRequiredResult),
    /// The call needs a capability the client did not declare (stateless era: -32021).
    MissingCapability(ClientKind),
}

impl McpCall {
    /// The context of the request in `ctx`. `binding` names the call (see [`call_binding`]); `input` and `state`
    /// are the retried request's `inputResponses` and `requestState`. A state that does not open, or belongs to
    /// another call, is refused with invalid params.
    pub(crate) fn new(
        ctx: &RequestContext<RoleServer>,
        session_log_level: Option<LogLevel>,
        seal: &StateSeal,
        binding: &[u8],
        input: Option<InputResponses>,
        state: Option<&str>,
    ) -> Result<Arc<McpCall>, ErrorData> {
        let stateless = is_stateless(ctx);
        let mode = if stateless {
            let mut rounds = Rounds::default();
            if let Some(state) = state {
                let opened: RoundState = seal.0.open_json_with(state, binding).map_err(|_| {
                    ErrorData::invalid_params(
                        "requestState is not valid for this call: it was changed, has expired, or belongs to \
                             another call. Call again without it.",
                        None,
                    )
                })?;
                rounds.answers = opened.answers;
                for (key, value) in input.unwrap_or_default() {
                    if opened.asked.contains(&key) {
                        rounds.answers.insert(key, value);
                    }
                }
            } else {
                // Without a state, answers are taken as they come (an ephemeral round trip), except answers to the
                // server's own questions (`quire_*`, such as the confirmation of a destructive call): those count
                // only when a sealed state shows the server asked them for this very call.
                rounds.answers = input
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|(key, _)| !key.starts_with(SERVER_KEY_PREFIX))
                    .collect();
            }
            Mode::Rounds(Mutex::new(rounds))
        } else {
            Mode::Session
        };
        // 2026-07-28 logs only when the request asks for a level; a session uses `logging/setLevel`.
        let log_level = if stateless {
            ctx.meta.log_level().map(from_mcp_level)
        } else {
            ctx.meta.log_level().map(from_mcp_level).or(session_log_level)
        };
        let progress_token = ctx.meta.get_progress_token();
        let notices = (progress_token.is_some() || log_level.is_some()).then(|| {
            let (sender, mut notices) = tokio::sync::mpsc::unbounded_channel::<Notice>();
            let peer = ctx.peer.clone();
            let token = progress_token.clone();
            // One task per call keeps its notifications in order.
            let task = tokio::spawn(async move {
                while let Some(notice) = notices.recv().await {
                    let sent = match notice {
                        Notice::Progress(report) => {
                            let Some(token) = token.clone() else { continue };
                            let mut param = ProgressNotificationParam::new(token, report.progress);
                            param.total = report.total;
                            param.message = report.message;
                            peer.notify_progress(param).await
                        }
                        Notice::Log(level, message) => peer.notify_logging_message(log_param(level, &message)).await,
                    };
                    if sent.is_err() {
                        break;
                    }
                }
            });
            (sender, task)
        });
        let (notices, sender_task) = notices.unzip();
        Ok(Arc::new(McpCall {
            peer: ctx.peer.clone(),
            capabilities: ctx.client_capabilities().unwrap_or_default(),
            notices: Mutex::new(notices),
            sender_task: Mutex::new(sender_task),
            progress: progress_token.is_some(),
            log_level,
            mode,
        }))
    }

    /// After the handler returned: whether it stopped for the client, and then what to answer instead.
    pub(crate) fn unfinished(&self, seal: &StateSeal, binding: &[u8]) -> Option<Unfinished> {
        let Mode::Rounds(rounds) = &self.mode else {
            return None;
        };
        let rounds = rounds.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kind) = rounds.unsupported {
            return Some(Unfinished::MissingCapability(kind));
        }
        if rounds.pending.is_empty() {
            return None;
        }
        let state = RoundState {
            answers: rounds.answers.clone(),
            asked: rounds.pending.keys().cloned().collect(),
        };
        let sealed = seal
            .0
            .seal_json_with(&state, &SealOptions::new().associated_data(binding).ttl(STATE_TTL))
            .ok()?;
        Some(Unfinished::InputRequired(InputRequiredResult::new(
            Some(rounds.pending.clone()),
            Some(sealed),
        )))
    }

    /// Logs a message for the client, when it asked for this level.
    pub(crate) fn log_message(&self, level: LogLevel, message: &str) {
        if self.log_level.is_some_and(|threshold| level >= threshold) {
            self.notice(Notice::Log(level, message.to_owned()));
        }
    }

    fn notice(&self, notice: Notice) {
        if let Some(notices) = self.notices.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = notices.send(notice);
        }
    }

    /// Sends what is queued and stops: called before the call's result goes out, so its logs and progress come
    /// first. Later reports (a plugin still running) are dropped.
    pub(crate) async fn flush(&self) {
        self.notices.lock().unwrap_or_else(|e| e.into_inner()).take();
        let task = self.sender_task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }

    async fn ask_now(&self, request: ClientRequest) -> Result<ClientReply, ClientError> {
        let kind = request.kind();
        let failed = |e: rmcp::ServiceError| ClientError::Failed(e.to_string());
        let value = match request {
            ClientRequest::Elicit { message, schema } => {
                let params: ElicitRequestParams =
                    parse(json!({"mode": "form", "message": message, "requestedSchema": schema}))?;
                to_json(self.peer.create_elicitation(params).await.map_err(failed)?)
            }
            ClientRequest::Roots => to_json(self.peer.list_roots().await.map_err(failed)?),
            request @ ClientRequest::Sample { .. } => {
                let params: CreateMessageRequestParams = parse(sample_params(&request))?;
                to_json(self.peer.create_message(params).await.map_err(failed)?)
            }
        };
        reply_from_json(kind, &value)
    }
}

fn is_stateless(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
}

impl CallContext for McpCall {
    fn progress(&self, report: Progress) {
        if self.progress {
            self.notice(Notice::Progress(report));
        }
    }

    fn log(&self, level: LogLevel, message: &str) {
        self.log_message(level, message);
    }

    fn supports(&self, kind: ClientKind) -> bool {
        let caps = &self.capabilities;
        match kind {
            ClientKind::Elicitation => caps.elicitation.is_some(),
            ClientKind::Roots => caps.roots.is_some(),
            ClientKind::Sampling => caps.sampling.is_some(),
        }
    }

    fn request_all(
        &self,
        requests: Vec<(String, ClientRequest)>,
    ) -> BoxFuture<'_, Result<Vec<ClientReply>, ClientError>> {
        Box::pin(async move {
            if let Some((_, request)) = requests.iter().find(|(_, r)| !self.supports(r.kind())) {
                let kind = request.kind();
                if let Mode::Rounds(rounds) = &self.mode {
                    rounds.lock().unwrap_or_else(|e| e.into_inner()).unsupported = Some(kind);
                }
                return Err(ClientError::Unsupported(kind));
            }
            match &self.mode {
                Mode::Session => {
                    let mut replies = Vec::with_capacity(requests.len());
                    for (_, request) in requests {
                        replies.push(self.ask_now(request).await?);
                    }
                    Ok(replies)
                }
                Mode::Rounds(rounds) => {
                    let mut rounds = rounds.lock().unwrap_or_else(|e| e.into_inner());
                    let mut replies = Vec::with_capacity(requests.len());
                    for (key, request) in &requests {
                        // An answer that does not parse counts as missing: the request goes out again.
                        match rounds.answers.get(key).map(|v| reply_from_json(request.kind(), v)) {
                            Some(Ok(reply)) => replies.push(reply),
                            _ => {
                                rounds.answers.remove(key);
                                rounds.pending.insert(key.clone(), input_request(request)?);
                            }
                        }
                    }
                    if rounds.pending.is_empty() {
                        Ok(replies)
                    } else {
                        Err(ClientError::InputRequired)
                    }
                }
            }
        })
    }
}

fn parse<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::Failed(format!("the request is not valid: {e}")))
}

fn to_json(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn sample_params(request: &ClientRequest) -> Value {
    let ClientRequest::Sample {
        messages,
        system,
        max_tokens,
    } = request
    else {
        return Value::Null;
    };
    let messages: Vec<Value> = messages
        .iter()
        .map(|m| json!({"role": if m.from_user { "user" } else { "assistant" }, "content": {"type": "text", "text": m.text}}))
        .collect();
    let mut params = json!({"messages": messages, "maxTokens": max_tokens});
    if let Some(system) = system {
        params["systemPrompt"] = json!(system);
    }
    params
}

/// The `inputRequests` entry for a request.
fn input_request(request: &ClientRequest) -> Result<InputRequest, ClientError> {
    let value = match request {
        ClientRequest::Elicit { message, schema } => json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": message, "requestedSchema": schema}
        }),
        ClientRequest::Roots => json!({"method": "roots/list", "params": {}}),
        sample @ ClientRequest::Sample { .. } => {
            json!({"method": "sampling/createMessage", "params": sample_params(sample)})
        }
    };
    parse(value)
}

/// Reads the client's answer (an `ElicitResult`, `ListRootsResult` or `CreateMessageResult` as JSON).
fn reply_from_json(kind: ClientKind, value: &Value) -> Result<ClientReply, ClientError> {
    let malformed = || ClientError::Failed(format!("the client's {} answer is malformed", kind.name()));
    match kind {
        ClientKind::Elicitation => {
            let answer = match value.get("action").and_then(Value::as_str) {
                Some("accept") => Elicited::Accepted(value.get("content").cloned().unwrap_or_else(|| json!({}))),
                Some("decline") => Elicited::Declined,
                Some("cancel") => Elicited::Cancelled,
                _ => return Err(malformed()),
            };
            Ok(ClientReply::Elicited(answer))
        }
        ClientKind::Roots => {
            let roots = value.get("roots").and_then(Value::as_array).ok_or_else(malformed)?;
            let roots = roots
                .iter()
                .map(|r| {
                    Some(Root {
                        uri: r.get("uri")?.as_str()?.to_owned(),
                        name: r.get("name").and_then(Value::as_str).map(str::to_owned),
                    })
                })
                .collect::<Option<Vec<Root>>>()
                .ok_or_else(malformed)?;
            Ok(ClientReply::Roots(roots))
        }
        ClientKind::Sampling => {
            let content = value.get("content").ok_or_else(malformed)?;
            let blocks = content.as_array().cloned().unwrap_or_else(|| vec![content.clone()]);
            let text: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            if text.is_empty() {
                return Err(malformed());
            }
            Ok(ClientReply::Sampled {
                text: text.join("\n"),
                model: value.get("model").and_then(Value::as_str).map(str::to_owned),
            })
        }
    }
}

/// A `notifications/message` from quire's logger.
pub(crate) fn log_param(level: LogLevel, message: &str) -> LoggingMessageNotificationParam {
    let mut param = LoggingMessageNotificationParam::new(to_mcp_level(level), json!(message));
    param.logger = Some(LOGGER.into());
    param
}

pub(crate) fn from_mcp_level(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

fn to_mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// The error for a call that needs a capability the client did not declare.
pub(crate) fn missing_capability(kind: ClientKind) -> ErrorData {
    let capabilities: ClientCapabilities = serde_json::from_value(json!({ kind.name(): {} })).unwrap_or_default();
    ErrorData::missing_required_client_capability(capabilities)
}
