//! The write side: [`Writer`], whose every method applies the guards for non-user actors and logs the change.

use std::collections::BTreeSet;
use std::ops::Deref;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Missing, Result};
use crate::guard;
use crate::history;
use crate::model::{
    Actor, AttachmentInfo, Attribute, AttributeKind, Chat, ChatMessage, EntityKind, Note, NoteSummary, Notebook,
    Operation, ROOT_NOTEBOOK_ID, Timestamp,
};
use crate::read::{Reader, actor_to_text};

/// What a new note holds. Build it with [`NewNote::new`] and adjust the public fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NewNote {
    /// The title (one line, not empty).
    pub title: String,
    /// The Markdown body.
    pub body: String,
    /// The notebook to create it in; `None` means the root notebook.
    pub notebook_id: Option<String>,
    /// Whether it is a to-do.
    pub is_todo: bool,
    /// Tags to attach, created when missing.
    pub tags: Vec<String>,
    /// The creation time to record (for imports); `None` means now.
    pub created: Option<Timestamp>,
    /// The update time to record (for imports); `None` means the creation time.
    pub updated: Option<Timestamp>,
}

impl NewNote {
    /// A plain note with a title and a body, in the root notebook.
    pub fn new(title: impl Into<String>, body: impl Into<String>) -> NewNote {
        NewNote {
            title: title.into(),
            body: body.into(),
            ..NewNote::default()
        }
    }
}

/// Changes to a note; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NoteUpdate {
    /// A new title.
    pub title: Option<String>,
    /// A new body, replacing the whole body.
    pub body: Option<String>,
    /// Make it a to-do or a plain note.
    pub is_todo: Option<bool>,
    /// Mark the to-do completed (at a time) or not completed (`Some(None)`).
    pub todo_completed: Option<Option<Timestamp>>,
}

/// What a new notebook holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NewNotebook {
    /// The title (one line, not empty).
    pub title: String,
    /// The parent notebook; `None` means the root notebook.
    pub parent_id: Option<String>,
    /// An optional icon.
    pub icon: Option<String>,
}

/// What a new attachment holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewAttachment {
    /// Its title, usually the file name.
    pub title: String,
    /// Its media type.
    pub mime: String,
    /// The bytes.
    pub data: Vec<u8>,
    /// Text extracted from it, searched with the note.
    pub text: Option<String>,
}

/// What reverting a change set did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertReport {
    /// The change set that was reverted.
    pub reverted_change_set_id: String,
    /// How many of its changes were undone.
    pub undone_changes: u64,
    /// The change set that holds the revert itself (so a revert can be reverted).
    pub change_set_id: Option<String>,
}

/// A view of one `BEGIN IMMEDIATE` transaction on behalf of one actor.
///
/// Every method checks, for every actor but the user and in this order: the entity exists, it is not a system
/// entity, it is not protected, the target is valid, the attribute is not dangerous. Then it writes, records the
/// change in the change log (one change set per `write` call, or per agent turn), saves a revision before a
/// non-user actor changes a note's title or body, and keeps the search index in step.
/// It dereferences to a [`Reader`] that sees the transaction's own writes.
pub struct Writer<'a> {
    reader: Reader<'a>,
    change_set: Option<String>,
    /// A note open in the user's editor: its title and body change only through edits the user accepts.
    in_editor: Option<String>,
    now: Timestamp,
}

impl<'a> Deref for Writer<'a> {
    type Target = Reader<'a>;

    fn deref(&self) -> &Reader<'a> {
        &self.reader
    }
}

