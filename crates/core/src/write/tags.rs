//! Tags: link, unlink, rename and delete.

use crate::sql::Cached;
use rusqlite::{OptionalExtension, params};

use crate::entity::EntityKind;
use crate::error::{Error, Missing, Result};
use crate::guard;
use crate::history;

use super::Writer;

impl<'a> Writer<'a> {
    /// Puts a tag (created when missing) on a note. Returns whether the note did not have it yet.
    pub fn add_tag(&mut self, note_id: &str, name: &str) -> Result<bool> {
        self.ensure_note_writable(note_id)?;
        let name = guard::tag_name(name)?;
        let added = self.link_tag(note_id, &name, false)?;
        if added {
            self.refresh_search(note_id)?;
        }
        Ok(added)
    }

    /// Takes a tag off a note. Returns whether the note had it.
    pub fn remove_tag(&mut self, note_id: &str, name: &str) -> Result<bool> {
        self.ensure_note_writable(note_id)?;
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
            .row_cached(
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
                .exec_cached("UPDATE tags SET name = ?2 WHERE id = ?1", params![id, new_name])?;
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
}
