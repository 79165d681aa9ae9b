//! Sealing and unsealing notes in the write path: the one place a protected note's content turns into ciphertext
//! and back. Every write that can change whether a note must be sealed (protecting, moving, a notebook's
//! protection, an undo) ends with [`Writer::reconcile_seal`]; writes of content to a sealed note seal it as they
//! write ([`Writer::seal_for_note`]), so its plain text is never stored.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use crate::entity::EntityKind;
use crate::error::{Error, Result};
use crate::history;
use crate::seal::crypto::NoteKey;
use crate::seal::{SealReport, Sealer, Unlocked, attachment_kind, kind, pack_attachment, unpack_attachment};
use crate::sql::Cached;

use super::Writer;

/// A change in the log as sealing rewrites it: its number, the row before (JSON), the fingerprint of the row after.
type LoggedChange = (i64, Option<Value>, Option<String>);

/// A note row's sealing state.
pub(crate) struct SealState {
    pub(crate) sealed: Option<Vec<u8>>,
    pub(crate) version: i64,
}

impl<'a> Writer<'a> {
    /// The workspace's sealer, when a passphrase is set.
    pub(crate) fn sealer(&self) -> Result<Option<Sealer>> {
        if let Some(sealer) = self.sealer.get() {
            return Ok(sealer.clone());
        }
        let sealer = crate::seal::sealer(self.conn)?;
        Ok(self.sealer.get_or_init(|| sealer).clone())
    }

    pub(crate) fn seal_state(&self, note_id: &str) -> Result<SealState> {
        self.conn
            .row_cached("SELECT sealed, version FROM notes WHERE id = ?1", [note_id], |r| {
                Ok(SealState {
                    sealed: r.get(0)?,
                    version: r.get(1)?,
                })
            })
            .optional()?
            .ok_or(Error::NotFound(crate::error::Missing::Note))
    }

    /// The key to seal new content of a sealed note with: its own (when this writer holds the unlocked key, so that
    /// its pieces share one), or a fresh one (anyone may seal).
    pub(crate) fn seal_for_note(&self, note_id: &str, current: Option<&[u8]>) -> Result<NoteKey> {
        let sealer = self.sealer()?.ok_or(Error::NoLock)?;
        if let Some(key) = self.key {
            if let Some(blob) = current
                && let Ok(note_key) = key.note_key(note_id, blob)
            {
                return Ok(note_key);
            }
            return key.new_note_key(note_id);
        }
        sealer.note_key(note_id)
    }

