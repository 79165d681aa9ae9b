//! The JSON API under `/api`: the routes, and how a handler reaches the workspace. Reads are the read-only tools'
//! outputs with the user's view, typed; writes are the user's, through core; every refusal is an [`ApiError`]
//! whose kind picks the status. One module per area: notes, notebooks, search, history, chats, attachments,
//! settings, the lock (the unlock period of sealed notes) and the change stream. What reads or writes a note's
//! content goes through the unlocked key when the workspace is unlocked ([`content_read`], [`user_write`]);
//! the editor's note is one such read ([`crate::note::Note::read`]); a sealed note is `locked` (423) otherwise.

mod agents;
mod attachments;
mod automations;
mod chats;
mod events;
mod history;
mod ledger;
mod lock;
mod notebooks;
mod notes;
mod offline;
mod review;
mod search;
mod settings;
mod structure;
mod sync;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, patch, post};
use quire_core::{Actor, Workspace};
use quire_tools::TypedTool;

use crate::WebApp;
use crate::error::ApiError;

pub use crate::note::Note;
pub use agents::{AgentAdmin, AgentAdmins, AgentList, AgentTested, AgentView, NewAgent};
pub use attachments::AddedAttachment;
pub use automations::{
    AutomationEntry, AutomationHost, AutomationList, AutomationView, Automations, EnabledRequest, HostError, HostFuture,
};
pub use chats::{ChatHistory, ChatList, ChatSummary};
pub use events::{ChangeEvent, ChangeNews};
pub use history::{ChangeSetEntry, ChangeView, History, RevisionList, RevisionView, Undone};
pub use ledger::LedgerView;
pub use lock::{LockInitialized, LockState};
pub use notebooks::{CreatedNotebook, Deleted, NotebookChanged};
pub use notes::{NoteLink, NoteLinks, SavedNote, TrashState};
pub(crate) use offline::Applied;
pub use offline::{OfflineSave, OfflineSaved};
pub use review::{ReviewDecision, ReviewList};
pub use settings::{ModelChoice, Settings};
pub use structure::{
    FieldRequest, FromTemplateRequest, OpenedNote, QueryRequest, TaskChanged, TaskRequest, TemplateEntry, TemplateList,
    TodayRequest,
};
pub use sync::{ConflictResolved, SyncConflictView, SyncSettings};

/// The largest request that carries a whole note (a save, a new note, accepted edits, a chat turn with the editor's
/// text): core's limit on a body, twice over because JSON escapes quotes, backslashes and line breaks into two
/// bytes, and a megabyte for the rest of the request. axum's default of 2 MB would refuse a note core accepts.
pub(crate) const NOTE_REQUEST_LIMIT: usize = 2 * quire_core::MAX_BODY_BYTES + 1024 * 1024;

