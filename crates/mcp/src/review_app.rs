//! Reviewing staged changes inside a host that renders MCP Apps (`io.modelcontextprotocol/ui`): the writing tools
//! of a staged client name the view `ui://quire/review`, which the host shows after such a call; the view reads the
//! review and accepts or rejects its changes through two app-only tools, `review_changes` and `decide_review`, which
//! go through core's review code like the CLI and the web app.
//!
//! The app-only tools are offered only with `inline_review` on (off by default) and only to clients that declare MCP
//! Apps, hosts that are to keep app-only tools away from the model: the view's Accept is as trustworthy as that
//! separation, since a model that could call `decide_review` would accept its own changes. Everything else reviews in
//! quire itself.

use quire_core::review::Selection;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, Tool};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::server::{Access, ConfirmDestructive, QuireServer};

/// The view's address.
pub(crate) const REVIEW_APP_URI: &str = "ui://quire/review";
/// The MIME type of an MCP Apps view.
pub(crate) const APP_MIME: &str = "text/html;profile=mcp-app";
/// The view itself.
pub(crate) const REVIEW_APP_HTML: &str = include_str!("../assets/review_app.html");
/// The MCP Apps extension's name in a client's capabilities.
const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

const SHOW: &str = "review_changes";
const DECIDE: &str = "decide_review";

/// Whether this request's client renders MCP Apps views and may review inline.
pub(crate) fn offered(server: &QuireServer, ctx: &RequestContext<RoleServer>) -> bool {
    server.options.inline_review
        && ctx
            .client_capabilities()
            .and_then(|c| c.extensions)
            .is_some_and(|e| e.contains_key(APPS_EXTENSION))
}

/// A tool whose calls may be staged names the review view, for a client that renders it.
pub(crate) fn with_view(server: &QuireServer, access: &Access, mut tool: Tool) -> Tool {
    // A tool with a page of its own (a plugin's) is never staged.
    if tool.meta.is_some() || tool.annotations.as_ref().and_then(|a| a.open_world_hint) == Some(true) {
        return tool;
    }
    let destructive = tool.annotations.as_ref().and_then(|a| a.destructive_hint) == Some(true);
    let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
    let staged = access.staged && !read_only
        || destructive && server.options.confirm_destructive == ConfirmDestructive::AskOrStage;
    if staged {
        tool.meta = serde_json::from_value(json!({"ui": {"resourceUri": REVIEW_APP_URI}})).ok();
    }
    tool
}

/// The two app-only tools.
pub(crate) fn app_tools() -> Vec<Tool> {
    let review = json!({"type": "integer", "description": "The review's number (quire://review/N)."});
    let show = Tool::new(
        SHOW,
        "The changes of one of your reviews, each with where it stands. For quire's review view only.",
        object(json!({"type": "object", "properties": {"review": review}, "required": ["review"]})),
    )
    .with_title("Show staged changes");
    let decide = Tool::new(
        DECIDE,
        "Accepts or rejects changes of a review when the person clicks in quire's review view. For the view only, \
         never for the model.",
        object(json!({"type": "object", "properties": {
            "review": review,
            "accept": {"type": "boolean"},
            "hunks": {"type": "array", "items": {"type": "string"}},
            "items": {"type": "array", "items": {"type": "string"}},
        }, "required": ["review", "accept"]})),
    )
    .with_title("Accept or reject staged changes");
    [show, decide]
        .into_iter()
        .map(|mut tool| {
            tool.meta =
                serde_json::from_value(json!({"ui": {"resourceUri": REVIEW_APP_URI, "visibility": ["app"]}})).ok();
            tool
        })
        .collect()
}

fn object(value: Value) -> std::sync::Arc<rmcp::model::JsonObject> {
    std::sync::Arc::new(value.as_object().cloned().unwrap_or_default())
}

/// Answers a call of an app-only tool (`None`: not one of them, or not offered to this client).
pub(crate) async fn call(
    server: &QuireServer,
    ctx: &RequestContext<RoleServer>,
    access: &Access,
    name: &str,
    args: &Value,
) -> Option<Result<CallToolResponse, ErrorData>> {
    if !(name == SHOW || name == DECIDE) || !offered(server, ctx) {
        return None;
    }
    let Some(review) = args.get("review").and_then(Value::as_i64) else {
        return Some(Err(ErrorData::invalid_params(
            "review: a review's number is required",
            None,
        )));
    };
    // Read and decided on the workspace as it is (not through the client's pending changes), within the client's
    // reach; only its own reviews.
    let workspace = access.workspace.unstaged();
    let actor = access.actor.actor().clone();
    let decide = if name == DECIDE {
        let accept = args.get("accept").and_then(Value::as_bool).unwrap_or(false);
        let strings = |key: &str| -> Vec<String> {
            args.get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default()
        };
        let (hunks, items) = (strings("hunks"), strings("items"));
        let selection = if !hunks.is_empty() {
            Selection::Hunks(hunks)
        } else if !items.is_empty() {
            Selection::Items(items)
        } else {
            Selection::All
        };
        Some((accept, selection))
    } else {
        None
    };
    let answer = tokio::task::spawn_blocking(move || {
        workspace.read(&actor, |r| r.review_client(review))?;
        match decide {
            None => {
                let set = workspace.read(&actor, |r| r.review_set(review))?;
                Ok::<_, quire_core::Error>(serde_json::to_value(set).unwrap_or_default())
            }
            Some((accept, selection)) => {
                let outcome = workspace.decide_review(review, accept, &selection)?;
                let mut message = if accept {
                    format!("Accepted {} change(s).", outcome.accepted)
                } else {
                    format!("Rejected {} change(s).", outcome.rejected)
                };
                if !outcome.stale.is_empty() {
                    message.push_str(&format!(
                        " {} changed since and could not be accepted: reject it or redo it by hand.",
                        outcome.stale.len()
                    ));
                }
                Ok(json!({
                    "message": message,
                    "accepted": outcome.accepted,
                    "rejected": outcome.rejected,
                    "stale": outcome.stale,
                    "change_set_id": outcome.change_set_id,
                    "review": outcome.set,
                }))
            }
        }
    })
    .await;
    Some(match answer {
        Ok(Ok(value)) => Ok(CallToolResult::structured(value).into()),
        Ok(Err(e)) => Ok(CallToolResult::structured_error(json!({"error": e.to_string()})).into()),
        Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into()),
    })
}
