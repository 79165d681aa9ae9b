//! Notes: a notebook's list and All notes, one note whole, its links and backlinks, and the user's writes (create,
//! save from the editor, move, protect, trash, restore, delete for good).

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use quire_core::{NewNote, NoteUpdate, Timestamp, UserEdit};
use quire_tools::builtin::{GetBacklinks, ListNotes};
use quire_tools::notes::list_notes;
use quire_tools::types::NoteInfo;
use serde::{Deserialize, Serialize};

use super::notebooks::Deleted;
use super::{content_read, read_tool, user_read, user_write};
use crate::WebApp;
use crate::error::{ApiError, ErrorKind};
use crate::note::Note;

/// A note after a save from the editor.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SavedNote {
    /// The note as it is now.
    #[serde(flatten)]
    pub note: Note,
    /// With a new title and `update_links`: how many other notes' `[[Old title]]` links now say it (absent when
    /// none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links_updated: Option<usize>,
}

/// Whether a note is in the trash now, after it was moved there or back.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TrashState {
    /// Whether it is in the trash.
    pub in_trash: bool,
}

/// A note's links as core resolved them (by title, alias or path, see `quire_core::links`): what a click opens.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct NoteLinks {
    /// The links of the body, in order.
    pub links: Vec<NoteLink>,
}

/// One link of a note's body.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct NoteLink {
    /// The target as written.
    pub target: String,
    /// The note it means; none when it points at no note.
    pub note_id: Option<String>,
}

/// The note whole, as the editor opens it ([`Note::read`], one read in core); with the unlocked key when the
/// workspace is unlocked. A sealed note while the workspace is locked is the note without its content (`locked`).
pub(super) async fn whole_note(app: &Arc<WebApp>, id: String) -> Result<Note, ApiError> {
    let reading = id.clone();
    match content_read(app, move |r| Note::read(r, &reading)).await {
        Ok(note) => Ok(note),
        Err(refused) if refused.kind() == ErrorKind::Locked => locked_note(app, id).await,
        Err(refused) => Err(refused),
    }
}

/// A sealed note without its content, described as the note list describes a note.
async fn locked_note(app: &Arc<WebApp>, id: String) -> Result<Note, ApiError> {
    let (tree, summary) = user_read(app, move |r| Ok((r.notebook_tree()?, r.note_summary(&id)?))).await?;
    Ok(Note::locked(NoteInfo::whole(&summary, tree.path(&summary.notebook_id))))
}

/// `GET /api/notes`: `list_notes` with the query string as its arguments.
pub(super) async fn list(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<list_notes::Input>, QueryRejection>,
) -> Result<Json<list_notes::Output>, ApiError> {
    let Query(input) = query?;
    Ok(Json(read_tool::<ListNotes>(&app, input).await?))
}

/// `?offset=&limit=` of every live note, most recently changed first.
#[derive(Debug, Deserialize)]
pub(super) struct PageQuery {
    offset: Option<u64>,
    limit: Option<u64>,
}

