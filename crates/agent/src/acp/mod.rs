//! quire as an ACP client: a chat that runs on an external agent (Codex, Claude Code, Gemini CLI, any program that
//! speaks the Agent Client Protocol over its standard input and output) instead of a model.
//!
//! The agent is started as a child process; quire sends `initialize` (offering no file system and no terminal unless
//! the person turned them on for that agent), then `session/new` with quire's own MCP server attached (the caller
//! says how to start it: `quire mcp` limited to the agent's notebooks, its writes staged for review), then one
//! `session/prompt` per message. What the agent streams back (`session/update`: its message, its plan, its tool
//! calls) becomes the turn's [`AgentEvent`]s, so the sidebar and `quire chat` show it as they show a model's turn;
//! its permission requests go to the [`Approver`] as approval cards; Cancel sends `session/cancel`, and an agent that
//! does not stop within a few seconds is ended. Requests quire does not serve (the file system or a terminal not
//! offered, anything unknown) are answered with an error, never left waiting.
//!
//! The messages are JSON-RPC 2.0, one per line. Only the client's side of the protocol that quire uses is written
//! here, with serde values for what it passes through unread: the official SDKs are for building agents, and their
//! Rust one would bring its schema's macro crates for five messages.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalRequest, Approver};
use crate::event::AgentEvent;

mod access;

pub use access::AgentAccess;

/// The ACP protocol version quire speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// How long the agent may take to start a session (spawn, `initialize`, `session/new`: an npm package's first start
/// included).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long an agent told to cancel may take to stop before it is ended.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// How long an agent whose input was closed may take to exit before it is killed.
const CLOSE_GRACE: Duration = Duration::from_secs(3);

/// The most of the agent's standard error kept to say why it failed.
const STDERR_TAIL: usize = 4_000;

/// An external agent as quire starts it (quire-host makes it from an `[[agents]]` entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpAgent {
    /// Its name in quire.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its whole environment: nothing of quire's own is passed on but what this holds.
    pub env: HashMap<String, String>,
    /// What it may reach besides quire's notes (nothing by default).
    pub access: AgentAccess,
}

/// How the agent starts quire's MCP server for its session.
#[derive(Debug, Clone)]
pub struct McpAttach {
    /// The server's name in the agent's session.
    pub name: String,
    /// The program (quire itself).
    pub command: PathBuf,
    /// Its arguments (`--workspace W mcp --client-name ... --notebook ... --review`).
    pub args: Vec<String>,
    /// What it needs of quire's environment to find quire's configuration (the agent's own is not quire's).
    pub env: Vec<(String, String)>,
}

/// What can go wrong with an external agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AcpError {
    /// The program could not be started.
    #[error("cannot start the agent {name} ({command}): {source}")]
    Spawn {
        /// The agent.
        name: String,
        /// Its program.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The agent ended, or closed its output.
    #[error("the agent {name} stopped{}", tail(.stderr))]
    Exited {
        /// The agent.
        name: String,
        /// The end of what it wrote on its standard error.
        stderr: String,
    },
    /// The agent answered a request with an error.
    #[error("the agent {name} refused {method}: {message}")]
    Refused {
        /// The agent.
        name: String,
        /// The request.
        method: String,
        /// Its words.
        message: String,
    },
    /// The agent speaks another version of the protocol, or answered out of it.
    #[error("the agent {name} does not speak ACP as quire does: {message}")]
    Protocol {
        /// The agent.
        name: String,
        /// What was wrong.
        message: String,
    },
    /// The agent did not start its session in time.
    #[error("the agent {name} did not start a session within {} seconds", START_TIMEOUT.as_secs())]
    Timeout {
        /// The agent.
        name: String,
    },
}

fn tail(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; it said: {stderr}")
    }
}

/// What a prompt turn ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpTurn {
    /// The agent's stop reason (`end_turn`, `max_tokens`, `refusal`, `cancelled`, ...).
    pub stop_reason: String,
    /// Its whole message, as streamed.
    pub text: String,
}

