//! What AI read (the read ledger, kept by core): `GET /api/ledger`, of a note (its History tab), of a client, or
//! the clients with what each read (Settings).

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use quire_core::ledger::{LedgerClient, LedgerEntry, LedgerFilter};
use serde::{Deserialize, Serialize};

use super::blocking;
use crate::WebApp;
use crate::error::ApiError;

/// Which reads to list.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct LedgerQuery {
    note_id: Option<String>,
    client: Option<String>,
    /// Milliseconds since the epoch.
    since: Option<i64>,
    limit: Option<usize>,
}

/// What AI read, the latest first; with the clients when no note or client was named.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LedgerView {
    /// The reads.
    pub entries: Vec<LedgerEntry>,
    /// Every client the ledger names, the one that read last first (only when no note or client was named).
    pub clients: Vec<LedgerClient>,
}

/// `GET /api/ledger?note_id=&client=&since=&limit=`.
pub(crate) async fn list(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<LedgerQuery>, QueryRejection>,
) -> Result<Json<LedgerView>, ApiError> {
    let Query(query) = query?;
    let everyone = query.note_id.is_none() && query.client.is_none();
    let filter = LedgerFilter {
        note_id: query.note_id,
        client: query.client,
        since: query.since,
        limit: query.limit.unwrap_or(200).clamp(1, 1_000),
    };
    let view = blocking(&app, move |ws| {
        Ok(LedgerView {
            entries: ws.ledger(&filter)?,
            clients: if everyone { ws.ledger_clients()? } else { Vec::new() },
        })
    })
    .await?;
    Ok(Json(view))
}
