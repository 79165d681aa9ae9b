//! The Review inbox: the changes MCP clients staged for the user's review (`quire_core::review`), listed, shown by
//! note with each change, accepted or rejected by change, note or set. Accepting is core's merge onto what changed
//! since, written as one change set in the client's name (undone like any other).

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use quire_core::review::{ReviewOutcome, ReviewSet, ReviewSummary, Selection};
use serde::{Deserialize, Serialize};

use super::{blocking, user_read};
use crate::WebApp;
use crate::error::ApiError;

/// Review sets, newest first, each as core lists it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewList {
    /// The sets.
    pub sets: Vec<ReviewSummary>,
}

/// What to accept or reject: nothing named is every change that waits.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ReviewDecision {
    /// Changes by id (`ROW.N`).
    #[serde(default)]
    pub hunks: Vec<String>,
    /// Notes (notebooks, tags) by key (`note:ID`).
    #[serde(default)]
    pub items: Vec<String>,
}

/// `?all=true`: decided sets too.
#[derive(Debug, Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    all: bool,
}

/// `GET /api/reviews`: the sets with changes waiting (`?all=true`: every set), newest first.
pub(super) async fn list(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<ReviewList>, ApiError> {
    let Query(query) = query?;
    let sets = if crate::access::limited() {
        Vec::new()
    } else {
        user_read(&app, move |r| r.review_sets(!query.all, 100)).await?
    };
    Ok(Json(ReviewList { sets }))
}

/// `GET /api/reviews/{id}`: the set as core gives it, the same document as `quire review show --json` and the
/// resource `quire://review/{id}`.
pub(super) async fn show(State(app): State<Arc<WebApp>>, Path(id): Path<i64>) -> Result<Json<ReviewSet>, ApiError> {
    Ok(Json(user_read(&app, move |r| r.review_set(id)).await?))
}

/// `POST /api/reviews/{id}/accept`.
pub(super) async fn accept(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<i64>,
    Json(body): Json<ReviewDecision>,
) -> Result<Json<ReviewOutcome>, ApiError> {
    decide(app, id, body, true).await
}

/// `POST /api/reviews/{id}/reject`.
pub(super) async fn reject(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<i64>,
    Json(body): Json<ReviewDecision>,
) -> Result<Json<ReviewOutcome>, ApiError> {
    decide(app, id, body, false).await
}

async fn decide(
    app: Arc<WebApp>,
    id: i64,
    decision: ReviewDecision,
    accept: bool,
) -> Result<Json<ReviewOutcome>, ApiError> {
    let selection = if !decision.hunks.is_empty() {
        Selection::Hunks(decision.hunks)
    } else if !decision.items.is_empty() {
        Selection::Items(decision.items)
    } else {
        Selection::All
    };
    Ok(Json(
        blocking(&app, move |ws| ws.decide_review(id, accept, &selection)).await?,
    ))
}
