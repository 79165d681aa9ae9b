//! Tools about tags: list them, and add or remove them on a note.

pub mod list_tags;
pub mod manage_tags;