/// `GET /api/all-notes`: every live note in every notebook, newest first, in `list_notes`'s shape (with no
/// `notebook`), each note described as the tools describe it, in its notebook's path from core's tree.
pub(super) async fn all(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<list_notes::Output>, ApiError> {
    let Query(query) = query?;
    let page = quire_core::Page {
        offset: query.offset.unwrap_or(0),
        limit: query.limit.unwrap_or(50).clamp(1, 100),
    };
    let (tree, notes) = user_read(&app, move |r| Ok((r.notebook_tree()?, r.all_notes(page)?))).await?;
    Ok(Json(list_notes::Output {
        notebook: None,
        page: quire_tools::Page {
            total: notes.total,
            offset: notes.offset,
            has_more: notes.has_more,
            items: notes
                .items
                .iter()
                .map(|n| NoteInfo::whole(n, tree.path(&n.notebook_id)))
                .collect(),
        },
    }))
}

/// `GET /api/notes/{id}`: the whole note; a sealed note while the workspace is locked is refused as `locked` (423),
/// the refusal carrying the note without its content.
pub(super) async fn read(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Result<Json<Note>, ApiError> {
    let note = whole_note(&app, id).await?;
    if note.locked {
        return Err(ApiError::locked(note));
    }
    Ok(Json(note))
}

/// `GET /api/notes/{id}/links`.
pub(super) async fn links(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Result<Json<NoteLinks>, ApiError> {
    let links = user_read(&app, move |r| r.outgoing_links(&id)).await?;
    let links = links
        .into_iter()
        .map(|l| NoteLink {
            target: l.target,
            note_id: l.note_id,
        })
        .collect();
    Ok(Json(NoteLinks { links }))
}

/// `GET /api/notes/{id}/backlinks`: `get_backlinks`.
pub(super) async fn backlinks(
    State(app): State<Arc<WebApp>>,
    Path(note_id): Path<String>,
) -> Result<Json<quire_tools::attributes::get_backlinks::Output>, ApiError> {
    let input = quire_tools::attributes::get_backlinks::Input {
        note_id,
        ..Default::default()
    };
    Ok(Json(read_tool::<GetBacklinks>(&app, input).await?))
}

/// A new note, written by the user.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NewNoteRequest {
    title: String,
    #[serde(default)]
    body: String,
    notebook_id: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    is_todo: bool,
}

/// `POST /api/notes`: 201 with the new note (in a protected notebook while the workspace is locked it is sealed
/// at once and answered `locked`, without its content).
pub(super) async fn create(
    State(app): State<Arc<WebApp>>,
    Json(request): Json<NewNoteRequest>,
) -> Result<(StatusCode, Json<Note>), ApiError> {
    let created = user_write(&app, move |w| {
        w.create_note(NewNote {
            notebook_id: request.notebook_id,
            tags: request.tags,
            is_todo: request.is_todo,
            ..NewNote::new(request.title, request.body)
        })
    })
    .await?;
    Ok((StatusCode::CREATED, Json(whole_note(&app, created.summary.id).await?)))
}

/// A save of a note by the user: the fields that changed, and the `updated` time of the version they were made on.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SaveRequest {
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

/// `PUT /api/notes/{id}`: a save from the editor, by core's rules ([`quire_core::Writer::save_user_edit`]). A save
/// made on an older version is refused (409) with the note as it is now, so nobody's text is lost.
pub(super) async fn save(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(request): Json<SaveRequest>,
) -> Result<Json<SavedNote>, ApiError> {
    let base_updated = Timestamp::parse_rfc3339(&request.base_updated).ok_or_else(|| {
        ApiError::invalid("base_updated must be the note's `updated` time (RFC 3339) as it was loaded.")
    })?;
    let edit = UserEdit {
        base_updated,
        update: NoteUpdate {
            title: request.title,
            body: request.body,
            is_todo: request.is_todo,
            todo_completed: request.done.map(|done| done.then(Timestamp::now)),
        },
        tags: request.tags,
        update_links: request.update_links,
    };
    let note_id = id.clone();
    match user_write(&app, move |w| w.save_user_edit(&note_id, edit)).await {
        Ok(saved) => Ok(Json(SavedNote {
            note: whole_note(&app, id).await?,
            links_updated: (!saved.links_updated.is_empty()).then_some(saved.links_updated.len()),
        })),
        Err(refused) if refused.kind() == ErrorKind::StaleEdit => {
            Err(ApiError::stale_edit(whole_note(&app, id).await?))
        }
        Err(refused) => Err(refused),
    }
}

/// Where a note goes: `{"notebook_id": ...}` (`_root` for the top level).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveRequest {
    notebook_id: String,
}

/// `POST /api/notes/{id}/move`: the note as it is now (moving a sealed note out of a protected notebook needs the
/// workspace unlocked; moving one in seals it, and while locked it is answered `locked`, without its content).
pub(super) async fn move_to(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(request): Json<MoveRequest>,
) -> Result<Json<Note>, ApiError> {
    let note_id = id.clone();
    user_write(&app, move |w| w.move_note(&note_id, &request.notebook_id)).await?;
    Ok(Json(whole_note(&app, id).await?))
}

/// `{"protected": true}` protects a note, `false` unprotects it (only the user may do either).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProtectRequest {
    protected: bool,
}

/// `POST /api/notes/{id}/protect`: the note as it is now. Protecting needs no passphrase (with one set, the note is
/// sealed at once, and while the workspace is locked it is answered `locked`, without its content); unprotecting a
/// sealed note needs the workspace unlocked (`locked`, 423, and nothing changes, otherwise).
pub(super) async fn protect(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(request): Json<ProtectRequest>,
) -> Result<Json<Note>, ApiError> {
    let note_id = id.clone();
    user_write(&app, move |w| w.set_note_protected(&note_id, request.protected)).await?;
    Ok(Json(whole_note(&app, id).await?))
}

/// `POST /api/notes/{id}/trash`.
pub(super) async fn trash(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
) -> Result<Json<TrashState>, ApiError> {
    user_write(&app, move |w| w.trash_note(&id)).await?;
    Ok(Json(TrashState { in_trash: true }))
}

/// `POST /api/notes/{id}/restore`.
pub(super) async fn restore(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
) -> Result<Json<TrashState>, ApiError> {
    user_write(&app, move |w| w.restore_note(&id)).await?;
    Ok(Json(TrashState { in_trash: false }))
}

/// `POST /api/notes/{id}/purge`: deletes a note in the trash for good (only a trashed one: a live note goes to the
/// trash first).
pub(super) async fn purge(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Result<Json<Deleted>, ApiError> {
    user_write(&app, move |w| {
        if w.note_summary(&id)?.deleted.is_none() {
            return Err(quire_core::Error::Invalid(
                "Only a note in the trash can be deleted for good; move it to the trash first.".into(),
            ));
        }
        w.purge_note(&id)
    })
    .await?;
    Ok(Json(Deleted { deleted: true }))
}
