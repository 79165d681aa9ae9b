//! Attachments: add and delete.

use crate::sql::Cached;
use rusqlite::{OptionalExtension, params};

use crate::entity::{AttachmentInfo, EntityKind};
use crate::error::{Error, Missing, Result};
use crate::guard;

use super::{NewAttachment, Writer};

impl<'a> Writer<'a> {
    /// Attaches a file to a note. Its extracted text, if given, is searched with the note.
    pub fn add_attachment(&mut self, note_id: &str, new: NewAttachment) -> Result<AttachmentInfo> {
        let id = self.new_id()?;
        self.add_attachment_with(id, note_id, new)
    }

    /// Attaches a file with an id from [`Writer::reserve_id`] (see [`Writer::create_note_as`]): links to it
    /// written earlier resolve now.
    pub fn add_attachment_as(&mut self, id: &str, note_id: &str, new: NewAttachment) -> Result<AttachmentInfo> {
        self.check_fresh_id(id)?;
        self.add_attachment_with(id.to_owned(), note_id, new)
    }

    fn add_attachment_with(&mut self, id: String, note_id: &str, new: NewAttachment) -> Result<AttachmentInfo> {
        self.ensure_note_writable(note_id)?;
        let title = guard::title("Attachment", &new.title)?;
        if new.data.len() > guard::MAX_ATTACHMENT_BYTES {
            return Err(Error::invalid(format!(
                "Attachment is {} bytes; the limit is {} bytes.",
                new.data.len(),
                guard::MAX_ATTACHMENT_BYTES
            )));
        }
        if let Some(text) = &new.text {
            guard::body(text)?;
        }
        let mime = if new.mime.trim().is_empty() {
            "application/octet-stream".to_owned()
        } else {
            new.mime
        };
        let size = i64::try_from(new.data.len()).unwrap_or(i64::MAX);
        let has_text = new.text.is_some();
        let now = self.now.as_millis();
        // An attachment of a sealed note is sealed as it is written (no key is needed to seal).
        let seal = self.seal_state(note_id)?;
        let (data, text, sealed) = match &seal.sealed {
            Some(current) => {
                let packed = crate::seal::pack_attachment(&new.data, new.text.as_deref());
                let key = self.seal_for_note(note_id, Some(current))?;
                (
                    Vec::new(),
                    None,
                    Some(key.seal(note_id, &crate::seal::attachment_kind(&id), 0, &packed)?),
                )
            }
            None => (new.data, new.text, None),
        };
        self.mutate_new(EntityKind::Attachment, &id, |w| {
            w.conn.exec_cached(
                "INSERT INTO attachments (id, note_id, title, mime, size, data, text, created, sealed) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![id, note_id, title, mime, size, data, text, now, sealed],
            )?;
            Ok(())
        })?;
        // The note's searched text changes only with the attachment's text; links to the file by name or by id
        // are resolved again either way.
        if has_text {
            self.refresh_search(note_id)?;
        }
        crate::links::refresh_key(self.conn, &crate::links::key_of(&title))?;
        crate::links::refresh_target_id(self.conn, &id)?;
        self.attachment(&id)
    }

