//! History: a note's revisions with their text and restoring one, change sets described in words
//! (`quire_core::changes`, shared with `quire history`), and undoing one (with the later ones in its way, when asked).

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use quire_core::changes::ChangeSetView;
use serde::{Deserialize, Serialize};

use super::notes::whole_note;
use super::{content_read, user_read, user_write};
use crate::WebApp;
use crate::error::ApiError;
use crate::note::Note;
use quire_core::EntityKind;

/// A note's revisions, newest first.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RevisionList {
    /// The revisions.
    pub revisions: Vec<RevisionView>,
}

/// A revision: the note's title and text before a write, and who made that write.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RevisionView {
    /// Its number, to restore it.
    pub revision: i64,
    /// The note.
    pub note_id: String,
    /// The title then.
    pub title: String,
    /// The length of the text, in characters.
    pub body_chars: usize,
    /// Who made the write it precedes (`user`, `agent:...`, `mcp:...`).
    pub actor: String,
    /// That write's change set.
    pub change_set_id: Option<String>,
    /// When it was taken (RFC 3339).
    pub created: String,
    /// The text then.
    pub body: String,
}

/// Change sets, newest first.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct History {
    /// The change sets.
    pub change_sets: Vec<ChangeSetEntry>,
    /// How many there are in all.
    pub total: u64,
    /// Whether more follow.
    pub has_more: bool,
}

/// A change set, with what it changed in words.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChangeSetEntry {
    /// Its id, to undo it.
    pub change_set_id: String,
    /// Who made it.
    pub actor: String,
    /// Who made it, in words for a person (an assistant turn by its chat's title).
    pub by: String,
    /// When (RFC 3339).
    pub created: String,
    /// When it was undone, if it was (RFC 3339).
    pub undone: Option<String>,
    /// What it undid, when it is an undo.
    pub undoes: Option<UndoneEntry>,
    /// Its changes; a change described like an earlier one of the set is said once.
    pub changes: Vec<ChangeView>,
}

/// The change set an undo undid.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct UndoneEntry {
    /// Its id.
    pub change_set_id: String,
    /// Who made it, in words.
    pub by: String,
    /// When (RFC 3339).
    pub created: String,
}

/// One change, in words: `verb` then `what` ("renamed", "note \"Draft\" to \"Plan\"").
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChangeView {
    /// The kind of thing changed.
    pub entity: EntityKind,
    /// Its id.
    pub entity_id: String,
    /// `create`, `update` or `delete`.
    #[schemars(with = "String")]
    pub operation: quire_core::Operation,
    /// What was done, in the past tense ("created", "changed", "trashed", ...).
    pub verb: String,
    /// What it was done to, by name.
    pub what: String,
    /// Who did it.
    pub actor: String,
    /// When (RFC 3339).
    pub at: String,
}

impl From<&ChangeSetView> for ChangeSetEntry {
    fn from(view: &ChangeSetView) -> ChangeSetEntry {
        ChangeSetEntry {
            change_set_id: view.set.id.clone(),
            actor: view.set.actor.to_string(),
            by: view.by.clone(),
            created: view.set.created.to_rfc3339(),
            undone: view.set.reverted.map(|t| t.to_rfc3339()),
            undoes: view.undoes.as_ref().map(|u| UndoneEntry {
                change_set_id: u.change_set_id.clone(),
                by: u.by.clone(),
                created: u.created.to_rfc3339(),
            }),
            changes: view
                .changes
                .iter()
                .map(|(change, described)| ChangeView {
                    entity: change.entity,
                    entity_id: change.entity_id.clone(),
                    operation: change.operation,
                    verb: described.verb.to_owned(),
                    what: described.what.clone(),
                    actor: change.actor.to_string(),
                    at: change.at.to_rfc3339(),
                })
                .collect(),
        }
    }
}

/// What an undo did.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Undone {
    /// The change set asked for, now undone.
    pub undone_change_set_id: String,
    /// How many of its changes were undone.
    pub undone_changes: u64,
    /// Who had made it.
    pub actor: String,
    /// The change set of the undo itself (an undo can be undone).
    pub change_set_id: Option<String>,
    /// The later change sets undone with it (`?with_later=true`), the earliest first.
    pub undone_later_change_set_ids: Vec<String>,
}

/// `GET /api/notes/{id}/revisions`: a sealed note's need the workspace unlocked (`locked`, 423, otherwise).
pub(super) async fn revisions(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
) -> Result<Json<RevisionList>, ApiError> {
    let revisions = content_read(&app, move |r| r.revisions(&id)).await?;
    let revisions = revisions
        .into_iter()
        .map(|r| RevisionView {
            revision: r.id,
            note_id: r.note_id,
            title: r.title,
            body_chars: r.body.chars().count(),
            actor: r.actor.to_string(),
            change_set_id: r.change_set_id,
            created: r.created.to_rfc3339(),
            body: r.body,
        })
        .collect();
    Ok(Json(RevisionList { revisions }))
}

/// `POST /api/notes/{id}/revisions/{revision}/restore`: the note as it is now.
pub(super) async fn restore_revision(
    State(app): State<Arc<WebApp>>,
    Path((id, revision)): Path<(String, i64)>,
) -> Result<Json<Note>, ApiError> {
    let note_id = id.clone();
    user_write(&app, move |w| {
        quire_core::changes::restore_revision_in(w, &note_id, revision)
    })
    .await?;
    Ok(Json(whole_note(&app, id).await?))
}

/// `?note_id=` for one note's change sets (or chats); the workspace's otherwise.
#[derive(Debug, Deserialize)]
pub(super) struct NoteQuery {
    pub(super) note_id: Option<String>,
}

/// `GET /api/history`: the newest 50 change sets.
pub(super) async fn history(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<NoteQuery>, QueryRejection>,
) -> Result<Json<History>, ApiError> {
    let Query(query) = query?;
    let newest = quire_core::Page { offset: 0, limit: 50 };
    let page = user_read(&app, move |r| {
        quire_core::changes::change_set_views(r, query.note_id.as_deref(), newest)
    })
    .await?;
    Ok(Json(History {
        change_sets: page.sets.iter().map(ChangeSetEntry::from).collect(),
        total: page.total,
        has_more: page.has_more,
    }))
}

/// `?with_later=true`: undo the later change sets that changed the same things too (what a refusal offers).
#[derive(Debug, Deserialize)]
pub(super) struct UndoQuery {
    #[serde(default)]
    with_later: bool,
}

/// `POST /api/history/{id}/undo`: refused with `changed_since` when a later change set stands in the way, and with
/// `locked` when it would unseal a note while the workspace is locked.
pub(super) async fn undo(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    query: Result<Query<UndoQuery>, QueryRejection>,
) -> Result<Json<Undone>, ApiError> {
    let Query(query) = query?;
    let (actor, reports) = user_write(&app, move |w| {
        if query.with_later {
            quire_core::changes::undo_change_set_and_later_in(w, &id)
        } else {
            quire_core::changes::undo_change_set_in(w, &id).map(|(actor, report)| (actor, vec![report]))
        }
    })
    .await?;
    // The asked change set is undone last.
    let Some((asked, later)) = reports.split_last() else {
        return Err(ApiError::internal("Nothing was undone."));
    };
    Ok(Json(Undone {
        undone_change_set_id: asked.reverted_change_set_id.clone(),
        undone_changes: asked.undone_changes,
        actor: actor.to_string(),
        change_set_id: asked.change_set_id.clone(),
        undone_later_change_set_ids: later.iter().rev().map(|r| r.reverted_change_set_id.clone()).collect(),
    }))
}
