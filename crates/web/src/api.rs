//! The JSON API under `/api`: notebooks, notes, tags, search (full-text and by meaning), backlinks, revisions,
//! change sets and chats. Reads are the read-only tools' outputs with the user's view; writes are the user's,
//! through core, and a refusal of core's guards comes back as a 4xx with its message.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use axum::{Json, Router};
use quire_core::{Actor, NewNote, NoteUpdate, Timestamp, Workspace};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::WebApp;

/// Saves of one note closer together than this share one revision: the text before the user started typing.
const COALESCE_MS: i64 = 120_000;

/// The largest request that carries a whole note (a save, a new note, accepted edits, a chat turn with the editor's
/// text): core's limit on a body, twice over because JSON escapes quotes, backslashes and line breaks into two
/// bytes, and a megabyte for the rest of the request. axum's default of 2 MB would refuse a note core accepts.
pub(crate) const NOTE_REQUEST_LIMIT: usize = 2 * quire_core::MAX_BODY_BYTES + 1024 * 1024;

pub(crate) fn routes() -> Router<Arc<WebApp>> {
    Router::new()
        .route("/notes/{id}/links", get(note_links))
        .route("/settings", get(settings))
        .route("/models", post(add_model))
        .route("/semantic", get(crate::semantic::settings))
        .route("/semantic/install", post(crate::semantic::install))
        .route("/notebooks", get(notebooks).post(create_notebook))
        .route("/notebooks/{id}", patch(change_notebook).delete(delete_notebook))
        .route(
            "/notes",
            get(list_notes)
                .post(create_note)
                .layer(DefaultBodyLimit::max(NOTE_REQUEST_LIMIT)),
        )
        .route(
            "/notes/{id}",
            get(read_note)
                .put(save_note)
                .layer(DefaultBodyLimit::max(NOTE_REQUEST_LIMIT)),
        )
        .route("/all-notes", get(all_notes))
        .route("/events", get(events))
        .route("/notes/{id}/move", post(move_note))
        .route("/notes/{id}/protect", post(protect_note))
        .route("/notes/{id}/trash", post(trash_note))
        .route("/notes/{id}/restore", post(restore_note))
        .route("/notes/{id}/purge", post(purge_note))
        .route("/notes/{id}/backlinks", get(backlinks))
        .route("/notes/{id}/revisions", get(revisions))
        .route("/notes/{id}/revisions/{revision}/restore", post(restore_revision))
        .route("/attachments/{id}", get(attachment))
        .route("/tags", get(tags))
        .route("/search", get(search))
        .route("/history", get(history))
        .route("/history/{id}/undo", post(undo))
        .route("/chats", get(chats))
        .route("/chats/{id}", get(chat))
        .route(
            "/notes/{id}/accept",
            post(crate::turns::accept).layer(DefaultBodyLimit::max(NOTE_REQUEST_LIMIT)),
        )
        .route(
            "/turns",
            post(crate::turns::start).layer(DefaultBodyLimit::max(NOTE_REQUEST_LIMIT)),
        )
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

/// A search by meaning embeds the waiting notes first when there are at most this many.
const SEARCH_CATCH_UP: usize = 64;

/// `?query=...`, with `semantic=true` for search by meaning.
async fn search(State(app): State<Arc<WebApp>>, Query(query): Query<Vec<(String, String)>>) -> Response {
    let semantic = query.iter().any(|(k, v)| k == "semantic" && v == "true");
    let rest = query.into_iter().filter(|(k, _)| k != "semantic").collect();
    let name = if semantic {
        // The background indexer embeds changed notes every half second; a search right after an edit, or right
        // after a model was put in use, would not find them yet. When only a few notes wait, they are embedded
        // first; a larger backlog is left to the indexer, so a search never waits for a whole workspace.
        let app = app.clone();
        let caught_up = tokio::task::spawn_blocking(move || app.workspace.index_pending_if_few(SEARCH_CATCH_UP)).await;
        if let Ok(Err(e)) = caught_up {
            tracing::warn!(error = %e, "the semantic index could not catch up before a search");
        }
        "semantic_search_notes"
    } else {
        "search_notes"
    };
    tool(&app, name, arguments(rest)).await
}

async fn tags(State(app): State<Arc<WebApp>>) -> Response {
    tool(&app, "list_tags", json!({ "limit": 100 })).await
}

async fn backlinks(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    tool(&app, "get_backlinks", json!({ "note_id": id })).await
}

/// What the sidebar needs to know of the models: names only, keys stay on the server.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Settings {
    /// The models to pick from, the default first.
    pub models: Vec<ModelChoice>,
    /// How to set a model up, when there is none.
    pub setup_hint: Option<String>,
    /// Whether the page may add a model (`POST /api/models`).
    pub can_add_models: bool,
}

