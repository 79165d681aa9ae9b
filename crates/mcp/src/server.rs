//! `QuireServer`: the handle over one workspace, its tools, prompts and resources; its options; what one client
//! session holds and what one request may reach. The protocol's requests are answered by the modules beside it
//! (`handler` wires them to rmcp's `ServerHandler`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use quire_core::Workspace;
use quire_tools::{LogLevel, PromptRegistry, ToolActor, ToolFilter, ToolRegistry};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::context::{McpCall, StateSeal};
use crate::resources::{ChangeWatcher, ResourceRegistry};

/// Tools per `tools/list` page.
const TOOL_PAGE: usize = 50;

/// What the server tells clients about the workspace and its tools (`instructions` of `initialize`).
pub const INSTRUCTIONS: &str = concat!(
    "quire is the user's notes workspace: Markdown notes in a tree of notebooks, with tags and attributes. \
     Find notes with search_notes, whose query syntax is: ",
    quire_core::search_syntax!(),
    " Or browse with list_notebooks and list_notes, then read_note by id. Change notes with update_note (prefer exact edits or \
append for small changes) and create_note; delete_note only moves a note to the trash. Protected notes show \
their title only and cannot be read or changed. Lists come in pages: with has_more, call again with offset \
plus the items you got (a long text: with next_offset). Every change you make is saved as a revision and can be \
undone by the user."
);

/// What happens when a client calls a destructive tool (one that deletes or overwrites, such as `delete_note`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfirmDestructive {
    /// Ask the user through the client (elicitation) before it runs; a client that cannot ask gets the call
    /// staged for the user's review in quire instead of run (see [`WritePolicy::Stage`]).
    #[default]
    AskOrStage,
    /// Ask the user through the client before it runs; a client that cannot ask gets the call run, since what
    /// quire's destructive tools remove goes to the trash or into a revision and can be restored.
    Ask,
    /// Ask through the client when it can; refuse when it cannot.
    AskOrDeny,
    /// Run it without asking.
    Allow,
    /// Refuse it.
    Deny,
}

/// What happens to a client's writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WritePolicy {
    /// They are applied at once (each with a revision and an undoable change set).
    #[default]
    Apply,
    /// They are staged: recorded for the user to review in quire (accept or reject by change, note or set), not
    /// applied; the client's own reads see them as pending (see `quire_core::review`).
    Stage,
}

/// Which tools the server offers, how it pages them, and how it treats destructive calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    /// Which tools are offered (read-only only, disabled ones): the same filter the agent uses.
    pub filter: ToolFilter,
    /// Tools per `tools/list` page.
    pub tool_page_size: usize,
    /// Whether destructive tools ask the user first.
    pub confirm_destructive: ConfirmDestructive,
    /// Whether writes are applied or staged for review (a named token's grant may stage them too).
    pub writes: WritePolicy,
    /// Whether hosts that render MCP Apps may show staged changes inline with Accept and Reject (`ui://quire/review`
    /// and its app-only tools). Off by default: a model whose host does not keep app-only tools away from it could
    /// accept its own changes; turn it on only for hosts you trust to.
    pub inline_review: bool,
    /// The name its client is recorded under (history, the review inbox, the read ledger), whatever the client calls
    /// itself: an ACP agent's, when quire starts this server for it.
    pub client_name: Option<String>,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            filter: ToolFilter::default(),
            tool_page_size: TOOL_PAGE,
            confirm_destructive: ConfirmDestructive::default(),
            writes: WritePolicy::default(),
            inline_review: false,
            client_name: None,
        }
    }
}

/// What belongs to one client connection (a stdio server, or one HTTP session).
#[derive(Default)]
pub(crate) struct Session {
    /// The level asked for with `logging/setLevel`; nothing is logged before.
    pub(crate) log_level: Mutex<Option<LogLevel>>,
    /// URIs subscribed with `resources/subscribe`, and the task that notifies about them.
    pub(crate) subscriptions: Mutex<HashMap<String, Access>>,
    pub(crate) notifier: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(task) = self.notifier.get_mut().ok().and_then(Option::take) {
            task.abort();
        }
    }
}

/// quire's MCP server: a cheap handle over one workspace, its tools, prompts and resources. Clones share one
/// client session; [`QuireServer::for_new_session`] makes a handle for another client.
#[derive(Clone)]
pub struct QuireServer {
    pub(crate) workspace: Workspace,
    pub(crate) tools: Arc<ToolRegistry>,
    pub(crate) prompts: Arc<PromptRegistry>,
    pub(crate) resources: Arc<ResourceRegistry>,
    pub(crate) options: Arc<ServerOptions>,
    pub(crate) seal: Arc<StateSeal>,
    pub(crate) watcher: Arc<ChangeWatcher>,
    pub(crate) session: Arc<Session>,
}

impl QuireServer {
    /// A server for `workspace` offering the tools of `tools` that `options` allows, quire's built-in prompts,
    /// and notes, notebooks and attachments as resources.
    pub fn new(workspace: Workspace, tools: Arc<ToolRegistry>, options: ServerOptions) -> QuireServer {
        QuireServer {
            watcher: ChangeWatcher::new(workspace.clone()),
            workspace,
            tools,
            prompts: Arc::new(PromptRegistry::builtin()),
            resources: Arc::new(ResourceRegistry::default()),
            options: Arc::new(options),
            seal: Arc::new(StateSeal::new()),
            session: Arc::new(Session::default()),
        }
    }

    /// The same server with these prompts instead of the built-in ones.
    pub fn with_prompts(mut self, prompts: Arc<PromptRegistry>) -> QuireServer {
        self.prompts = prompts;
        self
    }

