//! `POST /api/notes/{id}/offline`: a save the page queued while the server was out of reach (a phone offline),
//! sent when it is back. When the note did not change meanwhile it is a save like any other; when it did, the
//! queued body is merged into the note as it is now by sync's rule ([`quire_sync::doc::merge_body`]): changes to
//! different lines both apply, and where both sides changed the same lines both versions are kept and recorded as
//! conflicts, which the note then shows with a choice, like sync's. No word is lost either way.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use quire_core::conflicts::SyncConflict;
use quire_core::{NoteUpdate, Timestamp, UserEdit};
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
    let note_id = id.clone();
    let (merged, conflicts) = user_write(&app, move |w| {
        let now = w.note(&note_id)?;
        let changed = now.summary.updated != base_updated;
        let (body, clashes) = if changed {
            quire_sync::doc::merge_body(&request.base_body, &now.body, &request.body)
                .map_err(|e| quire_core::Error::Invalid(e.to_string()))?
        } else {
            (request.body.clone(), Vec::new())
        };
        // A title changed offline wins only over a title that did not change here meanwhile.
        let title = (request.title != request.base_title && now.summary.title == request.base_title)
            .then(|| request.title.clone());
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
            w.record_offline_conflict(&SyncConflict {
                id: 0,
                note_id: note_id.clone(),
                device: device.clone(),
                base: clash.base.clone(),
                ours: clash.ours.clone(),
                theirs: clash.theirs.clone(),
                found,
            })?;
        }
        Ok((changed, clashes.len()))
    })
    .await?;
    Ok(Json(OfflineSaved {
        note: super::notes::whole_note(&app, id).await?,
        merged,
        conflicts,
    }))
}