/// One model of the picker.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ModelChoice {
    /// What the picker shows; send it back as the turn's `model`.
    pub name: String,
    /// `provider:model`.
    pub model: String,
    /// The base URL, when not the provider's own.
    pub base_url: Option<String>,
    /// Whether it is the one used when none is picked.
    pub is_default: bool,
}

/// A note's links as core resolved them (by title, alias or path, see `quire_core::links`): what a click on one opens.
async fn note_links(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    match user_read(&app, move |r| r.outgoing_links(&id)).await {
        Ok(links) => {
            let links: Vec<Value> = links
                .iter()
                .map(|l| json!({ "target": l.target, "note_id": l.note_id }))
                .collect();
            Json(json!({ "links": links })).into_response()
        }
        Err(refused) => refused,
    }
}

async fn settings(State(app): State<Arc<WebApp>>) -> Response {
    Json(settings_of(&app)).into_response()
}

fn settings_of(app: &WebApp) -> Settings {
    let models: Vec<ModelChoice> = app
        .models()
        .iter()
        .enumerate()
        .map(|(i, m)| ModelChoice {
            name: m.name.clone(),
            model: m.model.clone(),
            base_url: m.base_url.clone(),
            is_default: i == 0,
        })
        .collect();
    let setup_hint = models.is_empty().then(|| app.setup_hint.clone());
    Settings {
        models,
        setup_hint,
        can_add_models: app.add_model.is_some(),
    }
}

/// Adds a chat model from the page: the app checks it can be used and keeps it in its configuration (the key stays
/// on the server); it is offered at once, without a restart. A model of the same name is replaced.
async fn add_model(State(app): State<Arc<WebApp>>, Json(new): Json<crate::NewModel>) -> Response {
    let Some(add) = app.add_model.clone() else {
        return failure(StatusCode::NOT_FOUND, "This server cannot add models from the page.");
    };
    if new.name.trim().is_empty() || new.model.trim().is_empty() {
        return failure(
            StatusCode::BAD_REQUEST,
            "Give the model a name and say which model it is (provider:model).",
        );
    }
    let added = match tokio::task::spawn_blocking(move || add(new)).await {
        Ok(Ok(model)) => model,
        Ok(Err(refused)) => return failure(StatusCode::BAD_REQUEST, &refused),
        Err(e) => return failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    {
        let mut models = app.models.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        match models.iter_mut().find(|m| m.name == added.name) {
            Some(same) => *same = added,
            None => models.push(added),
        }
    }
    Json(settings_of(&app)).into_response()
}

/// The whole note in `read_note`'s shape (long bodies are read slice by slice and joined).
async fn read_note(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    let mut response = tool(&app, "read_note", json!({ "note_id": id, "max_chars": 100_000 })).await;
    loop {
        if !response.status().is_success() {
            return response;
        }
        let (parts, body) = response.into_parts();
        let Some(mut note) = json_of(body).await else {
            return failure(StatusCode::INTERNAL_SERVER_ERROR, "unreadable note");
        };
        let Some(next) = note["next_offset"].as_u64() else {
            return Response::from_parts(parts, axum::body::Body::from(note.to_string()));
        };
        let more = tool(
            &app,
            "read_note",
            json!({ "note_id": id, "offset": next, "max_chars": 100_000 }),
        )
        .await;
        if !more.status().is_success() {
            return more;
        }
        let Some(rest) = json_of(more.into_body()).await else {
            return failure(StatusCode::INTERNAL_SERVER_ERROR, "unreadable note");
        };
        let joined = format!(
            "{}{}",
            note["body"].as_str().unwrap_or(""),
            rest["body"].as_str().unwrap_or("")
        );
        note["body"] = Value::String(joined);
        note["has_more"] = rest["has_more"].clone();
        note["next_offset"] = rest["next_offset"].clone();
        response = Json(note).into_response();
    }
}

async fn json_of(body: axum::body::Body) -> Option<Value> {
    let bytes = axum::body::to_bytes(body, usize::MAX).await.ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Runs work on the workspace on a blocking thread; core's refusals become 400 (404 for a missing thing, 409 for a
/// conflict) with core's message.
async fn blocking<T: Send + 'static>(
    app: &Arc<WebApp>,
    work: impl FnOnce(&Workspace) -> quire_core::Result<T> + Send + 'static,
) -> Result<T, Response> {
    let app = app.clone();
    match tokio::task::spawn_blocking(move || work(&app.workspace)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(core_failure(&e)),
        Err(e) => Err(failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())),
    }
}

