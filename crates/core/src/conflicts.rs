//! Places where another device changed the same lines of a note as this one, at the same time (issue 46). Sync
//! keeps both versions in the note's body, whole, one after the other, and records here which they are, so that the
//! person is told and chooses. Schema: `migrations/016_sync_conflicts.sql`.
//!
//! A row holds lines of the note's text: plain while the note is, sealed with it (`write/seal.rs`, migration 023),
//! so a protected note's conflicts wait, sealed, until the person opens them with the passphrase. Deleting the note
//! deletes them.

use rusqlite::{OptionalExtension, params};

use crate::error::{Error, Result};
use crate::read::Reader;
use crate::seal::crypto::NoteKey;
use crate::seal::{Unlocked, kind};
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
    /// The note is sealed, and so are these texts: read without the unlocked key, `base`, `ours` and `theirs` are
    /// empty. Set by the workspace (ignored when recording: a sealed note's conflict is sealed).
    pub sealed: bool,
    /// `ours` is this device's whole text of the note, made from `base`, which another device sealed without it:
    /// kept beside the note (`theirs` is empty: the note's own text is the other version) until it is merged in.
    pub aside: bool,
}

impl SyncConflict {
    /// A conflict between two versions of some lines, as sync or an offline save found it (`id` and `found` are
    /// set when it is recorded).
    pub fn new(note_id: &str, device: &str, base: &str, ours: &str, theirs: &str, found: i64) -> SyncConflict {
        SyncConflict {
            id: 0,
            note_id: note_id.to_owned(),
            device: device.to_owned(),
            base: base.to_owned(),
            ours: ours.to_owned(),
            theirs: theirs.to_owned(),
            found,
            sealed: false,
            aside: false,
        }
    }
}

const COLUMNS: &str = "id, note_id, device, base, ours, theirs, found, sealed, aside";

/// What a sealed row holds (`sealed`, by its `aside` column).
enum Sealed {
    /// Its texts, sealed as one piece of kind "conflict" (`aside` 0 or 1).
    Texts(Vec<u8>),
    /// An aside of a sealed note's own edit (`aside` 2): this device's body as sealed and the one it was made
    /// from, the note's own sealed pieces ([`pack_bodies`]).
    Bodies(Vec<u8>),
}

/// A row, with its sealed texts when it has them.
type Row = (SyncConflict, Option<Sealed>);

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let blob: Option<Vec<u8>> = r.get(7)?;
    let aside: i64 = r.get(8)?;
    let sealed = blob.map(|blob| {
        if aside == 2 {
            Sealed::Bodies(blob)
        } else {
            Sealed::Texts(blob)
        }
    });
    Ok((
        SyncConflict {
            id: r.get(0)?,
            note_id: r.get(1)?,
            device: r.get(2)?,
            base: r.get(3)?,
            ours: r.get(4)?,
            theirs: r.get(5)?,
            found: r.get(6)?,
            sealed: sealed.is_some(),
            aside: aside != 0,
        },
        sealed,
    ))
}

/// A sealed body (its note version, its piece) as an aside keeps it.
pub type SealedBody<'a> = (i64, &'a [u8]);

/// `ours`, then `base` when there is one: each its version (8 bytes), length (4 bytes) and piece.
fn pack_bodies(ours: SealedBody<'_>, base: Option<SealedBody<'_>>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (version, piece) in std::iter::once(ours).chain(base) {
        let len = u32::try_from(piece.len()).map_err(|_| Error::Invalid("a sealed body over 4 GiB".into()))?;
        out.extend_from_slice(&version.to_be_bytes());
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(piece);
    }
    Ok(out)
}

fn unpack_bodies(mut packed: &[u8]) -> Option<Vec<(i64, Vec<u8>)>> {
    let mut out = Vec::new();
    while !packed.is_empty() {
        let version = i64::from_be_bytes(packed.get(..8)?.try_into().ok()?);
        let len = u32::from_be_bytes(packed.get(8..12)?.try_into().ok()?) as usize;
        out.push((version, packed.get(12..12 + len)?.to_vec()));
        packed = &packed[12 + len..];
    }
    Some(out)
}

/// The texts of a sealed conflict, as they are sealed.
#[derive(serde::Serialize, serde::Deserialize)]
struct Texts {
    base: String,
    ours: String,
    theirs: String,
    /// The lines the person kept, once chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kept: Option<String>,
}

