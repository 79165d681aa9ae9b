//! What `quire import` needs of the writer: savepoints, so one broken file takes back only its own writes, and the
//! record of where each imported note came from, so importing the same source again updates instead of duplicating.

use crate::sql::Cached;
use rusqlite::{OptionalExtension, params};

use crate::error::Result;

use super::Writer;

/// Where an imported note came from, as recorded at its last import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRecord {
    /// The note made from it.
    pub note_id: String,
    /// The SHA-256 of the source item at that import.
    pub source_hash: String,
    /// A hash of the note's title and body as that import wrote them (a different one now means it was changed in
    /// quire since).
    pub note_hash: String,
}

impl<'a> Writer<'a> {
    /// Runs `f` in a savepoint: when it fails, everything it wrote is taken back, none of it is in the change log,
    /// and the transaction goes on.
    pub fn attempt<T>(&mut self, f: impl FnOnce(&mut Writer<'a>) -> Result<T>) -> Result<T> {
        if self.conn.is_autocommit() {
            // The transaction is gone (SQLite rolls it back on some errors): a savepoint now would start a new one
            // and commit outside this write.
            return Err(crate::Error::Invalid(
                "The write's transaction has ended; nothing more can be written in it.".into(),
            ));
        }
        self.conn.execute_batch("SAVEPOINT quire_attempt")?;
        let change_set = self.change_set.clone();
        match f(self) {
            Ok(value) => {
                self.conn.execute_batch("RELEASE quire_attempt")?;
                Ok(value)
            }
            Err(e) => {
                self.change_set = change_set;
                if self.conn.is_autocommit() {
                    // SQLite already rolled the whole transaction back: say what failed.
                    return Err(e);
                }
                // When even taking the savepoint back fails, that failure (of the database) is what is returned, so
                // the caller stops rather than going on after a partial write.
                self.conn
                    .execute_batch("ROLLBACK TO quire_attempt; RELEASE quire_attempt")?;
                Err(e)
            }
        }
    }

    /// Records that `item` of `source` was imported as `note_id`.
    pub fn record_import(&mut self, source: &str, item: &str, record: &ImportRecord) -> Result<()> {
        self.conn.exec_cached(
            "INSERT INTO import_sources (source, item, note_id, source_hash, note_hash, imported) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (source, item) DO UPDATE SET note_id = excluded.note_id, \
             source_hash = excluded.source_hash, note_hash = excluded.note_hash, imported = excluded.imported",
            params![
                source,
                item,
                record.note_id,
                record.source_hash,
                record.note_hash,
                self.now.as_millis()
            ],
        )?;
        Ok(())
    }

    /// Whether this change set created the note, or already kept a revision of its text from before it.
    pub(super) fn created_in_this_change_set(&self, note_id: &str) -> Result<bool> {
        let Some(set) = &self.change_set else {
            return Ok(false);
        };
        Ok(self
            .conn
            .row_cached(
                // `+change_set_id`: look the note up by its own index, not by scanning the whole (large) change set.
                "SELECT 1 FROM changes WHERE +change_set_id = ?1 AND entity = 'note' AND entity_id = ?2 \
                 AND operation = 'create' \
                 UNION ALL SELECT 1 FROM revisions WHERE +change_set_id = ?1 AND note_id = ?2 LIMIT 1",
                params![set, note_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }
}

/// The hash an import records of a note's title and text as it wrote them ([`ImportRecord::note_hash`]): a different
/// one later means the note was changed in quire since.
pub fn import_note_hash(title: &str, body: &str) -> String {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(title.as_bytes());
    hasher.update([0]);
    hasher.update(body.as_bytes());
    crate::hex(&hasher.finalize())
}

impl crate::Reader<'_> {
    /// What the last import of `item` from `source` recorded, if it was imported before.
    pub fn import_record(&self, source: &str, item: &str) -> Result<Option<ImportRecord>> {
        Ok(self
            .conn
            .row_cached(
                "SELECT note_id, source_hash, note_hash FROM import_sources WHERE source = ?1 AND item = ?2",
                params![source, item],
                |r| {
                    Ok(ImportRecord {
                        note_id: r.get(0)?,
                        source_hash: r.get(1)?,
                        note_hash: r.get(2)?,
                    })
                },
            )
            .optional()?)
    }
}