    /// Replaces an attachment's file with new bytes (of the same name: the file changed where it came from), keeping
    /// its id, so every link to it stays. Its extracted text, which described the old bytes, is dropped.
    pub fn replace_attachment_data(&mut self, id: &str, data: Vec<u8>) -> Result<AttachmentInfo> {
        let note_id: String = self
            .conn
            .row_cached("SELECT note_id FROM attachments WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or(Error::NotFound(Missing::Attachment))?;
        self.ensure_note_writable(&note_id)?;
        if data.len() > guard::MAX_ATTACHMENT_BYTES {
            return Err(Error::invalid(format!(
                "Attachment is {} bytes; the limit is {} bytes.",
                data.len(),
                guard::MAX_ATTACHMENT_BYTES
            )));
        }
        let size = i64::try_from(data.len()).unwrap_or(i64::MAX);
        let had_text: bool =
            self.conn
                .row_cached("SELECT text IS NOT NULL FROM attachments WHERE id = ?1", [id], |r| {
                    r.get(0)
                })?;
        let seal = self.seal_state(&note_id)?;
        let (data, sealed) = match &seal.sealed {
            Some(current) => {
                let packed = crate::seal::pack_attachment(&data, None);
                let key = self.seal_for_note(&note_id, Some(current))?;
                (
                    Vec::new(),
                    Some(key.seal(&note_id, &crate::seal::attachment_kind(id), 0, &packed)?),
                )
            }
            None => (data, None),
        };
        self.mutate(EntityKind::Attachment, id, |w| {
            w.conn.exec_cached(
                "UPDATE attachments SET data = ?2, size = ?3, text = NULL, sealed = ?4, extraction = NULL WHERE id = ?1",
                params![id, data, size, sealed],
            )?;
            Ok(())
        })?;
        if had_text {
            self.refresh_search(&note_id)?;
        }
        self.attachment(id)
    }

    /// Claims an attachment for reading its text (quire-capture's job), so that another process does not read it
    /// too, and a file that kills its reader is not tried again: `false` when it is taken, read already, or gone.
    /// A claim older than `stale_ms` was left by a process that died reading the file: it becomes
    /// `failed: quire stopped while reading it`, once, and is not handed out again.
    pub fn claim_attachment_reading(&mut self, id: &str, stale_ms: i64) -> Result<bool> {
        let now = self.now.as_millis();
        self.conn.exec_cached(
            "UPDATE attachments SET extraction = 'failed: quire stopped while reading it (a damaged file?)' \
             WHERE extraction >= 'reading:' AND extraction < 'reading;' AND CAST(substr(extraction, 9) AS INTEGER) < ?1",
            [now - stale_ms],
        )?;
        let claimed = self.conn.exec_cached(
            "UPDATE attachments SET extraction = ?2 WHERE id = ?1 AND sealed IS NULL \
             AND ((extraction IS NULL AND text IS NULL) OR extraction = 'ocr')",
            params![id, format!("reading:{now}")],
        )?;
        Ok(claimed == 1)
    }

    /// Records the text read out of an attachment's bytes (quire-capture: a PDF's pages joined by form feeds, see
    /// [`crate::pages`]), or none, with what became of the reading (`extraction`: `read`, `none`, `ocr`, or
    /// `failed: ...`; see migration 025). Derived from the bytes as an index is, it makes no revision or change set,
    /// and the change log's fingerprint of the row follows it (an undo still tells it from a later change); the note's
    /// search entry follows too. An attachment of a sealed note is refused: its text is sealed with its bytes, and
    /// is read when it is attached, with the key. NULs in the text are dropped (the workspace holds none).
    pub fn set_attachment_text(&mut self, id: &str, text: Option<&str>, extraction: &str) -> Result<()> {
        let (note_id, sealed, had_text): (String, bool, bool) = self
            .conn
            .row_cached(
                "SELECT note_id, sealed IS NOT NULL, text IS NOT NULL FROM attachments WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?
            .ok_or(Error::NotFound(Missing::Attachment))?;
        if sealed {
            return Err(Error::invalid(
                "This attachment's note is sealed: its text is sealed with it when it is attached.",
            ));
        }
        self.ensure_note_writable(&note_id)?;
        let text = text.map(|t| t.replace('\0', ""));
        if let Some(text) = &text {
            guard::body(text)?;
        }
        let before = crate::history::snapshot(self.conn, EntityKind::Attachment, id)?;
        self.conn.exec_cached(
            "UPDATE attachments SET text = ?2, extraction = ?3 WHERE id = ?1",
            params![id, text, extraction],
        )?;
        self.rehash_last_changes(&[(EntityKind::Attachment, id.to_owned(), before)])?;
        if text.is_some() || had_text {
            self.refresh_search(&note_id)?;
        }
        Ok(())
    }

    /// Removes an attachment.
    pub fn delete_attachment(&mut self, id: &str) -> Result<()> {
        let note_id: String = self
            .conn
            .row_cached("SELECT note_id FROM attachments WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or(Error::NotFound(Missing::Attachment))?;
        self.ensure_note_writable(&note_id)?;
        self.mutate(EntityKind::Attachment, id, |w| w.delete_row(EntityKind::Attachment, id))?;
        crate::links::refresh_target_attachment(self.conn, id)?;
        self.refresh_search(&note_id)
    }
}
