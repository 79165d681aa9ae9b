//! Plugin tools over MCP: what differs from quire's own tools when a client calls a tool that runs outside quire (an
//! MCP plugin's, relayed to its process). What they do happens outside quire, so a call that asks first is asked or refused,
//! never staged; their answer goes to the client as the plugin gave it (text, structured content, images, sounds,
//! links); and a tool's page (an MCP Apps view) is served under quire's own address, read from the plugin.

use quire_tools::{ContentItem, ToolInfo, ToolResult};
use rmcp::model::{CallToolResult, ContentBlock, ReadResourceResponse, ReadResourceResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::content::{content_block, resource_contents};
use crate::resources::ResourceBody;
use crate::server::{ConfirmDestructive, QuireServer};

/// Where quire serves a tool's page: `ui://quire/tool/NAME`.
const PAGE_PREFIX: &str = "ui://quire/tool/";
/// The MIME type of an MCP Apps view.
const APP_MIME: &str = "text/html;profile=mcp-app";

/// Whether a tool runs outside quire (relayed to a plugin's process), where nothing can be staged or undone.
pub(crate) fn is_outside(tool: &ToolInfo) -> bool {
    tool.outside
}

/// The address of a tool's page.
pub(crate) fn page_uri(name: &str) -> String {
    format!("{PAGE_PREFIX}{name}")
}

/// What to do with a call of an outside tool that asks first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Run it without asking (the server's settings allow destructive calls).
    Run,
    /// Ask the user through the client.
    Ask,
    /// Refuse it, for this reason.
    Refuse(&'static str),
}

/// What to do with a call of an outside tool that asks first, before asking; `reviewed`: it asks only because the
/// client's writes wait for review.
pub(crate) fn gate(policy: ConfirmDestructive, can_ask: bool, reviewed: bool) -> Gate {
    match (policy, can_ask) {
        (ConfirmDestructive::Allow, _) => Gate::Run,
        (ConfirmDestructive::Deny, _) if !reviewed => Gate::Refuse("its settings refuse destructive tools"),
        (_, true) => Gate::Ask,
        (_, false) if reviewed => Gate::Refuse(
            "this client's writes wait for the user's review, what a plugin does happens outside quire, where it \
             cannot wait, and this client cannot ask the user instead",
        ),
        (_, false) => Gate::Refuse(
            "it asks the user first, this client cannot ask, and what a plugin does happens outside quire, where it \
             cannot wait for review",
        ),
    }
}

/// The question put to the user before an outside tool runs.
pub(crate) fn question(client: &str, tool: &ToolInfo, args: &Value) -> String {
    let mut shown = args.to_string();
    if shown.len() > 300 {
        let mut end = 300;
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        shown.truncate(end);
        shown.push('…');
    }
    let what = match tool.effect {
        quire_tools::Effect::Destructive => "It may remove or overwrite something, outside your notes.",
        _ => "It changes something outside your notes.",
    };
    format!("{client} wants to run {} with {shown}. {what} Allow it?", tool.title)
}

/// A successful call's answer as the plugin gave it; one quire cut to its output cap is made of the text kept, the
/// structured content and the media that fit (a page it comes with is offered through the tool's listing instead).
pub(crate) fn answer(result: ToolResult) -> CallToolResult {
    if let Some(answer) = result
        .passed_on
        .and_then(|original| serde_json::from_value::<CallToolResult>(original).ok())
    {
        return answer;
    }
    let value = result.value;
    let mut content = Vec::new();
    if let Some(text) = value.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
        content.push(ContentBlock::text(text));
    }
    content.extend(
        result
            .content
            .into_iter()
            .filter(|item| !is_page(item))
            .map(content_block),
    );
    if let Some(note) = value.get("truncated").and_then(Value::as_str) {
        content.push(ContentBlock::text(note));
    }
    let mut answer = CallToolResult::success(content);
    answer.structured_content = value.get("structured").cloned();
    if answer.content.is_empty() && answer.structured_content.is_none() {
        answer.content.push(ContentBlock::text(value.to_string()));
    }
    answer
}

