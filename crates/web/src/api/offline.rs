//! `POST /api/notes/{id}/offline`: a save the page queued while the server was out of reach (a phone offline),
//! sent when it is back. When the note did not change meanwhile it is a save like any other; when it did, the
//! queued body is merged into the note as it is now by sync's rule ([`quire_sync::doc::merge_body`]): changes to
//! different lines both apply, and where both sides changed the same lines both versions are kept and recorded as
//! conflicts, which the note then shows with a choice, like sync's. No word is lost either way.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use quire_core::conflicts::SyncConflict;
use quire_core::{NewNote, NoteUpdate, Timestamp, UserEdit};
use serde::{Deserialize, Serialize};

use super::user_write;
use crate::WebApp;
use crate::access::Access;
use crate::error::ApiError;
use crate::note::Note;

/// A save queued offline: the version it was made on, and what the page had then.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OfflineSave {
    /// The save's own id, made by the page when it queued it: a save sent again (its answer was lost on the way) is
    /// answered as the first time and changes nothing.
    pub save_id: String,
    /// The `updated` time of the note the edit was made on (RFC 3339).
    pub base_updated: String,
    /// The title it was made on.
    pub base_title: String,
    /// The body it was made on.
    pub base_body: String,
    /// The title as edited.
    pub title: String,
    /// The body as edited.
    pub body: String,
}

/// How a queued save went in.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct OfflineSaved {
    /// The note as it is now.
    pub note: Note,
    /// The note had changed meanwhile, and the save was merged into it.
    pub merged: bool,
    /// The places where both changed the same lines: both versions are in the note, each waiting for a choice.
    pub conflicts: usize,
    /// The title given offline, when the note was renamed here meanwhile too: the note keeps this one's.
    pub title_not_applied: Option<String>,
}

/// The ids of the offline saves applied lately (the most recent [`Applied::KEPT`]), with their notes.
#[derive(Debug, Default)]
pub(crate) struct Applied(std::sync::Mutex<std::collections::VecDeque<(String, String)>>);

impl Applied {
    const KEPT: usize = 1_000;

    /// The note a save of this id went to, when it was applied.
    fn note_of(&self, save_id: &str) -> Option<String> {
        let applied = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        applied
            .iter()
            .find(|(id, _)| id == save_id)
            .map(|(_, note)| note.clone())
    }

    fn insert(&self, save_id: String, note_id: String) {
        let mut applied = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if applied.len() >= Applied::KEPT {
            applied.pop_front();
        }
        applied.push_back((save_id, note_id));
    }
}

pub(crate) async fn save(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(request): Json<OfflineSave>,
) -> Result<Json<OfflineSaved>, ApiError> {
    let base_updated = Timestamp::parse_rfc3339(&request.base_updated)
        .ok_or_else(|| ApiError::invalid("base_updated must be the note's `updated` time (RFC 3339)."))?;
    let device = match Access::current().device() {
        Some(device) => format!("{} (offline)", device.name),
        None => "this computer's page (offline)".to_owned(),
    };
    if request.save_id.is_empty() || request.save_id.len() > 100 {
        return Err(ApiError::invalid(
            "save_id is the save's own id, made by the page (1 to 100 characters).",
        ));
    }
    if let Some(saved_to) = app.offline_saves.note_of(&request.save_id) {
        return Ok(Json(OfflineSaved {
            note: super::notes::whole_note(&app, saved_to).await?,
            merged: false,
            conflicts: 0,
            title_not_applied: None,
        }));
    }
    let save_id = request.save_id.clone();
    let note_id = id.clone();
    let (saved_to, merged, conflicts, title_not_applied) = user_write(&app, move |w| {
        // A note deleted or trashed meanwhile: the text becomes a note of its own, beside it, rather than lost.
        let now = match w.note(&note_id) {
            Ok(note) if note.summary.deleted.is_none() => note,
            Ok(_) | Err(quire_core::Error::NotFound(_)) => {
                let notebook_id = w.note_summary(&note_id).ok().map(|n| n.notebook_id);
                let created = w.create_note(NewNote {
                    notebook_id,
                    ..NewNote::new(format!("{} (written offline)", request.title), request.body.clone())
                })?;
                return Ok((created.summary.id, false, 0, None));
            }
            Err(e) => return Err(e),
        };
        let changed = now.summary.updated != base_updated;
        let (body, clashes) = if changed {
            quire_sync::doc::merge_body(&request.base_body, &now.body, &request.body)
                .map_err(|e| quire_core::Error::Invalid(e.to_string()))?
        } else {
            (request.body.clone(), Vec::new())
        };
        // A title changed offline wins only over a title that did not change here meanwhile.
        let renamed = request.title != request.base_title;
        let title = (renamed && now.summary.title == request.base_title).then(|| request.title.clone());
        let title_not_applied =
            (renamed && title.is_none() && now.summary.title != request.title).then(|| request.title.clone());
        w.save_user_edit(
            &note_id,
            UserEdit {
                base_updated: now.summary.updated,
                update: NoteUpdate {
                    title,
                    body: (body != now.body).then_some(body),
                    ..NoteUpdate::default()
                },
                tags: None,
                update_links: false,
            },
        )?;
        let found = Timestamp::now().0;
        for clash in &clashes {
            w.record_offline_conflict(&SyncConflict::new(
                &note_id,
                &device,
                &clash.base,
                &clash.ours,
                &clash.theirs,
                found,
            ))?;
        }
        Ok((note_id, changed, clashes.len(), title_not_applied))
    })
    .await?;
    app.offline_saves.insert(save_id, saved_to.clone());
    Ok(Json(OfflineSaved {
        note: super::notes::whole_note(&app, saved_to).await?,
        merged,
        conflicts,
        title_not_applied,
    }))
}
