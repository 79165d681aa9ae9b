//! Another device's changes, written as [`Actor::Sync`](crate::Actor::Sync): rows set to the merged state sync
//! computed, through the change log (so they show in history and can be undone), revisions, the link and search
//! indexes and sealing, like every other write. Nothing derived is written on top (a renamed note's links are not
//! rewritten here: the device that renamed it rewrote them, and those edits arrive as edits of their own).

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{OptionalExtension, params};

use crate::entity::{EntityKind, ROOT_NOTEBOOK_ID};
use crate::error::Result;
use crate::guard;
use crate::replica::{SyncedAttachment, SyncedLabel, SyncedNote, SyncedNotebook};
use crate::sql::Cached;

use super::Writer;

impl Writer<'_> {
    /// Makes a note's rows what `note` says: creates it if it is new here, else changes what differs (a revision of
    /// the text before is kept, as for any actor but the user), its tags and labels included. A sealed note
    /// arrives as its ciphertext; whatever of it was plain here is sealed then. A notebook that does not exist
    /// here puts the note at the top. Only [`Actor::Sync`](crate::Actor::Sync) writes this way.
    pub fn apply_synced_note(&mut self, note: &SyncedNote) -> Result<()> {
        self.require_sync("apply another device's changes")?;
        let title = guard::title("Note", &note.title)?;
        guard::body(&note.body)?;
        let notebook_exists: bool = self.conn.row_cached(
            "SELECT EXISTS (SELECT 1 FROM notebooks WHERE id = ?1)",
            [&note.notebook_id],
            |r| r.get(0),
        )?;
        let notebook = if notebook_exists {
            note.notebook_id.as_str()
        } else {
            ROOT_NOTEBOOK_ID
        };
        let current: Option<(String, String, bool, i64, bool)> = self
            .conn
            .row_cached(
                "SELECT title, body, sealed IS NOT NULL, updated, \
                 notebook_id IS ?2 AND is_todo IS ?3 AND todo_completed IS ?4 AND is_protected IS ?5 \
                 AND created IS ?6 AND deleted IS ?7 AND sealed IS ?8 AND version IS ?9 \
                 FROM notes WHERE id = ?1",
                params![
                    note.id,
                    notebook,
                    note.is_todo,
                    note.todo_completed,
                    note.is_protected,
                    note.created,
                    note.deleted,
                    note.sealed,
                    note.version
                ],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let id = note.id.as_str();
        let tags_or_labels_change = current.is_some() && self.tags_or_labels_differ(id, note)?;
        // `updated` is what a page or a client saves against (a save based on an older one is refused): a change
        // applied here always moves it forward, even when the merged value (last writer wins between devices whose
        // clocks differ) would be the one it had.
        let updated = match &current {
            Some((old_title, old_body, _, old_updated, same_rest))
                if !(*same_rest && *old_title == title && *old_body == note.body && !tags_or_labels_change) =>
            {
                note.updated.max(old_updated + 1)
            }
            Some((.., old_updated, _)) => *old_updated,
            None => note.updated,
        };
        let row = params![
            id,
            notebook,
            title,
            note.body,
            note.is_todo,
            note.todo_completed,
            note.is_protected,
            note.created,
            updated,
            note.deleted,
            note.sealed,
            note.version
        ];
        let fresh = current.is_none();
        match current {
            None => {
                self.mutate_new(EntityKind::Note, id, |w| {
                    w.conn.exec_cached(
                        "INSERT INTO notes (id, notebook_id, title, body, is_todo, todo_completed, is_protected, \
                         created, updated, deleted, sealed, version) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                        row,
                    )?;
                    Ok(())
                })?;
                crate::links::refresh_target_id(self.conn, id)?;
            }
            Some((old_title, old_body, was_sealed, ..)) => {
                // The text before, kept as a revision (a sealed one is in the change log's snapshot, sealed).
                if !was_sealed && (old_title != title || old_body != note.body) {
                    self.save_revision(id, &old_title, &old_body)?;
                }
                self.mutate(EntityKind::Note, id, |w| {
                    w.conn.exec_cached(
                        "UPDATE notes SET notebook_id = ?2, title = ?3, body = ?4, is_todo = ?5, todo_completed = ?6, \
                         is_protected = ?7, created = ?8, updated = ?9, deleted = ?10, sealed = ?11, version = ?12 \
                         WHERE id = ?1",
                        row,
                    )?;
                    Ok(())
                })?;
            }
        }
        self.apply_synced_tags(id, &note.tags, fresh)?;
        self.apply_synced_labels(id, &note.labels)?;
        // Sync holds no key: it seals what must be (anyone may), and leaves sealed what the other device opened
        // (its revisions and attachments here open with the key later).
        self.seal_if_needed(id)?;
        self.refresh_search(id)
    }

    /// Deletes a note another device deleted for good (nothing, if it is not here).
    pub fn apply_synced_purge(&mut self, id: &str) -> Result<()> {
        self.require_sync("apply another device's changes")?;
        let exists: bool = self
            .conn
            .row_cached("SELECT EXISTS (SELECT 1 FROM notes WHERE id = ?1)", [id], |r| r.get(0))?;
        if exists {
            self.purge_note_unchecked(id)?;
        }
        Ok(())
    }

    /// Makes an attachment's row what `attachment` says (created, or its title, type, bytes and text replaced). One of
    /// a note that is not here (deleted for good, say) is not written. Whatever must be sealed is sealed after.
    pub fn apply_synced_attachment(&mut self, attachment: &SyncedAttachment) -> Result<()> {
        self.require_sync("apply another device's changes")?;
        let note_exists: bool = self.conn.row_cached(
            "SELECT EXISTS (SELECT 1 FROM notes WHERE id = ?1)",
            [&attachment.note_id],
            |r| r.get(0),
        )?;
        if !note_exists {
            return Ok(());
        }
        let title = guard::title("Attachment", &attachment.title)?;
        let a = attachment;
        let row = params![
            a.id, a.note_id, title, a.mime, a.size, a.data, a.text, a.created, a.sealed
        ];
        let exists: bool = self.conn.row_cached(
            "SELECT EXISTS (SELECT 1 FROM attachments WHERE id = ?1)",
            [&a.id],
            |r| r.get(0),
        )?;
        if exists {
            self.mutate(EntityKind::Attachment, &a.id, |w| {
                w.conn.exec_cached(
                    "UPDATE attachments SET note_id = ?2, title = ?3, mime = ?4, size = ?5, data = ?6, text = ?7, \
                     created = ?8, sealed = ?9, extraction = CASE WHEN data = ?6 THEN extraction END WHERE id = ?1",
                    row,
                )?;
                Ok(())
            })?;
        } else {
            self.mutate_new(EntityKind::Attachment, &a.id, |w| {
                w.conn.exec_cached(
                    "INSERT INTO attachments (id, note_id, title, mime, size, data, text, created, sealed) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    row,
                )?;
                Ok(())
            })?;
        }
        crate::links::refresh_key(self.conn, &crate::links::key_of(&title))?;
        crate::links::refresh_target_id(self.conn, &a.id)?;
        self.seal_if_needed(&a.note_id)?;
        self.refresh_search(&a.note_id)
    }

    /// Deletes an attachment another device deleted (nothing, if it is not here).
    pub fn apply_synced_attachment_gone(&mut self, id: &str) -> Result<()> {
        self.require_sync("apply another device's changes")?;
        let note: Option<String> = self
            .conn
            .row_cached("SELECT note_id FROM attachments WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        if let Some(note) = note {
            self.mutate(EntityKind::Attachment, id, |w| w.delete_row(EntityKind::Attachment, id))?;
            crate::links::refresh_target_attachment(self.conn, id)?;
            self.refresh_search(&note)?;
        }
        Ok(())
    }

    /// Makes the notebooks what `notebooks` says: creates the missing ones, moves, renames and protects the others,
    /// and deletes those in `gone` that hold nothing here (a notebook that still holds a note or a notebook stays).
    /// Parents come before their children whatever the order given; a parent that does not exist puts the notebook
    /// at the top.
    pub fn apply_synced_notebooks(&mut self, notebooks: &[SyncedNotebook], gone: &[String]) -> Result<()> {
        self.require_sync("apply another device's changes")?;
        let now = self.now.as_millis();
        let known: BTreeSet<&str> = notebooks.iter().map(|n| n.id.as_str()).collect();
        // Create the missing ones at the top first, so that every parent exists before the moves.
        for notebook in notebooks {
            let exists: bool = self.conn.row_cached(
                "SELECT EXISTS (SELECT 1 FROM notebooks WHERE id = ?1)",
                [&notebook.id],
                |r| r.get(0),
            )?;
            if !exists {
                let title = guard::title("Notebook", &notebook.title)?;
                self.mutate_new(EntityKind::Notebook, &notebook.id, |w| {
                    w.conn.exec_cached(
                        "INSERT INTO notebooks (id, parent_id, title, icon, is_protected, created, updated) \
                         VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?5)",
                        params![notebook.id, ROOT_NOTEBOOK_ID, title, notebook.is_protected, now],
                    )?;
                    Ok(())
                })?;
            }
        }
        let mut protection_changed = Vec::new();
        for notebook in notebooks {
            let title = guard::title("Notebook", &notebook.title)?;
            let parent = match &notebook.parent_id {
                Some(parent) if known.contains(parent.as_str()) || self.notebook_exists(parent)? => parent.as_str(),
                _ => ROOT_NOTEBOOK_ID,
            };
            let was_protected: bool = self.conn.row_cached(
                "SELECT is_protected FROM notebooks WHERE id = ?1",
                [&notebook.id],
                |r| r.get(0),
            )?;
            self.mutate(EntityKind::Notebook, &notebook.id, |w| {
                w.conn.exec_cached(
                    "UPDATE notebooks SET parent_id = ?2, title = ?3, is_protected = ?4, updated = ?5 WHERE id = ?1 \
                     AND (parent_id IS NOT ?2 OR title IS NOT ?3 OR is_protected IS NOT ?4)",
                    params![notebook.id, parent, title, notebook.is_protected, now],
                )?;
                Ok(())
            })?;
            if was_protected != notebook.is_protected {
                protection_changed.push(notebook.id.clone());
            }
        }
        // Children before their parents: again while a pass deletes something.
        loop {
            let mut deleted = false;
            for id in gone {
                let holds_something: bool = self.conn.row_cached(
                    "SELECT EXISTS (SELECT 1 FROM notes WHERE notebook_id = ?1) \
                     OR EXISTS (SELECT 1 FROM notebooks WHERE parent_id = ?1)",
                    [id],
                    |r| r.get(0),
                )?;
                if id != ROOT_NOTEBOOK_ID && !holds_something && self.notebook_exists(id)? {
                    self.mutate(EntityKind::Notebook, id, |w| w.delete_row(EntityKind::Notebook, id))?;
                    deleted = true;
                }
            }
            if !deleted {
                break;
            }
        }
        self.reader.forget_scope();
        // What a notebook's protection now covers is sealed here too (its notes usually arrive sealed already).
        for id in protection_changed {
            for sub in self.notebook_subtree(&id)? {
                for note in self.string_column("SELECT id FROM notes WHERE notebook_id = ?1", &sub)? {
                    self.seal_if_needed(&note)?;
                    self.refresh_search(&note)?;
                }
            }
        }
        Ok(())
    }

    fn notebook_exists(&self, id: &str) -> Result<bool> {
        Ok(self
            .conn
            .row_cached("SELECT EXISTS (SELECT 1 FROM notebooks WHERE id = ?1)", [id], |r| {
                r.get(0)
            })?)
    }

    /// Whether the note's tags (by name, without case) or labels here differ from `note`'s.
    fn tags_or_labels_differ(&self, note_id: &str, note: &SyncedNote) -> Result<bool> {
        let tags: BTreeSet<String> = self
            .string_column(
                "SELECT t.name FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = ?1",
                note_id,
            )?
            .into_iter()
            .map(|t| t.to_ascii_lowercase())
            .collect();
        let wanted: BTreeSet<String> = note.tags.iter().map(|t| t.to_ascii_lowercase()).collect();
        if tags != wanted {
            return Ok(true);
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, value, value_type FROM attributes WHERE note_id = ?1 AND kind = 'label'")?;
        let labels: BTreeMap<String, SyncedLabel> = stmt
            .query_map([note_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    SyncedLabel {
                        value: r.get(1)?,
                        json: r.get::<_, String>(2)? == "json",
                    },
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(labels != note.labels)
    }

    /// `fresh`: the note was made by this write (it has no tags yet: no link of it to look up).
    fn apply_synced_tags(&mut self, note_id: &str, tags: &BTreeSet<String>, fresh: bool) -> Result<()> {
        let current: Vec<(String, String)> = if fresh {
            Vec::new()
        } else {
            let mut stmt = self.conn.prepare_cached(
                "SELECT t.id, t.name FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = ?1",
            )?;
            stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (tag_id, name) in &current {
            if !tags.iter().any(|t| t.eq_ignore_ascii_case(name)) {
                let link = format!("{note_id}/{tag_id}");
                self.mutate(EntityKind::NoteTag, &link, |w| w.delete_row(EntityKind::NoteTag, &link))?;
            }
        }
        // Two spellings of one tag ("Work" and "work ", written on two devices at once) are one tag here: linked
        // once (a new note skips the look-up of links it has, so it counts them itself; found in review).
        let mut linked = BTreeSet::new();
        for name in tags {
            if !current.iter().any(|(_, have)| have.eq_ignore_ascii_case(name)) {
                let name = guard::tag_name(name)?;
                if linked.insert(name.to_ascii_lowercase()) {
                    self.link_tag(note_id, &name, fresh)?;
                }
            }
        }
        Ok(())
    }

    fn apply_synced_labels(&mut self, note_id: &str, labels: &BTreeMap<String, SyncedLabel>) -> Result<()> {
        let current: Vec<(String, String, String, String)> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT id, name, value, value_type FROM attributes WHERE note_id = ?1 AND kind = 'label'",
            )?;
            stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        let now = self.now.as_millis();
        let mut changed = false;
        for (id, name, value, value_type) in &current {
            match labels.get(name) {
                None => {
                    self.mutate(EntityKind::Attribute, id, |w| w.delete_row(EntityKind::Attribute, id))?;
                    changed = true;
                }
                Some(label) => {
                    let wanted_type = if label.json { "json" } else { "text" };
                    if label.value != *value || wanted_type != value_type {
                        self.mutate(EntityKind::Attribute, id, |w| {
                            w.conn.exec_cached(
                                "UPDATE attributes SET value = ?2, value_type = ?3, updated = ?4 WHERE id = ?1",
                                params![id, label.value, wanted_type, now],
                            )?;
                            Ok(())
                        })?;
                        changed = true;
                    }
                }
            }
        }
        for (name, label) in labels {
            if current.iter().any(|(_, have, _, _)| have == name) {
                continue;
            }
            guard::attribute_name(name)?;
            let id = self.new_id()?;
            let value_type = if label.json { "json" } else { "text" };
            self.mutate_new(EntityKind::Attribute, &id, |w| {
                w.conn.exec_cached(
                    "INSERT INTO attributes (id, note_id, kind, name, value, target_note_id, created, updated, \
                     value_type) VALUES (?1, ?2, 'label', ?3, ?4, NULL, ?5, ?5, ?6)",
                    params![id, note_id, name, label.value, now, value_type],
                )?;
                Ok(())
            })?;
            changed = true;
        }
        if changed {
            self.refresh_links(note_id)?;
        }
        Ok(())
    }
}
