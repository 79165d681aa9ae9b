//! The machinery under every write: the change log, change sets, revisions, ids and the search index.

use crate::sql::Cached;
use rusqlite::{OptionalExtension, params};

use crate::entity::{Actor, EntityKind, Operation, ROOT_NOTEBOOK_ID};
use crate::error::{Error, Result};
use crate::history;
use crate::read::actor_to_text;

use super::Writer;

impl<'a> Writer<'a> {
    /// The id of the tag with this name (ignoring case), if there is one.
    pub(super) fn tag_id(&self, name: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .row_cached("SELECT id FROM tags WHERE name = ?1 COLLATE NOCASE", [name], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// A fresh id for a note or attachment to be created with [`Writer::create_note_as`] or
    /// [`Writer::add_attachment_as`] later in this write.
    pub fn reserve_id(&self) -> Result<String> {
        self.new_id()
    }

    /// Refuses an id that quire would not have made, or that a note or attachment already has.
    pub(super) fn check_fresh_id(&self, id: &str) -> Result<()> {
        if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(Error::invalid(format!(
                "'{id}' is not an id quire makes (32 lower-case hex digits)."
            )));
        }
        let taken: bool = self.conn.row_cached(
            "SELECT EXISTS (SELECT 1 FROM notes WHERE id = ?1) OR EXISTS (SELECT 1 FROM attachments WHERE id = ?1)",
            [id],
            |r| r.get(0),
        )?;
        if taken {
            return Err(Error::invalid(format!("The id '{id}' is already in use.")));
        }
        Ok(())
    }

    pub(super) fn new_id(&self) -> Result<String> {
        // 128 random bits, as SQLite's randomblob(16) gave them, without a statement (an import makes thousands).
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| Error::invalid(format!("no random bytes for a new id: {e}")))?;
        Ok(crate::hex(&bytes))
    }

