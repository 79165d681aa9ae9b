//! Plugins as the page shows them: the list with each one's state and tools (`GET /api/plugins`), adding one
//! (`POST /api/plugins`) and removing one (`DELETE /api/plugins/{name}`), through quire-plugins' [`Plugins`] (the
//! same as `quire plugin`), which the app hands in with the host it started. And MCP Apps: a plugin tool's `ui://` page is kept here and served at
//! `/plugin-ui/{id}` with a policy of its own (a sandbox: an origin of its own, no network, no cookies, no API), for
//! the sidebar to show in a sandboxed frame.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use quire_plugins::{NewPlugin, PluginError, PluginView, Plugins};
use serde::Serialize;

use crate::WebApp;
use crate::error::{ApiError, ErrorKind};

/// `GET /api/plugins`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PluginList {
    /// The plugins, by name.
    pub plugins: Vec<PluginView>,
    /// Whether this page may add and remove plugins (not on a server reachable from other machines).
    pub can_manage: bool,
}

fn manage(app: &WebApp) -> Result<&Plugins, ApiError> {
    let Some(control) = &app.options.plugins else {
        return Err(ApiError::new(ErrorKind::NotFound, "This server has no plugins."));
    };
    if app.options.allow_remote {
        // Adding a plugin runs a program on this computer: not from a page that other machines can reach.
        return Err(ApiError::new(
            ErrorKind::Forbidden,
            "On a server reachable from other machines, plugins are added with `quire plugin add` on the computer itself.",
        ));
    }
    Ok(control)
}

/// `GET /api/plugins`.
pub(crate) async fn list(State(app): State<Arc<WebApp>>) -> Json<PluginList> {
    let plugins = match &app.options.plugins {
        Some(plugins) => plugins.list(),
        None => Vec::new(),
    };
    Json(PluginList {
        plugins,
        can_manage: app.options.plugins.is_some() && !app.options.allow_remote,
    })
}

/// `POST /api/plugins`.
pub(crate) async fn add(
    State(app): State<Arc<WebApp>>,
    Json(plugin): Json<NewPlugin>,
) -> Result<Json<PluginView>, ApiError> {
    let plugins = manage(&app)?;
    plugins.add(plugin).await.map(Json).map_err(plugin_error)
}

/// `DELETE /api/plugins/{name}`.
pub(crate) async fn remove(State(app): State<Arc<WebApp>>, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    let plugins = manage(&app)?;
    plugins
        .remove(&name)
        .await
        .map(|()| StatusCode::NO_CONTENT)
        .map_err(plugin_error)
}

/// A plugin problem as the page shows it.
fn plugin_error(e: PluginError) -> ApiError {
    match e {
        PluginError::Unknown(_) => ApiError::new(ErrorKind::NotFound, e.to_string()),
        PluginError::Exists(name) => ApiError::invalid(format!("A plugin named '{name}' exists already.")),
        PluginError::Invalid(_) => ApiError::invalid(e.to_string()),
        other => ApiError::new(ErrorKind::Internal, other.to_string()),
    }
}

/// How many `ui://` pages are kept for the frames of the page (the oldest go first).
const KEPT_VIEWS: usize = 64;

/// The `ui://` pages of the results shown, by the random id of their address.
#[derive(Default)]
pub(crate) struct AppViews {
    views: Mutex<VecDeque<(String, String)>>,
}

impl AppViews {
    /// Keeps a page; returns the address it is served at.
    pub(crate) fn keep(&self, html: String) -> Option<String> {
        let id = quire_loopback::new_secret().ok()?;
        let mut views = self.views.lock().unwrap_or_else(|e| e.into_inner());
        if views.len() == KEPT_VIEWS {
            views.pop_front();
        }
        views.push_back((id.clone(), html));
        Some(format!("/plugin-ui/{id}"))
    }

    fn get(&self, id: &str) -> Option<String> {
        let views = self.views.lock().unwrap_or_else(|e| e.into_inner());
        views.iter().find(|(key, _)| key == id).map(|(_, html)| html.clone())
    }
}

/// The policy of a plugin's page: a sandbox (an opaque origin: no cookies, no storage, nothing of quire's page), its
/// own inline scripts and styles, images only inline, no network at all, framed only by quire's page.
pub(crate) const APP_VIEW_CSP: &str = "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; \
     style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'; form-action 'none'; \
     base-uri 'none'; frame-ancestors 'self'";

/// `GET /plugin-ui/{id}`: a result's `ui://` page, for quire's own page to frame.
pub(crate) async fn view(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
) -> Response {
    if !crate::security::has_session(&app, &headers) {
        return (StatusCode::UNAUTHORIZED, "No session.").into_response();
    }
    let Some(html) = app.app_views.get(&id) else {
        return (StatusCode::NOT_FOUND, "This view is no longer kept.").into_response();
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(APP_VIEW_CSP)),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("SAMEORIGIN")),
        ],
        html,
    )
        .into_response()
}

/// Replaces the `ui://` page among an event's media by the address it is served at (a resource link of the MCP
/// Apps type), so that the page frames it instead of receiving its HTML.
pub(crate) fn serve_views(app: &WebApp, event: &mut quire_agent::AgentEvent) {
    let quire_agent::AgentEvent::ToolFinished { content, .. } = event else {
        return;
    };
    for item in content.iter_mut() {
        if let quire_tools::ContentItem::Resource {
            uri,
            mime_type: Some(mime),
            text: Some(html),
            ..
        } = item
            && uri.starts_with("ui://")
            && mime.starts_with("text/html")
            && let Some(address) = app.app_views.keep(std::mem::take(html))
        {
            *item = quire_tools::ContentItem::ResourceLink {
                uri: address,
                name: uri.clone(),
                description: Some("An interactive view of the result (MCP Apps).".into()),
                mime_type: Some(mime.clone()),
            };
        }
    }
}
