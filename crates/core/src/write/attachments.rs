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
        self.check_note_writable(note_id)?;
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
        let id = self.new_id()?;
        let size = i64::try_from(new.data.len()).unwrap_or(i64::MAX);
        let now = self.now.as_millis();
        self.mutate(EntityKind::Attachment, &id, |w| {
            w.conn.exec_cached(
                "INSERT INTO attachments (id, note_id, title, mime, size, data, text, created) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![id, note_id, title, mime, size, new.data, new.text, now],
            )?;
            Ok(())
        })?;
        self.refresh_search(note_id)?;
        crate::links::refresh_key(self.conn, &crate::links::key_of(&title))?;
        self.attachment(&id)
    }

    /// Removes an attachment.
    pub fn delete_attachment(&mut self, id: &str) -> Result<()> {
        let note_id: String = self
            .conn
            .row_cached("SELECT note_id FROM attachments WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or(Error::NotFound(Missing::Attachment))?;
        self.check_note_writable(&note_id)?;
        self.mutate(EntityKind::Attachment, id, |w| w.delete_row(EntityKind::Attachment, id))?;
        crate::links::refresh_target_attachment(self.conn, id)?;
        self.refresh_search(&note_id)
    }
}