    /// The unlocked key, or [`Error::Locked`] naming the note (the reader's rule, by the note's id).
    pub(crate) fn key_for(&self, note_id: &str) -> Result<&'a Unlocked> {
        match self.key {
            Some(key) => Ok(key),
            None => self.key_for_note(&self.note_summary(note_id)?),
        }
    }

    /// Whether a note must be sealed now: a passphrase is set and the note is protected.
    pub(crate) fn must_seal(&self, note_id: &str) -> Result<bool> {
        Ok(self.sealer()?.is_some() && self.note_is_protected(note_id)?)
    }

    /// Seals a protected note that is not (wholly) sealed, or unseals one that is no longer protected (which needs
    /// the key). An undo can put back a revision or attachment in the other state than its note: this settles it.
    pub(crate) fn reconcile_seal(&mut self, note_id: &str) -> Result<SealReport> {
        self.reconcile_seal_with(note_id, true)
    }

    /// The sealing half of [`Writer::reconcile_seal`], for sync: it holds no key, so it never unseals (what another
    /// device opened stays sealed here until someone with the key opens it).
    pub(super) fn seal_if_needed(&mut self, note_id: &str) -> Result<SealReport> {
        self.reconcile_seal_with(note_id, false)
    }

    fn reconcile_seal_with(&mut self, note_id: &str, may_unseal: bool) -> Result<SealReport> {
        let must = self.must_seal(note_id)?;
        let (plain, sealed): (bool, bool) = self.conn.row_cached(
            "SELECT (SELECT sealed IS NULL FROM notes WHERE id = ?1) \
                 OR EXISTS (SELECT 1 FROM revisions WHERE note_id = ?1 AND sealed IS NULL) \
                 OR EXISTS (SELECT 1 FROM attachments WHERE note_id = ?1 AND sealed IS NULL) \
                 OR EXISTS (SELECT 1 FROM sync_conflicts WHERE note_id = ?1 AND sealed IS NULL), \
             (SELECT sealed IS NOT NULL FROM notes WHERE id = ?1) \
                 OR EXISTS (SELECT 1 FROM revisions WHERE note_id = ?1 AND sealed IS NOT NULL) \
                 OR EXISTS (SELECT 1 FROM attachments WHERE note_id = ?1 AND sealed IS NOT NULL) \
                 OR EXISTS (SELECT 1 FROM sync_conflicts WHERE note_id = ?1 AND sealed IS NOT NULL)",
            [note_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if must && (plain || self.has_plain_snapshots(note_id)?) {
            self.seal_note(note_id)
        } else if may_unseal && !must && sealed {
            let key = self.key_for(note_id)?;
            self.unseal_note(note_id, key)?;
            Ok(SealReport::default())
        } else {
            Ok(SealReport::default())
        }
    }

    /// [`Writer::reconcile_seal`] for every note in a notebook and the notebooks inside it.
    pub(crate) fn reconcile_seal_in_notebook(&mut self, notebook_id: &str) -> Result<SealReport> {
        let mut report = SealReport::default();
        for sub in self.notebook_subtree(notebook_id)? {
            for note in self.string_column("SELECT id FROM notes WHERE notebook_id = ?1", &sub)? {
                report.add(&self.reconcile_seal(&note)?);
            }
        }
        Ok(report)
    }

    /// Seals every protected note that is not sealed yet (setting the passphrase does this).
    pub(crate) fn seal_all_protected(&mut self) -> Result<SealReport> {
        let mut report = SealReport::default();
        let notes: Vec<String> = {
            let protected = self.protected_notebooks()?;
            let mut stmt = self
                .conn
                .prepare("SELECT id, is_protected, notebook_id FROM notes WHERE sealed IS NULL")?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?, r.get::<_, String>(2)?))
            })?;
            let mut notes = Vec::new();
            for row in rows {
                let (id, own, notebook) = row?;
                if own || protected.contains(&notebook) {
                    notes.push(id);
                }
            }
            notes
        };
        for note in notes {
            report.add(&self.seal_note(&note)?);
        }
        // Notes deleted for good while protected live on in the change log (to undo the delete): their snapshots
        // are sealed too.
        let gone: Vec<String> = {
            let protected = self.protected_notebooks()?;
            let mut stmt = self.conn.prepare(
                "SELECT c.entity_id, json_extract(c.before, '$.is_protected'), json_extract(c.before, '$.notebook_id') \
                 FROM changes c WHERE c.entity = 'note' AND c.before IS NOT NULL \
                 AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.id = c.entity_id)",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<bool>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?;
            let mut gone = std::collections::BTreeSet::new();
            for row in rows {
                let (id, own, notebook) = row?;
                if own == Some(true) || notebook.is_some_and(|nb| protected.contains(&nb)) {
                    gone.insert(id);
                }
            }
            gone.into_iter().collect()
        };
        for note in gone {
            let key = self.seal_for_note(&note, None)?;
            let before_rows = self.current_rows(&note)?;
            report.snapshots += self.seal_snapshots(&note, &key, &before_rows)?;
            self.sealed_notes.borrow_mut().insert(note);
        }
        Ok(report)
    }

    /// Seals everything of one note: its body, revisions, attachments and the snapshots of them in the change log;
    /// removes the chats about it and its vectors. Not a change of its own in the log: the note says the same.
    fn seal_note(&mut self, note_id: &str) -> Result<SealReport> {
        let mut report = SealReport {
            notes: 1,
            ..SealReport::default()
        };
        let state = self.seal_state(note_id)?;
        // One key for every piece sealed now; the body's own when it is sealed already and this writer can open it.
        let key = self.seal_for_note(note_id, state.sealed.as_deref())?;
        let fresh = self.created_in_this_change_set(note_id)?;
        let before_rows = self.current_rows(note_id)?;

        let mut plain_hash = [0u8; 32];
        if state.sealed.is_none() {
            let body: String = self
                .conn
                .row_cached("SELECT body FROM notes WHERE id = ?1", [note_id], |r| r.get(0))?;
            plain_hash = crate::replica::body_hash(&body);
            let version = state.version + 1;
            let blob = key.seal(note_id, kind::BODY, version, body.as_bytes())?;
            self.conn.exec_cached(
                "UPDATE notes SET body = '', sealed = ?2, version = ?3 WHERE id = ?1",
                params![note_id, blob, version],
            )?;
        } else {
            report.notes = 0;
        }

        let revisions: Vec<(i64, String)> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT seq, body FROM revisions WHERE note_id = ?1 AND sealed IS NULL")?;
            stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (seq, body) in revisions {
            let blob = key.seal(note_id, kind::REVISION, seq, body.as_bytes())?;
            self.conn.exec_cached(
                "UPDATE revisions SET body = '', sealed = ?2 WHERE seq = ?1",
                params![seq, blob],
            )?;
            report.revisions += 1;
        }

        let plain_attachments: Vec<(String, Vec<u8>, Option<String>)> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id, data, text FROM attachments WHERE note_id = ?1 AND sealed IS NULL")?;
            stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (id, data, text) in plain_attachments {
            let packed = pack_attachment(&data, text.as_deref());
            let blob = key.seal(note_id, &attachment_kind(&id), 0, &packed)?;
            self.conn.exec_cached(
                "UPDATE attachments SET data = X'', text = NULL, sealed = ?2 WHERE id = ?1",
                params![id, blob],
            )?;
            report.attachments += 1;
        }

        report.snapshots += self.seal_snapshots(note_id, &key, &before_rows)?;

        report.chats_removed += self.conn.execute("DELETE FROM chats WHERE note_id = ?1", [note_id])? as u64;
        // An import's record of the note holds hashes of its text (to tell a changed source on re-import): a short
        // text could be guessed from them. An import never changes a protected note anyway.
        self.conn.exec_cached(
            "UPDATE import_sources SET note_hash = 'sealed', source_hash = 'sealed' WHERE note_id = ?1",
            [note_id],
        )?;
        // The index of semantic_chunks starts with the embedder: this is the one delete by note alone, and rare.
        self.conn
            .exec_cached("DELETE FROM semantic_chunks WHERE note_id = ?1", [note_id])?;
        // A protected note's full-text entry holds its title only already; its links came from the text.
        self.refresh_links(note_id)?;
        // Sync's merge document of the note holds its plain history: it starts again now, empty and one generation
        // on (sync's next fold fills it with the sealed note, and the other devices replace theirs), instead of
        // keeping that history until the next sync, or for good after `sync leave`.
        // What the other devices need to keep their edits the sealed text lacks: the document's version, when the
        // text sealed is the one it held (see migration 016).
        self.conn.exec_cached(
            "UPDATE sync_docs SET doc = X'', exported = X'', generation = generation + 1, \
             sealed_from = CASE WHEN base_hash = ?2 THEN base_version END, sealed_seen = base_version, \
             base_version = NULL, base_hash = NULL \
             WHERE id = ?1 AND doc <> X''",
            params![note_id, plain_hash.as_slice()],
        )?;
        // A conflict sync recorded in it holds lines of its plain text: sealed too, to be chosen when it opens.
        self.seal_conflicts(note_id, &key)?;
        self.sealed_something.set(true);
        self.sealed_notes.borrow_mut().insert(note_id.to_owned());
        if !fresh {
            // Its words were in the full-text indexes: they are cleared out before this write commits.
            self.purge_words.set(true);
        }
        Ok(report)
    }

    /// Opens everything of one note back into plain columns (the change log's snapshots stay sealed: they open
    /// with the key when an undo puts one back).
    fn unseal_note(&mut self, note_id: &str, key: &Unlocked) -> Result<()> {
        let before_rows = self.current_rows(note_id)?;
        let state = self.seal_state(note_id)?;
        if let Some(blob) = &state.sealed {
            let body = key.open_text(note_id, kind::BODY, state.version, blob, "its body")?;
            self.conn.exec_cached(
                "UPDATE notes SET body = ?2, sealed = NULL WHERE id = ?1",
                params![note_id, body],
            )?;
        }
        let revisions: Vec<(i64, Vec<u8>)> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT seq, sealed FROM revisions WHERE note_id = ?1 AND sealed IS NOT NULL")?;
            stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (seq, blob) in revisions {
            let body = key.open_text(note_id, kind::REVISION, seq, &blob, &format!("revision {seq}"))?;
            self.conn.exec_cached(
                "UPDATE revisions SET body = ?2, sealed = NULL WHERE seq = ?1",
                params![seq, body],
            )?;
        }
        let sealed_attachments: Vec<(String, String, Vec<u8>)> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT id, title, sealed FROM attachments WHERE note_id = ?1 AND sealed IS NOT NULL",
            )?;
            stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (id, title, blob) in sealed_attachments {
            let what = format!("attachment {title}");
            let packed = key.open(note_id, &attachment_kind(&id), 0, &blob, &what)?;
            let (data, text) = unpack_attachment(&packed).ok_or_else(|| Error::SealBroken {
                note_id: note_id.to_owned(),
                what: what.clone(),
            })?;
            self.conn.exec_cached(
                "UPDATE attachments SET data = ?2, text = ?3, sealed = NULL WHERE id = ?1",
                params![id, data, text],
            )?;
        }
        self.open_conflicts(note_id, key)?;
        self.rehash_last_changes(&before_rows)?;
        self.refresh_search(note_id)
    }

    /// Whether the change log holds a snapshot of the note or of one of its attachments with plain content (an undo
    /// logs the row it replaces: the plain one when it puts a sealed row back).
    fn has_plain_snapshots(&self, note_id: &str) -> Result<bool> {
        let plain_note: bool = self.conn.row_cached(
            "SELECT EXISTS (SELECT 1 FROM changes WHERE entity = 'note' AND entity_id = ?1 AND before IS NOT NULL \
             AND json_extract(before, '$.sealed') IS NULL AND json_extract(before, '$.body') <> '')",
            [note_id],
            |r| r.get(0),
        )?;
        if plain_note {
            return Ok(true);
        }
        for attachment in self.attachment_ids_ever(note_id)? {
            let plain: bool = self.conn.row_cached(
                "SELECT EXISTS (SELECT 1 FROM changes WHERE entity = 'attachment' AND entity_id = ?1 \
                 AND before IS NOT NULL AND json_extract(before, '$.sealed') IS NULL)",
                [&attachment],
                |r| r.get(0),
            )?;
            if plain {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every attachment the note has or had (a deleted one lives on in the change log).
    fn attachment_ids_ever(&self, note_id: &str) -> Result<Vec<String>> {
        let mut ids: Vec<String> = self.string_column("SELECT id FROM attachments WHERE note_id = ?1", note_id)?;
        let mut owners = self.attachment_owners.borrow_mut();
        if owners.is_none() {
            // One pass over the change log for a whole sealing write, not one per note.
            let mut map: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
            let mut stmt = self.conn.prepare_cached(
                "SELECT DISTINCT entity_id, json_extract(before, '$.note_id') FROM changes \
                 WHERE entity = 'attachment' AND before IS NOT NULL",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))?;
            for row in rows {
                if let (id, Some(owner)) = row? {
                    map.entry(owner).or_default().push(id);
                }
            }
            *owners = Some(map);
        }
        for id in owners.as_ref().and_then(|m| m.get(note_id)).into_iter().flatten() {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        Ok(ids)
    }

    pub(crate) fn forget_attachment_owners(&self) {
        self.attachment_owners.borrow_mut().take();
    }

    /// Before a write that sealed notes commits: their words leave the full-text indexes. FTS5 keeps a deleted
    /// entry's words in older segments until they are merged, so the index is merged whole (`optimize`); the word
    /// index beside the file gets a new key, so it is built again (see `Workspace::after_sealing`).
    pub(crate) fn purge_sealed_words(&self) -> Result<()> {
        if !self.purge_words.replace(false) {
            return Ok(());
        }
        self.conn
            .execute("INSERT INTO notes_fts (notes_fts) VALUES ('optimize')", [])?;
        self.conn.exec_cached(
            "UPDATE search_state SET key = lower(hex(randomblob(16))) WHERE id = 1",
            [],
        )?;
        Ok(())
    }

    /// Chats that quoted a note sealed by this write are removed before it commits: the chat about it, and any
    /// other whose messages name it (a tool call that wrote it, a result that showed it; the model's replies and a
    /// chat's summary may quote it anywhere in such a chat). Chats keep no copy of a sealed note. One pass over the
    /// messages; returns how many chats went.
    pub(crate) fn remove_chats_about_sealed(&self) -> Result<u64> {
        let sealed = std::mem::take(&mut *self.sealed_notes.borrow_mut());
        if sealed.is_empty() {
            return Ok(0);
        }
        let chats: std::collections::BTreeSet<String> = {
            let mut stmt = self.conn.prepare_cached("SELECT chat_id, content FROM chat_messages")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            let mut chats = std::collections::BTreeSet::new();
            for row in rows {
                let (chat, content) = row?;
                if mentions_any(&content, &sealed) {
                    chats.insert(chat);
                }
            }
            chats
        };
        for chat in &chats {
            self.conn.exec_cached("DELETE FROM chats WHERE id = ?1", [chat])?;
        }
        Ok(chats.len() as u64)
    }

    /// The current rows of the note and every attachment it has or had, as the change log snapshots them.
    fn current_rows(&self, note_id: &str) -> Result<Vec<(EntityKind, String, Option<Value>)>> {
        let attachments = self.attachment_ids_ever(note_id)?;
        let mut rows = vec![(
            EntityKind::Note,
            note_id.to_owned(),
            history::snapshot(self.conn, EntityKind::Note, note_id)?,
        )];
        for id in &attachments {
            rows.push((
                EntityKind::Attachment,
                id.clone(),
                history::snapshot(self.conn, EntityKind::Attachment, id)?,
            ));
        }
        Ok(rows)
    }

    /// Seals the plain snapshots of the note and its attachments in the change log, and keeps each change's
    /// fingerprint of the row after it true to the sealed rows (so undo still tells a later change from none).
    fn seal_snapshots(
        &self,
        note_id: &str,
        key: &NoteKey,
        before_rows: &[(EntityKind, String, Option<Value>)],
    ) -> Result<u64> {
        let mut sealed = 0;
        for (kind, id, old_current) in before_rows {
            let changes = self.changes_of(*kind, id)?;
            let new_current = history::snapshot(self.conn, *kind, id)?;
            let mut new_befores = Vec::with_capacity(changes.len());
            for (_, before, _) in &changes {
                let new = before
                    .as_ref()
                    .map(|row| seal_row(*kind, id, note_id, key, row))
                    .transpose()?;
                if let (Some(old), Some(new)) = (before, &new)
                    && old != new
                {
                    sealed += 1;
                }
                new_befores.push(new);
            }
            self.rewrite_changes(&changes, &new_befores, old_current.as_ref(), new_current.as_ref())?;
        }
        Ok(sealed)
    }

    /// After unsealing: the last change of each entity now describes a row that reads differently.
    pub(super) fn rehash_last_changes(&self, before_rows: &[(EntityKind, String, Option<Value>)]) -> Result<()> {
        for (kind, id, old_current) in before_rows {
            let changes = self.changes_of(*kind, id)?;
            let new_current = history::snapshot(self.conn, *kind, id)?;
            let befores: Vec<Option<Value>> = changes.iter().map(|(_, b, _)| b.clone()).collect();
            self.rewrite_changes(&changes, &befores, old_current.as_ref(), new_current.as_ref())?;
        }
        Ok(())
    }

    fn changes_of(&self, kind: EntityKind, id: &str) -> Result<Vec<LoggedChange>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, before, after_hash FROM changes WHERE entity = ?1 AND entity_id = ?2 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![kind.as_str(), id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, before, after) = row?;
            let before = before
                .map(|text| serde_json::from_str(&text))
                .transpose()
                .map_err(|e| Error::invalid(format!("change {seq} holds a snapshot that is not JSON: {e}")))?;
            out.push((seq, before, after));
        }
        Ok(out)
    }

    /// Writes new snapshots (`befores`, one per change) and the fingerprints that follow from them: a change's row
    /// after is the next change's row before, or the current row for the last one. A fingerprint that did not
    /// match the old rows (something changed unlogged) is left as it was.
    fn rewrite_changes(
        &self,
        changes: &[LoggedChange],
        befores: &[Option<Value>],
        old_current: Option<&Value>,
        new_current: Option<&Value>,
    ) -> Result<()> {
        for (i, (seq, old_before, after_hash)) in changes.iter().enumerate() {
            let (old_after, new_after) = match changes.get(i + 1) {
                Some((_, next_old, _)) => (next_old.as_ref(), befores[i + 1].as_ref()),
                None => (old_current, new_current),
            };
            let new_hash = match (after_hash, old_after, new_after) {
                (Some(hash), Some(old), Some(new)) if *hash == history::fingerprint(old) => {
                    Some(history::fingerprint(new))
                }
                _ => after_hash.clone(),
            };
            if befores[i] != *old_before || new_hash != *after_hash {
                self.conn.exec_cached(
                    "UPDATE changes SET before = ?2, after_hash = ?3 WHERE seq = ?1",
                    params![seq, befores[i].as_ref().map(Value::to_string), new_hash],
                )?;
            }
        }
        Ok(())
    }
}

