//! Tools over MCP: `tools/list` in pages, a registry tool as MCP describes it, and `tools/call`: the confirmation a
//! destructive tool asks first, the call with its progress, logs and cancellation, and its answer.

use std::sync::Arc;

use quire_tools::{CallContext, ClientKind, ClientRequest, Effect, Elicited, LogLevel, ToolInfo};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, ListToolsResult,
    PaginatedRequestParams, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::content::content_block;
use crate::context::{McpCall, Unfinished, call_binding, missing_capability};
use crate::plugin_tools;
use crate::server::{Access, ConfirmDestructive, QuireServer, client_name, invalid_cursor};

/// The longest a tool list or call waits for plugins still starting with the server.
const ARRIVAL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The key of the confirmation asked before a destructive call.
const CONFIRM_KEY: &str = "quire_confirm";

/// One page of `tools/list`: the tools this request may call, by name, after the cursor.
pub(crate) async fn list(
    server: &QuireServer,
    request: Option<PaginatedRequestParams>,
    ctx: RequestContext<RoleServer>,
) -> Result<ListToolsResult, ErrorData> {
    let access = server.access(&ctx);
    // Plugins starting with the server bring their tools first: a client that lists once, at its start, sees them.
    server.tools.settled(ARRIVAL_WAIT).await;
    let tools = access.offered(&server.tools);
    let apps = crate::review_app::offered(server, &ctx);
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
    let end = (start + server.options.tool_page_size.max(1)).min(tools.len());
    let mut items: Vec<Tool> = tools[start..end].iter().map(to_mcp_tool).collect();
    if apps {
        // A host that renders MCP Apps shows staged changes inline; its app-only tools come on the last page.
        items = items
            .into_iter()
            .map(|t| crate::review_app::with_view(server, &access, t))
            .collect();
        if end == tools.len() && (access.staged || !access.filter.read_only) {
            items.extend(crate::review_app::app_tools());
        }
    }
    let mut page = ListToolsResult::with_all_items(items);
    if end < tools.len() {
        page.next_cursor = Some(format!("after:{}", tools[end - 1].name));
    }
    Ok(page)
}

/// A tool by name, when this server offers it.
pub(crate) fn get(server: &QuireServer, name: &str) -> Option<Tool> {
    server
        .tools
        .get(name)
        .filter(|t| t.exposure == quire_tools::Exposure::All && server.options.filter.allows(t))
        .map(|t| to_mcp_tool(&t))
}

/// `tools/call`: the call, with its log messages and progress sent before its result.
pub(crate) async fn call(
    server: &QuireServer,
    request: CallToolRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let name = request.name.to_string();
    let access = server.access(&ctx);
    let arguments = request.arguments.clone().map(Value::Object).unwrap_or(Value::Null);
    if let Some(answer) = crate::review_app::call(server, &ctx, &access, &name, &arguments).await {
        return answer;
    }
    if server.tools.get(&name).is_none() {
        server.tools.settled(ARRIVAL_WAIT).await;
    }
    let Some(tool) = server.tools.get(&name).filter(|t| access.offers(t)) else {
        return Err(ErrorData::invalid_params(format!("Unknown tool: {name}"), None));
    };
    let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
    let binding = call_binding("tools/call", &name, &args);
    let call = server.call_context(
        &ctx,
        &binding,
        request.input_responses,
        request.request_state.as_deref(),
    )?;
    let answer = run_call(server, &call, &tool, args, &binding, &access, &ctx).await;
    // Its log messages and progress reach the client before its result.
    call.flush().await;
    answer
}

