//! One plugin: starting it, calling its tools under the time limit and the cap, and starting it again after a
//! failure, with a pause that doubles with each failure in a row.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quire_tools::{CallContext, ContentItem, Effect, PluginOutput, PluginTool, ToolError};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, NumberOrString,
    ReadResourceRequestParams, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;

use super::relay::Relay;
use super::session::{ListedTool, Session, StderrTail};
use super::spec::PluginSpec;
use super::{PluginStatus, PluginToolStatus, SEPARATOR, START_TIMEOUT};

/// The pause before the first restart; it doubles with each failure in a row, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A call waits this long at most for a pause to end; past it, the call fails at once.
const MAX_WAIT: Duration = Duration::from_secs(5);
/// How long reading a result's `ui://` resource may take.
const UI_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) struct Plugin {
    pub(crate) spec: PluginSpec,
    http: Option<reqwest::Client>,
    /// Held while starting, so that concurrent calls start the plugin once.
    state: tokio::sync::Mutex<State>,
    info: Mutex<Info>,
    stderr: StderrTail,
    /// Set when the plugin is removed or quire stops: it is never started again.
    stopped: std::sync::atomic::AtomicBool,
    /// Signalled when the plugin says its tools changed (`notifications/tools/list_changed`).
    pub(crate) changed: Arc<tokio::sync::Notify>,
    /// The calls in flight, for what the plugin reports while they run.
    relay: Arc<Relay>,
}

#[derive(Default)]
struct State {
    session: Option<Arc<Session>>,
    /// Failures since the last call that went well.
    failures: u32,
    /// No start before this.
    retry_at: Option<Instant>,
}

#[derive(Default)]
struct Info {
    /// Being started (its first start, or again after a failure).
    starting: bool,
    running: bool,
    /// The process of a running stdio plugin.
    pid: Option<u32>,
    error: Option<String>,
    restarts: u32,
    /// The tools of the first listing: the ones registered.
    tools: Vec<ListedTool>,
    /// Tools the registry refused (a name taken, a schema that is not an object), with why.
    refused: Vec<String>,
}

impl Plugin {
    pub(crate) fn new(spec: PluginSpec, http: Option<reqwest::Client>) -> Plugin {
        Plugin {
            spec,
            http,
            state: tokio::sync::Mutex::new(State::default()),
            info: Mutex::new(Info::default()),
            stderr: StderrTail::default(),
            stopped: std::sync::atomic::AtomicBool::new(false),
            changed: Arc::new(tokio::sync::Notify::new()),
            relay: Arc::default(),
        }
    }

    /// Asks the running plugin for its tools again and keeps them (those the registry gets); `None` when it is not
    /// running or did not answer.
    pub(crate) async fn relist(&self) -> Option<Vec<String>> {
        let session = self.state.lock().await.session.clone()?;
        let listed = tokio::time::timeout(START_TIMEOUT, session.client.list_all_tools())
            .await
            .ok()?
            .ok()?;
        let before = self.tool_names();
        let mut info = self.info();
        info.tools = listed.into_iter().map(ListedTool::from).collect();
        info.refused.clear();
        Some(before)
    }

