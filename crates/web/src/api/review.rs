//! The Review inbox: the changes MCP clients staged for the user's review (`quire_core::review`), listed, shown by
//! note with each change, accepted or rejected by change, note or set. Accepting is core's merge onto what changed
//! since, written as one change set in the client's name (undone like any other).

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use quire_core::review::{HunkState, ReviewHunk, ReviewItem, ReviewSet, ReviewSummary, Selection};
use serde::{Deserialize, Serialize};

use super::{blocking, user_read};
use crate::WebApp;
use crate::error::ApiError;

/// Review sets, newest first.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewList {
    /// The sets.
    pub sets: Vec<ReviewSetEntry>,
}

/// A review set as listed: who staged it, when, how much waits.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewSetEntry {
    /// Its number.
    pub id: i64,
    /// The MCP client (and its token's name).
    pub client: String,
    /// When its first change was staged (RFC 3339).
    pub created: String,
    /// When its last change was staged (RFC 3339).
    pub updated: String,
    /// Changes waiting (stale ones included).
    pub pending: usize,
    /// Changes accepted.
    pub accepted: usize,
    /// Changes rejected.
    pub rejected: usize,
    /// The notes, notebooks and tags it changes.
    pub titles: Vec<String>,
}

/// A review set with its changes by note.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewView {
    /// The set as listed.
    pub set: ReviewSetEntry,
    /// Its notes (notebooks, tags), in the order the client changed them.
    pub items: Vec<ReviewItemView>,
    /// The change sets accepting it wrote (each undoable).
    pub change_sets: Vec<String>,
}

/// One note's (notebook's, tag's) changes.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewItemView {
    /// `note:ID` (`notebook:ID`, `tag:ID`): accepts or rejects all of it.
    pub key: String,
    /// `note`, `notebook` or `tag`.
    pub kind: String,
    /// Its id.
    pub id: String,
    /// Its title as the client left it.
    pub title: String,
    /// `created`, `changed` or `deleted`.
    pub change: String,
    /// Its changes.
    pub hunks: Vec<ReviewHunkView>,
}

/// One change, with what it was and becomes.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewHunkView {
    /// Its id (`ROW.N`), to accept or reject it alone.
    pub id: String,
    /// What it changes: `note`, `title`, `text`, `notebook`, `trash`, `todo`, `completed`, `tag`, `label`,
    /// `relation`, `name`, `parent`.
    pub field: String,
    /// In words.
    pub what: String,
    /// What it was (`null`: nothing).
    pub before: Option<String>,
    /// What it becomes (`null`: removed).
    pub after: Option<String>,
    /// For text: the line above it.
    pub context_before: String,
    /// For text: the line below it.
    pub context_after: String,
    /// `pending`, `stale` (what it changes changed since: it can only be rejected), `accepted`, `rejected` or
    /// `undone` (accepted, then its change set undone).
    pub state: String,
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

/// What a decision did.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewDecided {
    /// Changes accepted.
    pub accepted: usize,
    /// Changes rejected.
    pub rejected: usize,
    /// Chosen changes left waiting: what they change changed since.
    pub stale: Vec<String>,
    /// The change set the accepted changes were written in (undo it to take them back).
    pub change_set_id: Option<String>,
    /// The set as it is now.
    pub review: ReviewView,
}

/// `?all=true`: decided sets too.
#[derive(Debug, Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    all: bool,
}

fn entry(s: ReviewSummary) -> ReviewSetEntry {
    ReviewSetEntry {
        id: s.id,
        client: s.client,
        created: s.created.to_rfc3339(),
        updated: s.updated.to_rfc3339(),
        pending: s.pending,
        accepted: s.accepted,
        rejected: s.rejected,
        titles: s.titles,
    }
}

fn hunk(h: ReviewHunk) -> ReviewHunkView {
    let state = match h.state {
        HunkState::Pending => "pending",
        HunkState::Stale => "stale",
        HunkState::Accepted => "accepted",
        HunkState::Rejected => "rejected",
        HunkState::Undone => "undone",
    };
    ReviewHunkView {
        id: h.id,
        field: h.field,
        what: h.what,
        before: h.before,
        after: h.after,
        context_before: h.context_before,
        context_after: h.context_after,
        state: state.to_owned(),
    }
}

fn item(i: ReviewItem) -> ReviewItemView {
    ReviewItemView {
        key: i.key,
        kind: i.kind,
        id: i.id,
        title: i.title,
        change: i.change,
        hunks: i.hunks.into_iter().map(hunk).collect(),
    }
}

fn view(set: ReviewSet) -> ReviewView {
    ReviewView {
        set: entry(set.summary),
        items: set.items.into_iter().map(item).collect(),
        change_sets: set.change_sets,
    }
}

/// `GET /api/reviews`: the sets with changes waiting (`?all=true`: every set), newest first.
pub(super) async fn list(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<ReviewList>, ApiError> {
    let Query(query) = query?;
    let sets = user_read(&app, move |r| r.review_sets(!query.all, 100)).await?;
    Ok(Json(ReviewList {
        sets: sets.into_iter().map(entry).collect(),
    }))
}

/// `GET /api/reviews/{id}`.
pub(super) async fn show(State(app): State<Arc<WebApp>>, Path(id): Path<i64>) -> Result<Json<ReviewView>, ApiError> {
    Ok(Json(view(user_read(&app, move |r| r.review_set(id)).await?)))
}

/// `POST /api/reviews/{id}/accept`.
pub(super) async fn accept(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<i64>,
    Json(body): Json<ReviewDecision>,
) -> Result<Json<ReviewDecided>, ApiError> {
    decide(app, id, body, true).await
}

/// `POST /api/reviews/{id}/reject`.
pub(super) async fn reject(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<i64>,
    Json(body): Json<ReviewDecision>,
) -> Result<Json<ReviewDecided>, ApiError> {
    decide(app, id, body, false).await
}

async fn decide(
    app: Arc<WebApp>,
    id: i64,
    decision: ReviewDecision,
    accept: bool,
) -> Result<Json<ReviewDecided>, ApiError> {
    let selection = if !decision.hunks.is_empty() {
        Selection::Hunks(decision.hunks)
    } else if !decision.items.is_empty() {
        Selection::Items(decision.items)
    } else {
        Selection::All
    };
    let outcome = blocking(&app, move |ws| ws.decide_review(id, accept, &selection)).await?;
    Ok(Json(ReviewDecided {
        accepted: outcome.accepted,
        rejected: outcome.rejected,
        stale: outcome.stale,
        change_set_id: outcome.change_set_id,
        review: view(outcome.set),
    }))
}