/// A tool call once its context exists: the confirmation of a destructive tool, the call, its answer.
async fn run_call(
    server: &QuireServer,
    call: &Arc<McpCall>,
    tool: &ToolInfo,
    args: Value,
    binding: &[u8],
    access: &Access,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let name = tool.name.as_str();
    let mut workspace = access.workspace.clone();
    // A client whose writes wait for review cannot have a plugin's done unasked: they happen outside quire.
    let outside_write = plugin_tools::is_outside(tool) && access.staged && tool.effect != Effect::ReadOnly;
    if tool.needs_approval || outside_write {
        // The user may take a while to answer, or never: a client that gives up cancels the question too.
        let confirmed = tokio::select! {
            confirmed = confirm(server, call, tool, &args, access, ctx) => confirmed?,
            () = ctx.ct.cancelled() => Go::Answer(refusal(&format!("{name} did not run: the call was cancelled."))),
        };
        match confirmed {
            Go::Run => {}
            Go::Stage if !access.staged => workspace = workspace.staged(),
            Go::Stage => {}
            Go::Answer(answer) => return Ok(answer),
        }
    }
    if let Some(unfinished) = call.unfinished(&server.seal, binding) {
        return unfinished_call(unfinished);
    }
    call.log_message(LogLevel::Debug, &format!("calling {name}"));
    let context: Arc<dyn CallContext> = call.clone();
    let run = server
        .tools
        .call_async_with(&workspace, &access.actor, name, args, Some(context));
    let result = tokio::select! {
        result = run => result,
        () = ctx.ct.cancelled() => {
            // The client gave up; a write already under way still finishes or rolls back as a whole.
            return Ok(CallToolResult::error(vec![ContentBlock::text("The call was cancelled.")]).into());
        }
    };
    if let Some(unfinished) = call.unfinished(&server.seal, binding) {
        return unfinished_call(unfinished);
    }
    match result {
        Ok(result) if result.is_error => {
            let message = result.error_message().unwrap_or("failed").to_owned();
            call.log_message(LogLevel::Warning, &format!("{name} failed: {message}"));
            if plugin_tools::is_outside(tool) {
                return Ok(plugin_tools::failure(&message).into());
            }
            Ok(CallToolResult::structured_error(result.value).into())
        }
        Ok(result) if plugin_tools::is_outside(tool) => {
            call.log_message(LogLevel::Info, &format!("{name} done"));
            Ok(plugin_tools::answer(result).into())
        }
        Ok(result) => {
            let mut answer = CallToolResult::structured(result.value);
            answer.content.extend(result.content.into_iter().map(content_block));
            match workspace.staging_report() {
                Some(report) if !report.staged.is_empty() || !report.shown.is_empty() => {
                    mark_review(&mut answer, &report);
                    call.log_message(LogLevel::Info, &format!("{name} staged for review"));
                }
                _ => call.log_message(LogLevel::Info, &format!("{name} done")),
            }
            Ok(answer.into())
        }
        Err(quire_tools::Error::UnknownTool { name }) => {
            Err(ErrorData::invalid_params(format!("Unknown tool: {name}"), None))
        }
        Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
    }
}

/// What to do with a destructive call once the user was asked (or not).
enum Go {
    /// Run it.
    Run,
    /// Stage it for the user's review in quire instead of running it.
    Stage,
    /// Answer this instead (a refusal, or the client must answer first).
    Answer(CallToolResponse),
}

/// Tells the model that its write was staged for review (or that what it read holds its pending changes): a text
/// block and `_meta["quire/review"]`.
fn mark_review(answer: &mut CallToolResult, report: &quire_core::review::StagingReport) {
    let mut sets: Vec<i64> = report.staged.iter().chain(&report.shown).copied().collect();
    sets.sort_unstable();
    sets.dedup();
    let uris: Vec<String> = sets.iter().map(|id| format!("quire://review/{id}")).collect();
    let text = if let Some(set) = report.staged.last() {
        format!(
            "Not applied yet: the user reviews this client's changes in quire before they are saved. This change \
             waits in review {set} (quire://review/{set}: read or subscribe to it to hear whether it was accepted). \
             Your later reads already show it, marked as pending. Tell the user it awaits their review."
        )
    } else {
        format!(
            "This answer includes your changes still waiting for the user's review ({}): they are not saved yet.",
            uris.join(", ")
        )
    };
    answer.content.push(ContentBlock::text(text));
    let meta = json!({"status": if report.staged.is_empty() { "shows_pending" } else { "staged" }, "reviews": uris});
    let mut all = answer.meta.take().unwrap_or_default();
    all.0.insert("quire/review".into(), meta);
    answer.meta = Some(all);
}