    /// Marks the plugin removed: it is never started again.
    pub(crate) fn mark_stopped(&self) {
        self.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How long until the plugin may be started again after its failures (zero when it may now).
    pub(crate) async fn retry_wait(&self) -> Duration {
        let state = self.state.lock().await;
        state
            .retry_at
            .map_or(Duration::ZERO, |at| at.saturating_duration_since(Instant::now()))
    }

    /// Records a tool the registry refused, for the plugin's status.
    pub(crate) fn refused(&self, problem: String) {
        self.info().refused.push(problem);
    }

    fn info(&self) -> std::sync::MutexGuard<'_, Info> {
        self.info.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the plugin now (the first time) and keeps its listing.
    pub(crate) async fn start_listed(&self) -> Result<(), String> {
        let mut state = self.state.lock().await;
        // A call may have started it meanwhile.
        if state.session.as_ref().is_some_and(|s| !s.is_closed()) {
            return Ok(());
        }
        self.start(&mut state).await.map(|_| ())
    }

    async fn start(&self, state: &mut State) -> Result<Arc<Session>, String> {
        if self.is_stopped() {
            return Err("it was removed".into());
        }
        self.info().starting = true;
        let started = tokio::time::timeout(
            START_TIMEOUT,
            Session::start(&self.spec, &self.stderr, self.http.as_ref(), &self.changed, &self.relay),
        )
        .await
        .unwrap_or_else(|_| Err(not_started_in_time(&self.spec)));
        self.info().starting = false;
        match started {
            Ok(session) => {
                let session = Arc::new(session);
                let mut info = self.info();
                if info.tools.is_empty() {
                    info.tools = session.tools.clone();
                }
                info.running = true;
                info.pid = session.pid();
                state.session = Some(session.clone());
                Ok(session)
            }
            Err(e) => {
                self.failed(state, e.clone());
                Err(e)
            }
        }
    }

    fn failed(&self, state: &mut State, error: String) {
        state.session = None;
        state.failures += 1;
        let pause = FIRST_BACKOFF
            .saturating_mul(1 << (state.failures - 1).min(6))
            .min(MAX_BACKOFF);
        state.retry_at = Some(Instant::now() + pause);
        let mut info = self.info();
        info.running = false;
        info.pid = None;
        let last = self.stderr.lock().unwrap_or_else(|e| e.into_inner()).back().cloned();
        info.error = Some(match last {
            Some(line) => format!("{error} (its last words: {line})"),
            None => error,
        });
        tracing::info!(plugin = %self.spec.name, error = ?info.error, "plugin failed");
    }

    /// The running session, started (again) if need be.
    async fn session(&self) -> Result<Arc<Session>, String> {
        let mut state = self.state.lock().await;
        if let Some(session) = &state.session {
            if !session.is_closed() {
                return Ok(session.clone());
            }
            let session = session.clone();
            let status = exit_status(&session).await;
            session.kill().await;
            self.failed(&mut state, format!("it stopped{status}"));
        }
        if let Some(at) = state.retry_at {
            let wait = at.saturating_duration_since(Instant::now());
            if wait > MAX_WAIT {
                return Err(format!(
                    "it failed {} times in a row; quire tries it again at a call in {} s or later",
                    state.failures,
                    wait.as_secs() + 1
                ));
            }
            // The pause is waited without the lock: a removal or another call is not held up by it.
            drop(state);
            tokio::time::sleep(wait).await;
            state = self.state.lock().await;
            if let Some(session) = &state.session
                && !session.is_closed()
            {
                return Ok(session.clone());
            }
        }
        if self.is_stopped() {
            return Err("it was removed".into());
        }
        let restart = state.failures > 0;
        let session = self.start(&mut state).await?;
        if restart {
            self.info().restarts += 1;
        }
        Ok(session)
    }

    /// Calls the plugin's tool `tool` with `args`; what it reports meanwhile (progress, log messages) goes to
    /// `context`.
    pub(crate) async fn call(
        &self,
        tool: &str,
        ui: Option<&str>,
        args: Value,
        context: Option<Arc<dyn CallContext>>,
    ) -> Result<PluginOutput, ToolError> {
        let name = &self.spec.name;
        let session = self
            .session()
            .await
            .map_err(|e| ToolError::new(format!("The plugin {name} is not available: {e}. Go on without it.")))?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = args.as_object().cloned();

        let timeout = self.spec.timeout;
        let called = async {
            match context {
                Some(context) => call_reporting(&session.client, params, &self.relay, context).await,
                None => session.client.call_tool(params).await,
            }
        };
        match within(timeout, &self.relay, called).await {
            Ok(Ok(result)) => {
                self.went_well().await;
                let mut output = super::result::convert(result, self.spec.max_output, name)?;
                if let Some(uri) = ui {
                    match read_page(&session, name, uri).await {
                        Ok(page) => output.content.push(page),
                        Err(e) => tracing::warn!(plugin = %name, uri, "{}", e.message()),
                    }
                }
                Ok(output)
            }
            // The plugin answered with a protocol error (unknown tool, invalid arguments): it is still well.
            Ok(Err(ServiceError::McpError(e))) => {
                Err(ToolError::new(format!("{name} refused the call: {}", e.message)))
            }
            Ok(Err(_)) if session.oversized.load(std::sync::atomic::Ordering::SeqCst) => {
                session.kill().await;
                let limit = super::session::wire_limit(self.spec.max_output);
                let mut state = self.state.lock().await;
                if state.session.as_ref().is_some_and(|s| Arc::ptr_eq(s, &session)) {
                    self.failed(&mut state, format!("its answer to {tool} was over {} MiB", limit >> 20));
                }
                Err(ToolError::new(format!(
                    "The plugin {name} answered {tool} with more than {} MiB, more than quire reads, so the call has \
                     no result. Ask it for less (a smaller range, a page).",
                    limit >> 20
                )))
            }
            Ok(Err(e)) => {
                let status = exit_status(&session).await;
                session.kill().await;
                let mut state = self.state.lock().await;
                if state.session.as_ref().is_some_and(|s| Arc::ptr_eq(s, &session)) {
                    self.failed(&mut state, format!("it stopped during a call of {tool}{status} ({e})"));
                }
                if self.is_stopped() {
                    return Err(ToolError::new(format!(
                        "The plugin {name} was removed while running {tool}, so the call has no result; whether it \
                         changed anything outside quire is unknown."
                    )));
                }
                Err(ToolError::new(format!(
                    "The plugin {name} stopped while running {tool}{status}, so the call has no result. quire starts \
                     it again; whether the call changed anything outside quire is unknown."
                )))
            }
            Err(_) => {
                session.kill().await;
                let mut state = self.state.lock().await;
                if state.session.as_ref().is_some_and(|s| Arc::ptr_eq(s, &session)) {
                    self.failed(
                        &mut state,
                        format!("a call of {tool} did not finish within {} s", timeout.as_secs_f32()),
                    );
                }
                Err(ToolError::new(format!(
                    "The plugin {name} did not finish {tool} within {} s, so quire stopped it (it starts again at the \
                     next call). Do not call it again with the same arguments.",
                    timeout.as_secs_f32()
                )))
            }
        }
    }

    /// Reads one of its tools' pages (an MCP Apps `ui://` view) for a host that asks for it before or after a call.
    pub(crate) async fn page(&self, uri: &str) -> Result<ContentItem, ToolError> {
        let name = &self.spec.name;
        let session = self
            .session()
            .await
            .map_err(|e| ToolError::new(format!("The plugin {name} is not available: {e}.")))?;
        read_page(&session, name, uri).await
    }

    async fn went_well(&self) {
        let mut state = self.state.lock().await;
        state.failures = 0;
        state.retry_at = None;
        self.info().error = None;
    }

    /// The registry tools of the first listing.
    pub(crate) fn registry_tools(self: &Arc<Plugin>) -> Vec<PluginTool> {
        let tools = self.info().tools.clone();
        tools.iter().map(|t| registry_tool(self, t)).collect()
    }

    /// The registry names of the first listing.
    pub(crate) fn tool_names(&self) -> Vec<String> {
        self.info()
            .tools
            .iter()
            .map(|t| registry_name(&self.spec.name, &t.tool.name))
            .collect()
    }

    pub(crate) fn status(&self) -> PluginStatus {
        let info = self.info();
        let tools = info
            .tools
            .iter()
            .map(|t| {
                let effect = self.effect_of(t);
                PluginToolStatus {
                    name: registry_name(&self.spec.name, &t.tool.name),
                    tool: t.tool.name.to_string(),
                    title: title_of(t),
                    description: t.tool.description.as_deref().unwrap_or_default().to_owned(),
                    effect,
                    needs_approval: effect == Effect::Destructive
                        || (self.spec.ask_before_writes && effect != Effect::ReadOnly),
                    ui: t.ui.clone(),
                }
            })
            .collect();
        PluginStatus {
            name: self.spec.name.clone(),
            state: match (info.starting, info.running, &info.error) {
                (true, _, _) => "starting",
                (false, true, _) => "running",
                (false, false, Some(_)) => "failed",
                (false, false, None) => "stopped",
            },
            error: match (&info.error, info.refused.is_empty()) {
                (Some(error), _) => Some(error.clone()),
                (None, false) => Some(format!("tools not offered: {}", info.refused.join("; "))),
                (None, true) => None,
            },
            stderr: self
                .stderr
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned()
                .collect(),
            tools,
            restarts: info.restarts,
            pid: info.pid.filter(|_| info.running),
            sidebar_only: self.spec.exposure == quire_tools::Exposure::Sidebar,
        }
    }

    /// The effect of one of its tools: the configuration's, else its annotations' (none: mutating).
    fn effect_of(&self, tool: &ListedTool) -> Effect {
        if let Some(effect) = self.spec.effects.get(tool.tool.name.as_ref()) {
            return *effect;
        }
        match &tool.tool.annotations {
            Some(a) if a.read_only_hint == Some(true) => Effect::ReadOnly,
            Some(a) if a.destructive_hint == Some(true) => Effect::Destructive,
            _ => Effect::Mutating,
        }
    }

    pub(crate) async fn stop(&self) {
        self.mark_stopped();
        // The task following its tool list wakes and ends.
        self.changed.notify_one();
        let mut state = self.state.lock().await;
        if let Some(session) = state.session.take() {
            session.kill().await;
        }
        let mut info = self.info();
        info.running = false;
        info.pid = None;
    }
}

/// Reads a `ui://` page from a running plugin, within [`UI_TIMEOUT`].
async fn read_page(session: &Session, plugin: &str, uri: &str) -> Result<ContentItem, ToolError> {
    let read = session
        .client
        .read_resource(ReadResourceRequestParams::new(uri.to_owned()));
    match tokio::time::timeout(UI_TIMEOUT, read).await {
        Ok(Ok(resource)) => super::result::ui_item(uri, resource.contents)
            .ok_or_else(|| ToolError::new(format!("The plugin {plugin} gave no HTML for {uri}."))),
        Ok(Err(e)) => Err(ToolError::new(format!("The plugin {plugin} cannot give {uri}: {e}"))),
        Err(_) => Err(ToolError::new(format!(
            "The plugin {plugin} did not give {uri} within {} s.",
            UI_TIMEOUT.as_secs()
        ))),
    }
}

/// How the process ended, said as part of a sentence (`" (exit status: 3)"`), when it did.
async fn exit_status(session: &Session) -> String {
    for _ in 0..20 {
        if let Some(status) = session.exit_status() {
            return format!(" ({status})");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    String::new()
}

fn title_of(tool: &ListedTool) -> String {
    tool.tool
        .annotations
        .as_ref()
        .and_then(|a| a.title.clone())
        .or_else(|| tool.tool.title.clone())
        .unwrap_or_else(|| tool.tool.name.to_string())
}

/// `PLUGIN__tool`, with what providers refuse in a tool name replaced by `_`, at most 64 characters.
pub(crate) fn registry_name(plugin: &str, tool: &str) -> String {
    let tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{plugin}{SEPARATOR}{tool}");
    name.truncate(64);
    name
}

/// `called`, unless it runs past `limit`; the time a question of the plugin waits for the person is not counted (the
/// limit starts again when it is answered). `Err(())` when the limit ran out.
async fn within<F: std::future::Future>(limit: Duration, relay: &Relay, called: F) -> Result<F::Output, ()> {
    tokio::pin!(called);
    let mut deadline = tokio::time::Instant::now() + limit;
    loop {
        tokio::select! {
            output = &mut called => return Ok(output),
            () = tokio::time::sleep_until(deadline) => {
                if !relay.is_asking() {
                    return Err(());
                }
                while relay.is_asking() {
                    tokio::select! {
                        output = &mut called => return Ok(output),
                        () = tokio::time::sleep(Duration::from_millis(200)) => {}
                    }
                    deadline = tokio::time::Instant::now() + limit;
                }
            }
        }
    }
}

/// The registry's tool for one listed tool: its calls go to the plugin, which never gets the workspace.
pub(crate) fn registry_tool(plugin: &Arc<Plugin>, listed: &ListedTool) -> PluginTool {
    let name = registry_name(&plugin.spec.name, &listed.tool.name);
    // Which plugin it is, wherever the title shows (a tool card, an approval question).
    let title = format!("{} ({})", title_of(listed), plugin.spec.name);
    let description = listed
        .tool
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map_or_else(|| title_of(listed), str::to_owned);
    let mut schema = Value::Object((*listed.tool.input_schema).clone());
    if schema.get("type").is_none() {
        schema["type"] = "object".into();
    }
    let effect = plugin.effect_of(listed);
    let (target, tool, ui) = (plugin.clone(), listed.tool.name.to_string(), listed.ui.clone());
    let call = move |args: Value, context: Option<Arc<dyn CallContext>>| {
        let (target, tool, ui) = (target.clone(), tool.clone(), ui.clone());
        Box::pin(async move { target.call(&tool, ui.as_deref(), args, context).await }) as quire_tools::PluginFuture
    };
    let mut registered = PluginTool::relayed(name, title, description, schema, effect, call)
        .in_plugin(plugin.spec.name.clone())
        .asking_first(plugin.spec.ask_before_writes && effect != Effect::ReadOnly)
        .exposed_to(plugin.spec.exposure)
        .writing_back(plugin.spec.writes_back);
    if let Some(uri) = listed.ui.clone() {
        let target = plugin.clone();
        registered = registered.with_page(move || {
            let (target, uri) = (target.clone(), uri.clone());
            Box::pin(async move { target.page(&uri).await }) as quire_tools::PageFuture
        });
    }
    registered
}

/// `tools/call` with the request's progress token known, so that what the plugin reports under it reaches `context`
/// while the call runs. Dropped before its answer (a time limit, the turn's Stop), it tells the plugin the call is
/// abandoned, as rmcp's own `call_tool` does.
async fn call_reporting(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    relay: &Arc<Relay>,
    context: Arc<dyn CallContext>,
) -> Result<CallToolResult, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    let token = match &handle.progress_token.0 {
        NumberOrString::String(text) => text.to_string(),
        NumberOrString::Number(n) => n.to_string(),
    };
    let _reports = relay.open(token, context);
    let mut abandoned = Abandoned {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    abandoned.id = None;
    match answer? {
        ServerResult::CallToolResult(result) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Tells the plugin a request is abandoned when dropped before its answer.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let param = CancelledNotificationParam::new(Some(id), Some("request abandoned by the caller".into()));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

#[cfg(test)]
mod limit_tests {
    use std::time::Duration;

    use super::{Relay, within};

    #[tokio::test]
    async fn the_time_a_question_waits_for_the_person_is_not_counted() {
        let relay = Relay::default();
        let slow = || tokio::time::sleep(Duration::from_millis(300));
        assert!(
            within(Duration::from_millis(100), &relay, slow()).await.is_err(),
            "nobody asked: over the limit"
        );
        let asked = async {
            let (_asking, _) = relay.asking();
            tokio::time::sleep(Duration::from_millis(1000)).await;
        };
        let (answered, ()) = tokio::join!(within(Duration::from_millis(100), &relay, slow()), asked);
        assert!(answered.is_ok(), "a question was waiting for the person the whole time");
        assert!(!relay.is_asking());
    }
}

/// Why a plugin is not up after the start's time limit, with what may hold it (ux-2 #17): a launcher that downloads
/// the server first (`npx -y`, `uvx`) can take longer the first time.
fn not_started_in_time(spec: &PluginSpec) -> String {
    let mut said = format!("it did not start within {} s", START_TIMEOUT.as_secs());
    if let crate::spec::PluginTransport::Stdio { command, .. } = &spec.transport {
        let program = std::path::Path::new(command)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(command);
        if matches!(program, "npx" | "uvx" | "pipx" | "bunx" | "pnpx" | "docker" | "podman") {
            said.push_str(&format!(
                ": {program} may still be fetching it (the first run downloads the server). Run its command once in \
                 a terminal, then `quire plugin test {}`",
                spec.name
            ));
        } else {
            said.push_str(
                ": it may be waiting for something (a login, a download); what it wrote is in `quire plugin list`",
            );
        }
    }
    said
}

#[cfg(test)]
mod start_tests {
    use super::*;
    use crate::spec::PluginTransport;

    #[test]
    fn a_start_past_its_limit_says_what_may_hold_it() {
        let stdio = |command: &str| {
            PluginSpec::new(
                "everything",
                PluginTransport::Stdio {
                    command: command.into(),
                    args: Vec::new(),
                    env: Default::default(),
                    cwd: std::path::PathBuf::from("/tmp"),
                },
            )
        };
        let npx = not_started_in_time(&stdio("/usr/bin/npx"));
        assert!(
            npx.contains("npx may still be fetching it") && npx.contains("quire plugin test everything"),
            "{npx}"
        );
        let own = not_started_in_time(&stdio("python3"));
        assert!(own.contains("what it wrote is in `quire plugin list`"), "{own}");
    }
}
