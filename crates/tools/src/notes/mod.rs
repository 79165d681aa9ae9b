//! Tools about notes: search, read, list, create, update, move, trash and restore.

pub(crate) mod create_note;
pub(crate) mod delete_note;
pub(crate) mod list_notes;
pub(crate) mod move_note;
pub(crate) mod read_note;
pub(crate) mod restore_note;
pub(crate) mod search_notes;
pub(crate) mod semantic_search_notes;
pub(crate) mod update_note;