fn seal_texts(key: &NoteKey, c: &SyncConflict, kept: Option<&str>) -> Result<Vec<u8>> {
    let texts = Texts {
        base: c.base.clone(),
        ours: c.ours.clone(),
        theirs: c.theirs.clone(),
        kept: kept.map(str::to_owned),
    };
    let json = zeroize::Zeroizing::new(serde_json::to_vec(&texts).map_err(|e| Error::Invalid(e.to_string()))?);
    key.seal(&c.note_id, kind::CONFLICT, c.id, &json)
}

/// Fills in a sealed row's texts with the unlocked key; returns the lines kept, once chosen.
fn open_texts(key: &Unlocked, c: &mut SyncConflict, sealed: &Sealed) -> Result<Option<String>> {
    let what = format!("sync conflict {}", c.id);
    let blob = match sealed {
        Sealed::Texts(blob) => blob,
        Sealed::Bodies(packed) => {
            let broken = || Error::SealBroken {
                note_id: c.note_id.clone(),
                what: what.clone(),
            };
            let bodies = unpack_bodies(packed).ok_or_else(broken)?;
            let mut texts = Vec::new();
            for (version, piece) in &bodies {
                texts.push(key.open_text(&c.note_id, kind::BODY, *version, piece, &what)?);
            }
            let mut texts = texts.into_iter();
            c.ours = texts.next().ok_or_else(broken)?;
            c.base = texts.next().unwrap_or_default();
            return Ok(None);
        }
    };
    let json = key.open_text(&c.note_id, kind::CONFLICT, c.id, blob, &what)?;
    let texts: Texts = serde_json::from_str(&json).map_err(|_| Error::SealBroken {
        note_id: c.note_id.clone(),
        what,
    })?;
    (c.base, c.ours, c.theirs) = (texts.base, texts.ours, texts.theirs);
    Ok(texts.kept)
}

