//! The `ServerHandler`: tools, resources and change notifications over the registry, for both protocol eras.

use std::sync::Arc;

use quire_core::{Page, Workspace};
use quire_tools::{ContentItem, Effect, Progress, ProgressReporter, ToolActor, ToolFilter, ToolInfo, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::Error;

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
their title only and cannot be read or changed. Every change you make is saved as a revision and can be undone \
by the user."
);

/// Which tools the server offers, and how it pages them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    /// Which tools are offered (read-only only, disabled ones): the same filter the agent uses.
    pub filter: ToolFilter,
    /// Tools per `tools/list` page.
    pub tool_page_size: usize,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            filter: ToolFilter::default(),
            tool_page_size: TOOL_PAGE,
        }
    }
}

/// quire's MCP server: a cheap handle (clone it per connection) over one workspace and one registry.
#[derive(Clone)]
pub struct QuireServer {
    workspace: Workspace,
    tools: Arc<ToolRegistry>,
    options: Arc<ServerOptions>,
}

impl QuireServer {
    /// A server for `workspace` offering the tools of `tools` that `options` allows.
    pub fn new(workspace: Workspace, tools: Arc<ToolRegistry>, options: ServerOptions) -> QuireServer {
        QuireServer {
            workspace,
            tools,
            options: Arc::new(options),
        }
    }

    fn offers(&self, tool: &ToolInfo) -> bool {
        self.options.filter.allows(tool)
    }

    fn offered(&self) -> Vec<ToolInfo> {
        self.options.filter.offered(&self.tools)
    }

    fn actor(ctx: &RequestContext<RoleServer>) -> ToolActor {
        let client = ctx.client_info().map(|i| i.name).filter(|n| !n.trim().is_empty());
        ToolActor::mcp(client.unwrap_or_else(|| "unknown client".to_owned()))
    }
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
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("quire", env!("CARGO_PKG_VERSION")).with_title("quire notes"))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.offered();
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
        if !self.tools.get(&name).is_some_and(|t| self.offers(&t)) {
            return Err(ErrorData::invalid_params(format!("Unknown tool: {name}"), None));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let actor = Self::actor(&ctx);
        let progress = progress_reporter(&ctx);
        let call = self
            .tools
            .call_async_with_progress(&self.workspace, &actor, &name, args, progress);
        let result = tokio::select! {
            result = call => result,
            () = ctx.ct.cancelled() => {
                // The client gave up; a write already under way still finishes or rolls back as a whole.
                return Ok(CallToolResult::error(vec![ContentBlock::text("The call was cancelled.")]).into());
            }
        };
        match result {
            Ok(result) if result.is_error => Ok(CallToolResult::structured_error(result.value).into()),
            Ok(result) => {
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

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        // Legacy sessions hear about tool list changes on the session itself.
        let mut changes = self.tools.subscribe();
        changes.mark_unchanged();
        let peer = ctx.peer;
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
        });
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, ctx: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.tools.subscribe();
        changes.mark_unchanged();
        loop {
            tokio::select! {
                () = ctx.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || ctx.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
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
        let actor = Self::actor(&ctx);
        let page = self
            .workspace
            .read(actor.actor(), |r| {
                r.all_notes(Page {
                    offset,
                    limit: RESOURCE_PAGE,
                })
            })
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let resources = page
            .items
            .iter()
            .filter(|n| !n.is_protected)
            .map(|n| {
                Resource::new(format!("{NOTE_URI}{}", n.id), n.title.clone())
                    .with_title(n.title.clone())
                    .with_mime_type("text/markdown")
            })
            .collect();
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
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{NOTE_URI}{{id}}"), "note")
                .with_title("Note")
                .with_description("A note's Markdown body, by note id (search_notes and list_notes return ids).")
                .with_mime_type("text/markdown"),
        ]))
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
        let id = uri
            .strip_prefix(NOTE_URI)
            .filter(|id| !id.is_empty() && !id.contains('/'))
            .ok_or_else(not_found)?;
        let actor = Self::actor(&ctx);
        match self.workspace.read(actor.actor(), |r| r.note(id)) {
            Ok(note) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(note.body, uri.clone()).with_mime_type("text/markdown"),
            ])
            .into()),
            Err(quire_core::Error::NotFound(_)) => Err(not_found()),
            Err(quire_core::Error::ProtectedContent) => Err(ErrorData::invalid_params(
                format!("{uri} is a protected note; its content cannot be read."),
                None,
            )),
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }
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

/// Forwards a tool's progress reports as `notifications/progress`, in order, when the client sent a token.
fn progress_reporter(ctx: &RequestContext<RoleServer>) -> Option<ProgressReporter> {
    let token = ctx.meta.get_progress_token()?;
    let peer = ctx.peer.clone();
    let (sender, mut reports) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    tokio::spawn(async move {
        while let Some(report) = reports.recv().await {
            let mut param = ProgressNotificationParam::new(token.clone(), report.progress);
            param.total = report.total;
            param.message = report.message;
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    Some(Arc::new(move |report| {
        let _ = sender.send(report);
    }))
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