impl<'a> Writer<'a> {
    pub(crate) fn new(
        conn: &'a rusqlite::Connection,
        actor: &'a Actor,
        embedder: std::sync::Arc<crate::semantic::EmbedderSlot>,
        vectors: std::sync::Arc<crate::semantic::VectorCache>,
    ) -> Writer<'a> {
        Writer {
            reader: Reader::new(conn, actor, embedder, vectors),
            change_set: None,
            in_editor: None,
            now: Timestamp::now(),
        }
    }

    /// The change set this write records into, once it has written something.
    pub fn change_set_id(&self) -> Option<&str> {
        self.change_set.as_deref()
    }

    /// Marks a note as open in the user's editor for the rest of this transaction: a non-user actor's change to its
    /// title or body is then refused with [`Error::OpenInEditor`] (tags, attributes, moves and the trash are not
    /// affected). The agent sets it for the focused note of a turn, so every change to that note's text is an edit
    /// the user previews, and the editor's copy and the store never diverge.
    pub fn set_open_in_editor(&mut self, note_id: &str) {
        self.in_editor = Some(note_id.to_owned());
    }

    /// Records the rest of this transaction's changes in the change set `id`, which must exist and not be reverted.
    /// A non-user actor may only continue a change set of its own (a plugin call whose writes span several
    /// transactions); the user may join any (accepting the edits an agent turn proposed puts them in its change set,
    /// so undoing the turn undoes them too).
    pub fn join_change_set(&mut self, id: &str) -> Result<()> {
        let set = self.change_set(id)?;
        if set.reverted.is_some() {
            return Err(Error::Conflict("This change set was already reverted.".into()));
        }
        if !self.actor.is_user() && set.actor != *self.actor {
            return Err(Error::UserOnly("record changes in another actor's change set"));
        }
        self.change_set = Some(set.id);
        Ok(())
    }

    /// Records the rest of this transaction's changes in the open change set of an agent turn, creating it (in the
    /// turn's name) if the turn wrote nothing yet. Only the user may do this: it is how the edits the user accepts
    /// from a turn are undone with the turn. Returns the change set's id.
    pub fn join_turn(&mut self, turn: &Actor) -> Result<String> {
        self.require_user("record changes in an agent turn")?;
        if turn.grouping_key().is_none() {
            return Err(Error::invalid(
                "Only an agent turn groups its writes in one change set.",
            ));
        }
        let id = self.open_change_set(turn)?;
        self.change_set = Some(id.clone());
        Ok(id)
    }

    // ----- notebooks -----

    /// Creates a notebook.
    pub fn create_notebook(&mut self, new: NewNotebook) -> Result<Notebook> {
        let parent = new.parent_id.as_deref().unwrap_or(ROOT_NOTEBOOK_ID);
        self.check_notebook_target(parent, "create a notebook inside")?;
        let title = guard::title("Notebook", &new.title)?;
        let icon = guard::icon(new.icon.as_deref())?;
        let id = self.new_id()?;
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, &id, |w| {
            w.conn.execute(
                "INSERT INTO notebooks (id, parent_id, title, icon, is_protected, created, updated) \
                 VALUES (?1, ?2, ?3, ?4, 0, ?5, ?5)",
                params![id, parent, title, icon, now],
            )?;
            Ok(())
        })?;
        self.notebook(&id)
    }

    /// Renames a notebook.
    pub fn rename_notebook(&mut self, id: &str, title: &str) -> Result<Notebook> {
        self.check_notebook_writable(id, "rename")?;
        let title = guard::title("Notebook", title)?;
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, id, |w| {
            w.conn.execute(
                "UPDATE notebooks SET title = ?2, updated = ?3 WHERE id = ?1 AND title IS NOT ?2",
                params![id, title, now],
            )?;
            Ok(())
        })?;
        self.notebook(id)
    }

    /// Sets or clears a notebook's icon.
    pub fn set_notebook_icon(&mut self, id: &str, icon: Option<&str>) -> Result<Notebook> {
        self.check_notebook_writable(id, "change")?;
        let icon = guard::icon(icon)?;
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, id, |w| {
            w.conn.execute(
                "UPDATE notebooks SET icon = ?2, updated = ?3 WHERE id = ?1 AND icon IS NOT ?2",
                params![id, icon, now],
            )?;
            Ok(())
        })?;
        self.notebook(id)
    }

    /// Moves a notebook under another one. A move into its own subtree is refused.
    pub fn move_notebook(&mut self, id: &str, new_parent_id: &str) -> Result<Notebook> {
        self.check_notebook_writable(id, "move")?;
        self.check_notebook_target(new_parent_id, "move a notebook into")?;
        if self.notebook_subtree(id)?.iter().any(|sub| sub == new_parent_id) {
            return Err(Error::InvalidTarget(
                "Cannot move a notebook into itself or one of its sub-notebooks".into(),
            ));
        }
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, id, |w| {
            w.conn.execute(
                "UPDATE notebooks SET parent_id = ?2, updated = ?3 WHERE id = ?1 AND parent_id IS NOT ?2",
                params![id, new_parent_id, now],
            )?;
            Ok(())
        })?;
        // Protection is inherited, so a move can change which notes are protected.
        self.refresh_search_in_notebook(id)?;
        self.notebook(id)
    }

    /// Deletes an empty notebook (notes in the trash count as content).
    pub fn delete_notebook(&mut self, id: &str) -> Result<()> {
        self.check_notebook_writable(id, "delete")?;
        let notes: i64 = self
            .conn
            .query_row("SELECT count(*) FROM notes WHERE notebook_id = ?1", [id], |r| r.get(0))?;
        let children: i64 = self
            .conn
            .query_row("SELECT count(*) FROM notebooks WHERE parent_id = ?1", [id], |r| {
                r.get(0)
            })?;
        if notes > 0 || children > 0 {
            return Err(Error::invalid(format!(
                "Notebook is not empty: it holds {notes} notes (trashed ones included) and {children} notebooks. \
                 Move or delete them first."
            )));
        }
        self.mutate(EntityKind::Notebook, id, |w| {
            w.conn.execute("DELETE FROM notebooks WHERE id = ?1", [id])?;
            Ok(())
        })
    }

    /// Protects or unprotects a notebook and everything inside it. Only the user may do this.
    pub fn set_notebook_protected(&mut self, id: &str, protected: bool) -> Result<Notebook> {
        self.require_user(if protected {
            "protect notebooks"
        } else {
            "unprotect notebooks"
        })?;
        if is_system_id(id) {
            self.notebook(id)?;
            return Err(Error::System { action: "protect" });
        }
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, id, |w| {
            let changed = w.conn.execute(
                "UPDATE notebooks SET is_protected = ?2, updated = ?3 WHERE id = ?1 AND is_protected <> ?2",
                params![id, protected, now],
            )?;
            if changed == 0 {
                w.notebook(id)?;
            }
            Ok(())
        })?;
        self.refresh_search_in_notebook(id)?;
        self.notebook(id)
    }

    // ----- notes -----

    /// Creates a note. It never overwrites anything: every note gets a fresh id.
    pub fn create_note(&mut self, new: NewNote) -> Result<Note> {
        let notebook = new.notebook_id.as_deref().unwrap_or(ROOT_NOTEBOOK_ID).to_owned();
        self.check_notebook_target(&notebook, "create a note inside")?;
        let title = guard::title("Note", &new.title)?;
        guard::body(&new.body)?;
        let tags = new
            .tags
            .iter()
            .map(|t| guard::tag_name(t))
            .collect::<Result<Vec<_>>>()?;
        let id = self.new_id()?;
        let created = new.created.unwrap_or(self.now).as_millis();
        let updated = new.updated.map_or(created, Timestamp::as_millis);
        self.mutate(EntityKind::Note, &id, |w| {
            w.conn.execute(
                "INSERT INTO notes (id, notebook_id, title, body, is_todo, todo_completed, is_protected, created, \
                 updated, deleted) VALUES (?1, ?2, ?3, ?4, ?5, NULL, 0, ?6, ?7, NULL)",
                params![id, notebook, title, new.body, new.is_todo, created, updated],
            )?;
            Ok(())
        })?;
        for tag in &tags {
            self.link_tag(&id, tag)?;
        }
        self.refresh_search(&id)?;
        self.note(&id)
    }

    /// Changes a note's title, body or to-do state. A non-user actor's change to the title or body is preceded by
    /// a revision.
    pub fn update_note(&mut self, id: &str, update: NoteUpdate) -> Result<Note> {
        let current = self.check_note_writable(id)?;
        if current.deleted.is_some() {
            return Err(Error::invalid("Note is in the trash; restore it before changing it."));
        }
        let title = update.title.as_deref().map(|t| guard::title("Note", t)).transpose()?;
        if let Some(body) = &update.body {
            guard::body(body)?;
        }
        let (old_title, old_body): (String, String) =
            self.conn
                .query_row("SELECT title, body FROM notes WHERE id = ?1", [id], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
        let text_changes =
            title.as_ref().is_some_and(|t| *t != old_title) || update.body.as_ref().is_some_and(|b| *b != old_body);
        if text_changes && self.in_editor.as_deref() == Some(id) && !self.actor.is_user() {
            return Err(Error::OpenInEditor);
        }
        if text_changes && !self.actor.is_user() {
            self.save_revision(id, &old_title, &old_body)?;
        }
        let is_todo = update.is_todo.unwrap_or(current.is_todo);
        let completed = match update.todo_completed {
            Some(completed) => completed.map(Timestamp::as_millis),
            None => current.todo_completed.map(Timestamp::as_millis),
        };
        let completed = if is_todo { completed } else { None };
        let now = self.now.as_millis();
        self.mutate(EntityKind::Note, id, |w| {
            w.conn.execute(
                "UPDATE notes SET title = ?2, body = ?3, is_todo = ?4, todo_completed = ?5, updated = ?6 \
                 WHERE id = ?1 AND (title IS NOT ?2 OR body IS NOT ?3 OR is_todo IS NOT ?4 OR todo_completed IS NOT ?5)",
                params![
                    id,
                    title.as_deref().unwrap_or(&old_title),
                    update.body.as_deref().unwrap_or(&old_body),
                    is_todo,
                    completed,
                    now
                ],
            )?;
            Ok(())
        })?;
        if text_changes {
            self.refresh_search(id)?;
        }
        self.note(id)
    }

    /// A note with its body, for a caller about to change it: the write guards apply (it exists and, for non-user
    /// actors, is not protected), so a refused edit says "cannot be modified" rather than "cannot be read".
    pub fn note_for_edit(&self, id: &str) -> Result<Note> {
        self.check_note_writable(id)?;
        self.note(id)
    }

    /// Saves a revision of a note's current title and body, for any actor: the app calls it before applying edits
    /// the user accepted from the agent, so that step can be undone like the agent's own writes.
    pub fn save_revision_now(&mut self, id: &str) -> Result<()> {
        let note = self.note_for_edit(id)?;
        self.save_revision(id, &note.summary.title, &note.body)
    }

    /// Moves a note to another notebook.
    pub fn move_note(&mut self, id: &str, notebook_id: &str) -> Result<NoteSummary> {
        self.check_note_writable(id)?;
        self.check_notebook_target(notebook_id, "move a note into")?;
        let now = self.now.as_millis();
        self.mutate(EntityKind::Note, id, |w| {
            w.conn.execute(
                "UPDATE notes SET notebook_id = ?2, updated = ?3 WHERE id = ?1 AND notebook_id IS NOT ?2",
                params![id, notebook_id, now],
            )?;
            Ok(())
        })?;
        self.refresh_search(id)?;
        self.note_summary(id)
    }

    /// Moves a note to the trash. It keeps its notebook, tags and attributes and can be restored.
    pub fn trash_note(&mut self, id: &str) -> Result<NoteSummary> {
        let current = self.check_note_writable(id)?;
        if current.deleted.is_some() {
            return Err(Error::invalid("Note is already in the trash."));
        }
        let now = self.now.as_millis();
        self.mutate(EntityKind::Note, id, |w| {
            w.conn
                .execute("UPDATE notes SET deleted = ?2 WHERE id = ?1", params![id, now])?;
            Ok(())
        })?;
        self.note_summary(id)
    }

    /// Takes a note out of the trash.
    pub fn restore_note(&mut self, id: &str) -> Result<NoteSummary> {
        let current = self.check_note_writable(id)?;
        if current.deleted.is_none() {
            return Err(Error::invalid("Note is not in the trash."));
        }
        self.mutate(EntityKind::Note, id, |w| {
            w.conn.execute("UPDATE notes SET deleted = NULL WHERE id = ?1", [id])?;
            Ok(())
        })?;
        self.note_summary(id)
    }

    /// Deletes a note for good, with its tags links, attributes, attachments and revisions.
    /// Only the user may do this; every other actor moves notes to the trash.
    pub fn purge_note(&mut self, id: &str) -> Result<()> {
        self.require_user("delete notes permanently; move the note to the trash instead")?;
        let seq: i64 = self
            .conn
            .query_row("SELECT seq FROM notes WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or(Error::NotFound(Missing::Note))?;
        let links = self.string_column("SELECT note_id || '/' || tag_id FROM note_tags WHERE note_id = ?1", id)?;
        for link in links {
            self.mutate(EntityKind::NoteTag, &link, |w| w.delete_row(EntityKind::NoteTag, &link))?;
        }
        let attributes = self.string_column(
            "SELECT id FROM attributes WHERE note_id = ?1 OR target_note_id = ?1",
            id,
        )?;
        for attribute in attributes {
            self.mutate(EntityKind::Attribute, &attribute, |w| {
                w.delete_row(EntityKind::Attribute, &attribute)
            })?;
        }
        for attachment in self.string_column("SELECT id FROM attachments WHERE note_id = ?1", id)? {
            self.mutate(EntityKind::Attachment, &attachment, |w| {
                w.delete_row(EntityKind::Attachment, &attachment)
            })?;
        }
        self.conn.execute("DELETE FROM revisions WHERE note_id = ?1", [id])?;
        self.conn.execute("DELETE FROM notes_fts WHERE rowid = ?1", [seq])?;
        self.mutate(EntityKind::Note, id, |w| w.delete_row(EntityKind::Note, id))
    }

    /// Protects or unprotects a note. Only the user may do this.
    pub fn set_note_protected(&mut self, id: &str, protected: bool) -> Result<NoteSummary> {
        self.require_user(if protected { "protect notes" } else { "unprotect notes" })?;
        self.note_summary(id)?;
        self.mutate(EntityKind::Note, id, |w| {
            w.conn.execute(
                "UPDATE notes SET is_protected = ?2 WHERE id = ?1 AND is_protected <> ?2",
                params![id, protected],
            )?;
            Ok(())
        })?;
        self.refresh_search(id)?;
        self.note_summary(id)
    }

    // ----- tags -----

    /// Puts a tag (created when missing) on a note. Returns whether the note did not have it yet.
    pub fn add_tag(&mut self, note_id: &str, name: &str) -> Result<bool> {
        self.check_note_writable(note_id)?;
        let name = guard::tag_name(name)?;
        let added = self.link_tag(note_id, &name)?;
        if added {
            self.refresh_search(note_id)?;
        }
        Ok(added)
    }

    /// Takes a tag off a note. Returns whether the note had it.
    pub fn remove_tag(&mut self, note_id: &str, name: &str) -> Result<bool> {
        self.check_note_writable(note_id)?;
        let tag_id: Option<String> = self.tag_id(name.trim())?;
        let Some(tag_id) = tag_id else {
            return Ok(false);
        };
        let link = format!("{note_id}/{tag_id}");
        if history::snapshot(self.conn, EntityKind::NoteTag, &link)?.is_none() {
            return Ok(false);
        }
        self.mutate(EntityKind::NoteTag, &link, |w| w.delete_row(EntityKind::NoteTag, &link))?;
        self.refresh_search(note_id)?;
        Ok(true)
    }

    /// Renames a tag everywhere. Only the user may do this: a tag is shared by notes that may be protected.
    pub fn rename_tag(&mut self, name: &str, new_name: &str) -> Result<()> {
        self.require_user("rename tags")?;
        let new_name = guard::tag_name(new_name)?;
        let id: String = self.tag_id(name.trim())?.ok_or(Error::NotFound(Missing::Tag))?;
        let taken: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM tags WHERE name = ?1 COLLATE NOCASE AND id <> ?2",
                params![new_name, id],
                |r| r.get(0),
            )
            .optional()?;
        if taken.is_some() {
            return Err(Error::invalid(format!("A tag named '{new_name}' already exists.")));
        }
        self.mutate(EntityKind::Tag, &id, |w| {
            w.conn
                .execute("UPDATE tags SET name = ?2 WHERE id = ?1", params![id, new_name])?;
            Ok(())
        })?;
        for note in self.string_column("SELECT note_id FROM note_tags WHERE tag_id = ?1", &id)? {
            self.refresh_search(&note)?;
        }
        Ok(())
    }

    /// Deletes a tag and takes it off every note. Only the user may do this.
    pub fn delete_tag(&mut self, name: &str) -> Result<()> {
        self.require_user("delete tags")?;
        let id: String = self.tag_id(name.trim())?.ok_or(Error::NotFound(Missing::Tag))?;
        let notes = self.string_column("SELECT note_id FROM note_tags WHERE tag_id = ?1", &id)?;
        for note in &notes {
            let link = format!("{note}/{id}");
            self.mutate(EntityKind::NoteTag, &link, |w| w.delete_row(EntityKind::NoteTag, &link))?;
        }
        self.mutate(EntityKind::Tag, &id, |w| w.delete_row(EntityKind::Tag, &id))?;
        for note in &notes {
            self.refresh_search(note)?;
        }
        Ok(())
    }

    // ----- revisions -----

    /// Puts a note's title and body back to a revision. The current text is saved as a revision first (for
    /// non-user actors), so this too can be undone.
    pub fn restore_revision(&mut self, revision_id: i64) -> Result<Note> {
        let revision: Option<(String, String, String)> = self
            .conn
            .query_row(
                "SELECT note_id, title, body FROM revisions WHERE seq = ?1",
                [revision_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let (note_id, title, body) = revision.ok_or(Error::NotFound(Missing::Revision))?;
        self.update_note(
            &note_id,
            NoteUpdate {
                title: Some(title),
                body: Some(body),
                ..NoteUpdate::default()
            },
        )
    }

    // ----- attributes -----

    /// Sets a label's value or a relation's target note on a note, replacing the attribute of the same kind and
    /// name if there is one.
    pub fn set_attribute(&mut self, note_id: &str, kind: AttributeKind, name: &str, value: &str) -> Result<Attribute> {
        self.check_note_writable(note_id)?;
        let target = match kind {
            AttributeKind::Relation => {
                let target = self.note_summary(value).map_err(|e| match e {
                    Error::NotFound(_) => Error::InvalidTarget("Relation target note not found".into()),
                    other => other,
                })?;
                Some(target.id)
            }
            AttributeKind::Label => None,
        };
        if !self.actor.is_user() && guard::is_dangerous_attribute(name) {
            return Err(Error::DangerousAttribute(name.to_owned()));
        }
        guard::attribute_name(name)?;
        if value.len() > guard::MAX_BODY_BYTES {
            return Err(Error::invalid("Attribute value is too long."));
        }
        let existing: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM attributes WHERE note_id = ?1 AND kind = ?2 AND name = ?3",
                params![note_id, kind.as_str(), name],
                |r| r.get(0),
            )
            .optional()?;
        let id = match existing {
            Some(id) => id,
            None => self.new_id()?,
        };
        let now = self.now.as_millis();
        self.mutate(EntityKind::Attribute, &id, |w| {
            w.conn.execute(
                "INSERT INTO attributes (id, note_id, kind, name, value, target_note_id, created, updated) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) \
                 ON CONFLICT (id) DO UPDATE SET value = excluded.value, target_note_id = excluded.target_note_id, \
                 updated = excluded.updated WHERE value IS NOT excluded.value",
                params![id, note_id, kind.as_str(), name, value, target, now],
            )?;
            Ok(())
        })?;
        self.attribute(&id)
    }

    /// Removes an attribute from a note.
    pub fn delete_attribute(&mut self, note_id: &str, attribute_id: &str) -> Result<()> {
        self.check_note_writable(note_id)?;
        let attribute = self.attribute(attribute_id)?;
        if attribute.note_id != note_id {
            return Err(Error::InvalidTarget(
                "Attribute does not belong to the specified note".into(),
            ));
        }
        if !self.actor.is_user() && guard::is_dangerous_attribute(&attribute.name) {
            return Err(Error::DangerousAttribute(attribute.name));
        }
        self.mutate(EntityKind::Attribute, attribute_id, |w| {
            w.delete_row(EntityKind::Attribute, attribute_id)
        })
    }

    // ----- attachments -----

    /// Attaches a file to a note. Its extracted text, if given, is searched with the note.
    pub fn add_attachment(&mut self, note_id: &str, new: NewAttachment) -> Result<AttachmentInfo> {
        self.check_note_writable(note_id)?;
        let title = guard::title("Attachment", &new.title)?;
        if new.data.len() > guard::MAX_ATTACHMENT_BYTES {
            return Err(Error::invalid(format!(
                "Attachment is {} bytes; the limit is {} bytes.",
                new.data.len(),
                guard::MAX_ATTACHMENT_BYTES
            )));
        }
        if let Some(text) = &new.text {
            guard::body(text)?;
        }
        let mime = if new.mime.trim().is_empty() {
            "application/octet-stream".to_owned()
        } else {
            new.mime
        };
        let id = self.new_id()?;
        let size = i64::try_from(new.data.len()).unwrap_or(i64::MAX);
        let now = self.now.as_millis();
        self.mutate(EntityKind::Attachment, &id, |w| {
            w.conn.execute(
                "INSERT INTO attachments (id, note_id, title, mime, size, data, text, created) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![id, note_id, title, mime, size, new.data, new.text, now],
            )?;
            Ok(())
        })?;
        self.refresh_search(note_id)?;
        self.attachment(&id)
    }

    /// Removes an attachment.
    pub fn delete_attachment(&mut self, id: &str) -> Result<()> {
        let note_id: String = self
            .conn
            .query_row("SELECT note_id FROM attachments WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or(Error::NotFound(Missing::Attachment))?;
        self.check_note_writable(&note_id)?;
        self.mutate(EntityKind::Attachment, id, |w| w.delete_row(EntityKind::Attachment, id))?;
        self.refresh_search(&note_id)
    }

    // ----- chats -----
    //
    // A chat is the record of a conversation, not workspace content: its rows never enter the change log (so no
    // tool reports them as changes and no undo touches them), and messages are appended as rows of their own.

    /// Starts a stored chat.
    pub fn create_chat(&mut self, title: &str, note_id: Option<&str>) -> Result<Chat> {
        let title = guard::title("Chat", title)?;
        let id = self.new_id()?;
        self.conn.execute(
            "INSERT INTO chats (id, title, note_id, created, updated) VALUES (?1, ?2, ?3, ?4, ?4)",
            params![id, title, note_id, self.now.as_millis()],
        )?;
        self.chat(&id)
    }

    /// Appends messages to a stored chat; returns how many it holds now.
    pub fn append_chat_messages(&mut self, id: &str, messages: &[ChatMessage]) -> Result<u64> {
        let updated = self.conn.execute(
            "UPDATE chats SET updated = ?2 WHERE id = ?1",
            params![id, self.now.as_millis()],
        )?;
        if updated == 0 {
            return Err(Error::NotFound(Missing::Chat));
        }
        let mut next: i64 = self.conn.query_row(
            "SELECT coalesce(max(seq) + 1, 0) FROM chat_messages WHERE chat_id = ?1",
            [id],
            |r| r.get(0),
        )?;
        let mut insert = self
            .conn
            .prepare_cached("INSERT INTO chat_messages (chat_id, seq, role, content) VALUES (?1, ?2, ?3, ?4)")?;
        for message in messages {
            insert.execute(params![id, next, message.role, message.content.to_string()])?;
            next += 1;
        }
        Ok(u64::try_from(next).unwrap_or(0))
    }

    /// Deletes a stored chat with its messages.
    pub fn delete_chat(&mut self, id: &str) -> Result<()> {
        self.conn
            .execute("DELETE FROM chat_messages WHERE chat_id = ?1", [id])?;
        if self.conn.execute("DELETE FROM chats WHERE id = ?1", [id])? == 0 {
            return Err(Error::NotFound(Missing::Chat));
        }
        Ok(())
    }

    // ----- history -----

    /// Undoes every change of a change set, newest first. Refused (and nothing is changed) when a later write
    /// changed the same entities; the revert itself is a new change set, so it can be reverted too.
    pub fn revert_change_set(&mut self, id: &str) -> Result<RevertReport> {
        let set = self.change_set(id)?;
        if set.reverted.is_some() {
            return Err(Error::Conflict("This change set was already reverted.".into()));
        }
        let rows = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT entity, entity_id, before, after_hash FROM changes WHERE change_set_id = ?1 ORDER BY seq DESC",
            )?;
            let rows = stmt.query_map([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
        };
        let mut changes = Vec::with_capacity(rows.len());
        for (entity, entity_id, before, after_hash) in rows {
            let kind = EntityKind::parse(&entity)
                .ok_or_else(|| Error::Conflict(format!("The change log names an unknown entity kind '{entity}'.")))?;
            let before = before
                .map(|t| serde_json::from_str::<serde_json::Value>(&t))
                .transpose()
                .map_err(|_| Error::Conflict(format!("The change log entry for {entity_id} is damaged.")))?;
            changes.push((kind, entity_id, before, after_hash));
        }
        // The newest change of each entity says how it looked at the end of the set; it must still look so.
        let mut current_rows = std::collections::BTreeMap::new();
        for (kind, entity_id, _, after_hash) in &changes {
            let key = (kind.as_str(), entity_id.clone());
            if current_rows.contains_key(&key) {
                continue;
            }
            let current = history::snapshot(self.conn, *kind, entity_id)?;
            if current.as_ref().map(history::fingerprint) != *after_hash {
                return Err(Error::Conflict(format!(
                    "Cannot revert: the {} {entity_id} changed after this change set; revert the later change \
                     sets first.",
                    kind.as_str().replace('_', " ")
                )));
            }
            if !self.actor.is_user() {
                if *kind == EntityKind::Note && self.in_editor.as_deref() == Some(entity_id.as_str()) {
                    return Err(Error::OpenInEditor);
                }
                self.check_revert_allowed(*kind, entity_id, current.as_ref())?;
            }
            current_rows.insert(key, current);
        }
        // Mark it first, so that the revert's own changes never land in the set they undo (an agent turn that
        // reverts its own earlier writes would otherwise find this set still open).
        self.conn.execute(
            "UPDATE change_sets SET reverted = ?2 WHERE id = ?1",
            params![id, self.now.as_millis()],
        )?;
        if self.change_set.as_deref() == Some(id) {
            self.change_set = None;
        }
        let mut touched_notes = BTreeSet::new();
        for (kind, entity_id, before, _) in &changes {
            let current = current_rows
                .get(&(kind.as_str(), entity_id.clone()))
                .and_then(Option::as_ref);
            if let Some(note) = note_of(*kind, entity_id, before.as_ref().or(current)) {
                touched_notes.insert(note);
            }
            if *kind == EntityKind::Note {
                self.before_note_restore(entity_id, before.as_ref())?;
            }
            self.mutate(*kind, entity_id, |w| {
                history::restore(w.conn, *kind, entity_id, before.as_ref())
            })?;
        }
        for note in &touched_notes {
            self.refresh_search(note)?;
        }
        if changes.iter().any(|(kind, ..)| *kind == EntityKind::Notebook) {
            self.refresh_search_everywhere()?;
        }
        Ok(RevertReport {
            reverted_change_set_id: id.to_owned(),
            undone_changes: changes.len() as u64,
            change_set_id: self.change_set.clone(),
        })
    }

    // ----- guards -----

    fn require_user(&self, what: &'static str) -> Result<()> {
        if self.actor.is_user() {
            Ok(())
        } else {
            Err(Error::UserOnly(what))
        }
    }

    /// Exists, then (for non-user actors) not protected. Notes have no system entities.
    fn check_note_writable(&self, id: &str) -> Result<NoteSummary> {
        let note = self.note_summary(id)?;
        if note.is_protected && !self.actor.is_user() {
            return Err(Error::Protected(Missing::Note));
        }
        Ok(note)
    }

    /// Exists, not a system notebook, then (for non-user actors) not protected.
    fn check_notebook_writable(&self, id: &str, action: &'static str) -> Result<Notebook> {
        let notebook = self.notebook(id)?;
        if is_system_id(id) {
            return Err(Error::System { action });
        }
        if !self.actor.is_user() && self.protected_notebooks()?.contains(id) {
            return Err(Error::Protected(Missing::Notebook));
        }
        Ok(notebook)
    }

    /// A notebook that something is created in or moved into: it exists and (for non-user actors) is not protected.
    fn check_notebook_target(&self, id: &str, action: &str) -> Result<()> {
        match self.notebook(id) {
            Ok(_) => {}
            Err(Error::NotFound(_)) => {
                return Err(Error::InvalidTarget("Target notebook not found".into()));
            }
            Err(e) => return Err(e),
        }
        if !self.actor.is_user() && self.protected_notebooks()?.contains(id) {
            return Err(Error::InvalidTarget(format!("Cannot {action} a protected notebook")));
        }
        Ok(())
    }

    fn check_revert_allowed(
        &self,
        kind: EntityKind,
        entity_id: &str,
        current: Option<&serde_json::Value>,
    ) -> Result<()> {
        match kind {
            EntityKind::Notebook if current.is_some() => {
                self.check_notebook_writable(entity_id, "change")?;
            }
            _ => {
                if let Some(note) = note_of(kind, entity_id, current)
                    && let Ok(summary) = self.note_summary(&note)
                    && summary.is_protected
                {
                    return Err(Error::Protected(Missing::Note));
                }
            }
        }
        Ok(())
    }

    // ----- machinery -----

    /// The id of the tag with this name (ignoring case), if there is one.
    fn tag_id(&self, name: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT id FROM tags WHERE name = ?1 COLLATE NOCASE", [name], |r| {
                r.get(0)
            })
            .optional()?)
    }

    fn new_id(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("SELECT lower(hex(randomblob(16)))", [], |r| r.get(0))?)
    }

    fn string_column(&self, sql: &str, arg: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map([arg], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn delete_row(&self, kind: EntityKind, id: &str) -> Result<()> {
        history::restore(self.conn, kind, id, None)
    }

    /// Runs one change to one entity and records it in the change log: the row before, a fingerprint of the row after.
    fn mutate(&mut self, kind: EntityKind, id: &str, change: impl FnOnce(&Self) -> Result<()>) -> Result<()> {
        let before = history::snapshot(self.conn, kind, id)?;
        change(self)?;
        let after = history::snapshot(self.conn, kind, id)?;
        let operation = match (&before, &after) {
            (None, None) => return Ok(()),
            (None, Some(_)) => Operation::Create,
            (Some(_), None) => Operation::Delete,
            (Some(b), Some(a)) if a == b => return Ok(()),
            (Some(_), Some(_)) => Operation::Update,
        };
        let change_set = self.ensure_change_set()?;
        self.conn.execute(
            "INSERT INTO changes (change_set_id, entity, entity_id, operation, actor, before, after_hash, at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                change_set,
                kind.as_str(),
                id,
                operation.as_str(),
                actor_to_text(self.actor),
                before.map(|v| v.to_string()),
                after.as_ref().map(history::fingerprint),
                self.now.as_millis()
            ],
        )?;
        Ok(())
    }

    fn ensure_change_set(&mut self) -> Result<String> {
        if let Some(id) = &self.change_set {
            return Ok(id.clone());
        }
        let id = self.open_change_set(self.actor)?;
        self.change_set = Some(id.clone());
        Ok(id)
    }

    /// The open change set of `actor`'s group, or a new one in its name.
    fn open_change_set(&self, actor: &Actor) -> Result<String> {
        let key = actor.grouping_key();
        let existing: Option<String> = match &key {
            Some(key) => self
                .conn
                .query_row(
                    "SELECT id FROM change_sets WHERE actor_key = ?1 AND reverted IS NULL ORDER BY created DESC LIMIT 1",
                    [key],
                    |r| r.get(0),
                )
                .optional()?,
            None => None,
        };
        let id = match existing {
            Some(id) => id,
            None => {
                let id = self.new_id()?;
                self.conn.execute(
                    "INSERT INTO change_sets (id, actor, actor_key, created, reverted) VALUES (?1, ?2, ?3, ?4, NULL)",
                    params![id, actor_to_text(actor), key, self.now.as_millis()],
                )?;
                id
            }
        };
        Ok(id)
    }

    fn save_revision(&mut self, note_id: &str, title: &str, body: &str) -> Result<()> {
        let change_set = self.ensure_change_set()?;
        self.conn.execute(
            "INSERT INTO revisions (note_id, title, body, actor, change_set_id, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![note_id, title, body, actor_to_text(self.actor), change_set, self.now.as_millis()],
        )?;
        Ok(())
    }

    /// Before a revert rewrites or removes a note row: save a revision for non-user actors and drop the
    /// search row of a note that is about to disappear.
    fn before_note_restore(&mut self, id: &str, target: Option<&serde_json::Value>) -> Result<()> {
        let current: Option<(i64, String, String)> = self
            .conn
            .query_row("SELECT seq, title, body FROM notes WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?;
        let Some((seq, title, body)) = current else {
            return Ok(());
        };
        match target {
            None => {
                self.conn.execute("DELETE FROM notes_fts WHERE rowid = ?1", [seq])?;
                self.conn.execute("DELETE FROM revisions WHERE note_id = ?1", [id])?;
            }
            Some(row) => {
                let text_changes = row.get("title").and_then(|v| v.as_str()) != Some(title.as_str())
                    || row.get("body").and_then(|v| v.as_str()) != Some(body.as_str());
                if text_changes && !self.actor.is_user() {
                    self.save_revision(id, &title, &body)?;
                }
            }
        }
        Ok(())
    }

    /// Links a note to a tag by name, creating the tag when missing. Returns whether a link was added.
    fn link_tag(&mut self, note_id: &str, name: &str) -> Result<bool> {
        let existing = self.tag_id(name)?;
        let now = self.now.as_millis();
        let tag_id = match existing {
            Some(id) => id,
            None => {
                let id = self.new_id()?;
                self.mutate(EntityKind::Tag, &id, |w| {
                    w.conn.execute(
                        "INSERT INTO tags (id, name, created) VALUES (?1, ?2, ?3)",
                        params![id, name, now],
                    )?;
                    Ok(())
                })?;
                id
            }
        };
        let link = format!("{note_id}/{tag_id}");
        if history::snapshot(self.conn, EntityKind::NoteTag, &link)?.is_some() {
            return Ok(false);
        }
        self.mutate(EntityKind::NoteTag, &link, |w| {
            w.conn.execute(
                "INSERT INTO note_tags (note_id, tag_id, created) VALUES (?1, ?2, ?3)",
                params![note_id, tag_id, now],
            )?;
            Ok(())
        })?;
        Ok(true)
    }

    /// Rewrites a note's row in the full-text index. The body, tags and attachment text of a protected note are
    /// left out, so that no search, by any actor, can reveal them.
    fn refresh_search(&self, note_id: &str) -> Result<()> {
        let row: Option<(i64, String, String, bool, String)> = self
            .conn
            .query_row(
                "SELECT seq, title, body, is_protected, notebook_id FROM notes WHERE id = ?1",
                [note_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let Some((seq, title, body, protected, notebook_id)) = row else {
            return Ok(());
        };
        let protected = protected || self.protected_notebooks()?.contains(&notebook_id);
        self.conn.execute("DELETE FROM notes_fts WHERE rowid = ?1", [seq])?;
        if protected {
            self.conn.execute(
                "INSERT INTO notes_fts (rowid, title, body, tags, attachments) VALUES (?1, ?2, '', '', '')",
                params![seq, title],
            )?;
        } else {
            self.conn.execute(
                "INSERT INTO notes_fts (rowid, title, body, tags, attachments) VALUES (?1, ?2, ?3, \
                 (SELECT coalesce(group_concat(t.name, ' '), '') FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
                  WHERE nt.note_id = ?4), \
                 (SELECT coalesce(group_concat(text, ' '), '') FROM attachments WHERE note_id = ?4))",
                params![seq, title, body, note_id],
            )?;
        }
        Ok(())
    }

    fn refresh_search_in_notebook(&self, notebook_id: &str) -> Result<()> {
        for sub in self.notebook_subtree(notebook_id)? {
            for note in self.string_column("SELECT id FROM notes WHERE notebook_id = ?1", &sub)? {
                self.refresh_search(&note)?;
            }
        }
        Ok(())
    }

    fn refresh_search_everywhere(&self) -> Result<()> {
        self.refresh_search_in_notebook(ROOT_NOTEBOOK_ID)
    }
}

fn is_system_id(id: &str) -> bool {
    id.starts_with('_')
}

/// The note an entity belongs to, if it belongs to one: for a note itself, a tag link, an attribute, an attachment.
fn note_of(kind: EntityKind, entity_id: &str, row: Option<&serde_json::Value>) -> Option<String> {
    match kind {
        EntityKind::Note => Some(entity_id.to_owned()),
        EntityKind::NoteTag => entity_id.split('/').next().map(str::to_owned),
        EntityKind::Attribute | EntityKind::Attachment => row
            .and_then(|r| r.get("note_id"))
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        _ => None,
    }
}
