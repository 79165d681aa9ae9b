//! The JSON API under `/api`: notebooks, notes and search in the tools' shapes, and the user's saves of a note.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_core::{Actor, NewNote, NoteUpdate, Timestamp};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::WebApp;

/// Saves of one note closer together than this share one revision: the text before the user started typing.
const COALESCE_MS: i64 = 120_000;

pub(crate) fn routes() -> Router<Arc<WebApp>> {
    Router::new()
        .route("/notebooks", get(notebooks))
        .route("/notes", get(list_notes).post(create_note))
        .route("/notes/{id}", get(read_note).put(save_note))
        .route("/search", get(search))
        .route("/notes/{id}/accept", post(crate::turns::accept))
        .route("/turns", post(crate::turns::start))
        .route("/turns/{id}/approve", post(crate::turns::approve))
        .route("/turns/{id}/cancel", post(crate::turns::cancel))
}

/// Runs a read-only tool with the user's view on a blocking thread; a tool error becomes 404 or 400.
async fn tool(app: &Arc<WebApp>, name: &'static str, args: Value) -> Response {
    let app = app.clone();
    let outcome = tokio::task::spawn_blocking(move || app.tools.read_as_user(&app.workspace, name, args)).await;
    match outcome {
        Ok(Ok(result)) => match result.error_message() {
            Some(message) => {
                let status = if message.ends_with("not found") {
                    StatusCode::NOT_FOUND
                } else {
                    StatusCode::BAD_REQUEST
                };
                (status, Json(result.value)).into_response()
            }
            None => Json(result.value).into_response(),
        },
        Ok(Err(e)) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn failure(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// The query string as tool arguments: numbers and booleans where they look like ones.
fn arguments(query: Vec<(String, String)>) -> Value {
    let mut args = serde_json::Map::new();
    for (key, value) in query {
        let typed = match value.as_str() {
            "true" => json!(true),
            "false" => json!(false),
            v if matches!(key.as_str(), "limit" | "offset") => v.parse::<u64>().map_or(json!(v), |n| json!(n)),
            v => json!(v),
        };
        args.insert(key, typed);
    }
    Value::Object(args)
}

async fn notebooks(State(app): State<Arc<WebApp>>, Query(query): Query<Vec<(String, String)>>) -> Response {
    tool(&app, "list_notebooks", arguments(query)).await
}

async fn list_notes(State(app): State<Arc<WebApp>>, Query(query): Query<Vec<(String, String)>>) -> Response {
    tool(&app, "list_notes", arguments(query)).await
}

async fn search(State(app): State<Arc<WebApp>>, Query(query): Query<Vec<(String, String)>>) -> Response {
    tool(&app, "search_notes", arguments(query)).await
}

async fn read_note(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    tool(&app, "read_note", json!({ "note_id": id, "max_chars": 100_000 })).await
}

/// A new note, written by the user.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewNoteRequest {
    title: String,
    #[serde(default)]
    body: String,
    notebook_id: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    is_todo: bool,
}

async fn create_note(State(app): State<Arc<WebApp>>, Json(request): Json<NewNoteRequest>) -> Response {
    let writer = app.clone();
    let created = tokio::task::spawn_blocking(move || {
        writer.workspace.write(&Actor::User, |w| {
            w.create_note(NewNote {
                notebook_id: request.notebook_id,
                tags: request.tags,
                is_todo: request.is_todo,
                ..NewNote::new(request.title, request.body)
            })
        })
    })
    .await;
    match created {
        Ok(Ok(note)) => {
            let mut response = read_note(State(app), Path(note.summary.id)).await;
            *response.status_mut() = StatusCode::CREATED;
            response
        }
        Ok(Err(e)) if e.is_caller_error() => failure(StatusCode::BAD_REQUEST, &e.to_string()),
        Ok(Err(e)) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// A save of a note by the user: the fields that changed, and the `updated` time of the version they were made on.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveRequest {
    title: Option<String>,
    body: Option<String>,
    /// The `updated` field of the note as the editor loaded it (RFC 3339).
    base_updated: String,
}

/// Why a save was not made.
enum Refused {
    /// The note changed since the editor loaded it.
    Stale,
    Core(quire_core::Error),
}

impl From<quire_core::Error> for Refused {
    fn from(e: quire_core::Error) -> Refused {
        Refused::Core(e)
    }
}

async fn save_note(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(request): Json<SaveRequest>,
) -> Response {
    let Some(base) = Timestamp::parse_rfc3339(&request.base_updated) else {
        return failure(
            StatusCode::BAD_REQUEST,
            "base_updated must be the note's `updated` time (RFC 3339) as it was loaded.",
        );
    };
    let writer = app.clone();
    let note_id = id.clone();
    let saved = tokio::task::spawn_blocking(move || {
        writer.workspace.write(&Actor::User, |w| {
            let current = w.note_summary(&note_id)?;
            if current.updated != base {
                return Err(Refused::Stale);
            }
            // One revision per typing session: the text before the first save of a burst.
            let recent = w.revisions(&note_id)?.into_iter().next().is_some_and(|r| {
                r.actor == Actor::User && Timestamp::now().as_millis() - r.created.as_millis() < COALESCE_MS
            });
            if !recent {
                w.save_revision_now(&note_id)?;
            }
            w.update_note(
                &note_id,
                NoteUpdate {
                    title: request.title,
                    body: request.body,
                    ..NoteUpdate::default()
                },
            )?;
            Ok(())
        })
    })
    .await;
    match saved {
        Ok(Ok(())) => read_note(State(app), Path(id)).await,
        Ok(Err(Refused::Stale)) => {
            let current = read_note(State(app), Path(id)).await;
            let (_, body) = current.into_parts();
            let note: Value = axum::body::to_bytes(body, usize::MAX)
                .await
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or(Value::Null);
            (
                StatusCode::CONFLICT,
                Json(json!({
                    "error": "The note changed since it was loaded (another window or an AI client saved it). \
                              Nothing was saved; your text is still in the editor. Reload the note and apply \
                              your change again.",
                    "note": note,
                })),
            )
                .into_response()
        }
        Ok(Err(Refused::Core(e))) if e.is_caller_error() => {
            let status = if matches!(e, quire_core::Error::NotFound(_)) {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::BAD_REQUEST
            };
            failure(status, &e.to_string())
        }
        Ok(Err(Refused::Core(e))) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}