/// A write as the user, through [`blocking`].
async fn user_write<T: Send + 'static>(
    app: &Arc<WebApp>,
    write: impl FnOnce(&mut quire_core::Writer<'_>) -> quire_core::Result<T> + Send + 'static,
) -> Result<T, Response> {
    blocking(app, move |ws| ws.write(&Actor::User, write)).await
}

/// A read with the user's view, through [`blocking`].
async fn user_read<T: Send + 'static>(
    app: &Arc<WebApp>,
    read: impl FnOnce(&quire_core::Reader<'_>) -> quire_core::Result<T> + Send + 'static,
) -> Result<T, Response> {
    blocking(app, move |ws| ws.read(&Actor::User, read)).await
}

fn core_failure(e: &quire_core::Error) -> Response {
    let status = match e {
        quire_core::Error::NotFound(_) => StatusCode::NOT_FOUND,
        quire_core::Error::Conflict(_) | quire_core::Error::ChangedSince(_) => StatusCode::CONFLICT,
        e if e.is_caller_error() => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    failure(status, &e.to_string())
}

/// A new notebook.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewNotebookRequest {
    title: String,
    parent_id: Option<String>,
}

async fn create_notebook(State(app): State<Arc<WebApp>>, Json(request): Json<NewNotebookRequest>) -> Response {
    // A `/` makes the path: the notebooks of `Work/Projects` that are missing are created, as `quire notebook add`
    // does; a path that exists already is refused rather than made twice.
    match user_write(&app, move |w| {
        if !request.title.contains('/') {
            return w.create_notebook(quire_core::NewNotebook {
                title: request.title,
                parent_id: request.parent_id,
                icon: None,
            });
        }
        let made = w.create_notebook_path(request.parent_id.as_deref(), &request.title)?;
        if made.created.is_empty() {
            return Err(quire_core::Error::Invalid(format!(
                "The notebook {} exists already.",
                w.notebook_path_text(&made.notebook.id)?
            )));
        }
        Ok(made.notebook)
    })
    .await
    {
        Ok(notebook) => (
            StatusCode::CREATED,
            Json(json!({ "notebook_id": notebook.id, "title": notebook.title })),
        )
            .into_response(),
        Err(refused) => refused,
    }
}

/// A rename, a move, or both.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NotebookChange {
    title: Option<String>,
    parent_id: Option<String>,
}

async fn change_notebook(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(change): Json<NotebookChange>,
) -> Response {
    match user_write(&app, move |w| {
        if let Some(title) = &change.title {
            w.rename_notebook(&id, title)?;
        }
        if let Some(parent) = &change.parent_id {
            w.move_notebook(&id, parent)?;
        }
        Ok(id)
    })
    .await
    {
        Ok(id) => Json(json!({ "notebook_id": id })).into_response(),
        Err(refused) => refused,
    }
}

async fn delete_notebook(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    match user_write(&app, move |w| w.delete_notebook(&id)).await {
        Ok(()) => Json(json!({ "deleted": true })).into_response(),
        Err(refused) => refused,
    }
}

