//! What sync keeps in the workspace (issue 33; the engine is the `quire-sync` crate): its settings, one merge
//! document per note and one for the notebook tree, which of them changed since they were last folded, the
//! other devices, and the batches not yet uploaded. Schema: `migrations/013_sync.sql`.
//!
//! Core does not know what a merge document is (it stores bytes); it owns the rows: [`Reader::synced_note`]
//! reads a note exactly as it is stored (a sealed body stays ciphertext) and [`Writer::apply_synced_note`]
//! writes another device's version of it through the write path, as [`Actor::Sync`]. Triggers mark a document
//! dirty in the same transaction as any write of its rows, by any actor, so no write path can forget to.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{OptionalExtension, params};

use crate::entity::{Actor, ROOT_NOTEBOOK_ID};
use crate::error::{Error, Result};
use crate::read::Reader;
use crate::sql::Cached;
use crate::write::Writer;

/// The id of the notebook tree's document in [`Reader::sync_dirty`] and [`Reader::sync_doc`].
pub const TREE_DOC: &str = "";

/// What starts the document id of an attachment (`a:` and its id); a note's document id is the note's id.
pub const ATTACHMENT_DOC: &str = "a:";

/// An attachment's row as sync carries it. A sealed attachment's `data` is empty, its `text` `None`, and its bytes
/// and text are in `sealed` (bound to the note and the attachment).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SyncedAttachment {
    /// Its id.
    pub id: String,
    /// The note it belongs to.
    pub note_id: String,
    /// Its title (the file name).
    pub title: String,
    /// Its media type.
    pub mime: String,
    /// Its size in bytes (of the plain file, sealed or not).
    pub size: i64,
    /// The file ("" when sealed).
    pub data: Vec<u8>,
    /// Text extracted from it, if any.
    pub text: Option<String>,
    /// The sealed file and text, if sealed.
    pub sealed: Option<Vec<u8>>,
    /// When it was added (milliseconds).
    pub created: i64,
}

/// A note's rows as sync carries them. A sealed note's `body` is "" and its text is the ciphertext in `sealed`,
/// bound to `version`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SyncedNote {
    /// The note's id.
    pub id: String,
    /// Its notebook.
    pub notebook_id: String,
    /// Its title.
    pub title: String,
    /// Its Markdown body ("" when sealed).
    pub body: String,
    /// Whether it is a to-do.
    pub is_todo: bool,
    /// When the to-do was completed (milliseconds).
    pub todo_completed: Option<i64>,
    /// When it went to the trash (milliseconds).
    pub deleted: Option<i64>,
    /// Whether it is protected itself.
    pub is_protected: bool,
    /// When it was created (milliseconds).
    pub created: i64,
    /// When it last changed (milliseconds).
    pub updated: i64,
    /// Its tags' names.
    pub tags: BTreeSet<String>,
    /// Its labels by name.
    pub labels: BTreeMap<String, SyncedLabel>,
    /// The sealed body, if it is sealed.
    pub sealed: Option<Vec<u8>>,
    /// The version the sealed body is bound to.
    pub version: i64,
}

/// A label's value as sync carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncedLabel {
    /// The value (JSON text when `json`).
    pub value: String,
    /// Whether the value is JSON.
    pub json: bool,
}

/// A notebook's row as sync carries it (never the root notebook).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SyncedNotebook {
    /// Its id.
    pub id: String,
    /// The notebook it is in; `None` at the top (in the root notebook).
    pub parent_id: Option<String>,
    /// Its title.
    pub title: String,
    /// Whether it is protected itself.
    pub is_protected: bool,
}

/// A merge document as sync stored it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncDoc {
    /// Bumped each time the note's document starts again (when it is sealed).
    pub generation: i64,
    /// The document's bytes.
    pub doc: Vec<u8>,
    /// The document's version already written into a batch.
    pub exported: Vec<u8>,
}

