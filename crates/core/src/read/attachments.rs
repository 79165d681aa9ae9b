//! Reading attachments: their metadata, data and extracted text.

use rusqlite::{OptionalExtension, Row};

use crate::sql::Cached;

use super::Reader;
use crate::entity::{AttachmentInfo, Note, Timestamp};
use crate::error::{Error, Missing, Result};

impl Reader<'_> {
    /// The attachments of a note. Withheld from non-user actors when the note is protected.
    pub fn attachments(&self, note_id: &str) -> Result<Vec<AttachmentInfo>> {
        let note = self.note_unrecorded(note_id)?;
        self.attachments_of(&note)
    }

    /// The attachments of a note already read with [`Reader::note`]: holding the `Note` proves its content is
    /// visible to this actor, so no second check is needed.
    pub fn attachments_of(&self, note: &Note) -> Result<Vec<AttachmentInfo>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, note_id, title, mime, size, text IS NOT NULL, created FROM attachments WHERE note_id = ?1 \
             ORDER BY created, id",
        )?;
        let rows = stmt.query_map([&note.summary.id], attachment_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One attachment's metadata. Withheld from non-user actors when its note is protected.
    pub fn attachment(&self, id: &str) -> Result<AttachmentInfo> {
        let info = self
            .conn
            .prepare_cached(
                "SELECT id, note_id, title, mime, size, text IS NOT NULL, created FROM attachments WHERE id = ?1",
            )?
            .query_row([id], attachment_from_row)
            .optional()?
            .ok_or(Error::NotFound(Missing::Attachment))?;
        // Through a scope, an attachment of a note outside it does not exist either.
        let owner = self.note_summary(&info.note_id).map_err(|e| match e {
            Error::NotFound(_) => Error::NotFound(Missing::Attachment),
            other => other,
        })?;
        self.ensure_content_visible(&owner)?;
        Ok(info)
    }

    /// Attachments whose text was never read out of them, oldest first, at most `limit` (quire-capture's job):
    /// plain ones only (a sealed note's is read when it is attached, with the key), and with `ocr` also those that
    /// waited for Tesseract (whole, or some scanned pages of them). For the user only: the job reads on the
    /// person's behalf.
    pub fn attachments_to_read(&self, ocr: bool, limit: usize) -> Result<Vec<AttachmentInfo>> {
        if !self.actor.is_user() {
            return Err(Error::invalid(
                "Only the person's own jobs read attachments' text out of them.",
            ));
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Two queries, each on its index (see migration 025).
        let mut found = Vec::new();
        let mut never = self.conn.prepare_cached(
            "SELECT a.id, a.note_id, a.title, a.mime, a.size, 0, a.created FROM attachments a \
             INDEXED BY attachments_unread JOIN notes n ON n.id = a.note_id \
             WHERE a.extraction IS NULL AND a.text IS NULL AND a.sealed IS NULL AND n.deleted IS NULL \
             ORDER BY a.created, a.id LIMIT ?1",
        )?;
        for row in never.query_map([limit], attachment_from_row)? {
            found.push(row?);
        }
        if ocr {
            let mut waited = self.conn.prepare_cached(
                "SELECT a.id, a.note_id, a.title, a.mime, a.size, a.text IS NOT NULL, a.created FROM attachments a \
                 INDEXED BY attachments_extraction JOIN notes n ON n.id = a.note_id \
                 WHERE a.extraction = 'ocr' AND a.sealed IS NULL AND n.deleted IS NULL ORDER BY a.created, a.id LIMIT ?1",
            )?;
            for row in waited.query_map([limit], attachment_from_row)? {
                found.push(row?);
            }
        }
        Ok(found)
    }

    /// How the reading of attachments' text stands: how many were never tried, how many wait for Tesseract, how
    /// many were read, and how many failed (with the newest reason). From the indexes only.
    pub fn attachment_extraction(&self) -> Result<crate::ExtractionCounts> {
        let count =
            |sql: &str| -> Result<u64> { Ok(self.conn.row_cached(sql, [], |r| r.get::<_, i64>(0))?.max(0) as u64) };
        Ok(crate::ExtractionCounts {
            waiting: count(
                "SELECT count(*) FROM attachments INDEXED BY attachments_unread \
                 WHERE extraction IS NULL AND text IS NULL AND sealed IS NULL",
            )?,
            waiting_for_ocr: count("SELECT count(*) FROM attachments WHERE extraction = 'ocr'")?,
            read: count("SELECT count(*) FROM attachments WHERE extraction = 'read'")?,
            failed: count("SELECT count(*) FROM attachments WHERE extraction >= 'failed:' AND extraction < 'failed;'")?,
            last_failure: self
                .conn
                .row_cached(
                    "SELECT extraction FROM attachments WHERE extraction >= 'failed:' AND extraction < 'failed;' \
                     ORDER BY created DESC LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .optional()?,
        })
    }

    /// An attachment's bytes.
    pub fn attachment_data(&self, id: &str) -> Result<Vec<u8>> {
        Ok(self.attachment_content(id, "attachment")?.0)
    }

    /// The text extracted from an attachment, if any.
    pub fn attachment_text(&self, id: &str) -> Result<Option<String>> {
        Ok(self.attachment_content(id, "attachment text")?.1)
    }

    /// An attachment's bytes and text, opened when its note is sealed.
    fn attachment_content(&self, id: &str, part: &str) -> Result<(Vec<u8>, Option<String>)> {
        let info = self.attachment(id)?;
        if self.ledger.is_some() {
            let owner = self.note_summary(&info.note_id)?;
            self.record_read(&owner, Some(&info.id), part);
        }
        let (data, text, sealed): (Vec<u8>, Option<String>, Option<Vec<u8>>) =
            self.conn
                .query_row("SELECT data, text, sealed FROM attachments WHERE id = ?1", [id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?;
        let Some(blob) = sealed else {
            return Ok((data, text));
        };
        let owner = self.note_summary(&info.note_id)?;
        let what = format!("attachment {}", info.title);
        let packed = self
            .key_for_note(&owner)?
            .open(&owner.id, &crate::seal::attachment_kind(id), 0, &blob, &what)?;
        crate::seal::unpack_attachment(&packed).ok_or(Error::SealBroken {
            note_id: owner.id.clone(),
            what,
        })
    }
}

fn attachment_from_row(r: &Row<'_>) -> rusqlite::Result<AttachmentInfo> {
    Ok(AttachmentInfo {
        id: r.get(0)?,
        note_id: r.get(1)?,
        title: r.get(2)?,
        mime: r.get(3)?,
        size: u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
        has_text: r.get(5)?,
        created: Timestamp(r.get(6)?),
    })
}