async fn trash_note(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    match user_write(&app, move |w| w.trash_note(&id)).await {
        Ok(_) => Json(json!({ "in_trash": true })).into_response(),
        Err(refused) => refused,
    }
}

async fn restore_note(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    match user_write(&app, move |w| w.restore_note(&id)).await {
        Ok(_) => Json(json!({ "in_trash": false })).into_response(),
        Err(refused) => refused,
    }
}

/// Deletes a note in the trash for good (only a trashed one: a live note goes to the trash first).
async fn purge_note(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    match user_write(&app, move |w| {
        if w.note_summary(&id)?.deleted.is_none() {
            return Err(quire_core::Error::Invalid(
                "Only a note in the trash can be deleted for good; move it to the trash first.".into(),
            ));
        }
        w.purge_note(&id)
    })
    .await
    {
        Ok(()) => Json(json!({ "deleted": true })).into_response(),
        Err(refused) => refused,
    }
}

/// An attachment's bytes, for images in the preview (`quire://attachment/ID`). The user's view: protected ones too.
async fn attachment(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    match user_read(&app, move |r| Ok((r.attachment(&id)?, r.attachment_data(&id)?))).await {
        Ok((info, data)) => {
            // Only images render inline; anything else (an SVG can carry script) downloads, never runs.
            if info.mime.starts_with("image/") && info.mime != "image/svg+xml" {
                return ([(axum::http::header::CONTENT_TYPE, info.mime.clone())], data).into_response();
            }
            let name: String = info
                .title
                .chars()
                .map(|c| {
                    if c.is_ascii_graphic() && c != '"' && c != '\\' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            (
                [
                    (axum::http::header::CONTENT_TYPE, "application/octet-stream".to_owned()),
                    (
                        axum::http::header::CONTENT_DISPOSITION,
                        format!("attachment; filename=\"{name}\""),
                    ),
                ],
                data,
            )
                .into_response()
        }
        Err(refused) => refused,
    }
}

async fn revisions(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    match user_read(&app, move |r| r.revisions(&id)).await {
        Ok(revisions) => {
            let list: Vec<Value> = revisions
                .iter()
                .map(|r| quire_core::changes::revision_json(r, true))
                .collect();
            Json(json!({ "revisions": list })).into_response()
        }
        Err(refused) => refused,
    }
}

async fn restore_revision(State(app): State<Arc<WebApp>>, Path((id, revision)): Path<(String, i64)>) -> Response {
    let note_id = id.clone();
    match blocking(&app, move |ws| {
        quire_core::changes::restore_revision(ws, &note_id, revision)
    })
    .await
    {
        Ok(_) => read_note(State(app), Path(id)).await,
        Err(refused) => refused,
    }
}

/// `?note_id=` for one note's change sets; the workspace's otherwise. The newest 50.
#[derive(Debug, Deserialize)]
struct HistoryQuery {
    note_id: Option<String>,
}

async fn history(State(app): State<Arc<WebApp>>, Query(query): Query<HistoryQuery>) -> Response {
    let newest = quire_core::Page { offset: 0, limit: 50 };
    match user_read(&app, move |r| {
        quire_core::changes::change_set_views(r, query.note_id.as_deref(), newest)
    })
    .await
    {
        Ok(page) => {
            let sets: Vec<Value> = page
                .sets
                .iter()
                .map(quire_core::changes::ChangeSetView::to_json)
                .collect();
            Json(json!({ "change_sets": sets, "total": page.total, "has_more": page.has_more })).into_response()
        }
        Err(refused) => refused,
    }
}

/// `?with_later=true`: undo the later change sets that changed the same things too (what a refusal offers).
#[derive(Debug, Deserialize)]
struct UndoQuery {
    #[serde(default)]
    with_later: bool,
}

async fn undo(State(app): State<Arc<WebApp>>, Path(id): Path<String>, Query(query): Query<UndoQuery>) -> Response {
    let undone = blocking(&app, move |ws| {
        if query.with_later {
            quire_core::changes::undo_change_set_and_later(ws, &id)
        } else {
            quire_core::changes::undo_change_set(ws, &id).map(|(actor, report)| (actor, vec![report]))
        }
    })
    .await;
    match undone {
        Ok((actor, reports)) => {
            // The asked change set is undone last.
            let later: Vec<&String> = reports
                .iter()
                .rev()
                .skip(1)
                .map(|r| &r.reverted_change_set_id)
                .collect();
            match reports.last() {
                Some(report) => Json(json!({
                    "undone_change_set_id": report.reverted_change_set_id,
                    "undone_changes": report.undone_changes,
                    "actor": actor.to_string(),
                    "change_set_id": report.change_set_id,
                    "undone_later_change_set_ids": later,
                }))
                .into_response(),
                None => failure(StatusCode::INTERNAL_SERVER_ERROR, "Nothing was undone."),
            }
        }
        Err(refused) => refused,
    }
}

/// `?note_id=` for the chats about one note; every chat otherwise. Newest first.
async fn chats(State(app): State<Arc<WebApp>>, Query(query): Query<HistoryQuery>) -> Response {
    match user_read(&app, |r| r.chats(quire_core::Page { offset: 0, limit: 200 })).await {
        Ok(page) => {
            let mut list: Vec<&quire_core::Chat> = page
                .items
                .iter()
                .filter(|c| query.note_id.is_none() || c.note_id == query.note_id)
                .collect();
            list.sort_by_key(|c| std::cmp::Reverse(c.updated));
            let chats: Vec<Value> = list
                .iter()
                .map(|c| json!({ "chat_id": c.id, "title": c.title, "note_id": c.note_id, "updated": c.updated.to_rfc3339() }))
                .collect();
            Json(json!({ "chats": chats })).into_response()
        }
        Err(refused) => refused,
    }
}

/// A chat's messages as the agent stores them (`role` user, assistant with its tool calls, tool with the result).
async fn chat(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Response {
    let chat_id = id.clone();
    match blocking(&app, move |ws| quire_agent::load_history(ws, &chat_id)).await {
        Ok(messages) => {
            // The tools' titles, so a resumed chat's cards read like the live ones.
            let mut titles = serde_json::Map::new();
            for message in &messages {
                let names: Vec<&str> = match message {
                    quire_agent::Message::Assistant { tool_calls, .. } => {
                        tool_calls.iter().map(|c| c.name.as_str()).collect()
                    }
                    quire_agent::Message::Tool { name, .. } => vec![name.as_str()],
                    quire_agent::Message::User { .. } => Vec::new(),
                };
                for name in names {
                    let title = quire_agent::SessionTool::from_name(name)
                        .map(|t| t.title().to_owned())
                        .or_else(|| app.tools.get(name).map(|t| t.title.clone()));
                    if let Some(title) = title {
                        titles.insert(name.to_owned(), Value::String(title));
                    }
                }
            }
            Json(json!({ "chat_id": id, "messages": messages, "tool_titles": titles })).into_response()
        }
        Err(refused) => refused,
    }
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
    let created = user_write(&app, move |w| {
        w.create_note(NewNote {
            notebook_id: request.notebook_id,
            tags: request.tags,
            is_todo: request.is_todo,
            ..NewNote::new(request.title, request.body)
        })
    })
    .await;
    match created {
        Ok(note) => {
            let mut response = read_note(State(app), Path(note.summary.id)).await;
            *response.status_mut() = StatusCode::CREATED;
            response
        }
        Err(refused) => refused,
    }
}

/// A save of a note by the user: the fields that changed, and the `updated` time of the version they were made on.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveRequest {
    title: Option<String>,
    body: Option<String>,
    /// The note's tags after the save (added and removed to match).
    tags: Option<Vec<String>>,
    is_todo: Option<bool>,
    /// Marks a to-do done (or not done).
    done: Option<bool>,
    /// The `updated` field of the note as the editor loaded it (RFC 3339).
    base_updated: String,
    /// With a new title: change the `[[Old title]]` links in other notes to it, in the same change set.
    #[serde(default)]
    update_links: bool,
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
            if request.title.is_some() || request.body.is_some() {
                // One revision per typing session: the text before the first save of a burst.
                let recent = w.revisions(&note_id)?.into_iter().next().is_some_and(|r| {
                    r.actor == Actor::User && Timestamp::now().as_millis() - r.created.as_millis() < COALESCE_MS
                });
                if !recent {
                    w.save_revision_now(&note_id)?;
                }
                // And one change set: the typing session's saves join the last one when it is the user's, recent,
                // and only changed this note's text, so Recent changes and undo see one step, not one per pause.
                let last = w
                    .change_sets(quire_core::Page { offset: 0, limit: 1 })?
                    .items
                    .into_iter()
                    .next();
                if let Some(set) = last
                    && set.actor == Actor::User
                    && set.reverted.is_none()
                    && Timestamp::now().as_millis() - set.created.as_millis() < COALESCE_MS
                    && w.changes_in_set(&set.id)?.iter().all(|c| {
                        c.entity == quire_core::EntityKind::Note
                            && c.entity_id == note_id
                            && c.operation == quire_core::Operation::Update
                    })
                {
                    w.join_change_set(&set.id)?;
                }
            }
            let update = NoteUpdate {
                title: request.title,
                body: request.body,
                is_todo: request.is_todo,
                todo_completed: request.done.map(|done| done.then(Timestamp::now)),
            };
            let relinked = if request.update_links {
                w.update_note_relinking(&note_id, update)?.1.updated.len()
            } else {
                w.update_note(&note_id, update)?;
                0
            };
            if let Some(tags) = request.tags {
                for old in current.tags.iter().filter(|t| !tags.contains(t)) {
                    w.remove_tag(&note_id, old)?;
                }
                for new in tags.iter().filter(|t| !current.tags.contains(t)) {
                    w.add_tag(&note_id, new)?;
                }
            }
            Ok(relinked)
        })
    })
    .await;
    match saved {
        Ok(Ok(0)) => read_note(State(app), Path(id)).await,
        Ok(Ok(relinked)) => {
            let response = read_note(State(app), Path(id)).await;
            if !response.status().is_success() {
                return response;
            }
            let mut note = json_of(response.into_body()).await.unwrap_or(Value::Null);
            note["links_updated"] = json!(relinked);
            Json(note).into_response()
        }
        Ok(Err(Refused::Stale)) => {
            let current = read_note(State(app), Path(id)).await;
            let note = json_of(current.into_body()).await.unwrap_or(Value::Null);
            (
                StatusCode::CONFLICT,
                Json(json!({
                    "error": "The note changed since it was loaded (another window or an AI client saved it). \
                              Nothing was saved; your text is still in the editor. Keep your text (it is saved \
                              over theirs) or load theirs (yours is kept beside it to copy from).",
                    "note": note,
                })),
            )
                .into_response()
        }
        Ok(Err(Refused::Core(e))) => core_failure(&e),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// Where a note goes: `{"notebook_id": ...}` (`_root` for the top level).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    notebook_id: String,
}