/// A failed call's answer: its message as text.
pub(crate) fn failure(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

fn is_page(item: &ContentItem) -> bool {
    matches!(item, ContentItem::Resource { mime_type: Some(mime), .. } if mime.starts_with("text/html;profile=mcp-app"))
}

/// The listing's `_meta` naming the tool's page.
pub(crate) fn page_meta(name: &str) -> Option<rmcp::model::MetaObject> {
    serde_json::from_value(json!({"ui": {"resourceUri": page_uri(name)}})).ok()
}

/// `resources/read` of a tool's page: `None` when `uri` is not one; the page of a tool this request may not call is
/// not found.
pub(crate) async fn read_page(
    server: &QuireServer,
    uri: &str,
    ctx: &RequestContext<RoleServer>,
) -> Option<Result<ReadResourceResponse, ErrorData>> {
    let name = uri.strip_prefix(PAGE_PREFIX)?;
    let not_found = || ErrorData::resource_not_found(format!("Resource not found: {uri}"), Some(json!({"uri": uri})));
    let access = server.access(ctx);
    let offered = server.tools.get(name).is_some_and(|t| t.has_page && access.offers(&t));
    let Some(read) = offered.then(|| server.tools.page(name)).flatten() else {
        return Some(Err(not_found()));
    };
    Some(match read.await {
        Ok(ContentItem::Resource {
            text: Some(html),
            mime_type,
            ..
        }) => {
            let mime = mime_type.unwrap_or_else(|| APP_MIME.to_owned());
            Ok(ReadResourceResult::new(vec![resource_contents(ResourceBody::Text(html), uri, &mime)]).into())
        }
        Ok(_) => Err(not_found()),
        Err(e) => Err(ErrorData::internal_error(
            e.message().to_owned(),
            Some(json!({"uri": uri})),
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_asks_first_is_asked_or_refused_never_run_unasked_unless_allowed() {
        use ConfirmDestructive::{Allow, Ask, AskOrDeny, AskOrStage, Deny};
        for policy in [Ask, AskOrStage, AskOrDeny] {
            assert_eq!(
                gate(policy, true, false),
                Gate::Ask,
                "{policy:?} asks a client that can"
            );
            let Gate::Refuse(refused) = gate(policy, false, false) else {
                panic!("{policy:?} runs a call it cannot ask about");
            };
            assert!(
                refused.contains("cannot ask") && refused.contains("outside quire"),
                "{refused}"
            );
        }
        assert_eq!(gate(Allow, false, false), Gate::Run);
        assert!(matches!(gate(Deny, true, false), Gate::Refuse(_)));
        // Asked only because the client's writes wait for review: said so.
        let Gate::Refuse(reviewed) = gate(Ask, false, true) else {
            panic!("a reviewed client's write ran unasked");
        };
        assert!(reviewed.contains("wait for the user's review"), "{reviewed}");
    }

    #[test]
    fn a_long_question_is_cut_on_a_character_boundary() {
        let registry = quire_tools::ToolRegistry::empty();
        let tool = quire_tools::PluginTool::relayed(
            "p__t",
            "Send (p)",
            "Sends.",
            json!({"type": "object"}),
            quire_tools::Effect::Destructive,
            |_, _| Box::pin(async { Ok(json!({}).into()) }),
        );
        registry.register(tool).unwrap();
        let info = registry.get("p__t").unwrap();
        assert!(is_outside(&info));
        let asked = question("Claude", &info, &json!({"text": "é".repeat(400)}));
        assert!(asked.starts_with("Claude wants to run Send (p) with {"), "{asked}");
        assert!(asked.contains("…") && asked.contains("outside your notes"), "{asked}");
    }
}
