//! Prompts and completions: `prompts/list` and `prompts/get` over the [`PromptRegistry`](quire_tools::PromptRegistry),
//! and `completion/complete` of prompt arguments and of resource template variables (an extra template's own
//! completion, or note titles and notebook paths for quire's templates, answered as ids).

use std::collections::BTreeMap;
use std::sync::Arc;

use quire_core::Workspace;
use quire_tools::{CallContext, PromptError, ToolActor};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    ListPromptsResult, Reference,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::content::content_json;
use crate::context::{Unfinished, call_binding, missing_capability};
use crate::server::{Access, QuireServer};
use crate::workspace_resources::{NOTE_URI, NOTEBOOK_URI, QuireResource};

/// `prompts/list`: every prompt with its arguments.
pub(crate) fn list(server: &QuireServer) -> Result<ListPromptsResult, ErrorData> {
    let prompts = server
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

/// `prompts/get`: the prompt rendered as the client's actor; it may ask the client first, as a tool call may.
pub(crate) async fn get(
    server: &QuireServer,
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
    let call = server.call_context(
        &ctx,
        &binding,
        request.input_responses,
        request.request_state.as_deref(),
    )?;
    let access = server.access(&ctx);
    let context: Arc<dyn CallContext> = call.clone();
    let output = server
        .prompts
        .get(&access.workspace, &access.actor, &request.name, &args, Some(context))
        .await;
    call.flush().await;
    match call.unfinished(&server.seal, &binding) {
        Some(Unfinished::InputRequired(result)) => return Ok(result.into()),
        Some(Unfinished::MissingCapability(kind)) => return Err(missing_capability(kind)),
        None => {}
    }
    // An unknown prompt, a missing argument, a note not found: all the caller's to fix.
    let output = output.map_err(|e: PromptError| ErrorData::invalid_params(e.to_string(), None))?;
    let messages: Vec<Value> = output
        .messages
        .into_iter()
        .map(|m| json!({"role": if m.from_user { "user" } else { "assistant" }, "content": content_json(m.content)}))
        .collect();
    let mut result = json!({ "messages": messages, "resultType": "complete" });
    if let Some(description) = output.description {
        result["description"] = json!(description);
    }
    let result: GetPromptResult =
        serde_json::from_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(result.into())
}

/// `completion/complete`: values for a prompt argument or a resource template variable, from what was typed.
pub(crate) async fn complete(
    server: &QuireServer,
    request: CompleteRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<CompleteResult, ErrorData> {
    let Access {
        workspace: ws, actor, ..
    } = server.access(&ctx);
    let typed = request.argument.value.clone();
    let argument = request.argument.name.clone();
    let prompts = server.prompts.clone();
    let resources = server.resources.clone();
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
                    QuireResource::Notebook => r.notebook_at_path(name)?.map(|nb| nb.id),
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