/// Moves a note to another notebook; answers with the note as it is now.
async fn move_note(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(request): Json<MoveRequest>,
) -> Response {
    let note_id = id.clone();
    match user_write(&app, move |w| w.move_note(&note_id, &request.notebook_id)).await {
        Ok(_) => read_note(State(app), Path(id)).await,
        Err(refused) => refused,
    }
}

/// `{"protected": true}` protects a note, `false` unprotects it (only the user may do either).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProtectRequest {
    protected: bool,
}

async fn protect_note(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(request): Json<ProtectRequest>,
) -> Response {
    let note_id = id.clone();
    match user_write(&app, move |w| w.set_note_protected(&note_id, request.protected)).await {
        Ok(_) => read_note(State(app), Path(id)).await,
        Err(refused) => refused,
    }
}

/// `?offset=&limit=` of every live note, most recently changed first.
#[derive(Debug, Deserialize)]
struct PageQuery {
    offset: Option<u64>,
    limit: Option<u64>,
}

/// Every live note in every notebook, newest first, in `list_notes`'s shape (with no `notebook`).
async fn all_notes(State(app): State<Arc<WebApp>>, Query(query): Query<PageQuery>) -> Response {
    let page = quire_core::Page {
        offset: query.offset.unwrap_or(0),
        limit: query.limit.unwrap_or(50).clamp(1, 100),
    };
    match user_read(&app, move |r| {
        let notebooks = r.notebooks()?;
        let notes = r.all_notes(page)?;
        Ok((notebooks, notes))
    })
    .await
    {
        Ok((notebooks, notes)) => {
            let path = |id: &str| notebook_path(&notebooks, id);
            let list: Vec<Value> = notes
                .items
                .iter()
                .map(|n| {
                    json!({
                        "note_id": n.id,
                        "title": n.title,
                        "notebook_id": n.notebook_id,
                        "notebook_path": path(&n.notebook_id),
                        "tags": n.tags,
                        "is_todo": n.is_todo,
                        "todo_completed": n.todo_completed.map(Timestamp::to_rfc3339),
                        "is_protected": n.is_protected,
                        "in_trash": n.deleted.is_some(),
                        "created": n.created.to_rfc3339(),
                        "updated": n.updated.to_rfc3339(),
                    })
                })
                .collect();
            Json(json!({
                "notebook": null,
                "total": notes.total,
                "offset": notes.offset,
                "has_more": notes.has_more,
                "notes": list,
            }))
            .into_response()
        }
        Err(refused) => refused,
    }
}

