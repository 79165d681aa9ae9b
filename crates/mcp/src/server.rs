//! The `ServerHandler`: tools, resources and change notifications over the registry, for both protocol eras.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use quire_core::{Page, Workspace};
use quire_tools::{
    CallContext, ClientKind, ClientRequest, ContentItem, Effect, Elicited, LogLevel, PromptError, PromptRegistry,
    ToolActor, ToolFilter, ToolInfo, ToolRegistry,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference, Resource, ResourceContents,
    ResourceTemplate, ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool,
    ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::Error;
use crate::context::{McpCall, StateSeal, Unfinished, call_binding, from_mcp_level, missing_capability};
use crate::resources::{ChangeWatcher, ResourceBody, ResourceRegistry};

/// Tools per `tools/list` page.
const TOOL_PAGE: usize = 50;
/// Notes per `resources/list` page.
const RESOURCE_PAGE: u64 = 100;
/// The URI of a note resource, before its id.
const NOTE_URI: &str = "quire://note/";

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
    /// Ask the user through the client (elicitation) before it runs; a client that cannot ask gets the call run,
    /// since what quire's destructive tools remove goes to the trash or into a revision and can be restored.
    #[default]
    Ask,
    /// Ask through the client when it can; refuse when it cannot.
    AskOrDeny,
    /// Run it without asking.
    Allow,
    /// Refuse it.
    Deny,
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
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            filter: ToolFilter::default(),
            tool_page_size: TOOL_PAGE,
            confirm_destructive: ConfirmDestructive::default(),
        }
    }
}

/// What belongs to one client connection (a stdio server, or one HTTP session).
#[derive(Default)]
struct Session {
    /// The level asked for with `logging/setLevel`; nothing is logged before.
    log_level: Mutex<Option<LogLevel>>,
    /// URIs subscribed with `resources/subscribe`, and the task that notifies about them.
    subscriptions: Mutex<HashMap<String, Access>>,
    notifier: Mutex<Option<tokio::task::JoinHandle<()>>>,
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
    workspace: Workspace,
    tools: Arc<ToolRegistry>,
    prompts: Arc<PromptRegistry>,
    resources: Arc<ResourceRegistry>,
    options: Arc<ServerOptions>,
    seal: Arc<StateSeal>,
    watcher: Arc<ChangeWatcher>,
    session: Arc<Session>,
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

    fn offers(&self, tool: &ToolInfo) -> bool {
        self.options.filter.allows(tool)
    }

