//! Sync as the page shows it: the state of the app's background sync (`GET /api/sync`) and a sync now
//! (`POST /api/sync`). The web crate does not sync: the app hands it a [`SyncControl`](crate::SyncControl).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::Serialize;

use crate::WebApp;

/// Where sync stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SyncPhase {
    /// This workspace does not sync.
    Off,
    /// The last sync went through and nothing waits.
    Synced,
    /// A sync is running, or changes made here wait for the next one.
    Syncing,
    /// The target cannot be reached (a folder not mounted, a network down); sync tries again.
    Offline,
    /// The last sync failed, or refused a file; `reason` says why.
    Error,
}

/// The sync state the page shows in its top bar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SyncView {
    /// The state.
    pub phase: SyncPhase,
    /// When the last sync ended (RFC 3339), if one did.
    pub last_sync: Option<String>,
    /// Why it is offline or failed.
    pub reason: Option<String>,
    /// Changes made here and not sent yet.
    pub waiting: u64,
    /// The target (a folder).
    pub target: Option<String>,
}

impl SyncView {
    /// The state of a workspace that does not sync.
    pub fn off() -> SyncView {
        SyncView {
            phase: SyncPhase::Off,
            last_sync: None,
            reason: None,
            waiting: 0,
            target: None,
        }
    }
}

/// What the app's background sync gives the page: its state, and a way to ask for a sync now.
pub trait SyncControl: Send + Sync + std::fmt::Debug {
    /// The state now.
    fn view(&self) -> SyncView;
    /// Sync as soon as possible (returns at once).
    fn sync_soon(&self);
}

fn view(app: &WebApp) -> SyncView {
    app.options.sync.as_ref().map_or_else(SyncView::off, |sync| sync.view())
}

/// `GET /api/sync`.
pub(super) async fn state(State(app): State<Arc<WebApp>>) -> Json<SyncView> {
    Json(view(&app))
}

/// `POST /api/sync`: sync soon; answers with the state (usually `syncing`).
pub(super) async fn now(State(app): State<Arc<WebApp>>) -> Json<SyncView> {
    if let Some(sync) = &app.options.sync {
        sync.sync_soon();
    }
    Json(view(&app))
}

/// The control as [`WebOptions`](crate::WebOptions) holds it.
pub type SyncHandle = Arc<dyn SyncControl>;
