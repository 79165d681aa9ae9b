//! What the user is looking at when they send a message: nothing, or a focused note with an optional selection.

use quire_core::Actor;
use serde::{Deserialize, Serialize};

/// A range of the focused note's body, in characters (not bytes): `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// The first selected character.
    pub start: usize,
    /// One past the last selected character.
    pub end: usize,
}

/// The note in the editor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusedNote {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its body as the editor has it (possibly unsaved).
    pub body: String,
    /// Where the cursor is, in characters.
    pub cursor: Option<usize>,
    /// The selected range, if any.
    pub selection: Option<Selection>,
}

/// The focused note's budget in the first request, in tokens, when the application sets none (see `view.rs`).
pub const DEFAULT_VIEW_TOKENS: usize = 2_000;

/// The context of one chat turn.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NoteContext {
    /// The focused note, if any.
    pub note: Option<FocusedNote>,
    /// How many tokens of the focused note the first request may carry (see [`DEFAULT_VIEW_TOKENS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_tokens: Option<usize>,
}

impl NoteContext {
    /// No note focused.
    pub fn none() -> NoteContext {
        NoteContext {
            note: None,
            view_tokens: None,
        }
    }

    /// The same context with a budget for the focused note in the first request, in tokens.
    pub fn with_view_budget(mut self, tokens: usize) -> NoteContext {
        self.view_tokens = Some(tokens);
        self
    }

    /// The focused note's budget in the first request, in tokens.
    pub fn view_budget(&self) -> usize {
        self.view_tokens.unwrap_or(DEFAULT_VIEW_TOKENS)
    }

    /// A focused note without a selection.
    pub fn focused(id: impl Into<String>, title: impl Into<String>, body: impl Into<String>) -> NoteContext {
        NoteContext {
            note: Some(FocusedNote {
                id: id.into(),
                title: title.into(),
                body: body.into(),
                cursor: None,
                selection: None,
            }),
            view_tokens: None,
        }
    }

    /// The same context with a selection (clamped to the body).
    pub fn with_selection(mut self, start: usize, end: usize) -> NoteContext {
        if let Some(note) = &mut self.note {
            let len = note.body.chars().count();
            let (start, end) = (start.min(len), end.min(len));
            note.selection = Some(Selection {
                start: start.min(end),
                end: start.max(end),
            });
        }
        self
    }

    /// The selected text, if there is a selection.
    pub fn selected_text(&self) -> Option<String> {
        let note = self.note.as_ref()?;
        let selection = note.selection?;
        Some(
            note.body
                .chars()
                .skip(selection.start)
                .take(selection.end - selection.start)
                .collect(),
        )
    }
}

/// The context of a chat about `note_id`, read through quire-core *as the agent*, so a protected note is refused
/// here rather than read by the user's rights and handed to the model.
///
/// ```
/// use quire_agent::{Error, focus_note};
/// use quire_core::{Actor, NewNote, Workspace};
///
/// let ws = Workspace::open_in_memory()?;
/// let note = ws.write(&Actor::User, |w| w.create_note(NewNote::new("Diary", "private")))?;
/// ws.write(&Actor::User, |w| w.set_note_protected(&note.summary.id, true))?;
/// assert!(matches!(focus_note(&ws, &note.summary.id), Err(Error::Protected { .. })));
/// # Ok::<(), quire_core::Error>(())
/// ```
pub fn focus_note(ws: &quire_core::Workspace, note_id: &str) -> Result<NoteContext, crate::Error> {
    let agent = reading_agent();
    ws.read(&agent, |r| {
        let summary = r.note_summary(note_id)?;
        if summary.is_protected {
            return Err(crate::Error::Protected {
                note_id: summary.id,
                title: summary.title,
            });
        }
        if summary.deleted.is_some() {
            return Err(crate::Error::InTrash {
                note_id: summary.id,
                title: summary.title,
            });
        }
        let note = r.note(note_id)?;
        Ok(NoteContext::focused(note.summary.id, note.summary.title, note.body))
    })
}

/// The actor the agent reads (and stores its chats) as outside a turn: any agent actor sees exactly what the guards
/// let AI actors see.
pub(crate) fn reading_agent() -> Actor {
    Actor::Agent {
        chat: String::new(),
        turn: 0,
    }
}
