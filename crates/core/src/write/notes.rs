//! Notes: create, update, move, trash, restore, purge, protect, and revisions taken on demand.

use crate::sql::Cached;
use rusqlite::{OptionalExtension, params};

use crate::entity::{EntityKind, Note, NoteSummary, Timestamp};
use crate::error::{Error, Missing, Result};
use crate::guard;

use super::{NewNote, NoteUpdate, Writer};

impl<'a> Writer<'a> {
    /// Creates a note. It never overwrites anything: every note gets a fresh id. A note made in a protected
    /// notebook is sealed at once; without the key this writer still returns its text (the text it was given).
    pub fn create_note(&mut self, new: NewNote) -> Result<Note> {
        let id = self.new_id()?;
        let body = new.body.clone();
        self.create_note_with(&id, new)?;
        match self.note(&id) {
            Err(Error::Locked { .. }) => Ok(Note {
                summary: self.note_summary(&id)?,
                body,
            }),
            other => other,
        }
    }

    /// Creates a note with an id from [`Writer::reserve_id`], so that other text can link to it before it exists
    /// (an import writes each note once, its links already pointing at notes still to come). Links to it that
    /// were written earlier resolve when it is created. An id in use, or not one quire makes, is refused.
    /// Unlike [`Writer::create_note`] it does not read the note back (an import writes thousands).
    pub fn create_note_as(&mut self, id: &str, new: NewNote) -> Result<()> {
        self.check_fresh_id(id)?;
        self.create_note_with(id, new)
    }

