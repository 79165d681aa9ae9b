//! One running connection to a plugin: its process (for a stdio plugin), the MCP client on it, and what it listed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use quire_tools::{LogLevel, Progress};
use rmcp::ClientHandler;
use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    Implementation, NumberOrString, ProgressNotificationParam, Tool,
};
#[allow(
    deprecated,
    reason = "logging is deprecated by SEP-2577, and plugins of the 2025-11-25 era still log"
)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService, ServiceExt};

use super::relay::Relay;
use super::spec::{PluginSpec, PluginTransport};

/// The last lines a plugin wrote to standard error (all of them also go to the log).
pub(crate) type StderrTail = Arc<Mutex<VecDeque<String>>>;

/// A tool as the plugin listed it, with what quire derives from it.
#[derive(Debug, Clone)]
pub(crate) struct ListedTool {
    pub(crate) tool: Tool,
    /// The `ui://` resource of its results (MCP Apps), if it declares one.
    pub(crate) ui: Option<String>,
}

/// quire as the client of one plugin: who it is, and a signal when the plugin says its tools changed.
pub(crate) struct PluginClient {
    config: ClientConfig,
    changed: Arc<tokio::sync::Notify>,
    relay: Arc<Relay>,
    name: String,
}

impl ClientHandler for PluginClient {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        let token = match params.progress_token.0 {
            NumberOrString::String(text) => text.to_string(),
            NumberOrString::Number(n) => n.to_string(),
        };
        self.relay.progress(
            &token,
            Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            },
        );
        std::future::ready(())
    }

    #[allow(
        deprecated,
        reason = "logging is deprecated by SEP-2577, and plugins of the 2025-11-25 era still log"
    )]
    fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        let message = match &params.data {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let level = match params.level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        };
        tracing::debug!(plugin = %self.name, ?level, "{message}");
        self.relay.log(level, &message);
        std::future::ready(())
    }

    /// A question for the person (MCP elicitation), passed to the caller of the plugin's call in flight: the sidebar
    /// shows it as a form under the call, an MCP client gets it as its own elicitation. Declined when nobody who
    /// called can ask (a script, a client without elicitation), and for a URL to open, which quire does not offer.
    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl std::future::Future<Output = Result<ElicitResult, ErrorData>> + Send + '_ {
        let asker = self.relay.asker();
        async move {
            let declined = Ok(ElicitResult::new(ElicitationAction::Decline));
            let (
                ElicitRequestParams::FormElicitationParams {
                    message,
                    requested_schema,
                    ..
                },
                Some(asker),
            ) = (request, asker)
            else {
                return declined;
            };
            let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
            let request = quire_tools::ClientRequest::Elicit { message, schema };
            // While the person answers, the call's time limit waits too (see `call::within`).
            let (_asking, n) = self.relay.asking();
            let answer = asker.request_all(vec![(format!("question-{n}"), request)]).await;
            Ok(match answer.ok().and_then(|mut replies| replies.pop()) {
                Some(quire_tools::ClientReply::Elicited(quire_tools::Elicited::Accepted(values))) => {
                    ElicitResult::new(ElicitationAction::Accept).with_content(values)
                }
                Some(quire_tools::ClientReply::Elicited(quire_tools::Elicited::Cancelled)) => {
                    ElicitResult::new(ElicitationAction::Cancel)
                }
                _ => ElicitResult::new(ElicitationAction::Decline),
            })
        }
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.changed.notify_one();
        std::future::ready(())
    }
}

/// A connection that answered `initialize` and `tools/list`.
pub(crate) struct Session {
    pub(crate) client: RunningService<RoleClient, PluginClient>,
    /// Set when the plugin sent a message over [`wire_limit`] (the connection then ends).
    pub(crate) oversized: Arc<std::sync::atomic::AtomicBool>,
    child: Mutex<Option<tokio::process::Child>>,
    /// The process group of a stdio plugin (its pid at spawn): kept, because the child's id is gone once reaped;
    /// cleared once killed, so that a number the system may give to another group later is never signalled.
    group: Mutex<Option<u32>>,
    pub(crate) tools: Vec<ListedTool>,
}