/// Whether `text` holds one of the ids (32 hex digits, as quire makes them) as a whole word.
fn mentions_any(text: &str, ids: &std::collections::BTreeSet<String>) -> bool {
    text.split(|c: char| !c.is_ascii_hexdigit())
        .any(|word| word.len() == 32 && ids.contains(word))
}

/// A snapshot of a note or attachment row with its plain content sealed (unchanged when it holds none).
fn seal_row(kind: EntityKind, id: &str, note_id: &str, key: &NoteKey, row: &Value) -> Result<Value> {
    let mut row = row.clone();
    let Some(object) = row.as_object_mut() else {
        return Ok(row);
    };
    if object.get("sealed").is_some_and(|v| !v.is_null()) {
        return Ok(row);
    }
    match kind {
        EntityKind::Note => {
            let body = object
                .get("body")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let version = object.get("version").and_then(Value::as_i64).unwrap_or(0);
            let blob = key.seal(note_id, kind::BODY, version, body.as_bytes())?;
            object.insert("body".into(), Value::String(String::new()));
            object.insert("sealed".into(), history::blob_json(&blob));
        }
        EntityKind::Attachment => {
            let data = object.get("data").and_then(history::blob_from_json).unwrap_or_default();
            let text = object.get("text").and_then(Value::as_str).map(str::to_owned);
            let packed = pack_attachment(&data, text.as_deref());
            let blob = key.seal(note_id, &attachment_kind(id), 0, &packed)?;
            object.insert("data".into(), history::blob_json(&[]));
            object.insert("text".into(), Value::Null);
            object.insert("sealed".into(), history::blob_json(&blob));
        }
        _ => {}
    }
    Ok(row)
}
