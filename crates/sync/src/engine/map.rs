//! Between core's rows and the merge documents' states.

use quire_core::replica::{SyncedLabel, SyncedNote, SyncedNotebook};

use crate::doc::{Label, NoteState, NotebookState};

/// A note's rows as its document's state.
pub(crate) fn note_state(note: &SyncedNote) -> NoteState {
    NoteState {
        id: note.id.clone(),
        title: note.title.clone(),
        body: note.body.clone(),
        notebook_id: note.notebook_id.clone(),
        is_todo: note.is_todo,
        todo_completed: note.todo_completed,
        trashed: note.deleted,
        protected: note.is_protected,
        tags: note.tags.clone(),
        labels: note
            .labels
            .iter()
            .map(|(name, label)| {
                (
                    name.clone(),
                    Label {
                        value: label.value.clone(),
                        json: label.json,
                    },
                )
            })
            .collect(),
        sealed: note.sealed.clone(),
        version: note.version,
        created: note.created,
        updated: note.updated,
        purged: false,
    }
}

/// A document's state as the rows to write. A sealed note's body is never written beside its ciphertext.
pub(crate) fn note_rows(state: &NoteState) -> SyncedNote {
    SyncedNote {
        id: state.id.clone(),
        notebook_id: state.notebook_id.clone(),
        title: state.title.clone(),
        body: if state.sealed.is_some() {
            String::new()
        } else {
            state.body.clone()
        },
        is_todo: state.is_todo,
        todo_completed: state.todo_completed,
        deleted: state.trashed,
        is_protected: state.protected,
        created: state.created,
        updated: state.updated,
        tags: state.tags.clone(),
        labels: state
            .labels
            .iter()
            .map(|(name, label)| {
                (
                    name.clone(),
                    SyncedLabel {
                        value: label.value.clone(),
                        json: label.json,
                    },
                )
            })
            .collect(),
        sealed: state.sealed.clone(),
        version: state.version,
    }
}

/// A notebook's row as its state in the tree.
pub(crate) fn notebook_state(notebook: &SyncedNotebook) -> NotebookState {
    NotebookState {
        id: notebook.id.clone(),
        parent_id: notebook.parent_id.clone(),
        title: notebook.title.clone(),
        protected: notebook.is_protected,
        gone: false,
    }
}

/// A notebook's state as its row.
pub(crate) fn notebook_row(state: &NotebookState) -> SyncedNotebook {
    SyncedNotebook {
        id: state.id.clone(),
        parent_id: state.parent_id.clone(),
        title: state.title.clone(),
        is_protected: state.protected,
    }
}