    /// The prompts offered (add or remove prompts while serving; clients hear about it).
    pub fn prompts(&self) -> &Arc<PromptRegistry> {
        &self.prompts
    }

    /// Extra resources and templates offered besides notes, notebooks and attachments.
    pub fn resources(&self) -> &Arc<ResourceRegistry> {
        &self.resources
    }

    /// A handle for another client: the same workspace, tools, prompts and resources, its own log level and
    /// subscriptions.
    pub fn for_new_session(&self) -> QuireServer {
        QuireServer {
            session: Arc::new(Session::default()),
            ..self.clone()
        }
    }

    /// What this request may reach: the whole server's, narrowed by the grant of the HTTP token it came with (a
    /// scope, read-only, hidden tools). The scope is the workspace handle's, so core enforces it on every read and
    /// write.
    pub(crate) fn access(&self, ctx: &RequestContext<RoleServer>) -> Access {
        let grant = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Grant>())
            .cloned();
        let mut filter = self.options.filter.clone();
        let mut workspace = self.workspace.clone();
        let mut client = self.options.client_name.clone().unwrap_or_else(|| client_name(ctx));
        if let Some(grant) = &grant {
            filter.read_only |= grant.read_only;
            filter.disabled.extend(grant.disabled_tools.iter().cloned());
            filter.limit_plugins(grant.plugins.as_ref());
            if let Some(scope) = &grant.scope {
                workspace = workspace.scoped(scope.clone());
            }
            client = format!("{client} (token {})", grant.name);
        }
        let mut staged = self.options.writes == WritePolicy::Stage || grant.as_ref().is_some_and(|g| g.stage);
        let mut actor = ToolActor::mcp(client);
        // A plugin writing back while one of its calls runs: its writes are the call's, staged if the caller's are.
        if let Some(plugin) = grant.as_ref().and_then(|g| g.plugin.as_deref())
            && let Ok(Some(call)) = self.workspace.plugin_call_in_flight(plugin)
        {
            if call.staged {
                staged = true;
            } else if !staged {
                actor = ToolActor::plugin_writing_back(call);
            }
        }
        if staged {
            workspace = workspace.staged();
        }
        Access {
            workspace,
            filter,
            actor,
            grant,
            staged,
        }
    }

    /// The context of one call: this session's log level, and the answers of earlier rounds (see [`McpCall`]).
    pub(crate) fn call_context(
        &self,
        ctx: &RequestContext<RoleServer>,
        binding: &[u8],
        input: Option<rmcp::model::InputResponses>,
        state: Option<&str>,
    ) -> Result<Arc<McpCall>, ErrorData> {
        let log_level = *self.session.log_level.lock().unwrap_or_else(|e| e.into_inner());
        McpCall::new(ctx, log_level, &self.seal, binding, input, state)
    }
}

/// What one request may reach (see [`QuireServer::access`]).
#[derive(Clone)]
pub(crate) struct Access {
    pub(crate) workspace: Workspace,
    pub(crate) filter: ToolFilter,
    pub(crate) actor: ToolActor,
    /// The token's grant, when a named token was presented.
    pub(crate) grant: Option<Grant>,
    /// Whether the client's writes are staged for review (its workspace handle is `staged`).
    pub(crate) staged: bool,
}

impl Access {
    /// Whether this request may see and call `tool`: the filter allows it, and it is not a tool offered to quire's
    /// own agent only (a plugin set to `expose = "sidebar"`).
    pub(crate) fn offers(&self, tool: &quire_tools::ToolInfo) -> bool {
        tool.exposure == quire_tools::Exposure::All && self.filter.allows(tool)
    }

    /// The tools this request may see and call, sorted by name.
    pub(crate) fn offered(&self, tools: &ToolRegistry) -> Vec<quire_tools::ToolInfo> {
        tools.list().into_iter().filter(|t| self.offers(t)).collect()
    }

    /// Whether the named token behind it was revoked since (a stream opened with it stops hearing anything).
    pub(crate) fn revoked(&self) -> bool {
        self.grant
            .as_ref()
            .is_some_and(|g| g.revoked.load(std::sync::atomic::Ordering::Acquire))
    }
}

/// What an HTTP token grants beyond the server's own options: a name (it shows in the history as part of the
/// client's name), a scope, read-only access, hidden tools. The HTTP layer attaches it to each request that
/// presents a named token.
#[derive(Debug, Clone, Default)]
pub struct Grant {
    /// The token's name.
    pub name: String,
    /// The notebooks it reaches, or the whole workspace.
    pub scope: Option<quire_core::Scope>,
    /// Only read-only tools.
    pub read_only: bool,
    /// Tools it does not offer.
    pub disabled_tools: std::collections::BTreeSet<String>,
    /// The plugins whose tools it may call, by name; `None`: every plugin the server offers.
    pub plugins: Option<std::collections::BTreeSet<String>>,
    /// The plugin whose own grant this is: what it writes while one of its calls runs is part of that call.
    pub plugin: Option<String>,
    /// Its writes are staged for the user's review instead of applied ([`WritePolicy::Stage`]).
    pub stage: bool,
    /// Set when the token is revoked: requests with it are refused from then on, and streams opened with it
    /// (subscriptions) stop telling anything.
    pub revoked: Arc<std::sync::atomic::AtomicBool>,
}

/// The client's name from the request, or "unknown client".
pub(crate) fn client_name(ctx: &RequestContext<RoleServer>) -> String {
    ctx.client_info()
        .map(|i| i.name)
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "unknown client".to_owned())
}

/// The error for a list cursor the server did not hand out.
pub(crate) fn invalid_cursor() -> ErrorData {
    ErrorData::invalid_params(
        "Invalid cursor: pass the nextCursor of the previous page unchanged.",
        None,
    )
}