    /// What this request may reach: the whole server's, narrowed by the grant of the HTTP token it came with (a
    /// scope, read-only, hidden tools). The scope is the workspace handle's, so core enforces it on every read and
    /// write.
    fn access(&self, ctx: &RequestContext<RoleServer>) -> Access {
        let grant = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Grant>())
            .cloned();
        let mut filter = self.options.filter.clone();
        let mut workspace = self.workspace.clone();
        let mut client = client_name(ctx);
        if let Some(grant) = &grant {
            filter.read_only |= grant.read_only;
            filter.disabled.extend(grant.disabled_tools.iter().cloned());
            if let Some(scope) = &grant.scope {
                workspace = workspace.scoped(scope.clone());
            }
            client = format!("{client} (token {})", grant.name);
        }
        Access {
            workspace,
            filter,
            actor: ToolActor::mcp(client),
            grant,
        }
    }

    /// A tool call once its context exists: the confirmation of a destructive tool, the call, its answer.
    async fn run_call(
        &self,
        call: &Arc<McpCall>,
        tool: &ToolInfo,
        args: Value,
        binding: &[u8],
        access: &Access,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = tool.name.as_str();
        if tool.effect == Effect::Destructive {
            // The user may take a while to answer, or never: a client that gives up cancels the question too.
            let confirmed = tokio::select! {
                confirmed = self.confirm(call, tool, &args, access, ctx) => confirmed?,
                () = ctx.ct.cancelled() => Some(refusal(&format!("{name} did not run: the call was cancelled."))),
            };
            if let Some(answer) = confirmed {
                return Ok(answer);
            }
        }
        if let Some(unfinished) = call.unfinished(&self.seal, binding) {
            return unfinished_call(unfinished);
        }
        call.log_message(LogLevel::Debug, &format!("calling {name}"));
        let context: Arc<dyn CallContext> = call.clone();
        let run = self
            .tools
            .call_async_with(&access.workspace, &access.actor, name, args, Some(context));
        let result = tokio::select! {
            result = run => result,
            () = ctx.ct.cancelled() => {
                // The client gave up; a write already under way still finishes or rolls back as a whole.
                return Ok(CallToolResult::error(vec![ContentBlock::text("The call was cancelled.")]).into());
            }
        };
        if let Some(unfinished) = call.unfinished(&self.seal, binding) {
            return unfinished_call(unfinished);
        }
        match result {
            Ok(result) if result.is_error => {
                let message = result.error_message().unwrap_or("failed").to_owned();
                call.log_message(LogLevel::Warning, &format!("{name} failed: {message}"));
                Ok(CallToolResult::structured_error(result.value).into())
            }
            Ok(result) => {
                call.log_message(LogLevel::Info, &format!("{name} done"));
                let mut answer = CallToolResult::structured(result.value);
                answer.content.extend(result.content.into_iter().map(content_block));
                Ok(answer.into())
            }
            Err(quire_tools::Error::UnknownTool { name }) => {
                Err(ErrorData::invalid_params(format!("Unknown tool: {name}"), None))
            }
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }

    /// The context of one call: this session's log level, and the answers of earlier rounds (see [`McpCall`]).
    fn call_context(
        &self,
        ctx: &RequestContext<RoleServer>,
        binding: &[u8],
        input: Option<rmcp::model::InputResponses>,
        state: Option<&str>,
    ) -> Result<Arc<McpCall>, ErrorData> {
        let log_level = *self.session.log_level.lock().unwrap_or_else(|e| e.into_inner());
        McpCall::new(ctx, log_level, &self.seal, binding, input, state)
    }

    /// Asks the user before a destructive call, as configured. `Ok(None)`: go ahead; `Ok(Some(result))`: answer
    /// this instead (a refusal, or the client must answer first).
    async fn confirm(
        &self,
        call: &McpCall,
        tool: &ToolInfo,
        args: &Value,
        access: &Access,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Option<CallToolResponse>, ErrorData> {
        let policy = self.options.confirm_destructive;
        let can_ask = call.supports(ClientKind::Elicitation);
        let refuse = |why: &str| {
            call.log_message(LogLevel::Warning, &format!("{} was refused: {why}", tool.name));
            Ok(Some(refusal(&format!(
                "{} is not allowed over MCP on this server: {why}. The user can do it in quire.",
                tool.name
            ))))
        };
        match (policy, can_ask) {
            (ConfirmDestructive::Allow, _) | (ConfirmDestructive::Ask, false) => return Ok(None),
            (ConfirmDestructive::Deny, _) => return refuse("its settings refuse destructive tools"),
            (ConfirmDestructive::AskOrDeny, false) => {
                return refuse("it asks the user first, and this client cannot ask");
            }
            _ => {}
        }
        // Nothing to ask about when the call is going to fail anyway (no such note, or a protected one): the tool
        // says why.
        let Some(message) = describe_destructive(access, tool, args, &client_name(ctx)) else {
            return Ok(None);
        };
        let question = ClientRequest::Elicit {
            message,
            schema: json!({"type": "object", "properties": {}}),
        };
        match call.request_all(vec![(CONFIRM_KEY.into(), question)]).await {
            Ok(replies) => match replies.into_iter().next() {
                Some(quire_tools::ClientReply::Elicited(Elicited::Accepted(_))) => Ok(None),
                _ => {
                    call.log_message(LogLevel::Notice, &format!("the user refused {}", tool.name));
                    Ok(Some(refusal(&format!(
                        "The user refused: {} did not run, nothing changed. Do not retry unless the user asks.",
                        tool.name
                    ))))
                }
            },
            Err(quire_tools::ClientError::InputRequired) => Ok(None),
            Err(e) => Ok(Some(refusal(&format!(
                "{} did not run: the user could not be asked ({e}).",
                tool.name
            )))),
        }
    }

    /// Starts (once per session) the task that turns workspace changes into `notifications/resources/updated`
    /// for the session's subscriptions.
    fn ensure_notifier(&self, peer: Peer<RoleServer>) {
        let mut notifier = self.session.notifier.lock().unwrap_or_else(|e| e.into_inner());
        if notifier.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let mut changes = self.watcher.subscribe();
        let session = Arc::downgrade(&self.session);
        let resources = self.resources.clone();
        *notifier = Some(tokio::spawn(async move {
            loop {
                let changed = match changes.recv().await {
                    Ok(changed) => changed,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(session) = session.upgrade() else { return };
                let wanted: Vec<(String, Access)> = {
                    let subscribed = session.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
                    subscribed
                        .iter()
                        .filter(|(uri, _)| changed.contains(*uri))
                        .map(|(uri, access)| (uri.clone(), access.clone()))
                        .collect()
                };
                drop(session);
                // Only what the subscriber can still reach: a note moved out of its scope is not reported.
                let resources = resources.clone();
                let wanted = tokio::task::spawn_blocking(move || {
                    wanted
                        .into_iter()
                        .filter(|(uri, access)| resource_exists(&resources, uri, access))
                        .map(|(uri, _)| uri)
                        .collect::<Vec<String>>()
                })
                .await
                .unwrap_or_default();
                for uri in wanted {
                    let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                    if peer.notify_resource_updated(param).await.is_err() {
                        return;
                    }
                }
            }
        }));
    }
}

/// What one request may reach (see [`QuireServer::access`]).
#[derive(Clone)]
struct Access {
    workspace: Workspace,
    filter: ToolFilter,
    actor: ToolActor,
    /// The token's grant, when a named token was presented.
    grant: Option<Grant>,
}

impl Access {
    /// Whether the named token behind it was revoked since (a stream opened with it stops hearing anything).
    fn revoked(&self) -> bool {
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
    /// Set when the token is revoked: requests with it are refused from then on, and streams opened with it
    /// (subscriptions) stop telling anything.
    pub revoked: Arc<std::sync::atomic::AtomicBool>,
}

/// The key of the confirmation asked before a destructive call.
const CONFIRM_KEY: &str = "quire_confirm";

/// Whether a URI names a resource a client can subscribe to or read: a note, notebook or attachment id that
/// exists and that it can reach, or an extra resource.
fn resource_exists(resources: &ResourceRegistry, uri: &str, access: &Access) -> bool {
    if access.revoked() {
        return false;
    }
    if resources.knows(uri) {
        return true;
    }
    let Some((kind, id)) = quire_uri(uri) else { return false };
    // Through a scope, the top level holds nothing of the client's: watching it would only tell of others' notes.
    if kind == QuireResource::Notebook && id == quire_core::ROOT_NOTEBOOK_ID && access.workspace.scope().is_some() {
        return false;
    }
    access
        .workspace
        .read(access.actor.actor(), |r| match kind {
            QuireResource::Note => r.note_summary(id).map(|_| ()),
            QuireResource::Notebook => r.notebook(id).map(|_| ()),
            QuireResource::Attachment => r.attachment(id).map(|_| ()),
        })
        .is_ok()
}

/// The client's name from the request, or "unknown client".
fn client_name(ctx: &RequestContext<RoleServer>) -> String {
    ctx.client_info()
        .map(|i| i.name)
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "unknown client".to_owned())
}

/// The question put to the user before a destructive call: who asks, what it does, to which note (read as the
/// client sees it). `None` when the call names a note the client cannot change (missing, outside its scope or
/// protected): the call fails on its own, with the reason, and asking first would only puzzle the user.
fn describe_destructive(access: &Access, tool: &ToolInfo, args: &Value, client: &str) -> Option<String> {
    let what = tool.title.to_lowercase();
    let Some(id) = ["id", "note_id"]
        .iter()
        .find_map(|key| args.get(*key).and_then(Value::as_str))
    else {
        return Some(format!("{client} wants to {what} with {args}. Allow it?"));
    };
    let note = access
        .workspace
        .read(access.actor.actor(), |r| r.note_summary(id))
        .ok()?;
    if note.is_protected {
        return None;
    }
    let trash = if tool.name == "delete_note" {
        " (it goes to the trash, where it can be restored)"
    } else {
        ""
    };
    Some(format!("{client} wants to {what} \"{}\"{trash}. Allow it?", note.title))
}

fn refusal(message: &str) -> CallToolResponse {
    CallToolResult::structured_error(json!({ "error": message })).into()
}

/// The kinds of `quire://` resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuireResource {
    Note,
    Notebook,
    Attachment,
}

const NOTEBOOK_URI: &str = "quire://notebook/";
const ATTACHMENT_URI: &str = "quire://attachment/";

fn quire_uri(uri: &str) -> Option<(QuireResource, &str)> {
    let (kind, id) = if let Some(id) = uri.strip_prefix(NOTE_URI) {
        (QuireResource::Note, id)
    } else if let Some(id) = uri.strip_prefix(NOTEBOOK_URI) {
        (QuireResource::Notebook, id)
    } else {
        (QuireResource::Attachment, uri.strip_prefix(ATTACHMENT_URI)?)
    };
    (!id.is_empty() && !id.contains('/')).then_some((kind, id))
}

/// The MCP description of a registry tool: annotations follow from the effect.
pub(crate) fn to_mcp_tool(info: &ToolInfo) -> Tool {
    let schema = |value: &Value| -> Arc<JsonObject> { Arc::new(value.as_object().cloned().unwrap_or_default()) };
    let annotations = ToolAnnotations::new()
        .read_only(info.effect == Effect::ReadOnly)
        .destructive(info.effect == Effect::Destructive)
        .idempotent(info.effect == Effect::ReadOnly)
        .open_world(false);
    let mut tool = Tool::new(info.name.clone(), info.description.clone(), schema(&info.input_schema))
        .with_title(info.title.clone())
        .with_annotations(annotations);
    if let Some(output) = &info.output_schema {
        tool = tool.with_raw_output_schema(schema(output));
    }
    tool
}

fn invalid_cursor() -> ErrorData {
    ErrorData::invalid_params(
        "Invalid cursor: pass the nextCursor of the previous page unchanged.",
        None,
    )
}

impl ServerHandler for QuireServer {
    #[expect(
        deprecated,
        reason = "logging is deprecated in 2026-07-28 and still declared for 2025-11-25"
    )]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("quire", env!("CARGO_PKG_VERSION")).with_title("quire notes"))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.access(&ctx).filter.offered(&self.tools);
        // The cursor is the name of the last tool sent: stable even when plugin tools come and go between pages.
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => {
                let after = cursor.strip_prefix("after:").ok_or_else(invalid_cursor)?;
                tools
                    .iter()
                    .position(|t| t.name.as_str() > after)
                    .unwrap_or(tools.len())
            }
        };
        let end = (start + self.options.tool_page_size.max(1)).min(tools.len());
        let mut page = ListToolsResult::with_all_items(tools[start..end].iter().map(to_mcp_tool).collect());
        if end < tools.len() {
            page.next_cursor = Some(format!("after:{}", tools[end - 1].name));
        }
        Ok(page)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.get(name).filter(|t| self.offers(t)).map(|t| to_mcp_tool(&t))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let access = self.access(&ctx);
        let Some(tool) = self.tools.get(&name).filter(|t| access.filter.allows(t)) else {
            return Err(ErrorData::invalid_params(format!("Unknown tool: {name}"), None));
        };
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let binding = call_binding("tools/call", &name, &args);
        let call = self.call_context(
            &ctx,
            &binding,
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let answer = self.run_call(&call, &tool, args, &binding, &access, &ctx).await;
        // Its log messages and progress reach the client before its result.
        call.flush().await;
        answer
    }

    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated in 2026-07-28 and still served to 2025-11-25"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.session.log_level.lock().unwrap_or_else(|e| e.into_inner()) = Some(from_mcp_level(request.level));
        Ok(())
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        // Legacy sessions hear about tool and prompt list changes on the session itself.
        let mut tools = self.tools.subscribe();
        tools.mark_unchanged();
        let mut prompts = self.prompts.subscribe();
        prompts.mark_unchanged();
        let peer = ctx.peer;
        // Index figures count every note: only clients that see the whole workspace hear them.
        let scoped_token = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Grant>())
            .is_some_and(|grant| grant.scope.is_some());
        if self.workspace.scope().is_none() && !scoped_token {
            tokio::spawn(report_index_progress(
                self.workspace.clone(),
                Arc::downgrade(&self.session),
                peer.clone(),
            ));
        }
        tokio::spawn(async move {
            loop {
                let sent = tokio::select! {
                    changed = tools.changed() => match changed {
                        Ok(()) => peer.notify_tool_list_changed().await,
                        Err(_) => return,
                    },
                    changed = prompts.changed() => match changed {
                        Ok(()) => peer.notify_prompt_list_changed().await,
                        Err(_) => return,
                    },
                };
                if sent.is_err() {
                    return;
                }
            }
        });
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut filter = SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .build();
        // Every requested URI is accepted: one that does not exist yet is notified when it appears.
        filter.resource_subscriptions = requested.resource_subscriptions.clone();
        Some(filter)
    }

    async fn listen(&self, ctx: SubscriptionContext) -> Result<(), ErrorData> {
        let accepted = ctx.accepted().clone();
        let mut tools = self.tools.subscribe();
        tools.mark_unchanged();
        let mut prompts = self.prompts.subscribe();
        prompts.mark_unchanged();
        let uris: HashSet<String> = accepted
            .resource_subscriptions
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect();
        let mut changes = (!uris.is_empty()).then(|| self.watcher.subscribe());
        let access = self.access(ctx.request_context());
        loop {
            tokio::select! {
                () = ctx.cancelled() => return Ok(()),
                changed = tools.changed(), if accepted.tools_list_changed == Some(true) => {
                    if changed.is_err() || ctx.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
                changed = prompts.changed(), if accepted.prompts_list_changed == Some(true) => {
                    if changed.is_err() || ctx.sink().notify_prompt_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
                changed = async { changes.as_mut()?.recv().await.ok() }, if changes.is_some() => {
                    let Some(changed) = changed else { continue };
                    if access.revoked() {
                        return Ok(());
                    }
                    // Only what the listener can reach now: a note moved out of its scope is not reported.
                    let touched: Vec<String> = uris.iter().filter(|u| changed.contains(*u)).cloned().collect();
                    let (resources, access) = (self.resources.clone(), access.clone());
                    let visible = tokio::task::spawn_blocking(move || {
                        touched.into_iter().filter(|uri| resource_exists(&resources, uri, &access)).collect::<Vec<_>>()
                    })
                    .await
                    .unwrap_or_default();
                    for uri in visible {
                        if ctx.sink().notify_resource_updated(uri.clone()).await.is_err() {
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let access = self.access(&ctx);
        if !resource_exists(&self.resources, &request.uri, &access) {
            return Err(ErrorData::resource_not_found(
                format!("Resource not found: {}", request.uri),
                Some(json!({ "uri": request.uri })),
            ));
        }
        self.session
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(request.uri, access);
        self.ensure_notifier(ctx.peer.clone());
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&request.uri);
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let offset = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .strip_prefix("offset:")
                .and_then(|n| n.parse().ok())
                .ok_or_else(invalid_cursor)?,
        };
        let access = self.access(&ctx);
        let page = access
            .workspace
            .read(access.actor.actor(), |r| {
                r.all_notes(Page {
                    offset,
                    limit: RESOURCE_PAGE,
                })
            })
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut resources: Vec<Resource> = Vec::new();
        if offset == 0 {
            resources.extend(self.resources.statics().into_iter().map(|r| {
                Resource::new(r.uri, r.name.clone())
                    .with_title(r.name)
                    .with_mime_type(r.mime_type)
            }));
        }
        resources.extend(page.items.iter().filter(|n| !n.is_protected).map(|n| {
            Resource::new(format!("{NOTE_URI}{}", n.id), n.title.clone())
                .with_title(n.title.clone())
                .with_mime_type("text/markdown")
        }));
        let mut result = ListResourcesResult::with_all_items(resources);
        if page.has_more {
            result.next_cursor = Some(format!("offset:{}", offset + page.items.len() as u64));
        }
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut templates = vec![
            ResourceTemplate::new(format!("{NOTE_URI}{{id}}"), "note")
                .with_title("Note")
                .with_description("A note's Markdown body, by note id (search_notes and list_notes return ids).")
                .with_mime_type("text/markdown"),
            ResourceTemplate::new(format!("{NOTEBOOK_URI}{{id}}"), "notebook")
                .with_title("Notebook")
                .with_description("A notebook's path, sub-notebooks and notes (their ids and titles), as JSON.")
                .with_mime_type("application/json"),
            ResourceTemplate::new(format!("{ATTACHMENT_URI}{{id}}"), "attachment")
                .with_title("Attachment")
                .with_description("An attachment's bytes, with its own MIME type (read_note lists attachment ids).")
                .with_mime_type("application/octet-stream"),
        ];
        templates.extend(self.resources.templates().into_iter().map(|t| {
            ResourceTemplate::new(t.uri_template, t.name.clone())
                .with_title(t.name)
                .with_description(t.description)
                .with_mime_type(t.mime_type)
        }));
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let not_found = || {
            ErrorData::resource_not_found(
                format!("Resource not found: {uri}"),
                Some(serde_json::json!({ "uri": uri })),
            )
        };
        if let Some((body, mime_type)) = self.resources.read(&uri) {
            return Ok(ReadResourceResult::new(vec![resource_contents(body, &uri, &mime_type)]).into());
        }
        let (kind, id) = quire_uri(&uri).ok_or_else(not_found)?;
        let Access {
            workspace: ws, actor, ..
        } = self.access(&ctx);
        let id = id.to_owned();
        let read = tokio::task::spawn_blocking(move || {
            ws.read(actor.actor(), |r| match kind {
                QuireResource::Note => r
                    .note(&id)
                    .map(|note| (ResourceBody::Text(note.body), "text/markdown".to_owned())),
                QuireResource::Notebook => {
                    notebook_listing(r, &id).map(|json| (ResourceBody::Text(json), "application/json".to_owned()))
                }
                QuireResource::Attachment => {
                    let info = r.attachment(&id)?;
                    let data = r.attachment_data(&id)?;
                    Ok((ResourceBody::Blob(data), info.mime))
                }
            })
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        match read {
            Ok((body, mime_type)) => {
                Ok(ReadResourceResult::new(vec![resource_contents(body, &uri, &mime_type)]).into())
            }
            Err(quire_core::Error::NotFound(_)) => Err(not_found()),
            Err(quire_core::Error::ProtectedContent) => Err(ErrorData::invalid_params(
                format!("{uri} is protected; its content cannot be read."),
                None,
            )),
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self
            .prompts
            .list()
            .into_iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "title": p.title,
                    "description": p.description,
                    "arguments": p.arguments.iter().map(|a| json!({
                        "name": a.name, "description": a.description, "required": a.required
                    })).collect::<Vec<_>>(),
                })
            })
            .collect::<Vec<_>>();
        serde_json::from_value(json!({ "prompts": prompts, "resultType": "complete" }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args: BTreeMap<String, String> = request
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
            .collect();
        let binding = call_binding("prompts/get", &request.name, &json!(args));
        let call = self.call_context(
            &ctx,
            &binding,
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let access = self.access(&ctx);
        let context: Arc<dyn CallContext> = call.clone();
        let output = self
            .prompts
            .get(&access.workspace, &access.actor, &request.name, &args, Some(context))
            .await;
        call.flush().await;
        match call.unfinished(&self.seal, &binding) {
            Some(Unfinished::InputRequired(result)) => return Ok(result.into()),
            Some(Unfinished::MissingCapability(kind)) => return Err(missing_capability(kind)),
            None => {}
        }
        // An unknown prompt, a missing argument, a note not found: all the caller's to fix.
        let output = output.map_err(|e: PromptError| ErrorData::invalid_params(e.to_string(), None))?;
        let messages: Vec<Value> = output
            .messages
            .into_iter()
            .map(
                |m| json!({"role": if m.from_user { "user" } else { "assistant" }, "content": content_json(m.content)}),
            )
            .collect();
        let mut result = json!({ "messages": messages, "resultType": "complete" });
        if let Some(description) = output.description {
            result["description"] = json!(description);
        }
        let result: GetPromptResult =
            serde_json::from_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let Access {
            workspace: ws, actor, ..
        } = self.access(&ctx);
        let typed = request.argument.value.clone();
        let argument = request.argument.name.clone();
        let prompts = self.prompts.clone();
        let resources = self.resources.clone();
        let reference = request.r#ref.clone();
        let (values, total) = tokio::task::spawn_blocking(move || match reference {
            Reference::Prompt(prompt) => prompts
                .complete(&ws, &actor, &prompt.name, &argument, &typed)
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None)),
            Reference::Resource(template) => {
                if let Some(values) = resources.complete(&template.uri, &argument, &typed) {
                    let total = values.len();
                    return Ok((values, total));
                }
                Ok(complete_quire_template(&ws, &actor, &template.uri, &argument, &typed))
            }
            _ => Ok((Vec::new(), 0)),
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))??;
        let has_more = total > values.len();
        serde_json::from_value(json!({
            "completion": {"values": values, "total": total, "hasMore": has_more},
            "resultType": "complete"
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

/// How often a session that asked for info logs hears how far the semantic index is.
const INDEX_REPORT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(2);

/// Tells a legacy session, when it asked for logs at info level or below, how the semantic index progresses: how
/// many changes wait to be indexed while it works, and when it has caught up. Sessions that did not ask cost a
/// timer and no query.
#[expect(
    deprecated,
    reason = "logging is deprecated in 2026-07-28 and still served to 2025-11-25 sessions"
)]
async fn report_index_progress(workspace: Workspace, session: std::sync::Weak<Session>, peer: Peer<RoleServer>) {
    let mut last_pending: Option<u64> = None;
    loop {
        tokio::time::sleep(INDEX_REPORT_INTERVAL).await;
        let Some(session) = session.upgrade() else { return };
        let wants = session
            .log_level
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|level| level <= LogLevel::Info);
        drop(session);
        if !wants {
            continue;
        }
        let ws = workspace.clone();
        let Ok(Ok(status)) = tokio::task::spawn_blocking(move || ws.index_status()).await else {
            continue;
        };
        let pending = status.pending_changes;
        let message = match (last_pending, pending) {
            (Some(before), now) if before == now => None,
            (Some(before), 0) if before > 0 => Some(format!(
                "semantic index caught up: {} notes in {} chunks",
                status.indexed_notes, status.chunks
            )),
            (_, 0) => None,
            (_, now) => Some(format!(
                "semantic index: {now} changes to index, {} notes indexed so far",
                status.indexed_notes
            )),
        };
        last_pending = Some(pending);
        if let Some(message) = message
            && peer
                .notify_logging_message(crate::context::log_param(LogLevel::Info, &message))
                .await
                .is_err()
        {
            return;
        }
    }
}

/// What to answer for a call that stopped for the client.
fn unfinished_call(unfinished: Unfinished) -> Result<CallToolResponse, ErrorData> {
    match unfinished {
        Unfinished::InputRequired(result) => Ok(result.into()),
        Unfinished::MissingCapability(kind) => Err(missing_capability(kind)),
    }
}

/// Completes the id of quire's own templates from what a person types: part of a note's title gives the ids of the
/// notes that match, part of a notebook's path the ids of those notebooks.
fn complete_quire_template(
    ws: &Workspace,
    actor: &ToolActor,
    template: &str,
    argument: &str,
    typed: &str,
) -> (Vec<String>, usize) {
    use quire_tools::{Completes, prompts};
    if argument != "id" {
        return (Vec::new(), 0);
    }
    let (kind, names) = if template == format!("{NOTE_URI}{{id}}") {
        (
            QuireResource::Note,
            prompts::complete(ws, actor.actor(), &Completes::Note, typed).0,
        )
    } else if template == format!("{NOTEBOOK_URI}{{id}}") {
        (
            QuireResource::Notebook,
            prompts::complete(ws, actor.actor(), &Completes::Notebook, typed).0,
        )
    } else {
        return (Vec::new(), 0);
    };
    let ids: Vec<String> = ws
        .read(actor.actor(), |r| {
            let mut ids = Vec::new();
            for name in &names {
                let id = match kind {
                    QuireResource::Notebook => notebook_by_path(r, name),
                    _ => prompts::find_note(r, name).ok().map(|n| n.summary.id),
                };
                ids.extend(id.filter(|id| !ids.contains(id)));
            }
            Ok::<_, quire_core::Error>(ids)
        })
        .unwrap_or_default();
    let total = ids.len();
    (ids, total)
}

/// The id of the notebook at a path such as `Work/Projects`, as this reader sees the tree.
fn notebook_by_path(r: &quire_core::Reader<'_>, path: &str) -> Option<String> {
    let notebooks = r.notebooks().ok()?;
    let mut parent = quire_core::ROOT_NOTEBOOK_ID.to_owned();
    for part in path.split('/') {
        parent = notebooks
            .iter()
            .find(|b| b.parent_id.as_deref() == Some(parent.as_str()) && b.title == part)?
            .id
            .clone();
    }
    Some(parent)
}

/// A notebook as JSON: its path, sub-notebooks and notes.
fn notebook_listing(r: &quire_core::Reader<'_>, id: &str) -> quire_core::Result<String> {
    let notebook = r.notebook(id)?;
    let path: Vec<String> = r
        .notebook_path(id)?
        .into_iter()
        .filter(|b| !b.id.starts_with('_'))
        .map(|b| b.title)
        .collect();
    let children: Vec<Value> = r
        .notebooks()?
        .into_iter()
        .filter(|b| b.parent_id.as_deref() == Some(id))
        .map(|b| json!({"id": b.id, "title": b.title, "uri": format!("{NOTEBOOK_URI}{}", b.id)}))
        .collect();
    let notes = r.notes_in_notebook(id, Page { offset: 0, limit: 1000 })?;
    let note_list: Vec<Value> = notes
        .items
        .iter()
        .map(|n| json!({"id": n.id, "title": n.title, "uri": format!("{NOTE_URI}{}", n.id), "protected": n.is_protected}))
        .collect();
    Ok(json!({
        "id": notebook.id,
        "title": notebook.title,
        "path": path.join("/"),
        "protected": notebook.is_protected,
        "notebooks": children,
        "notes": note_list,
        "notes_total": notes.total,
    })
    .to_string())
}

fn resource_contents(body: ResourceBody, uri: &str, mime_type: &str) -> ResourceContents {
    match body {
        ResourceBody::Text(text) => ResourceContents::text(text, uri.to_owned()).with_mime_type(mime_type),
        ResourceBody::Blob(bytes) => {
            ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri.to_owned())
                .with_mime_type(mime_type)
        }
    }
}

/// A content block as MCP JSON.
fn content_json(item: ContentItem) -> Value {
    serde_json::to_value(content_block(item)).unwrap_or(Value::Null)
}

/// The MCP block for a piece of media a tool returned.
fn content_block(item: ContentItem) -> ContentBlock {
    match item {
        ContentItem::Text { text } => ContentBlock::text(text),
        ContentItem::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        ContentItem::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        ContentItem::Resource {
            uri,
            mime_type,
            text,
            blob,
        } => {
            let contents = match (text, blob) {
                (_, Some(blob)) => ResourceContents::blob(blob, uri),
                (text, None) => ResourceContents::text(text.unwrap_or_default(), uri),
            };
            ContentBlock::resource(match mime_type {
                Some(mime) => contents.with_mime_type(mime),
                None => contents,
            })
        }
    }
}

/// Serves `server` over standard input and output until the client closes its end.
/// Nothing but protocol messages is written to stdout.
///
/// When both are pipes (as when an AI client starts `quire mcp`), they are read and written through the runtime's
/// event loop; tokio's own stdin and stdout hand every read and write to a blocking thread, which cost a third of
/// the time of a `read_note` round trip (`cargo xtask bench mcp`). Anything else (a terminal, a file) uses those.
pub async fn serve_stdio(server: QuireServer) -> Result<(), Error> {
    let running = match stdio_pipes() {
        Some(pipes) => server.serve(pipes).await,
        None => server.serve(rmcp::transport::stdio()).await,
    }
    .map_err(|e| Error::Transport(e.to_string()))?;
    running.waiting().await.map_err(|e| Error::Transport(e.to_string()))?;
    Ok(())
}

/// Standard input and output as non-blocking pipe ends, when both are pipes.
///
/// Both are checked before either is converted: converting puts the file description in non-blocking mode, and
/// a stdin made non-blocking and then read through tokio's blocking `stdin()` (because stdout turned out to be a
/// file or a terminal) failed with `EAGAIN` after the first message.
#[cfg(unix)]
fn stdio_pipes() -> Option<(tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let is_pipe = |fd: &std::os::fd::OwnedFd| {
        fd.try_clone()
            .ok()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata().ok())
            .is_some_and(|m| m.file_type().is_fifo())
    };
    if !is_pipe(&input) || !is_pipe(&output) {
        return None;
    }
    let receiver = tokio::net::unix::pipe::Receiver::from_file(std::fs::File::from(input)).ok()?;
    let sender = tokio::net::unix::pipe::Sender::from_file(std::fs::File::from(output)).ok()?;
    Some((receiver, sender))
}

#[cfg(not(unix))]
fn stdio_pipes() -> Option<(tokio::io::Stdin, tokio::io::Stdout)> {
    None
}
