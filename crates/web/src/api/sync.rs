//! Sync as the page shows it: the state of the background sync (`GET /api/sync`) and a sync now (`POST /api/sync`).
//! The web crate does not sync: it is handed the state of quire-sync's background loop, which quire-host started.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use quire_sync::background::SyncView;

use crate::WebApp;

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
