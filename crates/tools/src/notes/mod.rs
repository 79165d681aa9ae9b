//! Tools about notes: search, read, list, create, update, move, trash and restore.

pub mod create_note;
pub mod delete_note;
pub mod list_notes;
pub mod move_note;
pub mod read_note;
pub mod restore_note;
pub mod search_notes;
pub mod semantic_search_notes;
pub mod update_note;