/// A session with an external agent: the child process and its session id.
pub struct AcpSession {
    name: String,
    /// The file system and terminals it was given, if any.
    served: Arc<access::Served>,
    child: tokio::process::Child,
    outbox: mpsc::UnboundedSender<String>,
    inbox: mpsc::UnboundedReceiver<Value>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
    session_id: String,
    /// The agent's name and version, as it introduced itself.
    pub agent_info: Option<String>,
}

impl std::fmt::Debug for AcpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpSession")
            .field("name", &self.name)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl AcpSession {
    /// Starts `agent` and a session in `cwd` with quire's MCP server attached as `attach` says.
    pub async fn start(agent: &AcpAgent, attach: &McpAttach, cwd: &Path) -> Result<AcpSession, AcpError> {
        let mut command = tokio::process::Command::new(&agent.command);
        // A process group of its own: a Ctrl-C in the terminal reaches quire, which cancels the turn as ACP says,
        // rather than killing the agent mid-turn. quire ends the group when it ends (`end_all`).
        #[cfg(unix)]
        command.process_group(0);
        command
            .args(&agent.args)
            .env_clear()
            .envs(&agent.env)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|source| AcpError::Spawn {
            name: agent.name.clone(),
            command: agent.command.clone(),
            source,
        })?;
        if let Some(pid) = child.id() {
            running().insert(pid);
        }
        let (outbox, mut lines) = mpsc::unbounded_channel::<String>();
        let (to_inbox, inbox) = mpsc::unbounded_channel::<Value>();
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut stdin) = child.stdin.take() {
            tokio::spawn(async move {
                while let Some(line) = lines.recv().await {
                    if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                        break;
                    }
                }
            });
        }
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(async move {
                let mut lines = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    // A line that is not JSON (a stray log) is not a message: skipped.
                    if let Ok(message) = serde_json::from_str::<Value>(&line)
                        && to_inbox.send(message).is_err()
                    {
                        break;
                    }
                }
            });
        }
        if let Some(mut err) = child.stderr.take() {
            let kept = stderr.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 1024];
                while let Ok(n) = err.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    let mut kept = kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    kept.push_str(&String::from_utf8_lossy(&buffer[..n]));
                    if kept.len() > STDERR_TAIL * 2 {
                        let cut = kept.len() - STDERR_TAIL;
                        let cut = (cut..kept.len()).find(|&i| kept.is_char_boundary(i)).unwrap_or(cut);
                        kept.drain(..cut);
                    }
                }
            });
        }
        let served = access::Served::new(
            agent.access.clone(),
            cwd.to_path_buf(),
            agent.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        );
        let mut session = AcpSession {
            name: agent.name.clone(),
            served: Arc::new(served),
            child,
            outbox,
            inbox,
            stderr,
            next_id: 0,
            session_id: String::new(),
            agent_info: None,
        };
        let name = agent.name.clone();
        tokio::time::timeout(START_TIMEOUT, session.open(attach, cwd))
            .await
            .map_err(|_| AcpError::Timeout { name })??;
        Ok(session)
    }

    async fn open(&mut self, attach: &McpAttach, cwd: &Path) -> Result<(), AcpError> {
        let init = self
            .call(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "clientCapabilities": self.served.access().capabilities(),
                    "clientInfo": { "name": "quire", "title": "quire", "version": env!("CARGO_PKG_VERSION") },
                }),
            )
            .await?;
        if init["protocolVersion"].as_u64() != Some(PROTOCOL_VERSION) {
            return Err(self.protocol(format!(
                "it answered protocol version {}, quire speaks {PROTOCOL_VERSION}",
                init["protocolVersion"]
            )));
        }
        self.agent_info = init["agentInfo"]["name"]
            .as_str()
            .map(|name| match init["agentInfo"]["version"].as_str() {
                Some(version) => format!("{name} {version}"),
                None => name.to_owned(),
            });
        let session = self
            .call(
                "session/new",
                json!({
                    "cwd": cwd,
                    "mcpServers": [{
                        "name": attach.name,
                        "command": attach.command,
                        "args": attach.args,
                        "env": attach.env.iter().map(|(name, value)| json!({ "name": name, "value": value })).collect::<Vec<_>>(),
                    }],
                }),
            )
            .await?;
        self.session_id = session["sessionId"]
            .as_str()
            .ok_or_else(|| self.protocol("its session/new answer has no sessionId".into()))?
            .to_owned();
        Ok(())
    }

    fn protocol(&self, message: String) -> AcpError {
        AcpError::Protocol {
            name: self.name.clone(),
            message,
        }
    }

    fn exited(&self) -> AcpError {
        AcpError::Exited {
            name: self.name.clone(),
            stderr: self
                .stderr
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        }
    }

    fn send(&self, message: &Value) -> Result<(), AcpError> {
        let mut line = message.to_string();
        line.push('\n');
        self.outbox.send(line).map_err(|_| self.exited())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<u64, AcpError> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        Ok(id)
    }

    /// A request whose answer is awaited with no turn running: the agent's own requests meanwhile are refused.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, AcpError> {
        let id = self.request(method, params)?;
        loop {
            let message = self.inbox.recv().await.ok_or_else(|| self.exited())?;
            if let Some(answer) = self.answer_to(id, method, &message) {
                return answer;
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                self.refuse(&message)?;
            }
        }
    }

    /// The result of request `id`, if `message` answers it.
    fn answer_to(&self, id: u64, method: &str, message: &Value) -> Option<Result<Value, AcpError>> {
        if message.get("method").is_some() || message["id"].as_u64() != Some(id) {
            return None;
        }
        Some(match message.get("error") {
            Some(error) => Err(AcpError::Refused {
                name: self.name.clone(),
                method: method.to_owned(),
                message: error["message"].as_str().unwrap_or("no reason given").to_owned(),
            }),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        })
    }

    /// Answers a file-system or terminal request the agent was given, without holding up the turn (a terminal's
    /// `wait_for_exit` may take long): the answer is sent when it is ready.
    fn serve(&self, request: &Value) {
        let method = request["method"].as_str().unwrap_or_default();
        let answer = self.served.answer(method, &request["params"]);
        let (outbox, id) = (self.outbox.clone(), request["id"].clone());
        tokio::spawn(async move {
            let reply = match answer.await {
                Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                Err(why) => json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32603, "message": why.0 } }),
            };
            let _ = outbox.send(format!("{reply}\n"));
        });
    }

    /// Answers an agent's request quire does not serve.
    fn refuse(&self, request: &Value) -> Result<(), AcpError> {
        let method = request["method"].as_str().unwrap_or("");
        let message = if method.starts_with("fs/") || method.starts_with("terminal/") {
            format!(
                "quire offers this agent no {method}: its notes are reached through the quire MCP server (a folder and \
                 a terminal are given with `quire agent add NAME --files DIR --terminal`)"
            )
        } else {
            format!("quire does not serve {method}")
        };
        self.send(&json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": { "code": -32601, "message": message },
        }))
    }

    /// Sends `text` and runs the agent's turn to its end: its updates become `events`, its permission requests go to
    /// `approver`; `cancel` stops it (the agent is told, and ended if it does not stop).
    pub async fn prompt(
        &mut self,
        text: &str,
        events: &mut (dyn FnMut(AgentEvent) + Send),
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<AcpTurn, AcpError> {
        let id = self.request(
            "session/prompt",
            json!({ "sessionId": self.session_id, "prompt": [{ "type": "text", "text": text }] }),
        )?;
        let mut said = String::new();
        let mut tools: HashMap<String, ToolSeen> = HashMap::new();
        let mut cancelled_at: Option<tokio::time::Instant> = None;
        loop {
            let deadline = cancelled_at.map(|at| at + CANCEL_GRACE);
            let message = tokio::select! {
                message = self.inbox.recv() => message.ok_or_else(|| self.exited())?,
                () = cancel.cancelled(), if cancelled_at.is_none() => {
                    self.send(&json!({ "jsonrpc": "2.0", "method": "session/cancel", "params": { "sessionId": self.session_id } }))?;
                    cancelled_at = Some(tokio::time::Instant::now());
                    continue;
                }
                () = sleep_until(deadline), if deadline.is_some() => {
                    if let Some(pid) = self.child.id() {
                        end_group(pid);
                    }
                    return Ok(AcpTurn { stop_reason: "cancelled".into(), text: said });
                }
            };
            if let Some(answer) = self.answer_to(id, "session/prompt", &message) {
                let result = answer?;
                for (call_id, seen) in tools.drain() {
                    if !seen.finished {
                        events(finished(call_id, seen.name, false, Value::Null));
                    }
                }
                let stop_reason = result["stopReason"].as_str().unwrap_or("end_turn").to_owned();
                return Ok(AcpTurn {
                    stop_reason,
                    text: said,
                });
            }
            match message["method"].as_str() {
                Some("session/update") => {
                    update(&message["params"]["update"], &mut said, &mut tools, events);
                }
                Some("session/request_permission") if message.get("id").is_some() => {
                    let outcome = if cancelled_at.is_some() {
                        json!({ "outcome": "cancelled" })
                    } else {
                        permission(&message["params"], approver, events).await
                    };
                    self.send(&json!({ "jsonrpc": "2.0", "id": message["id"], "result": { "outcome": outcome } }))?;
                }
                Some(method) if message.get("id").is_some() && self.served.access().allows(method) => {
                    self.serve(&message);
                }
                Some(_) if message.get("id").is_some() => self.refuse(&message)?,
                _ => {}
            }
        }
    }

    /// Ends the agent: its standard input is closed, which tells it to end its sessions and exit (and the MCP server
    /// it started for quire then ends too, writing what it recorded, the ledger's last reads); one that has not
    /// exited within three seconds is killed, and what is left of its process group a second later.
    pub async fn close(mut self) {
        let pid = self.child.id();
        // The only sender: dropped, the writer task ends and the agent reads the end of its input.
        self.outbox = mpsc::unbounded_channel().0;
        if tokio::time::timeout(CLOSE_GRACE, self.child.wait()).await.is_err() {
            let _ = self.child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        }
        if let Some(pid) = pid {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
            while group_alive(pid) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            end_group(pid);
            running().remove(&pid);
        }
    }
}

