//! The note as the API answers it: `read_note`'s output with the whole body, or, for a sealed note while the
//! workspace is locked, its description without its content. A stale save's refusal and a locked read carry it too.

use quire_tools::notes::read_note;
use quire_tools::types::NoteInfo;
use serde::Serialize;

/// A note with its whole body, in `read_note`'s shape: a long body is read slice by slice and joined, so
/// `has_more` is false.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Note {
    /// The note, as `read_note` describes it.
    #[serde(flatten)]
    pub note: read_note::Output,
    /// Its content is sealed and the workspace is locked: the title, notebook and tags are there, the body,
    /// outline and attachments are left out (empty). Unlocking (`POST /api/lock/unlock`) opens it. Absent when
    /// false, so a readable note is exactly `read_note`'s output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub locked: bool,
}

impl Note {
    /// A note read whole.
    pub(crate) fn open(note: read_note::Output) -> Note {
        Note { note, locked: false }
    }

    /// A sealed note while the workspace is locked: what lists show of it, and no content.
    pub(crate) fn locked(info: NoteInfo) -> Note {
        Note {
            note: read_note::Output {
                note: info,
                body: String::new(),
                offset: 0,
                total_chars: 0,
                has_more: false,
                next_offset: None,
                outline: Vec::new(),
                outline_is_partial: false,
                attachments: Vec::new(),
                more_attachments: None,
                unresolved_links: Vec::new(),
            },
            locked: true,
        }
    }
}
