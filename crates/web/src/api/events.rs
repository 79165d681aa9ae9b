//! `GET /api/events`: the workspace's news as server-sent events, so the page learns of every write (the CLI's, an AI
//! client's, the assistant's, its own), every staged write and every review decision, and refreshes what it shows.
//! The news comes from core's one watcher of the workspace ([`quire_core::Workspace::news`]); nothing here polls.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use axum::response::Response;
use axum::response::sse::{Event, KeepAlive, Sse};
use quire_core::EntityKind;
use quire_core::news::NewsCursor;
use serde::{Deserialize, Serialize};

use super::user_read;
use crate::WebApp;
use crate::error::ApiError;

/// How long one change stream lasts before it ends and the page opens the next (from where this one stopped). A
/// stream is a request in progress, which a graceful shutdown (Ctrl+C) waits for: this bounds that wait.
const EVENTS_STREAM_FOR: Duration = Duration::from_secs(10);

/// The data of the stream's events: `ready` (where the stream starts, no news) and `changes`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChangeNews {
    /// The sequence number of the last change told (for `ready`: the one the stream starts after); reopen the stream
    /// with `?after=` it.
    pub seq: i64,
    /// The sequence number of the last review news told; reopen the stream with `?reviews_after=` it.
    pub review_seq: i64,
    /// The changes, oldest first (absent for `ready`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeEvent>,
    /// The review sets staged to, decided or dropped, oldest first, each once (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviews: Vec<i64>,
}

/// One change somebody made (the CLI, an AI client, the assistant, this page).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChangeEvent {
    /// What kind of thing changed (core's kinds, as the change log records them).
    pub entity: EntityKind,
    /// The entity's id (the note's, for a note's tag).
    pub id: String,
    /// `create`, `update` or `delete`.
    pub operation: quire_core::Operation,
    /// Who made it.
    pub actor: String,
}

/// `?after=SEQ&reviews_after=SEQ`: the news after those sequence numbers; from now on without them.
#[derive(Debug, Deserialize)]
pub(super) struct EventsQuery {
    after: Option<i64>,
    reviews_after: Option<i64>,
}

fn event(name: &str, news: &ChangeNews) -> Event {
    Event::default()
        .event(name)
        .data(serde_json::to_string(news).unwrap_or_else(|_| "null".to_owned()))
}

/// How often an event stream of a paired device checks that the device is still paired.
const REVOKED_CHECK: Duration = Duration::from_secs(1);

/// Whether the device of this id is still paired.
fn still_paired(app: &WebApp, id: Option<&String>) -> bool {
    let Some(id) = id else { return true };
    app.devices
        .as_ref()
        .is_some_and(|store| store.current().devices.iter().any(|d| &d.id == id))
}

/// The changes of notes and notebooks the scoped handle `ws` reaches (a note purged meanwhile is not told).
fn reachable(ws: &quire_core::Workspace, changes: Vec<ChangeEvent>) -> Vec<ChangeEvent> {
    ws.read(&quire_core::Actor::User, |r| {
        Ok::<_, quire_core::Error>(
            changes
                .into_iter()
                .filter(|c| match c.entity {
                    EntityKind::Notebook => r.notebook(&c.id).is_ok(),
                    _ => r.note_summary(&c.id).is_ok(),
                })
                .collect::<Vec<_>>(),
        )
    })
    .unwrap_or_default()
}

/// `GET /api/events`: first `ready` with the cursor it starts after, then `changes` with the cursor of the last news
/// it carries, its changes and the review sets that changed.
pub(super) async fn events(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let workspace = crate::access::workspace(&app)?;
    let from = match (query.after, query.reviews_after) {
        (None, None) => None,
        (change, review) => {
            let now = user_read(&app, |r| r.news_cursor()).await?;
            Some(NewsCursor {
                change: change.unwrap_or(now.change),
                review: review.unwrap_or(now.review),
            })
        }
    };
    let receiver = tokio::task::spawn_blocking(move || workspace.news(from))
        .await
        .map_err(|e| ApiError::new(crate::error::ErrorKind::Internal, e.to_string()))??;
    let start = receiver.cursor();
    let until = tokio::time::Instant::now() + EVENTS_STREAM_FOR;
    let ready = event(
        "ready",
        &ChangeNews {
            seq: start.change,
            review_seq: start.review,
            changes: Vec::new(),
            reviews: Vec::new(),
        },
    );
    let device = crate::access::Access::current()
        .device()
        .map(|d| Arc::new(d.id.clone()));
    // A device limited to notebooks hears of what it reaches only (the news itself is the whole workspace's).
    let limited = crate::access::limited()
        .then(|| crate::access::workspace(&app))
        .transpose()?;
    let news = futures::stream::unfold((app, receiver), move |(app, mut receiver)| {
        let device = device.clone();
        let limited = limited.clone();
        async move {
            // A server shutting down ends the stream at once (the page reconnects to the next server); so does the end
            // of the stream's time.
            let news = loop {
                tokio::select! {
                    news = receiver.recv() => break news,
                    () = tokio::time::sleep_until(until) => return None,
                    () = app.stopping.cancelled() => return None,
                    // A device ended while its page listens (`quire device revoke`) hears nothing more.
                    () = tokio::time::sleep(REVOKED_CHECK), if device.is_some() => {
                        if !still_paired(&app, device.as_deref()) {
                            return None;
                        }
                    }
                }
            };
            let news = match news {
                Ok(news) => news,
                Err(e) => {
                    tracing::warn!(error = %e, "the news could not be read for the page");
                    return None;
                }
            };
            let mut reviews: Vec<i64> = Vec::new();
            for review in &news.reviews {
                if !reviews.contains(&review.set_id) {
                    reviews.push(review.set_id);
                }
            }
            let mut changes: Vec<ChangeEvent> = news
                .changes
                .into_iter()
                .map(|c| ChangeEvent {
                    entity: c.entity,
                    id: c.note_id().map_or_else(|| c.entity_id.clone(), str::to_owned),
                    operation: c.operation,
                    actor: c.actor.to_string(),
                })
                .collect();
            if let Some(ws) = limited {
                reviews.clear();
                changes = tokio::task::spawn_blocking(move || reachable(&ws, changes))
                    .await
                    .unwrap_or_default();
            }
            let body = ChangeNews {
                seq: news.cursor.change,
                review_seq: news.cursor.review,
                changes,
                reviews,
            };
            Some((Ok::<_, Infallible>(event("changes", &body)), (app, receiver)))
        }
    });
    let stream = futures::StreamExt::chain(futures::stream::once(async move { Ok::<_, Infallible>(ready) }), news);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(5)))
        .into_response())
}
