//! What clients hear without asking each time: `resources/subscribe` in a session and `subscriptions/listen` in the
//! stateless era (resource updates from the change log, tool and prompt list changes), the list changes pushed to
//! legacy sessions, and the semantic index's progress as log messages.

use std::collections::HashSet;
use std::sync::Arc;

use quire_core::Workspace;
use quire_tools::LogLevel;
use rmcp::model::{SubscribeRequestParams, SubscriptionFilter};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::json;

use crate::context::log_param;
use crate::server::{Access, Grant, QuireServer, Session};
use crate::workspace_resources::resource_exists;

/// How often a session that asked for info logs hears how far the semantic index is.
const INDEX_REPORT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(2);

/// Once a legacy session is initialized: its task that pushes tool and prompt list changes, and (for a client that
/// sees the whole workspace) the one that reports the index's progress.
pub(crate) async fn on_initialized(server: &QuireServer, ctx: NotificationContext<RoleServer>) {
    // Legacy sessions hear about tool and prompt list changes on the session itself.
    let mut tools = server.tools.subscribe();
    tools.mark_unchanged();
    let mut prompts = server.prompts.subscribe();
    prompts.mark_unchanged();
    let peer = ctx.peer;
    // Index figures count every note: only clients that see the whole workspace hear them.
    let scoped_token = ctx
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Grant>())
        .is_some_and(|grant| grant.scope.is_some());
    if server.workspace.scope().is_none() && !scoped_token {
        tokio::spawn(report_index_progress(
            server.workspace.clone(),
            Arc::downgrade(&server.session),
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

/// What a `subscriptions/listen` stream gets: list changes, and every resource it asks for.
pub(crate) fn accepted_filter(requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
    let mut filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .build();
    // Every requested URI is accepted: one that does not exist yet is notified when it appears.
    filter.resource_subscriptions = requested.resource_subscriptions.clone();
    Some(filter)
}

/// A `subscriptions/listen` stream, until the client closes it: list changes and updates of the resources it
/// named that it can still reach.
pub(crate) async fn listen(server: &QuireServer, ctx: SubscriptionContext) -> Result<(), ErrorData> {
    let accepted = ctx.accepted().clone();
    let mut tools = server.tools.subscribe();
    tools.mark_unchanged();
    let mut prompts = server.prompts.subscribe();
    prompts.mark_unchanged();
    let uris: HashSet<String> = accepted
        .resource_subscriptions
        .clone()
        .unwrap_or_default()
        .into_iter()
        .collect();
    let mut changes = (!uris.is_empty()).then(|| server.watcher.subscribe());
    let access = server.access(ctx.request_context());
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
                let (resources, access) = (server.resources.clone(), access.clone());
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

/// `resources/subscribe`: a resource the client can reach, watched for the rest of the session.
pub(crate) async fn subscribe(
    server: &QuireServer,
    request: SubscribeRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    let access = server.access(&ctx);
    if !resource_exists(&server.resources, &request.uri, &access) {
        return Err(ErrorData::resource_not_found(
            format!("Resource not found: {}", request.uri),
            Some(json!({ "uri": request.uri })),
        ));
    }
    server
        .session
        .subscriptions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(request.uri, access);
    ensure_notifier(server, ctx.peer.clone());
    Ok(())
}

/// `resources/unsubscribe`: the session stops hearing about `uri`.
pub(crate) fn unsubscribe(server: &QuireServer, uri: &str) {
    server
        .session
        .subscriptions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(uri);
}

/// Starts (once per session) the task that turns workspace changes into `notifications/resources/updated`
/// for the session's subscriptions.
fn ensure_notifier(server: &QuireServer, peer: Peer<RoleServer>) {
    let mut notifier = server.session.notifier.lock().unwrap_or_else(|e| e.into_inner());
    if notifier.as_ref().is_some_and(|t| !t.is_finished()) {
        return;
    }
    let mut changes = server.watcher.subscribe();
    let session = Arc::downgrade(&server.session);
    let resources = server.resources.clone();
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
                    // A saved view's rows may change with any note.
                    .filter(|(uri, _)| {
                        changed.contains(*uri)
                            || (uri.starts_with(crate::workspace_resources::VIEW_URI)
                                && changed
                                    .iter()
                                    .any(|c| c.starts_with(crate::workspace_resources::NOTE_URI)))
                    })
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
                .notify_logging_message(log_param(LogLevel::Info, &message))
                .await
                .is_err()
        {
            return;
        }
    }
}
