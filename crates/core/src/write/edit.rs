//! The editor's save: a person's edit of a note, refused when the note changed since the editor loaded it, with
//! one revision and one change set per typing session, and the note's tags brought to the editor's list.

use crate::entity::{Actor, EntityKind, Note, Operation, Timestamp};
use crate::error::{Error, Result};
use crate::read::Page;

use super::{NoteUpdate, Writer};

/// Saves of one note by the user closer together than this (in milliseconds) are one typing session: they share
/// one revision (the text before the session began) and one change set (one step to undo).
pub const TYPING_SESSION_MS: i64 = 120_000;

/// A save from the user's editor: what changed, and the version of the note it was made on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserEdit {
    /// The note's `updated` time as the editor loaded it: a note changed since then is not saved over
    /// ([`Error::StaleEdit`]).
    pub base_updated: Timestamp,
    /// The title, body and to-do state that changed.
    pub update: NoteUpdate,
    /// The note's tags after the save: those missing are removed, the new ones added. `None` leaves them.
    pub tags: Option<Vec<String>>,
    /// With a new title: change the `[[Old title]]` links in other notes to it, in the same change set.
    pub update_links: bool,
}

impl UserEdit {
    /// An edit made on the version of the note last changed at `base_updated`, changing nothing yet.
    pub fn on(base_updated: Timestamp) -> UserEdit {
        UserEdit {
            base_updated,
            update: NoteUpdate::default(),
            tags: None,
            update_links: false,
        }
    }
}

/// What a save from the editor did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedEdit {
    /// The note as it is now.
    pub note: Note,
    /// The other notes whose `[[Old title]]` links now say the new title (with [`UserEdit::update_links`]).
    pub links_updated: Vec<String>,
}

impl<'a> Writer<'a> {
    /// Saves an edit the user made in an editor, with the rules every editor needs: the save is refused with
    /// [`Error::StaleEdit`], changing nothing, when the note changed since the editor loaded it (another window, the
    /// CLI or an AI client saved it); saves of the title or body within [`TYPING_SESSION_MS`] of each other keep one
    /// revision (the text before the first) and join one change set, so history and undo see one step per typing
    /// session rather than one per pause; tags are added and removed to match the list given. Only the user saves
    /// from an editor.
    pub fn save_user_edit(&mut self, note_id: &str, edit: UserEdit) -> Result<SavedEdit> {
        self.require_user("save from the editor")?;
        let current = self.note_summary(note_id)?;
        if current.updated != edit.base_updated {
            return Err(Error::StaleEdit {
                note_id: note_id.to_owned(),
                updated: current.updated,
            });
        }
        if edit.update.title.is_some() || edit.update.body.is_some() {
            self.continue_typing_session(note_id)?;
        }
        let links_updated = if edit.update_links {
            self.update_note_relinking(note_id, edit.update)?.1.updated
        } else {
            self.update_note(note_id, edit.update)?;
            Vec::new()
        };
        if let Some(tags) = &edit.tags {
            for old in current.tags.iter().filter(|t| !tags.contains(t)) {
                self.remove_tag(note_id, old)?;
            }
            for new in tags.iter().filter(|t| !current.tags.contains(t)) {
                self.add_tag(note_id, new)?;
            }
        }
        Ok(SavedEdit {
            note: self.note(note_id)?,
            links_updated,
        })
    }

    /// Keeps a revision of the text before a typing session began (not one per save), and records this save in
    /// the session's change set when the last change set is the user's, recent, not undone, and only changed this
    /// note's text.
    fn continue_typing_session(&mut self, note_id: &str) -> Result<()> {
        let now = self.now.as_millis();
        let recent = |actor: &Actor, at: Timestamp| *actor == Actor::User && now - at.as_millis() < TYPING_SESSION_MS;
        let in_session = self
            .revisions(note_id)?
            .first()
            .is_some_and(|r| recent(&r.actor, r.created));
        if !in_session {
            self.save_revision_now(note_id)?;
        }
        let last = self.change_sets(Page { offset: 0, limit: 1 })?.items.into_iter().next();
        if let Some(set) = last
            && set.reverted.is_none()
            && recent(&set.actor, set.created)
            && self
                .changes_in_set(&set.id)?
                .iter()
                .all(|c| c.entity == EntityKind::Note && c.entity_id == note_id && c.operation == Operation::Update)
        {
            self.join_change_set(&set.id)?;
        }
        Ok(())
    }
}