/// Asks the user before a destructive call, as configured.
async fn confirm(
    server: &QuireServer,
    call: &McpCall,
    tool: &ToolInfo,
    args: &Value,
    access: &Access,
    ctx: &RequestContext<RoleServer>,
) -> Result<Go, ErrorData> {
    let policy = server.options.confirm_destructive;
    let can_ask = call.supports(ClientKind::Elicitation);
    let refuse = |why: &str| {
        call.log_message(LogLevel::Warning, &format!("{} was refused: {why}", tool.name));
        Ok(Go::Answer(refusal(&format!(
            "{} is not allowed over MCP on this server: {why}. The user can do it in quire.",
            tool.name
        ))))
    };
    // A plugin's tool: what it does cannot be staged, so the user is asked or it does not run.
    let message = if plugin_tools::is_outside(tool) {
        match plugin_tools::gate(policy, can_ask, !tool.needs_approval) {
            plugin_tools::Gate::Run => return Ok(Go::Run),
            plugin_tools::Gate::Refuse(why) => return refuse(why),
            plugin_tools::Gate::Ask => plugin_tools::question(&client_name(ctx), tool, args),
        }
    } else {
        match quire_question(policy, can_ask, access, tool, args, ctx) {
            Ok(message) => message,
            Err(Decided::Run) => return Ok(Go::Run),
            Err(Decided::Stage) => return Ok(Go::Stage),
            Err(Decided::Refuse(why)) => return refuse(why),
        }
    };
    let question = ClientRequest::Elicit {
        message,
        schema: json!({"type": "object", "properties": {}}),
    };
    match call.request_all(vec![(CONFIRM_KEY.into(), question)]).await {
        Ok(replies) => match replies.into_iter().next() {
            Some(quire_tools::ClientReply::Elicited(Elicited::Accepted(_))) => Ok(Go::Run),
            _ => {
                call.log_message(LogLevel::Notice, &format!("the user refused {}", tool.name));
                Ok(Go::Answer(refusal(&format!(
                    "The user refused: {} did not run, nothing changed. Do not retry unless the user asks.",
                    tool.name
                ))))
            }
        },
        Err(quire_tools::ClientError::InputRequired) => Ok(Go::Run),
        Err(e) => Ok(Go::Answer(refusal(&format!(
            "{} did not run: the user could not be asked ({e}).",
            tool.name
        )))),
    }
}

/// What [`quire_question`] decided without a question.
enum Decided {
    Run,
    Stage,
    Refuse(&'static str),
}

/// The question before one of quire's own destructive tools, or what to do without asking (as configured; a
/// client that cannot ask may have the call staged).
fn quire_question(
    policy: ConfirmDestructive,
    can_ask: bool,
    access: &Access,
    tool: &ToolInfo,
    args: &Value,
    ctx: &RequestContext<RoleServer>,
) -> Result<String, Decided> {
    match (policy, can_ask) {
        (ConfirmDestructive::Allow, _) | (ConfirmDestructive::Ask, false) => return Err(Decided::Run),
        (ConfirmDestructive::AskOrStage, false) => return Err(Decided::Stage),
        (ConfirmDestructive::Deny, _) => return Err(Decided::Refuse("its settings refuse destructive tools")),
        (ConfirmDestructive::AskOrDeny, false) => {
            return Err(Decided::Refuse("it asks the user first, and this client cannot ask"));
        }
        _ => {}
    }
    // A client whose writes are staged anyway: the user decides in quire, nothing to ask here.
    if access.staged {
        return Err(Decided::Run);
    }
    // Nothing to ask about when the call is going to fail anyway (no such note, or a protected one): the tool
    // says why.
    describe_destructive(access, tool, args, &client_name(ctx)).ok_or(Decided::Run)
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

/// The MCP description of a registry tool: annotations follow from the effect.
fn to_mcp_tool(info: &ToolInfo) -> Tool {
    let schema = |value: &Value| -> Arc<JsonObject> { Arc::new(value.as_object().cloned().unwrap_or_default()) };
    // A plugin's tool reaches what is outside the workspace.
    let annotations = ToolAnnotations::new()
        .read_only(info.effect == Effect::ReadOnly)
        .destructive(info.effect == Effect::Destructive)
        .idempotent(info.effect == Effect::ReadOnly)
        .open_world(plugin_tools::is_outside(info));
    let mut tool = Tool::new(info.name.clone(), info.description.clone(), schema(&info.input_schema))
        .with_title(info.title.clone())
        .with_annotations(annotations);
    if let Some(output) = &info.output_schema {
        tool = tool.with_raw_output_schema(schema(output));
    }
    if info.has_page {
        tool.meta = plugin_tools::page_meta(&info.name);
    }
    tool
}

/// What to answer for a call that stopped for the client.
fn unfinished_call(unfinished: Unfinished) -> Result<CallToolResponse, ErrorData> {
    match unfinished {
        Unfinished::InputRequired(result) => Ok(result.into()),
        Unfinished::MissingCapability(kind) => Err(missing_capability(kind)),
    }
}