/// Another device seen on the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncDevice {
    /// Its id (hex).
    pub id: String,
    /// The name it gave itself.
    pub name: String,
    /// The last of its batches applied here, in order (0: none).
    pub applied: u64,
    /// The last of this device's batches it had applied, as its batches and snapshots say (0: none known).
    pub acked: u64,
    /// When a batch of it was last applied or its files last listed here (milliseconds).
    pub seen: i64,
    /// When it was forgotten here (its batches are no longer waited for), if it was.
    pub forgotten: Option<i64>,
}

impl Reader<'_> {
    /// A sync setting, if it is set.
    pub fn sync_config(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.require_sync("use sync's state")?;
        Ok(self
            .conn
            .row_cached("SELECT value FROM sync_config WHERE name = ?1", [name], |r| r.get(0))
            .optional()?)
    }

    /// Every sync setting, by name.
    pub fn sync_configs(&self) -> Result<BTreeMap<String, Vec<u8>>> {
        self.require_sync("use sync's state")?;
        let mut stmt = self.conn.prepare_cached("SELECT name, value FROM sync_config")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The documents changed since they were last folded ([`TREE_DOC`] for the notebook tree), in id order.
    pub fn sync_dirty(&self) -> Result<Vec<String>> {
        self.require_sync("use sync's state")?;
        let mut stmt = self.conn.prepare_cached("SELECT id FROM sync_dirty ORDER BY id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether one document is marked changed.
    pub fn is_sync_dirty(&self, id: &str) -> Result<bool> {
        self.require_sync("use sync's state")?;
        Ok(self
            .conn
            .row_cached("SELECT EXISTS (SELECT 1 FROM sync_dirty WHERE id = ?1)", [id], |r| {
                r.get(0)
            })?)
    }

    /// A stored merge document.
    pub fn sync_doc(&self, id: &str) -> Result<Option<SyncDoc>> {
        self.require_sync("use sync's state")?;
        Ok(self
            .conn
            .row_cached(
                "SELECT generation, doc, exported FROM sync_docs WHERE id = ?1",
                [id],
                |r| {
                    Ok(SyncDoc {
                        generation: r.get(0)?,
                        doc: r.get(1)?,
                        exported: r.get(2)?,
                    })
                },
            )
            .optional()?)
    }

    /// The id of every stored merge document (notes, deleted ones included; the tree; attachments), sorted.
    pub fn sync_doc_ids(&self) -> Result<Vec<String>> {
        self.require_sync("use sync's state")?;
        let mut stmt = self.conn.prepare_cached("SELECT id FROM sync_docs ORDER BY id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many merge documents there are and their total size in bytes.
    pub fn sync_docs_size(&self) -> Result<(u64, u64)> {
        self.require_sync("use sync's state")?;
        Ok(self.conn.row_cached(
            "SELECT count(*), coalesce(sum(length(doc) + length(exported)), 0) FROM sync_docs",
            [],
            |r| Ok((r.get::<_, i64>(0)?.max(0) as u64, r.get::<_, i64>(1)?.max(0) as u64)),
        )?)
    }

    /// The version of a note's document its sealed text was made from, when it was sealed here from the body the
    /// document held (see [`Writer::set_sync_doc_base`]).
    pub fn sync_sealed_from(&self, id: &str) -> Result<Option<Vec<u8>>> {
        self.require_sync("use sync's state")?;
        Ok(self
            .conn
            .row_cached("SELECT sealed_from FROM sync_docs WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .flatten())
    }

    /// The version of a note's document when it was sealed here, whatever text was sealed: the operations the
    /// sealing saw (see migration 023).
    pub fn sync_sealed_seen(&self, id: &str) -> Result<Option<Vec<u8>>> {
        self.require_sync("use sync's state")?;
        Ok(self
            .conn
            .row_cached("SELECT sealed_seen FROM sync_docs WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .flatten())
    }

    /// What the sealings of a note's earlier documents saw of them, as quire-sync encoded it (see migration 024).
    pub fn sync_lineage(&self, id: &str) -> Result<Option<Vec<u8>>> {
        self.require_sync("use sync's state")?;
        Ok(self
            .conn
            .row_cached("SELECT lineage FROM sync_docs WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .flatten())
    }

    /// The other devices seen, by id.
    pub fn sync_devices(&self) -> Result<Vec<SyncDevice>> {
        self.require_sync("use sync's state")?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT device, name, applied, seen, forgotten, acked FROM sync_devices ORDER BY device")?;
        let rows = stmt.query_map([], |r| {
            Ok(SyncDevice {
                id: r.get(0)?,
                name: r.get(1)?,
                applied: r.get::<_, i64>(2)?.max(0) as u64,
                seen: r.get(3)?,
                forgotten: r.get(4)?,
                acked: r.get::<_, i64>(5)?.max(0) as u64,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many batches wait in the outbox.
    pub fn sync_outbox_count(&self) -> Result<usize> {
        self.require_sync("use sync's state")?;
        let n: i64 = self
            .conn
            .row_cached("SELECT count(*) FROM sync_outbox", [], |r| r.get(0))?;
        Ok(n.max(0) as usize)
    }

    /// The batches made here and not yet known to be on the target, by number.
    pub fn sync_outbox(&self) -> Result<Vec<(u64, Vec<u8>)>> {
        self.require_sync("use sync's state")?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq, bytes FROM sync_outbox ORDER BY seq")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?.max(0) as u64, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A note's rows exactly as stored (a sealed body as ciphertext), for sync; `None` if there is no such note.
    /// Only sync reads this way: it carries protected notes too.
    pub fn synced_note(&self, id: &str) -> Result<Option<SyncedNote>> {
        self.require_sync("read notes for sync")?;
        let row = self
            .conn
            .row_cached(
                "SELECT notebook_id, title, body, is_todo, todo_completed, deleted, is_protected, created, updated, \
                 sealed, version FROM notes WHERE id = ?1",
                [id],
                |r| {
                    Ok(SyncedNote {
                        id: id.to_owned(),
                        notebook_id: r.get(0)?,
                        title: r.get(1)?,
                        body: r.get(2)?,
                        is_todo: r.get(3)?,
                        todo_completed: r.get(4)?,
                        deleted: r.get(5)?,
                        is_protected: r.get(6)?,
                        created: r.get(7)?,
                        updated: r.get(8)?,
                        sealed: r.get(9)?,
                        version: r.get(10)?,
                        ..SyncedNote::default()
                    })
                },
            )
            .optional()?;
        let Some(mut note) = row else {
            return Ok(None);
        };
        {
            let mut stmt = self.conn.prepare_cached(
                "SELECT t.name FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = ?1",
            )?;
            let rows = stmt.query_map([id], |r| r.get::<_, String>(0))?;
            note.tags = rows.collect::<rusqlite::Result<_>>()?;
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, value, value_type FROM attributes WHERE note_id = ?1 AND kind = 'label'")?;
        let rows = stmt.query_map([id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                SyncedLabel {
                    value: r.get(1)?,
                    json: r.get::<_, String>(2)? == "json",
                },
            ))
        })?;
        note.labels = rows.collect::<rusqlite::Result<_>>()?;
        Ok(Some(note))
    }

    /// An attachment's row exactly as stored (sealed bytes as ciphertext), for sync; `None` if there is none.
    pub fn synced_attachment(&self, id: &str) -> Result<Option<SyncedAttachment>> {
        self.require_sync("read attachments for sync")?;
        Ok(self
            .conn
            .row_cached(
                "SELECT note_id, title, mime, size, data, text, sealed, created FROM attachments WHERE id = ?1",
                [id],
                |r| {
                    Ok(SyncedAttachment {
                        id: id.to_owned(),
                        note_id: r.get(0)?,
                        title: r.get(1)?,
                        mime: r.get(2)?,
                        size: r.get(3)?,
                        data: r.get(4)?,
                        text: r.get(5)?,
                        sealed: r.get(6)?,
                        created: r.get(7)?,
                    })
                },
            )
            .optional()?)
    }

    /// Every notebook but the root, in id order, as sync carries them.
    pub fn synced_notebooks(&self) -> Result<Vec<SyncedNotebook>> {
        self.require_sync("read notebooks for sync")?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, parent_id, title, is_protected FROM notebooks WHERE id <> ?1 ORDER BY id")?;
        let rows = stmt.query_map([ROOT_NOTEBOOK_ID], |r| {
            let parent: Option<String> = r.get(1)?;
            Ok(SyncedNotebook {
                id: r.get(0)?,
                parent_id: parent.filter(|p| p != ROOT_NOTEBOOK_ID),
                title: r.get(2)?,
                is_protected: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The ids of every note (protected ones too), for sync.
    pub fn all_note_ids(&self) -> Result<Vec<String>> {
        self.require_sync("use sync's state")?;
        let mut stmt = self.conn.prepare_cached("SELECT id FROM notes ORDER BY id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub(crate) fn require_sync(&self, what: &'static str) -> Result<()> {
        match self.actor {
            Actor::Sync { .. } => Ok(()),
            _ => Err(Error::invalid(format!("Only sync can {what}."))),
        }
    }
}

/// The hash of a body sync keeps beside a note's document (SHA-256), to tell at sealing whether the body sealed is
/// the one the document held.
pub fn body_hash(body: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(body.as_bytes()).into()
}

impl Writer<'_> {
    /// Records the version a note's document was stored at and the hash of the body it held then ([`body_hash`]).
    pub fn set_sync_doc_base(&mut self, id: &str, version: &[u8], hash: &[u8; 32]) -> Result<()> {
        self.require_sync("store sync documents")?;
        self.conn.exec_cached(
            "UPDATE sync_docs SET base_version = ?2, base_hash = ?3 WHERE id = ?1",
            params![id, version, hash.as_slice()],
        )?;
        Ok(())
    }

    /// Records what the sealings of a note's earlier documents saw of them ([`Reader::sync_lineage`]); sealing the
    /// note leaves it, for the document that starts then.
    pub fn set_sync_lineage(&mut self, id: &str, lineage: &[u8]) -> Result<()> {
        self.require_sync("store sync documents")?;
        self.conn
            .exec_cached("UPDATE sync_docs SET lineage = ?2 WHERE id = ?1", params![id, lineage])?;
        Ok(())
    }

    /// Sets a sync setting. Setting `device` turns on the triggers that mark changed documents.
    pub fn set_sync_config(&mut self, name: &str, value: &[u8]) -> Result<()> {
        self.require_sync("change the sync settings")?;
        self.conn.exec_cached(
            "INSERT INTO sync_config (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = ?2",
            params![name, value],
        )?;
        Ok(())
    }

    /// Stops syncing: removes the settings, the devices, the outbox and the changed marks. Notes are not touched,
    /// and the merge documents stay: joining again merges what changed here meanwhile with what changed elsewhere
    /// from the state both last shared, instead of one replacing the other. A sealed note's document is emptied
    /// (its history may hold the note's plain text from before it was sealed); joining again sends its sealed state
    /// afresh, as one value merged like a concurrent edit.
    pub fn forget_sync(&mut self) -> Result<()> {
        self.require_sync("stop syncing")?;
        for table in ["sync_config", "sync_dirty", "sync_devices", "sync_outbox"] {
            self.conn.execute(&format!("DELETE FROM {table}"), [])?;
        }
        self.conn.execute(
            "UPDATE sync_docs SET doc = X'', exported = X'' \
             WHERE id IN (SELECT id FROM notes WHERE sealed IS NOT NULL)",
            [],
        )?;
        Ok(())
    }

    /// Marks every merge document as sent to no target yet (a new target, or one that may have lost files): the next
    /// fold sends all their operations. Attachments' marks are of their content and stay.
    pub fn reset_sync_exports(&mut self) -> Result<()> {
        self.require_sync("reset sync's documents")?;
        self.conn
            .execute("UPDATE sync_docs SET exported = X'' WHERE id NOT LIKE 'a:%'", [])?;
        Ok(())
    }

    /// Marks one document changed.
    pub fn mark_sync_dirty(&mut self, id: &str) -> Result<()> {
        self.require_sync("use sync's state")?;
        self.conn
            .exec_cached("INSERT OR IGNORE INTO sync_dirty (id) VALUES (?1)", [id])?;
        Ok(())
    }

    /// Marks every note, attachment and the notebook tree changed (a first sync folds them all).
    pub fn mark_all_sync_dirty(&mut self) -> Result<()> {
        self.require_sync("mark notes for sync")?;
        self.conn
            .execute("INSERT OR IGNORE INTO sync_dirty (id) SELECT id FROM notes", [])?;
        self.conn.execute(
            "INSERT OR IGNORE INTO sync_dirty (id) SELECT 'a:' || id FROM attachments",
            [],
        )?;
        self.mark_sync_dirty(TREE_DOC)
    }

    /// Clears one document's changed mark.
    pub fn clear_sync_dirty(&mut self, id: &str) -> Result<()> {
        self.require_sync("use sync's state")?;
        self.conn.exec_cached("DELETE FROM sync_dirty WHERE id = ?1", [id])?;
        Ok(())
    }

    /// Stores a merge document.
    pub fn save_sync_doc(&mut self, id: &str, doc: &SyncDoc) -> Result<()> {
        self.require_sync("store sync documents")?;
        self.conn.exec_cached(
            "INSERT INTO sync_docs (id, generation, doc, exported) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (id) DO UPDATE SET generation = ?2, doc = ?3, exported = ?4",
            params![id, doc.generation, doc.doc, doc.exported],
        )?;
        Ok(())
    }

    /// Records another device (or what changed about it).
    pub fn put_sync_device(&mut self, device: &SyncDevice) -> Result<()> {
        self.require_sync("record devices")?;
        self.conn.exec_cached(
            "INSERT INTO sync_devices (device, name, applied, seen, forgotten, acked) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (device) DO UPDATE SET name = ?2, applied = ?3, seen = ?4, forgotten = ?5, acked = ?6",
            params![
                device.id,
                device.name,
                device.applied as i64,
                device.seen,
                device.forgotten,
                device.acked as i64
            ],
        )?;
        Ok(())
    }

    /// Keeps a batch to upload.
    pub fn push_sync_outbox(&mut self, seq: u64, bytes: &[u8]) -> Result<()> {
        self.require_sync("queue batches")?;
        self.conn.exec_cached(
            "INSERT INTO sync_outbox (seq, bytes) VALUES (?1, ?2)",
            params![seq as i64, bytes],
        )?;
        Ok(())
    }

    /// Replaces a batch in the outbox by another under the same number (sync drops what a note sealed since it was
    /// made said in plain).
    pub fn replace_sync_outbox(&mut self, seq: u64, bytes: &[u8]) -> Result<()> {
        self.require_sync("queue batches")?;
        self.conn.exec_cached(
            "UPDATE sync_outbox SET bytes = ?2 WHERE seq = ?1",
            params![seq as i64, bytes],
        )?;
        Ok(())
    }

    /// Drops an uploaded batch from the outbox.
    pub fn remove_sync_outbox(&mut self, seq: u64) -> Result<()> {
        self.require_sync("use sync's state")?;
        self.conn
            .exec_cached("DELETE FROM sync_outbox WHERE seq = ?1", [seq as i64])?;
        Ok(())
    }
}