impl Drop for Session {
    /// However the session ends (a start past its time limit, a runtime shutting down), its processes end with it.
    fn drop(&mut self) {
        self.kill_group();
    }
}

impl Session {
    /// Starts the plugin, connects and lists its tools.
    pub(crate) async fn start(
        spec: &PluginSpec,
        stderr: &StderrTail,
        http: Option<&reqwest::Client>,
        changed: &Arc<tokio::sync::Notify>,
        relay: &Arc<Relay>,
    ) -> Result<Session, String> {
        let config = PluginClient {
            config: client_config(),
            changed: changed.clone(),
            relay: relay.clone(),
            name: spec.name.clone(),
        };
        let oversized = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (client, child, group) = match &spec.transport {
            PluginTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                std::fs::create_dir_all(cwd).map_err(|e| format!("cannot make its folder {}: {e}", cwd.display()))?;
                let program = resolve(command, env);
                let mut cmd = tokio::process::Command::new(&program);
                cmd.args(args)
                    .env_clear()
                    .envs(env)
                    .current_dir(cwd)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .kill_on_drop(true);
                #[cfg(unix)]
                cmd.process_group(0);
                super::process::harden();
                let mut child = cmd.spawn().map_err(|e| format!("cannot start {command}: {e}"))?;
                let group = child.id();
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err("its standard input and output could not be opened".into());
                };
                if let Some(err) = child.stderr.take() {
                    tokio::spawn(super::process::log_stderr(spec.name.clone(), err, stderr.clone()));
                }
                let stdout = LineLimit {
                    inner: stdout,
                    limit: wire_limit(spec.max_output),
                    line: 0,
                    oversized: oversized.clone(),
                };
                let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
                    .with_max_line_length(usize::MAX);
                let client = match config.serve(transport).await {
                    Ok(client) => client,
                    Err(e) => {
                        super::process::kill_tree(group);
                        let _ = child.start_kill();
                        let status = child.wait().await.ok();
                        return Err(match status {
                            Some(status) => format!("it stopped before answering ({status}): {e}"),
                            None => format!("it did not answer as an MCP server: {e}"),
                        });
                    }
                };
                (client, Some(child), group)
            }
            PluginTransport::Http { url, headers } => {
                use rmcp::transport::StreamableHttpClientTransport;
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut custom = std::collections::HashMap::new();
                let mut auth = None;
                for (name, value) in headers {
                    // rmcp writes `Bearer ` before the value it is given; any other scheme goes as it is.
                    if name.eq_ignore_ascii_case("authorization")
                        && let Some(token) = value.strip_prefix("Bearer ")
                    {
                        auth = Some(token.trim().to_owned());
                        continue;
                    }
                    let name = http::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("'{name}' is not a header name"))?;
                    let value = http::HeaderValue::from_str(value)
                        .map_err(|_| format!("the value of the header {name} is not valid"))?;
                    custom.insert(name, value);
                }
                let mut transport = StreamableHttpClientTransportConfig::with_uri(url.clone()).custom_headers(custom);
                if let Some(auth) = auth {
                    transport = transport.auth_header(auth);
                }
                // The same bound on one message as over stdio.
                transport.max_json_response_size = wire_limit(spec.max_output);
                transport.max_sse_event_size = wire_limit(spec.max_output);
                let client = http.cloned().unwrap_or_default();
                let transport = StreamableHttpClientTransport::with_client(client, transport);
                let client = config
                    .serve(transport)
                    .await
                    .map_err(|e| format!("cannot connect to {url}: {}", deepest(&e)))?;
                (client, None, None)
            }
        };
        let session = Session {
            client,
            oversized,
            child: Mutex::new(child),
            group: Mutex::new(group),
            tools: Vec::new(),
        };
        let listed = session
            .client
            .list_all_tools()
            .await
            .map_err(|e| format!("it did not list its tools: {e}"));
        match listed {
            Ok(tools) => {
                let mut session = session;
                session.tools = tools.into_iter().map(ListedTool::from).collect();
                Ok(session)
            }
            Err(e) => {
                session.kill().await;
                Err(e)
            }
        }
    }

    /// The process of a stdio plugin, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        *self.group.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the connection is gone (the process ended, the transport closed).
    pub(crate) fn is_closed(&self) -> bool {
        if self.client.is_closed() {
            return true;
        }
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        child.as_mut().is_some_and(|c| !matches!(c.try_wait(), Ok(None)))
    }

    /// How the process ended, if it did.
    pub(crate) fn exit_status(&self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    /// Ends the connection and the process (its whole process group: a launcher such as `npx` starts another).
    pub(crate) async fn kill(&self) {
        self.client.cancellation_token().cancel();
        self.kill_group();
        let child = self.child.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut child) = child {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }

    /// Kills the plugin's process group and every process below it (a no-op for an HTTP plugin, or one already gone).
    fn kill_group(&self) {
        super::process::kill_tree(self.group.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}

impl From<Tool> for ListedTool {
    fn from(tool: Tool) -> ListedTool {
        let ui = tool.meta.as_ref().and_then(|meta| {
            let meta = serde_json::to_value(meta).ok()?;
            meta.pointer("/ui/resourceUri")
                .or_else(|| meta.get("ui/resourceUri"))
                .and_then(serde_json::Value::as_str)
                .filter(|uri| uri.starts_with("ui://"))
                .map(str::to_owned)
        });
        ListedTool { tool, ui }
    }
}

/// The innermost cause of an error ("Connection refused (os error 111)"), which says what happened without the
/// transport's layers; the error itself when it has no cause.
fn deepest(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    let text = current.to_string();
    // rmcp names its transport's types in its messages; what follows them is what happened.
    match text.rsplit_once("] error: ") {
        Some((_, said)) => said.trim_end_matches(", when send initialize request").to_owned(),
        None => text,
    }
}

/// quire as an MCP client: its name, elicitation (passed on to the caller), and the MCP Apps extension it hosts.
fn client_config() -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    // Questions for the person go to whoever called (see `create_elicitation`).
    capabilities.elicitation = Some(ElicitationCapability::default());
    let mut extensions = serde_json::Map::new();
    extensions.insert(
        super::result::APPS_EXTENSION.to_owned(),
        serde_json::json!({"mimeTypes": [super::result::APP_MIME_TYPE]}),
    );
    if let Ok(value) = serde_json::from_value(serde_json::Value::Object(extensions)) {
        capabilities.extensions = Some(value);
    }
    let mut info = Implementation::new("quire", env!("CARGO_PKG_VERSION"));
    info.title = Some("quire".into());
    ClientConfig::new(capabilities, info)
}

/// The program to start: a bare name is looked up in the plugin's own `PATH`, then in quire's (the plugin's
/// environment still holds only what its configuration names).
fn resolve(command: &str, env: &std::collections::BTreeMap<String, String>) -> std::path::PathBuf {
    let path = std::path::Path::new(command);
    if path.components().count() > 1 || path.is_absolute() {
        return path.to_path_buf();
    }
    let own = env.get("PATH").cloned();
    let inherited = std::env::var("PATH").ok();
    for dirs in [own, inherited].into_iter().flatten() {
        for dir in std::env::split_paths(&dirs) {
            let candidate = dir.join(command);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    path.to_path_buf()
}

/// The most bytes of one message quire reads from a stdio plugin: a plugin's answer is cut to its output cap only
/// after it is read whole, and the SDKs send text twice (as content and as structured content).
pub(crate) fn wire_limit(max_output: usize) -> usize {
    max_output.saturating_mul(16).max(64 << 20)
}

/// A plugin's standard output, failing the connection as soon as one message passes `limit` bytes (instead of
/// reading without end, or waiting for the call's time limit): the call then fails at once and says why.
struct LineLimit<R> {
    inner: R,
    limit: usize,
    line: usize,
    oversized: Arc<std::sync::atomic::AtomicBool>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for LineLimit<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = &polled {
            let read = &buf.filled()[before..];
            let line = match read.iter().rposition(|b| *b == b'\n') {
                Some(at) => read.len() - at - 1,
                None => self.line + read.len(),
            };
            self.line = line;
            if line > self.limit {
                self.oversized.store(true, std::sync::atomic::Ordering::SeqCst);
                return std::task::Poll::Ready(Err(std::io::Error::other("a message over the size limit")));
            }
        }
        polled
    }
}
