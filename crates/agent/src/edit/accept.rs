//! Accepting proposed edits: the one function through which a turn's edits of the focused note become a write.

use quire_core::{Actor, NoteUpdate, Workspace};
use serde::Serialize;

use super::rebase::rebase;
use super::{Edit, apply_edits};
use crate::error::Error;

/// What to accept: edits of one note, and the text they were computed (or mapped by an editor) against.
#[derive(Debug, Clone, Copy)]
pub struct AcceptRequest<'a> {
    /// The focused note.
    pub note_id: &'a str,
    /// The text the edits apply to, in order: the note's body when the turn started (`quire chat`), or the
    /// editor's text the edits were mapped onto (the web app).
    pub base: &'a str,
    /// The edits the user chose, in the turn's order.
    pub edits: &'a [Edit],
    /// The turn that proposed them (`Actor::Agent`): the write is recorded in its change set, so undoing the turn
    /// undoes the accepted edits too. `None` makes it a change set of its own.
    pub turn: Option<&'a Actor>,
}

/// What accepting wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Accepted {
    /// The note's body now.
    pub body: String,
    /// The change set the write is recorded in (the turn's, when one was given).
    pub change_set_id: Option<String>,
    /// Whether the note had changed since `base`, and the edits were carried over onto its current text.
    pub rebased: bool,
}

/// Accepts proposed edits of a note as the user's write: one revision of the note as it was, then one update,
/// recorded in the turn's change set.
///
/// The note is read as it is now. If it still equals `base`, the edits apply as they are. If it changed (the
/// user typed, an MCP client wrote), each edit is checked against what changed: when none touches a changed
/// region, the edits are carried over onto the current text; otherwise nothing is written and
/// [`Error::Stale`] names the edits that no longer fit. A protected note is refused whoever asks.
pub fn accept_edits(ws: &Workspace, request: AcceptRequest<'_>) -> Result<Accepted, Error> {
    let proposed = apply_edits(request.base, request.edits)?;
    // The merge runs outside any transaction (a long note must not hold the write lock); the write then checks
    // that the note is still the text the merge saw, and merges again if another writer came in between.
    for _ in 0..3 {
        let seen = ws.read(&Actor::User, |r| r.note(request.note_id))?;
        if seen.summary.is_protected {
            return Err(Error::Protected {
                note_id: seen.summary.id,
                title: seen.summary.title,
            });
        }
        let (body, rebased) = if seen.body == request.base {
            (proposed.clone(), false)
        } else {
            (rebase(request.base, &seen.body, request.edits)?, true)
        };
        let written = ws.write(&Actor::User, |w| {
            let current = w.note(request.note_id)?;
            if current.body != seen.body || current.summary.is_protected != seen.summary.is_protected {
                return Ok(None);
            }
            if body == current.body {
                // Nothing to save: no revision, no change set.
                return Ok(Some(None));
            }
            if let Some(turn) = request.turn {
                w.join_turn(turn)?;
            }
            w.save_revision_now(request.note_id)?;
            w.update_note(
                request.note_id,
                NoteUpdate {
                    body: Some(body.clone()),
                    ..NoteUpdate::default()
                },
            )?;
            Ok::<_, Error>(Some(w.change_set_id().map(str::to_owned)))
        })?;
        if let Some(change_set_id) = written {
            return Ok(Accepted {
                body,
                change_set_id,
                rebased,
            });
        }
    }
    Err(Error::Stale {
        stale: request
            .edits
            .iter()
            .enumerate()
            .map(|(i, e)| (i + 1, e.tool.clone()))
            .collect(),
    })
}
