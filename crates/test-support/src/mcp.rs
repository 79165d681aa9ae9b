//! rmcp's client for tests, connected one way in either protocol era: to a server in this process, to a child process
//! over its standard input and output, or over Streamable HTTP; and [`Person`], a client with someone behind it.
//!
//! Everything here runs inside tests, so it panics with the reason instead of returning errors.
#![expect(clippy::panic, reason = "test helpers fail the test that called them")]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::handler::client::ClientHandler;
use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ProtocolVersion,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{ErrorData, RoleClient};
use tokio::sync::mpsc;

/// A connected client whose handler is `C`.
pub type Client<C = ClientConfig> = RunningService<RoleClient, C>;

/// The protocol era a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `2025-11-25`: `initialize`, then a session that the server may send requests and notifications on.
    Legacy,
    /// `2026-07-28`: `server/discover`, then requests that each carry what the server needs.
    Stateless,
}

impl Era {
    /// Both eras, oldest first, for tests that check each.
    pub const BOTH: [Era; 2] = [Era::Legacy, Era::Stateless];

    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Era::Legacy => ClientLifecycleMode::Initialize,
            Era::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        }
    }
}

/// Connects `client` over `transport`, speaking `era`. Every `connect_*` helper ends here.
pub async fn connect<C, T, E, A>(client: C, transport: T, era: Era) -> Client<C>
where
    C: ClientHandler,
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    client
        .serve_with_lifecycle(transport, era.lifecycle())
        .await
        .unwrap_or_else(|e| panic!("the MCP client could not connect ({era:?}): {e}"))
}

/// Serves `server` on a task of this runtime, over an in-memory pipe, and connects `client` to it.
#[cfg(feature = "mcp-in-process")]
pub async fn connect_in_process<S, C>(server: S, client: C, era: Era) -> Client<C>
where
    S: rmcp::ServerHandler,
    C: ClientHandler,
{
    use rmcp::ServiceExt as _;
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server
            .serve(server_io)
            .await
            .unwrap_or_else(|e| panic!("the MCP server did not start: {e}"));
        let _ = running.waiting().await;
    });
    connect(client, client_io, era).await
}

/// Starts `command` (an MCP server on its standard input and output, its standard error discarded) and connects
/// `client` to it.
#[cfg(feature = "mcp-remote")]
pub async fn connect_to_child<C: ClientHandler>(command: tokio::process::Command, client: C, era: Era) -> Client<C> {
    let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("the MCP server did not start: {e}"));
    connect(client, transport, era).await
}

/// The names of every tool the server lists, through every page, in its order.
pub async fn tool_names<C: ClientHandler>(client: &Client<C>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap_or_else(|e| panic!("tools/list failed: {e}"))
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// Connects `client` over Streamable HTTP to `url`, with `token` as its bearer token.
#[cfg(feature = "mcp-remote")]
pub async fn connect_over_http<C: ClientHandler>(url: &str, token: &str, client: C, era: Era) -> Client<C> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    // The transport builds a reqwest client, which needs a TLS provider installed first.
    crate::install_tls();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token.to_owned());
    connect(client, StreamableHttpClientTransport::from_config(config), era).await
}

/// A client with a person behind it: it answers each form the server puts to the user (elicitation) with the next
/// of its actions (`"accept"` with an empty form, `"decline"`, `"cancel"`; cancels once they run out), remembers the
/// questions, and tells its channel what the server announces: `updated <uri>` for a resource update, `log <text>`
/// for a log message, `tools changed` when the tool list changed.
#[derive(Clone)]
pub struct Person {
    answers: Arc<Mutex<VecDeque<&'static str>>>,
    questions: Arc<Mutex<Vec<String>>>,
    events: mpsc::UnboundedSender<String>,
}

impl Person {
    /// A person who will answer with `answers`, in order, and the channel of what the client hears.
    pub fn new(answers: Vec<&'static str>) -> (Person, mpsc::UnboundedReceiver<String>) {
        let (events, receiver) = mpsc::unbounded_channel();
        let person = Person {
            answers: Arc::new(Mutex::new(answers.into())),
            questions: Arc::default(),
            events,
        };
        (person, receiver)
    }

    /// The messages of the forms put to the user so far.
    pub fn questions(&self) -> Vec<String> {
        self.questions.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn tell(&self, event: String) {
        // A test that dropped its receiver is not listening; nothing to do.
        let _ = self.events.send(event);
    }
}

impl ClientHandler for Person {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _ctx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let request = serde_json::to_value(&request).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let message = request["message"].as_str().unwrap_or_default().to_owned();
        self.questions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
        let action = self.answers.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
        let action = match action.unwrap_or("cancel") {
            "accept" => ElicitationAction::Accept,
            "decline" => ElicitationAction::Decline,
            "cancel" => ElicitationAction::Cancel,
            other => panic!("a person answers accept, decline or cancel, not {other:?}"),
        };
        Ok(ElicitResult::new(action).with_content(serde_json::json!({})))
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.tell(format!("updated {}", params.uri));
    }

    #[expect(deprecated, reason = "logging is still served to 2025-11-25 sessions")]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.tell(format!("log {}", params.data.as_str().unwrap_or_default()));
    }

    async fn on_tool_list_changed(&self, _ctx: NotificationContext<RoleClient>) {
        self.tell("tools changed".to_owned());
    }

    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.capabilities.elicitation = Some(ElicitationCapability::new());
        config
    }
}
