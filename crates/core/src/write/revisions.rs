//! Putting a note back to a revision.

use crate::sql::Cached;
use rusqlite::OptionalExtension;

use crate::entity::Note;
use crate::error::{Error, Missing, Result};

use super::{NoteUpdate, Writer};

impl<'a> Writer<'a> {
    /// Puts a note's title and body back to a revision. The current text is saved as a revision first (for
    /// non-user actors), so this too can be undone.
    pub fn restore_revision(&mut self, revision_id: i64) -> Result<Note> {
        let revision: Option<(String, String, String, Option<Vec<u8>>)> = self
            .conn
            .row_cached(
                "SELECT note_id, title, body, sealed FROM revisions WHERE seq = ?1",
                [revision_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        let (note_id, title, body, sealed) = revision.ok_or(Error::NotFound(Missing::Revision))?;
        let body = match sealed {
            Some(blob) => self.key_for(&note_id)?.open_text(
                &note_id,
                crate::seal::kind::REVISION,
                revision_id,
                &blob,
                &format!("revision {revision_id}"),
            )?,
            None => body,
        };
        self.update_note(
            &note_id,
            NoteUpdate {
                title: Some(title),
                body: Some(body),
                ..NoteUpdate::default()
            },
        )
    }
}