    fn create_note_with(&mut self, id: &str, new: NewNote) -> Result<()> {
        let notebook = match new.notebook_id.as_deref() {
            Some(id) => id.to_owned(),
            None => self.default_notebook()?,
        };
        self.check_notebook_target(&notebook, "create a note inside")?;
        let title = guard::title("Note", &new.title)?;
        guard::body(&new.body)?;
        let tags = new
            .tags
            .iter()
            .map(|t| guard::tag_name(t))
            .collect::<Result<Vec<_>>>()?;
        let created = new.created.unwrap_or(self.now).as_millis();
        let updated = new.updated.map_or(created, Timestamp::as_millis);
        // A note made inside a protected notebook is sealed from its first write: its text is never stored plain.
        let sealed = if self.sealer()?.is_some() && self.protected_notebooks()?.contains(&notebook) {
            let key = self.seal_for_note(id, None)?;
            Some(key.seal(id, crate::seal::kind::BODY, 1, new.body.as_bytes())?)
        } else {
            None
        };
        let (body, version) = if sealed.is_some() {
            ("", 1)
        } else {
            (new.body.as_str(), 0)
        };
        // The id is fresh: a new one, or one `check_fresh_id` found unused.
        self.mutate_new(EntityKind::Note, id, |w| {
            w.conn.exec_cached(
                "INSERT INTO notes (id, notebook_id, title, body, is_todo, todo_completed, is_protected, created, \
                 updated, deleted, sealed, version) VALUES (?1, ?2, ?3, ?4, ?5, NULL, 0, ?6, ?7, NULL, ?8, ?9)",
                params![
                    id,
                    notebook,
                    title,
                    body,
                    new.is_todo,
                    created,
                    updated,
                    sealed,
                    version
                ],
            )?;
            Ok(())
        })?;
        for (i, tag) in tags.iter().enumerate() {
            // Two names of one tag (tags ignore ASCII case, as SQLite's NOCASE does) are one link.
            if !tags[..i].iter().any(|t| t.eq_ignore_ascii_case(tag)) {
                self.link_tag(id, tag, true)?;
            }
        }
        self.refresh_search(id)?;
        crate::links::refresh_target_id(self.conn, id)
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
                .row_cached("SELECT title, body FROM notes WHERE id = ?1", [id], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
        // A sealed note's text is opened to compare it and to keep it in a revision: that needs the key. Its title
        // and to-do state change without it.
        let seal = self.seal_state(id)?;
        let old_body = match &seal.sealed {
            Some(blob) if update.body.is_some() => {
                self.key_for(id)?
                    .open_text(id, crate::seal::kind::BODY, seal.version, blob, "its body")?
            }
            _ => old_body,
        };
        let text_changes =
            title.as_ref().is_some_and(|t| *t != old_title) || update.body.as_ref().is_some_and(|b| *b != old_body);
        if text_changes && self.in_editor.as_deref() == Some(id) && !self.actor.is_user() {
            return Err(Error::OpenInEditor);
        }
        // An import fills in the links of the notes it wrote a moment ago (they need every note's id): the text
        // before is a note it created, or one whose earlier text it already kept, so no second revision.
        let fresh = matches!(self.actor, crate::Actor::Import { .. }) && self.created_in_this_change_set(id)?;
        if text_changes && !self.actor.is_user() && !fresh {
            self.save_revision(id, &old_title, &old_body)?;
        }
        let is_todo = update.is_todo.unwrap_or(current.is_todo);
        let completed = match update.todo_completed {
            Some(completed) => completed.map(Timestamp::as_millis),
            None => current.todo_completed.map(Timestamp::as_millis),
        };
        let completed = if is_todo { completed } else { None };
        // The import's own filling-in keeps the time the note was last changed at its source.
        let now = if fresh {
            current.updated.as_millis()
        } else {
            self.now.as_millis()
        };
        let new_title = title.as_deref().unwrap_or(&old_title);
        if let Some(current) = &seal.sealed {
            let body_changes = update.body.as_ref().is_some_and(|b| *b != old_body);
            let (sealed, version) = match &update.body {
                Some(body) if body_changes => {
                    let version = seal.version + 1;
                    let key = self.seal_for_note(id, Some(current))?;
                    (
                        key.seal(id, crate::seal::kind::BODY, version, body.as_bytes())?,
                        version,
                    )
                }
                _ => (current.clone(), seal.version),
            };
            self.mutate(EntityKind::Note, id, |w| {
                w.conn.exec_cached(
                    "UPDATE notes SET title = ?2, sealed = ?3, version = ?4, is_todo = ?5, todo_completed = ?6, \
                     updated = ?7 WHERE id = ?1 AND (title IS NOT ?2 OR sealed IS NOT ?3 OR is_todo IS NOT ?5 \
                     OR todo_completed IS NOT ?6)",
                    params![id, new_title, sealed, version, is_todo, completed, now],
                )?;
                Ok(())
            })?;
        } else {
            self.mutate(EntityKind::Note, id, |w| {
                w.conn.exec_cached(
                    "UPDATE notes SET title = ?2, body = ?3, is_todo = ?4, todo_completed = ?5, updated = ?6 \
                     WHERE id = ?1 AND (title IS NOT ?2 OR body IS NOT ?3 OR is_todo IS NOT ?4 OR todo_completed IS NOT ?5)",
                    params![id, new_title, update.body.as_deref().unwrap_or(&old_body), is_todo, completed, now],
                )?;
                Ok(())
            })?;
        }
        if text_changes {
            self.refresh_search(id)?;
        }
        self.note(id)
    }

    /// A note with its body, for a caller about to change it: the write guards apply (it exists and, for non-user
    /// actors, is not protected), so a refused edit says "cannot be modified" rather than "cannot be read".
    pub fn note_for_edit(&self, id: &str) -> Result<Note> {
        self.ensure_note_writable(id)?;
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
        self.ensure_note_writable(id)?;
        self.check_notebook_target(notebook_id, "move a note into")?;
        let now = self.now.as_millis();
        self.mutate(EntityKind::Note, id, |w| {
            w.conn.exec_cached(
                "UPDATE notes SET notebook_id = ?2, updated = ?3 WHERE id = ?1 AND notebook_id IS NOT ?2",
                params![id, notebook_id, now],
            )?;
            Ok(())
        })?;
        self.reconcile_seal(id)?;
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
                .exec_cached("UPDATE notes SET deleted = ?2 WHERE id = ?1", params![id, now])?;
            Ok(())
        })?;
        self.log_search_change(self.note_seq(id)?)?;
        crate::links::refresh(self.conn, id)?;
        self.note_summary(id)
    }

    /// Takes a note out of the trash.
    pub fn restore_note(&mut self, id: &str) -> Result<NoteSummary> {
        let current = self.check_note_writable(id)?;
        if current.deleted.is_none() {
            return Err(Error::invalid("Note is not in the trash."));
        }
        self.mutate(EntityKind::Note, id, |w| {
            w.conn
                .exec_cached("UPDATE notes SET deleted = NULL WHERE id = ?1", [id])?;
            Ok(())
        })?;
        self.log_search_change(self.note_seq(id)?)?;
        crate::links::refresh(self.conn, id)?;
        self.note_summary(id)
    }

    fn note_seq(&self, id: &str) -> Result<i64> {
        self.conn
            .row_cached("SELECT seq FROM notes WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or(Error::NotFound(Missing::Note))
    }

    /// Deletes a note for good, with its tags links, attributes, attachments and revisions.
    /// Only the user may do this; every other actor moves notes to the trash.
    pub fn purge_note(&mut self, id: &str) -> Result<()> {
        self.require_user("delete notes permanently; move the note to the trash instead")?;
        self.purge_note_unchecked(id)
    }

    /// [`Writer::purge_note`] without asking who the actor is (sync applies another device's purge with it).
    pub(super) fn purge_note_unchecked(&mut self, id: &str) -> Result<()> {
        let seq = self.note_seq(id)?;
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
        self.conn
            .exec_cached("DELETE FROM revisions WHERE note_id = ?1", [id])?;
        self.conn.exec_cached("DELETE FROM notes_fts WHERE rowid = ?1", [seq])?;
        self.log_search_change(seq)?;
        self.mutate(EntityKind::Note, id, |w| w.delete_row(EntityKind::Note, id))?;
        crate::links::refresh(self.conn, id)
    }

    /// Protects or unprotects a note. Only the user may do this, except that an import may protect what it brings in.
    pub fn set_note_protected(&mut self, id: &str, protected: bool) -> Result<NoteSummary> {
        self.require_user_or_import_protecting(protected, if protected { "protect notes" } else { "unprotect notes" })?;
        self.note_summary(id)?;
        self.mutate(EntityKind::Note, id, |w| {
            w.conn.exec_cached(
                "UPDATE notes SET is_protected = ?2 WHERE id = ?1 AND is_protected <> ?2",
                params![id, protected],
            )?;
            Ok(())
        })?;
        self.reconcile_seal(id)?;
        self.refresh_search(id)?;
        self.note_summary(id)
    }
}

