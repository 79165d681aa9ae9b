//! The note as the editor opens it: a wire type of the web's own, read in one call into core
//! ([`quire_core::Reader::note_view`]) with the whole body, every attachment and the links that point at no note.
//! A stale save's refusal and a locked read carry it too. (It used to be `read_note`'s output with its slices
//! joined: the AI tool's budget, slices and outline were the editor's business, and a long note took several reads.)

use quire_core::{NotebookTree, Reader};
use quire_tools::notes::read_note::{AttachmentRef, LinkCandidate, UnresolvedLink};
use quire_tools::types::NoteInfo;
use serde::Serialize;

/// A note, whole.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Note {
    /// The note, described as the note list describes it (the title, path and tags whole).
    #[serde(flatten)]
    pub note: NoteInfo,
    /// The Markdown body, whole (empty when `locked`).
    pub body: String,
    /// Every attachment, oldest first (none when `locked`).
    pub attachments: Vec<AttachmentRef>,
    /// `[[links]]` of the body that point at no note, with the notes they may mean (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved_links: Vec<UnresolvedLink>,
    /// Its content is sealed and the workspace is locked: the title, notebook and tags are there, the body and
    /// attachments are left out (empty). Unlocking (`POST /api/lock/unlock`) opens it. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub locked: bool,
}

impl Note {
    /// The note `id` as `r` may read it (with the unlocked key, when the caller's reader has it): one read of the
    /// note, its attachments and its unresolved links, and of the notebook tree only when a link has candidates
    /// whose paths are shown.
    pub(crate) fn read(r: &Reader<'_>, id: &str) -> quire_core::Result<Note> {
        let view = r.note_view(id, true)?;
        let tree = if view.unresolved_links.iter().any(|l| !l.candidates.is_empty()) {
            Some(r.notebook_tree()?)
        } else {
            None
        };
        let path = |tree: &Option<NotebookTree>, notebook: &str| tree.as_ref().map(|t| t.path(notebook));
        Ok(Note {
            note: NoteInfo::whole(&view.note.summary, view.notebook_path),
            body: view.note.body,
            attachments: view
                .attachments
                .into_iter()
                .map(|a| AttachmentRef {
                    attachment_id: a.id,
                    title: a.title,
                    mime: a.mime,
                    size: a.size,
                    has_text: a.has_text,
                })
                .collect(),
            unresolved_links: view
                .unresolved_links
                .into_iter()
                .map(|link| UnresolvedLink {
                    target: link.target,
                    candidates: link
                        .candidates
                        .into_iter()
                        .map(|c| LinkCandidate {
                            notebook_path: path(&tree, &c.notebook_id).unwrap_or_default(),
                            note_id: c.id,
                            title: c.title,
                        })
                        .collect(),
                })
                .collect(),
            locked: false,
        })
    }

    /// A sealed note while the workspace is locked: what lists show of it, and no content.
    pub(crate) fn locked(info: NoteInfo) -> Note {
        Note {
            note: info,
            body: String::new(),
            attachments: Vec::new(),
            unresolved_links: Vec::new(),
            locked: true,
        }
    }
}