/// A notebook's path from the top (`Work/Projects`; empty for the top level), from the list of all notebooks.
fn notebook_path(notebooks: &[quire_core::Notebook], id: &str) -> String {
    let mut titles = Vec::new();
    let mut current = notebooks.iter().find(|n| n.id == id);
    // A parent chain is never longer than the list; the bound keeps a broken chain from looping.
    while let Some(notebook) = current.filter(|_| titles.len() <= notebooks.len()) {
        let Some(parent) = &notebook.parent_id else {
            break;
        };
        titles.push(notebook.title.as_str());
        current = notebooks.iter().find(|n| &n.id == parent);
    }
    titles.reverse();
    titles.join("/")
}

/// How often the change stream looks at the change log.
const EVENTS_POLL: std::time::Duration = std::time::Duration::from_millis(400);

/// How long one change stream lasts before it ends and the page opens the next (from where this one stopped). A
/// stream is a request in progress, which a graceful shutdown (Ctrl+C) waits for: this bounds that wait.
const EVENTS_STREAM_FOR: std::time::Duration = std::time::Duration::from_secs(10);

/// The most changes one event carries (more come in the next one).
const EVENTS_BATCH: u64 = 200;

/// `?after=SEQ`: the changes after that sequence number; from now on without it.
#[derive(Debug, Deserialize)]
struct EventsQuery {
    after: Option<i64>,
}