    pub(super) fn string_column(&self, sql: &str, arg: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map([arg], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub(super) fn delete_row(&self, kind: EntityKind, id: &str) -> Result<()> {
        history::restore(self.conn, kind, id, None)
    }

    /// Runs one change to one entity and records it in the change log: the row before, a fingerprint of the row after.
    pub(super) fn mutate(
        &mut self,
        kind: EntityKind,
        id: &str,
        change: impl FnOnce(&Self) -> Result<()>,
    ) -> Result<()> {
        let before = history::snapshot(self.conn, kind, id)?;
        self.mutate_from(kind, id, before, change)
    }

    /// [`Writer::mutate`] for an entity the caller knows does not exist yet (a fresh id, or a link it just looked
    /// for): the row before is not read.
    pub(super) fn mutate_new(
        &mut self,
        kind: EntityKind,
        id: &str,
        change: impl FnOnce(&Self) -> Result<()>,
    ) -> Result<()> {
        self.mutate_from(kind, id, None, change)
    }

    fn mutate_from(
        &mut self,
        kind: EntityKind,
        id: &str,
        before: Option<serde_json::Value>,
        change: impl FnOnce(&Self) -> Result<()>,
    ) -> Result<()> {
        change(self)?;
        if kind == EntityKind::Attachment {
            self.forget_attachment_owners();
        }
        if kind == EntityKind::Notebook {
            // The tree changed, so the scope (the notebooks below its roots) may have.
            self.reader.forget_scope();
        }
        let after = history::snapshot(self.conn, kind, id)?;
        let operation = match (&before, &after) {
            (None, None) => return Ok(()),
            (None, Some(_)) => Operation::Create,
            (Some(_), None) => Operation::Delete,
            (Some(b), Some(a)) if a == b => return Ok(()),
            (Some(_), Some(_)) => Operation::Update,
        };
        let change_set = self.ensure_change_set()?;
        self.conn.exec_cached(
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

    pub(super) fn ensure_change_set(&mut self) -> Result<String> {
        if let Some(id) = &self.change_set {
            return Ok(id.clone());
        }
        let id = self.open_change_set(self.actor)?;
        self.change_set = Some(id.clone());
        Ok(id)
    }

    /// The open change set of `actor`'s group, or a new one in its name.
    pub(super) fn open_change_set(&self, actor: &Actor) -> Result<String> {
        let key = actor.grouping_key();
        let existing: Option<String> = match &key {
            Some(key) => self
                .conn
                .row_cached(
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
                self.conn.exec_cached(
                    "INSERT INTO change_sets (id, actor, actor_key, created, reverted) VALUES (?1, ?2, ?3, ?4, NULL)",
                    params![id, actor_to_text(actor), key, self.now.as_millis()],
                )?;
                id
            }
        };
        Ok(id)
    }

    pub(super) fn save_revision(&mut self, note_id: &str, title: &str, body: &str) -> Result<()> {
        let change_set = self.ensure_change_set()?;
        // A sealed note's revisions are sealed as they are written, bound to their own number.
        let seal = self.seal_state(note_id)?;
        let plain = if seal.sealed.is_some() { "" } else { body };
        self.conn.exec_cached(
            "INSERT INTO revisions (note_id, title, body, actor, change_set_id, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![note_id, title, plain, actor_to_text(self.actor), change_set, self.now.as_millis()],
        )?;
        if let Some(current) = &seal.sealed {
            let seq = self.conn.last_insert_rowid();
            let key = self.seal_for_note(note_id, Some(current))?;
            let blob = key.seal(note_id, crate::seal::kind::REVISION, seq, body.as_bytes())?;
            self.conn
                .exec_cached("UPDATE revisions SET sealed = ?2 WHERE seq = ?1", params![seq, blob])?;
        }
        Ok(())
    }

    /// Before a revert rewrites or removes a note row: save a revision for non-user actors and drop the
    /// search row of a note that is about to disappear.
    pub(super) fn before_note_restore(&mut self, id: &str, target: Option<&serde_json::Value>) -> Result<()> {
        let current: Option<(i64, String, String)> = self
            .conn
            .row_cached("SELECT seq, title, body FROM notes WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?;
        let Some((seq, title, body)) = current else {
            return Ok(());
        };
        match target {
            None => {
                self.log_search_change(seq)?;
                self.conn.exec_cached("DELETE FROM notes_fts WHERE rowid = ?1", [seq])?;
                self.conn
                    .exec_cached("DELETE FROM revisions WHERE note_id = ?1", [id])?;
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
    /// `fresh`: the note was created a moment ago in this write, so it has no tags yet.
    pub(super) fn link_tag(&mut self, note_id: &str, name: &str, fresh: bool) -> Result<bool> {
        let existing = self.tag_id(name)?;
        let now = self.now.as_millis();
        let tag_id = match existing {
            Some(id) => id,
            None => {
                let id = self.new_id()?;
                self.mutate_new(EntityKind::Tag, &id, |w| {
                    w.conn.exec_cached(
                        "INSERT INTO tags (id, name, created) VALUES (?1, ?2, ?3)",
                        params![id, name, now],
                    )?;
                    Ok(())
                })?;
                id
            }
        };
        let link = format!("{note_id}/{tag_id}");
        if !fresh && history::snapshot(self.conn, EntityKind::NoteTag, &link)?.is_some() {
            return Ok(false);
        }
        self.mutate_new(EntityKind::NoteTag, &link, |w| {
            w.conn.exec_cached(
                "INSERT INTO note_tags (note_id, tag_id, created) VALUES (?1, ?2, ?3)",
                params![note_id, tag_id, now],
            )?;
            Ok(())
        })?;
        Ok(true)
    }

    /// Rewrites a note's row in the full-text index. The body, tags and attachment text of a protected note are
    /// left out, so that no search, by any actor, can reveal them.
    pub(super) fn refresh_search(&self, note_id: &str) -> Result<()> {
        if let Some(deferred) = self.deferred_search.borrow_mut().as_mut() {
            deferred.insert(note_id.to_owned());
            return Ok(());
        }
        crate::links::refresh(self.conn, note_id)?;
        self.write_search_entry(note_id)
    }

    /// Extracts and resolves a note's links again (deferred with the full-text entries, see
    /// [`Writer::defer_search_index`]).
    pub(super) fn refresh_links(&self, note_id: &str) -> Result<()> {
        if let Some(deferred) = self.deferred_search.borrow_mut().as_mut() {
            deferred.insert(note_id.to_owned());
            return Ok(());
        }
        crate::links::refresh(self.conn, note_id)
    }

    /// Writes a note's full-text entry from its row as it is now.
    pub(super) fn write_search_entry(&self, note_id: &str) -> Result<()> {
        let row: Option<(i64, String, String, bool, String)> = self
            .conn
            .row_cached(
                "SELECT seq, title, body, is_protected, notebook_id FROM notes WHERE id = ?1",
                [note_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let Some((seq, title, body, protected, notebook_id)) = row else {
            return Ok(());
        };
        let protected = protected || self.protected_notebooks()?.contains(&notebook_id);
        self.log_search_change(seq)?;
        self.conn.exec_cached("DELETE FROM notes_fts WHERE rowid = ?1", [seq])?;
        if protected {
            self.conn.exec_cached(
                "INSERT INTO notes_fts (rowid, title, body, tags, attachments) VALUES (?1, ?2, '', '', '')",
                params![seq, title],
            )?;
        } else {
            self.conn.exec_cached(
                "INSERT INTO notes_fts (rowid, title, body, tags, attachments) VALUES (?1, ?2, ?3, \
                 (SELECT coalesce(group_concat(t.name, ' '), '') FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
                  WHERE nt.note_id = ?4), \
                 (SELECT coalesce(group_concat(text, ' '), '') FROM attachments WHERE note_id = ?4))",
                params![seq, title, body, note_id],
            )?;
        }
        Ok(())
    }

    /// Records that the full-text entry of the note `seq` changed (or that it went in or out of the trash), for the
    /// search engine beside the file to take in before its next search (see `search_log` in the schema).
    pub(super) fn log_search_change(&self, seq: i64) -> Result<()> {
        self.conn
            .exec_cached("INSERT INTO search_log (note_seq) VALUES (?1)", [seq])?;
        let id = self.conn.last_insert_rowid();
        if id % 1024 == 0 {
            crate::search::forget_old_log(self.conn, id)?;
        }
        Ok(())
    }

    pub(super) fn refresh_search_in_notebook(&self, notebook_id: &str) -> Result<()> {
        for sub in self.notebook_subtree(notebook_id)? {
            for note in self.string_column("SELECT id FROM notes WHERE notebook_id = ?1", &sub)? {
                self.refresh_search(&note)?;
            }
        }
        Ok(())
    }

    pub(super) fn refresh_search_everywhere(&self) -> Result<()> {
        self.refresh_search_in_notebook(ROOT_NOTEBOOK_ID)
    }
}