impl Reader<'_> {
    /// Rows as this view reads them: a sealed one's texts opened with the unlocked key, empty without it.
    fn opened(&self, rows: Vec<Row>) -> Result<Vec<SyncConflict>> {
        rows.into_iter()
            .map(|(mut c, blob)| {
                if let (Some(key), Some(sealed)) = (self.key, blob) {
                    open_texts(key, &mut c, &sealed)?;
                }
                Ok(c)
            })
            .collect()
    }

    /// The conflicts recorded, oldest first; of one note when `note_id` is given. A sealed note's are listed too,
    /// their texts empty unless this view holds the unlocked key.
    pub fn sync_conflicts(&self, note_id: Option<&str>) -> Result<Vec<SyncConflict>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM sync_conflicts WHERE resolved IS NULL AND (?1 IS NULL OR note_id = ?1) \
             ORDER BY found, id"
        ))?;
        let rows = stmt.query_map([note_id], row)?;
        self.opened(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One open conflict by its number.
    pub fn sync_conflict(&self, id: i64) -> Result<Option<SyncConflict>> {
        let found = self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM sync_conflicts WHERE id = ?1 AND resolved IS NULL"),
                [id],
                row,
            )
            .optional()?;
        Ok(self.opened(found.into_iter().collect())?.pop())
    }

    /// The conflicts the person chose a version of in the last week, each with the lines kept (of one note when
    /// `note_id` is given): a choice undone brings both versions back, and the conflict is asked again. A sealed
    /// note's are among them when this view holds the unlocked key.
    pub fn chosen_sync_conflicts(&self, note_id: Option<&str>) -> Result<Vec<(SyncConflict, String)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS}, kept FROM sync_conflicts WHERE resolved IS NOT NULL AND kept IS NOT NULL \
             AND (sealed IS NULL OR ?2) AND (?1 IS NULL OR note_id = ?1) ORDER BY found, id"
        ))?;
        let rows = stmt.query_map(params![note_id, self.key.is_some()], |r| {
            let (c, sealed) = row(r)?;
            Ok((c, sealed, r.get::<_, String>(9)?))
        })?;
        let mut out = Vec::new();
        for found in rows {
            let (mut c, sealed, kept) = found?;
            match (self.key, sealed) {
                (Some(key), Some(sealed)) => {
                    let kept = open_texts(key, &mut c, &sealed)?.unwrap_or_default();
                    out.push((c, kept));
                }
                (_, None) => out.push((c, kept)),
                (None, Some(_)) => {}
            }
        }
        Ok(out)
    }

    /// A note's conflicts the person kept both versions of, not yet told to the other devices (sync's next fold of
    /// the note tells them, and forgets these).
    pub fn both_kept_sync_conflicts(&self, note_id: &str) -> Result<Vec<SyncConflict>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM sync_conflicts WHERE resolved IS NOT NULL AND kept IS NULL AND sealed IS NULL \
             AND note_id = ?1"
        ))?;
        let rows = stmt.query_map([note_id], |r| Ok(row(r)?.0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A note's conflicts the person chose a version of, each with the lines kept.
    pub fn resolved_sync_conflicts(&self, note_id: &str) -> Result<Vec<(SyncConflict, String)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS}, kept FROM sync_conflicts WHERE resolved IS NOT NULL AND kept IS NOT NULL \
             AND sealed IS NULL AND note_id = ?1"
        ))?;
        let rows = stmt.query_map([note_id], |r| Ok((row(r)?.0, r.get(9)?)))?;
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

    /// Records a version of a whole note that another device sealed without it ([`SyncConflict::aside`]): `ours`
    /// and `base` are kept, sealed with the note, until the person opens it and it is merged in. Only sync records
    /// these.
    pub fn record_sync_aside(
        &mut self,
        note_id: &str,
        device: &str,
        base: &str,
        ours: &str,
        found: i64,
    ) -> Result<i64> {
        self.require_sync("record a text kept beside a sealed note")?;
        let mut aside = SyncConflict::new(note_id, device, base, ours, "", found);
        aside.aside = true;
        self.insert_conflict(&aside)
    }

    /// [`Writer::record_sync_aside`] of a note that was sealed here too: this device's edit (`ours`, its sealed
    /// body) lost to another device's edit made at the same time (a sealed body is one value, the last writer's),
    /// with the sealed body both were made from when known. Kept as they are (sync holds no key), opened with the
    /// key as an aside's texts.
    pub fn record_sync_aside_sealed(
        &mut self,
        note_id: &str,
        device: &str,
        ours: SealedBody<'_>,
        base: Option<SealedBody<'_>>,
        found: i64,
    ) -> Result<i64> {
        self.require_sync("record a text kept beside a sealed note")?;
        self.conn.exec_cached(
            "INSERT INTO sync_conflicts (note_id, device, base, ours, theirs, found, aside, sealed) \
             VALUES (?1, ?2, '', '', '', ?3, 2, ?4)",
            params![note_id, device, found, pack_bodies(ours, base)?],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn insert_conflict(&mut self, conflict: &SyncConflict) -> Result<i64> {
        let state = self.seal_state(&conflict.note_id)?;
        let sealed = state.sealed.is_some() || self.must_seal(&conflict.note_id)?;
        let plain = |text: &str| if sealed { String::new() } else { text.to_owned() };
        self.conn.exec_cached(
            "INSERT INTO sync_conflicts (note_id, device, base, ours, theirs, found, aside) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                conflict.note_id,
                conflict.device,
                plain(&conflict.base),
                plain(&conflict.ours),
                plain(&conflict.theirs),
                conflict.found,
                conflict.aside
            ],
        )?;
        let id = self.conn.last_insert_rowid();
        if sealed {
            // The note's texts are never stored plain: sealed with the note's key (a fresh one without the
            // unlocked key: anyone may seal).
            let key = self.seal_for_note(&conflict.note_id, state.sealed.as_deref())?;
            let blob = seal_texts(&key, &SyncConflict { id, ..conflict.clone() }, None)?;
            self.conn
                .exec_cached("UPDATE sync_conflicts SET sealed = ?2 WHERE id = ?1", params![id, blob])?;
        }
        Ok(id)
    }

    /// Records the person's choice of a conflict: `kept` is the lines kept. It is no longer listed; it stays for a
    /// week so that another device's opposite choice made at the same time does not remove both versions (a
    /// sealed note's choice is sealed with its texts, so only the key reads it; without the key it goes at once).
    pub fn resolve_sync_conflict(&mut self, id: i64, kept: &str, at: i64) -> Result<bool> {
        let sealed: Option<(String, Vec<u8>)> = self
            .conn
            .row_cached(
                "SELECT note_id, sealed FROM sync_conflicts WHERE id = ?1 AND sealed IS NOT NULL AND aside = 0 \
                 AND resolved IS NULL",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let (Some((note_id, blob)), Some(key)) = (&sealed, self.key) {
            let mut c = SyncConflict::new(note_id, "", "", "", "", 0);
            c.id = id;
            open_texts(key, &mut c, &Sealed::Texts(blob.clone()))?;
            let state = self.seal_state(note_id)?;
            let note_key = self.seal_for_note(note_id, state.sealed.as_deref())?;
            let blob = seal_texts(&note_key, &c, Some(kept))?;
            return Ok(self.conn.exec_cached(
                "UPDATE sync_conflicts SET sealed = ?2, kept = '', resolved = ?3 WHERE id = ?1",
                params![id, blob, at],
            )? > 0);
        }
        if self.drop_sealed_conflict(id)? {
            return Ok(true);
        }
        Ok(self.conn.exec_cached(
            "UPDATE sync_conflicts SET kept = ?2, resolved = ?3 WHERE id = ?1 AND resolved IS NULL",
            params![id, kept, at],
        )? > 0)
    }

    /// Records that the person kept both versions of a conflict: it is no longer listed, and stays until sync has
    /// told the other devices (the text did not change, so nothing else would). A sealed note's goes at once.
    pub fn keep_both_sync_conflict(&mut self, id: i64, at: i64) -> Result<bool> {
        if self.drop_sealed_conflict(id)? {
            return Ok(true);
        }
        Ok(self.conn.exec_cached(
            "UPDATE sync_conflicts SET kept = NULL, resolved = ?2 WHERE id = ?1 AND resolved IS NULL",
            params![id, at],
        )? > 0)
    }

    fn drop_sealed_conflict(&mut self, id: i64) -> Result<bool> {
        Ok(self.conn.exec_cached(
            "DELETE FROM sync_conflicts WHERE id = ?1 AND sealed IS NOT NULL AND resolved IS NULL",
            [id],
        )? > 0)
    }

    /// Seals a note's conflicts as the note is sealed (`key`: the note's); the choices made of them, which hold
    /// plain lines, go.
    pub(crate) fn seal_conflicts(&mut self, note_id: &str, key: &NoteKey) -> Result<()> {
        self.conn.exec_cached(
            "DELETE FROM sync_conflicts WHERE note_id = ?1 AND resolved IS NOT NULL AND sealed IS NULL",
            [note_id],
        )?;
        let rows: Vec<Row> = {
            let mut stmt = self.conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM sync_conflicts WHERE note_id = ?1 AND sealed IS NULL"
            ))?;
            stmt.query_map([note_id], row)?.collect::<rusqlite::Result<_>>()?
        };
        for (c, _) in rows {
            let blob = seal_texts(key, &c, None)?;
            self.conn.exec_cached(
                "UPDATE sync_conflicts SET base = '', ours = '', theirs = '', sealed = ?2 WHERE id = ?1",
                params![c.id, blob],
            )?;
        }
        Ok(())
    }

    /// Opens a note's sealed conflicts back into plain columns, as the note is opened.
    pub(crate) fn open_conflicts(&mut self, note_id: &str, key: &Unlocked) -> Result<()> {
        let rows: Vec<Row> = {
            let mut stmt = self.conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM sync_conflicts WHERE note_id = ?1 AND sealed IS NOT NULL"
            ))?;
            stmt.query_map([note_id], row)?.collect::<rusqlite::Result<_>>()?
        };
        for (mut c, sealed) in rows {
            let kept = match sealed {
                Some(sealed) => open_texts(key, &mut c, &sealed)?,
                None => None,
            };
            // A choice made while sealed keeps its lines kept (plain again, as the note).
            self.conn.exec_cached(
                "UPDATE sync_conflicts SET base = ?2, ours = ?3, theirs = ?4, sealed = NULL, \
                 aside = min(aside, 1), kept = coalesce(?5, kept) WHERE id = ?1",
                params![c.id, c.base, c.ours, c.theirs, kept],
            )?;
        }
        Ok(())
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