impl Drop for AcpSession {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            end_group(pid);
            running().remove(&pid);
        }
    }
}

/// The agents this process started and has not ended: their process groups, by leader.
fn running() -> std::sync::MutexGuard<'static, std::collections::HashSet<u32>> {
    static RUNNING: std::sync::OnceLock<Mutex<std::collections::HashSet<u32>>> = std::sync::OnceLock::new();
    RUNNING
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether a process of the group whose leader was `pid` still runs.
fn group_alive(pid: u32) -> bool {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        return rustix::process::test_kill_process_group(pid).is_ok();
    }
    false
}

/// Kills the process group of the agent whose leader is `pid` (what it started too: quire's MCP server).
fn end_group(pid: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Ends every agent this process started: for a process about to exit without dropping its sessions (a second
/// Ctrl-C), so that none is left running in its own process group.
pub fn end_all() {
    let pids: Vec<u32> = running().drain().collect();
    for pid in pids {
        end_group(pid);
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A tool call the agent announced.
struct ToolSeen {
    name: String,
    finished: bool,
}

fn finished(call_id: String, name: String, is_error: bool, output: Value) -> AgentEvent {
    AgentEvent::ToolFinished {
        call_id,
        name,
        is_error,
        output,
        render: None,
        content: Vec::new(),
    }
}

/// The text of an ACP content block (text only; an image or a resource is named).
fn content_text(content: &Value) -> String {
    match content["type"].as_str() {
        Some("text") => content["text"].as_str().unwrap_or("").to_owned(),
        Some("resource_link") => format!("[{}]", content["name"].as_str().unwrap_or("a resource")),
        Some(other) => format!("[{other}]"),
        None => String::new(),
    }
}

/// A tool call's output as the card shows it: its raw output, else the text of its content.
fn tool_output(update: &Value) -> Value {
    if let Some(raw) = update.get("rawOutput").filter(|v| !v.is_null()) {
        return raw.clone();
    }
    let texts: Vec<String> = update["content"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|item| item["type"] == "content")
                .map(|item| content_text(&item["content"]))
                .collect()
        })
        .unwrap_or_default();
    if texts.is_empty() {
        Value::Null
    } else {
        Value::String(texts.join("\n"))
    }
}

/// One `session/update`, as the turn's events.
fn update(
    update: &Value,
    said: &mut String,
    tools: &mut HashMap<String, ToolSeen>,
    events: &mut (dyn FnMut(AgentEvent) + Send),
) {
    match update["sessionUpdate"].as_str() {
        Some("agent_message_chunk") => {
            let text = content_text(&update["content"]);
            if !text.is_empty() {
                said.push_str(&text);
                events(AgentEvent::TextDelta { text });
            }
        }
        Some("plan") => {
            let entries = update["entries"]
                .as_array()
                .map(|entries| {
                    entries
                        .iter()
                        .map(|e| crate::event::PlanStep {
                            text: e["content"].as_str().unwrap_or("").to_owned(),
                            status: e["status"].as_str().unwrap_or("pending").to_owned(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            events(AgentEvent::Plan { steps: entries });
        }
        Some("tool_call") => {
            let call_id = update["toolCallId"].as_str().unwrap_or("").to_owned();
            let name = update["kind"].as_str().unwrap_or("other").to_owned();
            let title = update["title"].as_str().unwrap_or("A tool").to_owned();
            let arguments = update.get("rawInput").map(Value::to_string).unwrap_or_default();
            events(AgentEvent::ToolStarted {
                call_id: call_id.clone(),
                name: name.clone(),
                title,
                arguments,
            });
            let done = status_done(update);
            tools.insert(
                call_id.clone(),
                ToolSeen {
                    name: name.clone(),
                    finished: done.is_some(),
                },
            );
            if let Some(is_error) = done {
                events(finished(call_id, name, is_error, tool_output(update)));
            }
        }
        Some("tool_call_update") => {
            let call_id = update["toolCallId"].as_str().unwrap_or("").to_owned();
            let Some(is_error) = status_done(update) else { return };
            let seen = tools.entry(call_id.clone()).or_insert_with(|| ToolSeen {
                name: update["kind"].as_str().unwrap_or("other").to_owned(),
                finished: false,
            });
            if !seen.finished {
                seen.finished = true;
                events(finished(call_id, seen.name.clone(), is_error, tool_output(update)));
            }
        }
        // Thoughts, the agent's commands, modes, usage: not shown.
        _ => {}
    }
}

/// `Some(failed)` when the update says the call ended.
fn status_done(update: &Value) -> Option<bool> {
    match update["status"].as_str() {
        Some("completed") => Some(false),
        Some("failed") => Some(true),
        _ => None,
    }
}

/// The answer to a permission request: the approver's decision, as the option of its kind the agent offered.
async fn permission(params: &Value, approver: &dyn Approver, events: &mut (dyn FnMut(AgentEvent) + Send)) -> Value {
    let call = &params["toolCall"];
    let request = ApprovalRequest {
        call_id: call["toolCallId"].as_str().unwrap_or("").to_owned(),
        tool: call["kind"].as_str().unwrap_or("other").to_owned(),
        title: call["title"].as_str().unwrap_or("A tool call").to_owned(),
        arguments: call.get("rawInput").cloned().unwrap_or(Value::Null),
    };
    events(AgentEvent::ApprovalNeeded {
        request: request.clone(),
    });
    let allowed = approver.approve(&request).await;
    let options = params["options"].as_array().cloned().unwrap_or_default();
    let pick = |kinds: &[&str]| {
        kinds.iter().find_map(|kind| {
            options
                .iter()
                .find(|o| o["kind"] == *kind)
                .and_then(|o| o["optionId"].as_str())
        })
    };
    let chosen = if allowed {
        pick(&["allow_once", "allow_always"])
    } else {
        pick(&["reject_once", "reject_always"])
    };
    match chosen {
        Some(option) => json!({ "outcome": "selected", "optionId": option }),
        None => json!({ "outcome": "cancelled" }),
    }
}