/// The routes of the areas under `api/`; the router in `lib.rs` adds the chat turns' and the semantic model's.
pub(crate) fn routes() -> Router<Arc<WebApp>> {
    Router::new()
        .route("/notes/{id}/links", get(notes::links))
        .route("/settings", get(settings::settings))
        .route("/ledger", get(ledger::list))
        .route("/agents", get(agents::list).post(agents::add))
        .route("/agents/{name}", delete(agents::remove))
        .route("/agents/{name}/test", post(agents::test))
        .route("/automations", get(automations::list).post(automations::add))
        .route("/automations/{name}", delete(automations::remove))
        .route("/automations/{name}/run", post(automations::run))
        .route("/automations/{name}/enabled", post(automations::set_enabled))
        .route("/reviews", get(review::list))
        .route("/reviews/{id}", get(review::show))
        .route("/reviews/{id}/accept", post(review::accept))
        .route("/reviews/{id}/reject", post(review::reject))
        .route("/lock", get(lock::state))
        .route("/sync", get(sync::state).post(sync::now))
        .route("/sync/settings", get(sync::settings))
        .route("/sync/setup", post(sync::setup))
        .route("/sync/leave", post(sync::leave))
        .route("/sync/conflicts", get(sync::conflicts))
        .route("/sync/conflicts/{id}", post(sync::resolve))
        .route("/lock/init", post(lock::init))
        .route("/lock/unlock", post(lock::unlock))
        .route("/lock/lock", post(lock::lock))
        .route("/models", post(settings::add_model))
        .route("/notebooks", get(notebooks::list).post(notebooks::create))
        .route("/notebooks/{id}", patch(notebooks::change).delete(notebooks::delete))
        .route(
            "/notes",
            get(notes::list)
                .post(notes::create)
                .layer(DefaultBodyLimit::max(NOTE_REQUEST_LIMIT)),
        )
        .route(
            "/notes/{id}",
            get(notes::read)
                .put(notes::save)
                .layer(DefaultBodyLimit::max(NOTE_REQUEST_LIMIT)),
        )
        .route("/all-notes", get(notes::all))
        .route("/events", get(events::events))
        .route("/notes/{id}/move", post(notes::move_to))
        .route(
            "/notes/{id}/offline",
            post(offline::save).layer(DefaultBodyLimit::max(3 * NOTE_REQUEST_LIMIT)),
        )
        .route("/notes/{id}/protect", post(notes::protect))
        .route("/notes/{id}/trash", post(notes::trash))
        .route("/notes/{id}/restore", post(notes::restore))
        .route("/notes/{id}/purge", post(notes::purge))
        .route("/notes/{id}/backlinks", get(notes::backlinks))
        .route("/notes/{id}/revisions", get(history::revisions))
        .route(
            "/notes/{id}/revisions/{revision}/restore",
            post(history::restore_revision),
        )
        .route("/attachments/{id}", get(attachments::attachment))
        .route(
            "/notes/{id}/attachments",
            post(attachments::upload).layer(DefaultBodyLimit::max(attachments::ATTACHMENT_REQUEST_LIMIT)),
        )
        .route("/tags", get(search::tags))
        .route("/query", post(structure::query))
        .route("/tasks/done", post(structure::task_done))
        .route("/notes/{id}/field", post(structure::set_field))
        .route("/today", post(structure::today))
        .route("/templates", get(structure::templates))
        .route("/notes/from-template", post(structure::from_template))
        .route("/search", get(search::search))
        .route("/history", get(history::history))
        .route("/history/{id}/undo", post(history::undo))
        .route("/chats", get(chats::chats))
        .route("/chats/{id}", get(chats::chat))
        .route("/chats/{id}/summary", delete(chats::drop_summary))
}

/// Runs a read-only tool with the user's view on a blocking thread, typed: its output, or its failure by kind. For
/// what never needs the key (lists, search, tags: titles are not sealed): it does not keep the unlock period going.
async fn read_tool<T: TypedTool + 'static>(app: &Arc<WebApp>, input: T::Input) -> Result<T::Output, ApiError>
where
    T::Input: Send + 'static,
    T::Output: Send + 'static,
{
    let app = app.clone();
    let ws = crate::access::workspace(&app)?;
    let output = tokio::task::spawn_blocking(move || app.tools.read_as_user_typed::<T>(&ws, input)).await?;
    Ok(output?)
}

/// Runs work on the workspace on a blocking thread; core's refusals become [`ApiError`]s by their kind.
async fn blocking<T: Send + 'static>(
    app: &Arc<WebApp>,
    work: impl FnOnce(&Workspace) -> quire_core::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    // The workspace as this request may reach it (a device limited to some notebooks reaches only those).
    let ws = crate::access::workspace(app)?;
    Ok(tokio::task::spawn_blocking(move || work(&ws)).await??)
}

/// A write as the user, through [`blocking`], with the unlocked key when the workspace is unlocked (editing a sealed
/// note, unprotecting one, moving it out of a protected notebook or an undo that unseals need it): a write is the
/// person at work, so it keeps the unlock period going.
async fn user_write<T: Send + 'static>(
    app: &Arc<WebApp>,
    write: impl FnOnce(&mut quire_core::Writer<'_>) -> quire_core::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let key = app.lock.key();
    blocking(app, move |ws| match &key {
        Some(key) => ws.write_unlocked(key, write),
        None => ws.write(&Actor::User, write),
    })
    .await
}

/// A read with the user's view, through [`blocking`], for what never needs the key (see [`read_tool`]).
async fn user_read<T: Send + 'static>(
    app: &Arc<WebApp>,
    read: impl FnOnce(&quire_core::Reader<'_>) -> quire_core::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    blocking(app, move |ws| ws.read(&Actor::User, read)).await
}

/// [`user_read`] of a note's content (the note, its revisions, an attachment's data): through the unlocked key when
/// the workspace is unlocked (a sealed note then reads as written, and the period starts again).
async fn content_read<T: Send + 'static>(
    app: &Arc<WebApp>,
    read: impl FnOnce(&quire_core::Reader<'_>) -> quire_core::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let key = app.lock.key();
    blocking(app, move |ws| match &key {
        Some(key) => ws.read_unlocked(key, read),
        None => ws.read(&Actor::User, read),
    })
    .await
}
