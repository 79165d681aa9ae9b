//! Places where another device changed the same lines of a note as this one, at the same time (issue 46). Sync
//! keeps both versions in the note's body, whole, one after the other, and records here which they are, so that the
//! person is told and chooses. Schema: `migrations/016_sync_conflicts.sql`.
//!
//! A row holds note text in plain: sealing the note deletes its rows (`write/seal.rs`), and deleting the note does.

use rusqlite::{OptionalExtension, params};

use crate::error::Result;
use crate::read::Reader;
use crate::sql::Cached;
use crate::write::Writer;

/// One place in a note that two devices changed at the same time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncConflict {
    /// Its number in this workspace (not shared with other devices).
    pub id: i64,
    /// The note.
    pub note_id: String,
    /// The other device's sync id.
    pub device: String,
    /// The lines both versions started from.
    pub base: String,
    /// This device's version of them (or that of a change that reached it first).
    pub ours: String,
    /// The other device's version.
    pub theirs: String,
    /// When sync found it, in milliseconds.
    pub found: i64,
}

const COLUMNS: &str = "id, note_id, device, base, ours, theirs, found";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SyncConflict> {
    Ok(SyncConflict {
        id: r.get(0)?,
        note_id: r.get(1)?,
        device: r.get(2)?,
        base: r.get(3)?,
        ours: r.get(4)?,
        theirs: r.get(5)?,
        found: r.get(6)?,
    })
}

impl Reader<'_> {
    /// The conflicts recorded, oldest first; of one note when `note_id` is given.
    pub fn sync_conflicts(&self, note_id: Option<&str>) -> Result<Vec<SyncConflict>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM sync_conflicts WHERE resolved IS NULL AND (?1 IS NULL OR note_id = ?1) \
             ORDER BY found, id"
        ))?;
        let rows = stmt.query_map([note_id], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One open conflict by its number.
    pub fn sync_conflict(&self, id: i64) -> Result<Option<SyncConflict>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM sync_conflicts WHERE id = ?1 AND resolved IS NULL"),
                [id],
                row,
            )
            .optional()?)
    }

    /// The conflicts the person chose a version of in the last week, each with the lines kept (of one note when
    /// `note_id` is given): a choice undone brings both versions back, and the conflict is asked again.
    pub fn chosen_sync_conflicts(&self, note_id: Option<&str>) -> Result<Vec<(SyncConflict, String)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS}, kept FROM sync_conflicts WHERE resolved IS NOT NULL AND kept IS NOT NULL \
             AND (?1 IS NULL OR note_id = ?1) ORDER BY found, id"
        ))?;
        let rows = stmt.query_map([note_id], |r| Ok((row(r)?, r.get(7)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A note's conflicts the person kept both versions of, not yet told to the other devices (sync's next fold of
    /// the note tells them, and forgets these).
    pub fn both_kept_sync_conflicts(&self, note_id: &str) -> Result<Vec<SyncConflict>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM sync_conflicts WHERE resolved IS NOT NULL AND kept IS NULL AND note_id = ?1"
        ))?;
        let rows = stmt.query_map([note_id], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A note's conflicts the person chose a version of, each with the lines kept.
    pub fn resolved_sync_conflicts(&self, note_id: &str) -> Result<Vec<(SyncConflict, String)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS}, kept FROM sync_conflicts WHERE resolved IS NOT NULL AND kept IS NOT NULL AND note_id = ?1"
        ))?;
        let rows = stmt.query_map([note_id], |r| Ok((row(r)?, r.get(7)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Writer<'_> {
    /// Records a conflict sync found in a note (its `id` is ignored); returns its number. Only sync records them.
    pub fn record_sync_conflict(&mut self, conflict: &SyncConflict) -> Result<i64> {
        self.require_sync("record a conflict")?;
        self.insert_conflict(conflict)
    }

    /// Records a place where a version one of the user's devices wrote offline (the web app's page, queued while the
    /// server was out of reach) met a change made here meanwhile, merged by sync's rule so that both versions are in
    /// the body: the same row as sync's, listed and settled the same way. Only the user records these.
    pub fn record_offline_conflict(&mut self, conflict: &SyncConflict) -> Result<i64> {
        self.require_user("record a conflict of an offline edit")?;
        self.insert_conflict(conflict)
    }

    fn insert_conflict(&mut self, conflict: &SyncConflict) -> Result<i64> {
        self.conn.exec_cached(
            "INSERT INTO sync_conflicts (note_id, device, base, ours, theirs, found) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                conflict.note_id,
                conflict.device,
                conflict.base,
                conflict.ours,
                conflict.theirs,
                conflict.found
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Records the person's choice of a conflict: `kept` is the lines kept. It is no longer listed; it stays for a
    /// week so that another device's opposite choice made at the same time does not remove both versions.
    pub fn resolve_sync_conflict(&mut self, id: i64, kept: &str, at: i64) -> Result<bool> {
        Ok(self.conn.exec_cached(
            "UPDATE sync_conflicts SET kept = ?2, resolved = ?3 WHERE id = ?1 AND resolved IS NULL",
            params![id, kept, at],
        )? > 0)
    }

    /// Records that the person kept both versions of a conflict: it is no longer listed, and stays until sync has
    /// told the other devices (the text did not change, so nothing else would).
    pub fn keep_both_sync_conflict(&mut self, id: i64, at: i64) -> Result<bool> {
        Ok(self.conn.exec_cached(
            "UPDATE sync_conflicts SET kept = NULL, resolved = ?2 WHERE id = ?1 AND resolved IS NULL",
            params![id, at],
        )? > 0)
    }

    /// Asks a conflict again: the person's choice of it was undone (both versions are in the note again).
    pub fn reopen_sync_conflict(&mut self, id: i64) -> Result<bool> {
        Ok(self.conn.exec_cached(
            "UPDATE sync_conflicts SET kept = NULL, resolved = NULL WHERE id = ?1 AND resolved IS NOT NULL",
            [id],
        )? > 0)
    }

    /// Forgets the choices of one version made before `before` (milliseconds); those of both wait for sync.
    pub fn drop_resolved_sync_conflicts(&mut self, before: i64) -> Result<()> {
        self.conn.exec_cached(
            "DELETE FROM sync_conflicts WHERE resolved < ?1 AND kept IS NOT NULL",
            [before],
        )?;
        Ok(())
    }

    /// Forgets a conflict: the person chose, or the note no longer holds both versions. Whether there was one.
    pub fn drop_sync_conflict(&mut self, id: i64) -> Result<bool> {
        Ok(self
            .conn
            .exec_cached("DELETE FROM sync_conflicts WHERE id = ?1", [id])?
            > 0)
    }
}
