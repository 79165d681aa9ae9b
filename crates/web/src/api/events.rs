//! `GET /api/events`: the change log as server-sent events, so the page learns of every write (the CLI's, an AI
//! client's, the assistant's, its own) and refreshes what it shows.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use axum::response::Response;
use axum::response::sse::{Event, KeepAlive, Sse};
use quire_core::{Actor, EntityKind};
use serde::{Deserialize, Serialize};

use super::user_read;
use crate::WebApp;
use crate::error::ApiError;

/// How often the change stream looks at the change log.
const EVENTS_POLL: Duration = Duration::from_millis(400);

/// How long one change stream lasts before it ends and the page opens the next (from where this one stopped). A
/// stream is a request in progress, which a graceful shutdown (Ctrl+C) waits for: this bounds that wait.
const EVENTS_STREAM_FOR: Duration = Duration::from_secs(10);

/// The most changes one event carries (more come in the next one).
const EVENTS_BATCH: u64 = 200;

/// The data of the stream's events: `ready` (where the stream starts, no changes) and `changes`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChangeNews {
    /// The sequence number of the last change told (for `ready`: the one the stream starts after); reopen the stream
    /// with `?after=` it.
    pub seq: i64,
    /// The changes, oldest first (absent for `ready`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeEvent>,
}

/// One change somebody made (the CLI, an AI client, the assistant, this page).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChangeEvent {
    /// What kind of thing changed.
    pub entity: ChangedEntity,
    /// The entity's id (the note's, for a note's tag).
    pub id: String,
    /// `create`, `update` or `delete`.
    #[schemars(with = "String")]
    pub operation: quire_core::Operation,
    /// Who made it.
    pub actor: String,
}

/// The kinds of thing the change log records, as the page reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangedEntity {
    /// A notebook.
    Notebook,
    /// A note.
    Note,
    /// A tag.
    Tag,
    /// A note's tag.
    NoteTag,
    /// An attribute of a note.
    Attribute,
    /// An attachment of a note.
    Attachment,
}

impl From<EntityKind> for ChangedEntity {
    fn from(kind: EntityKind) -> ChangedEntity {
        match kind {
            EntityKind::Notebook => ChangedEntity::Notebook,
            EntityKind::Note => ChangedEntity::Note,
            EntityKind::Tag => ChangedEntity::Tag,
            EntityKind::NoteTag => ChangedEntity::NoteTag,
            EntityKind::Attribute => ChangedEntity::Attribute,
            EntityKind::Attachment => ChangedEntity::Attachment,
        }
    }
}

/// `?after=SEQ`: the changes after that sequence number; from now on without it.
#[derive(Debug, Deserialize)]
pub(super) struct EventsQuery {
    after: Option<i64>,
}

fn event(name: &str, news: &ChangeNews) -> Event {
    Event::default()
        .event(name)
        .data(serde_json::to_string(news).unwrap_or_else(|_| "null".to_owned()))
}

/// `GET /api/events`: first `ready` with the sequence number it starts after, then `changes` with the sequence
/// number of the last change it carries and the changes. The change log is polled here, so a page learns of a write
/// by another process too.
pub(super) async fn events(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let start = match query.after {
        Some(seq) => seq,
        None => user_read(&app, |r| r.latest_change_seq()).await?,
    };
    let until = tokio::time::Instant::now() + EVENTS_STREAM_FOR;
    let ready = event(
        "ready",
        &ChangeNews {
            seq: start,
            changes: Vec::new(),
        },
    );
    let news = futures::stream::unfold((app, start), move |(app, seq)| async move {
        loop {
            // A server shutting down ends the stream at once (the page reconnects to the next server).
            tokio::select! {
                () = tokio::time::sleep(EVENTS_POLL) => {}
                () = app.stopping.cancelled() => return None,
            }
            if tokio::time::Instant::now() >= until {
                return None;
            }
            let reader = app.clone();
            let read = tokio::task::spawn_blocking(move || {
                reader.workspace.read(&Actor::User, |r| {
                    if r.latest_change_seq()? <= seq {
                        return Ok(Vec::new());
                    }
                    r.changes_after(seq, EVENTS_BATCH)
                })
            })
            .await;
            let changes = match read {
                Ok(Ok(changes)) => changes,
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "the change log could not be read for the page");
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the change log reader failed");
                    continue;
                }
            };
            let Some(last) = changes.last().map(|c| c.seq) else {
                continue;
            };
            let changes = changes
                .into_iter()
                .map(|c| {
                    let id = match c.entity {
                        EntityKind::NoteTag => c.entity_id.split('/').next().unwrap_or_default().to_owned(),
                        _ => c.entity_id,
                    };
                    ChangeEvent {
                        entity: c.entity.into(),
                        id,
                        operation: c.operation,
                        actor: c.actor.to_string(),
                    }
                })
                .collect();
            let news = event("changes", &ChangeNews { seq: last, changes });
            return Some((Ok::<_, Infallible>(news), (app, last)));
        }
    });
    let stream = futures::StreamExt::chain(futures::stream::once(async move { Ok::<_, Infallible>(ready) }), news);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(5)))
        .into_response())
}