/// What [`Writer::update_note_relinking`] did to the notes that link to the renamed one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Relinked {
    /// The notes whose `[[Old title]]` links now say the new title.
    pub updated: Vec<String>,
    /// The notes that link to it but could not be changed by this actor (protected, say), with the reason.
    pub skipped: Vec<(String, String)>,
}

impl<'a> Writer<'a> {
    /// [`Writer::update_note`], and when the title changes, rewrites the `[[Old title]]` links (and embeds, with
    /// their `#heading` and `|alias`) that pointed at this note to say the new title, in the same change set. A
    /// linking note this actor may not change is left as it was and reported.
    pub fn update_note_relinking(&mut self, id: &str, update: NoteUpdate) -> Result<(Note, Relinked)> {
        let old_title: Option<String> = self
            .conn
            .row_cached("SELECT title FROM notes WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        // The links that name the note by its title (not by an alias), compared in Rust: SQLite's lower() knows
        // only ASCII.
        let linking: Vec<(String, String)> = match &old_title {
            Some(old) => {
                let mut stmt = self.conn.prepare_cached(
                    "SELECT DISTINCT source_id, target FROM note_links WHERE target_note_id = ?1 \
                     AND kind IN ('wikilink', 'embed') AND target_key = ?2 \
                     AND source_id IN (SELECT id FROM notes WHERE deleted IS NULL)",
                )?;
                let rows = stmt.query_map(params![id, crate::links::key_of(old)], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?.to_lowercase()))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            }
            None => Vec::new(),
        };
        let note = self.update_note(id, update)?;
        let mut report = Relinked::default();
        if note.summary.title.contains(['#', '|', '[', ']']) {
            // A wikilink cannot carry such a title: the links are left for the person to mend.
            for (source, _) in &linking {
                if !report.skipped.iter().any(|(s, _)| s == source) {
                    report.skipped.push((
                        source.clone(),
                        "the new title holds #, |, [ or ], which a [[link]] cannot carry".to_owned(),
                    ));
                }
            }
            return Ok((note, report));
        }
        if old_title.is_none_or(|old| old == note.summary.title) {
            return Ok((note, report));
        }
        let mut sources: Vec<&str> = linking.iter().map(|(s, _)| s.as_str()).collect();
        sources.dedup();
        for source in sources {
            let targets: Vec<&str> = linking
                .iter()
                .filter(|(s, _)| s == source)
                .map(|(_, t)| t.as_str())
                .collect();
            let body: String = self
                .conn
                .row_cached("SELECT body FROM notes WHERE id = ?1", [source], |r| r.get(0))?;
            let rewritten = relink_text(&body, &targets, &note.summary.title);
            // Links in its labels (`related: "[[Old title]]"`, or a string inside a JSON label) are its links too.
            let labels: Vec<(String, String, String)> = {
                let mut stmt = self.conn.prepare_cached(
                    "SELECT name, value, value_type FROM attributes WHERE note_id = ?1 AND kind = 'label' \
                     AND instr(value, '[[') > 0",
                )?;
                let rows = stmt.query_map([source], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            let outcome = self.attempt(|w| {
                let mut changed = false;
                if rewritten != body {
                    let change = NoteUpdate {
                        body: Some(rewritten.clone()),
                        ..NoteUpdate::default()
                    };
                    w.update_note(source, change)?;
                    changed = true;
                }
                for (name, value, value_type) in &labels {
                    if value_type == "json" {
                        let relinked = relink_json_strings(value, &targets, &note.summary.title);
                        if &relinked != value {
                            w.set_json_label(source, name, &relinked)?;
                            changed = true;
                        }
                    } else {
                        let relinked = relink_text(value, &targets, &note.summary.title);
                        if &relinked != value {
                            w.set_attribute(source, crate::AttributeKind::Label, name, &relinked)?;
                            changed = true;
                        }
                    }
                }
                Ok(changed)
            });
            match outcome {
                Ok(true) => report.updated.push(source.to_owned()),
                Ok(false) => {}
                // A note outside this handle's scope does not exist for it: not even its id is reported.
                Err(Error::NotFound(_) | Error::OutsideScope(_)) => {}
                Err(e @ (Error::Protected(_) | Error::OpenInEditor)) => {
                    report.skipped.push((source.to_owned(), e.to_string()));
                }
                Err(e) => return Err(e),
            }
        }
        Ok((note, report))
    }
}

/// `text` with its `[[links]]` and `![[embeds]]` to one of `targets` (lower-cased) saying `title` instead, each keeping
/// its folder, `#heading` and `|alias` (a pipe escaped inside a table stays escaped).
fn relink_text(text: &str, targets: &[&str], title: &str) -> String {
    let mut rewritten = text.to_owned();
    for link in crate::links::extract(text).into_iter().rev() {
        if !matches!(
            link.kind,
            crate::links::LinkKind::Wikilink | crate::links::LinkKind::Embed
        ) || !targets.contains(&link.target.to_lowercase().as_str())
        {
            continue;
        }
        let prefix = link
            .target
            .rsplit_once('/')
            .map(|(p, _)| format!("{p}/"))
            .unwrap_or_default();
        let embed = if link.kind == crate::links::LinkKind::Embed {
            "!"
        } else {
            ""
        };
        let mut new = format!("{embed}[[{prefix}{title}");
        if let Some(heading) = &link.heading {
            new.push('#');
            new.push_str(heading);
        }
        if let Some(label) = &link.label {
            let escaped = text[link.byte..link.byte + link.len].contains("\\|");
            new.push_str(if escaped { "\\|" } else { "|" });
            new.push_str(label);
        }
        new.push_str("]]");
        rewritten.replace_range(link.byte..link.byte + link.len, &new);
    }
    rewritten
}

/// JSON text with the links in each of its strings relinked as [`relink_text`] does, everything else (numbers as
/// written, the order of keys) left as it is.
fn relink_json_strings(json: &str, targets: &[&str], title: &str) -> String {
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            let next = json[i..].find('"').map_or(json.len(), |k| i + k);
            out.push_str(&json[i..next]);
            i = next;
            continue;
        }
        let mut k = i + 1;
        while k < bytes.len() && bytes[k] != b'"' {
            k += if bytes[k] == b'\\' { 2 } else { 1 };
        }
        let end = (k + 1).min(json.len());
        let token = &json[i..end];
        let relinked = serde_json::from_str::<String>(token)
            .ok()
            .filter(|s| s.contains("[["))
            .map(|s| relink_text(&s, targets, title))
            .and_then(|s| serde_json::to_string(&s).ok());
        out.push_str(relinked.as_deref().unwrap_or(token));
        i = end;
    }
    out
}