/// `GET /api/events`: the changes anyone makes (the CLI, an AI client, the assistant, this page) as server-sent
/// events: first `ready` with the sequence number it starts after, then `changes` with the sequence number of the
/// last change it carries and, for each change, the entity, its id (the note's, for a note's tag), the operation and
/// the actor. The change log is polled here, so a page learns of a write by another process too.
async fn events(State(app): State<Arc<WebApp>>, Query(query): Query<EventsQuery>) -> Response {
    let start = match query.after {
        Some(seq) => seq,
        None => match user_read(&app, |r| r.latest_change_seq()).await {
            Ok(seq) => seq,
            Err(refused) => return refused,
        },
    };
    let until = tokio::time::Instant::now() + EVENTS_STREAM_FOR;
    let ready = Event::default()
        .event("ready")
        .data(json!({ "seq": start }).to_string());
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
            let list: Vec<Value> = changes
                .iter()
                .map(|c| {
                    let id = match c.entity {
                        quire_core::EntityKind::NoteTag => c.entity_id.split('/').next().unwrap_or_default(),
                        _ => c.entity_id.as_str(),
                    };
                    json!({ "entity": c.entity, "id": id, "operation": c.operation, "actor": c.actor.to_string() })
                })
                .collect();
            let event = Event::default()
                .event("changes")
                .data(json!({ "seq": last, "changes": list }).to_string());
            return Some((Ok::<_, std::convert::Infallible>(event), (app, last)));
        }
    });
    let stream = futures::StreamExt::chain(
        futures::stream::once(async move { Ok::<_, std::convert::Infallible>(ready) }),
        news,
    );
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(std::time::Duration::from_secs(5)))
        .into_response()
}
