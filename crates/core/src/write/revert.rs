//! Reverting a change set as a whole.

use std::collections::BTreeSet;

use rusqlite::{OptionalExtension, params};

use crate::entity::EntityKind;
use crate::error::{Error, Result};
use crate::history;

use super::{RevertReport, Writer, note_of};

/// The most change sets [`Writer::revert_change_set_and_later`] undoes in one go.
const MOST_UNDONE_TOGETHER: usize = 64;

impl<'a> Writer<'a> {
    /// Undoes a change set together with the later change sets that changed the same things since, newest first,
    /// in this one write (so their undo is one change set, undone again as one). Refused as a whole, changing
    /// nothing, when one of them cannot be undone or more than 64 would be.
    pub fn revert_change_set_and_later(&mut self, id: &str) -> Result<Vec<RevertReport>> {
        let mut reports = Vec::new();
        self.revert_after_later(id, &mut reports)?;
        Ok(reports)
    }

    fn revert_after_later(&mut self, id: &str, reports: &mut Vec<RevertReport>) -> Result<()> {
        loop {
            match self.revert_change_set(id) {
                Ok(report) => {
                    reports.push(report);
                    return Ok(());
                }
                Err(Error::ChangedSince(blocked)) if reports.len() < MOST_UNDONE_TOGETHER => {
                    match blocked
                        .later
                        .as_ref()
                        .filter(|later| later.reverted.is_none() && later.id != id)
                    {
                        Some(later) => {
                            let later = later.id.clone();
                            let before = reports.len();
                            self.revert_after_later(&later, reports)?;
                            if reports.len() == before {
                                return Err(Error::ChangedSince(blocked));
                            }
                        }
                        None => return Err(Error::ChangedSince(blocked)),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

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
                // Name the latest change set that touched it since, so the user knows what to revert first.
                let later: Option<String> = self
                    .conn
                    .query_row(
                        "SELECT change_set_id FROM changes WHERE entity = ?1 AND entity_id = ?2 AND seq > \
                         (SELECT max(seq) FROM changes WHERE change_set_id = ?3) ORDER BY seq DESC LIMIT 1",
                        params![kind.as_str(), entity_id, id],
                        |r| r.get(0),
                    )
                    .optional()?;
                let kind_name = kind.as_str().replace('_', " ");
                // Named in words: a note by its title, anything else by the title of its note.
                let title = |row: Option<&serde_json::Value>, key: &str| {
                    row.and_then(|row| row.get(key))
                        .and_then(|t| t.as_str())
                        .map(str::to_owned)
                };
                let row = current.as_ref();
                let what = if *kind == EntityKind::Note {
                    match title(row, "title") {
                        Some(title) => format!("the note \"{title}\""),
                        None => "the note".to_owned(),
                    }
                } else {
                    let owner = title(row, "note_id")
                        .or_else(|| entity_id.split('/').next().map(str::to_owned))
                        .and_then(|note| self.note_summary(&note).ok());
                    match owner {
                        Some(note) => format!("the {kind_name} of \"{}\"", note.title),
                        None => format!("a {kind_name} this change touched"),
                    }
                };
                // Through a scope, a later change set outside it is not named.
                let later = later.and_then(|later| self.change_set(&later).ok());
                return Err(Error::ChangedSince(Box::new(crate::error::ChangedSince {
                    what,
                    later,
                })));
            }
            // A scoped handle reverts only what it can reach, whoever the actor.
            if self.scope()?.is_some() {
                self.check_revert_in_scope(*kind, entity_id, current.as_ref())?;
            }
            if !self.actor.is_user() {
                // The note open in the editor keeps its title and text; a revert that would only move it or change
                // its to-do state may go on.
                if *kind == EntityKind::Note && self.in_editor.as_deref() == Some(entity_id.as_str()) {
                    let text = |row: Option<&serde_json::Value>| {
                        row.map(|r| (r.get("title").cloned(), r.get("body").cloned()))
                    };
                    let before = changes
                        .iter()
                        .rev()
                        .find(|(k, id, ..)| *k == EntityKind::Note && id == entity_id)
                        .and_then(|(_, _, before, _)| before.as_ref());
                    if text(before) != text(current.as_ref()) {
                        return Err(Error::OpenInEditor);
                    }
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
        // An import undone: its records of these notes no longer say what quire holds. The next import of the
        // source looks at each again (no source hash matches the empty one) and finds quire's copy as the undo left
        // it, so it updates it, unless the note is edited in quire before (found in use: an undone update never
        // came back).
        if matches!(set.actor, crate::Actor::Import { .. }) {
            for note in &touched_notes {
                let text: Option<(String, String)> = self
                    .conn
                    .query_row("SELECT title, body FROM notes WHERE id = ?1", [note], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .optional()?;
                if let Some((title, body)) = text {
                    self.conn.execute(
                        "UPDATE import_sources SET source_hash = '', note_hash = ?2 WHERE note_id = ?1",
                        params![note, super::import::import_note_hash(&title, &body)],
                    )?;
                }
            }
        }
        for note in &touched_notes {
            // What was put back may be sealed for a note no longer protected, or plain for one that is.
            if self.sealer()?.is_some() && self.note_summary(note).is_ok() {
                self.reconcile_seal(note)?;
            }
            self.refresh_search(note)?;
        }
        // A note or attachment brought back: the `quire://` links to it resolve again.
        for (kind, entity_id, before, _) in &changes {
            if before.is_some() && matches!(kind, EntityKind::Note | EntityKind::Attachment) {
                crate::links::refresh_target_id(self.conn, entity_id)?;
            }
        }
        if changes.iter().any(|(kind, ..)| *kind == EntityKind::Notebook) {
            if self.sealer()?.is_some() {
                self.reconcile_seal_in_notebook(crate::entity::ROOT_NOTEBOOK_ID)?;
            }
            self.refresh_search_everywhere()?;
        }
        // The undo's own change set names what it undid (with later sets, the one asked for is undone last and
        // is the one named).
        if let Some(own) = &self.change_set {
            self.conn
                .execute("UPDATE change_sets SET undoes = ?2 WHERE id = ?1", params![own, id])?;
        }
        Ok(RevertReport {
            reverted_change_set_id: id.to_owned(),
            undone_changes: changes.len() as u64,
            change_set_id: self.change_set.clone(),
        })
    }
}
