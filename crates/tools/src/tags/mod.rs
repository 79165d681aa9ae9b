//! Tools about tags: list them, and add or remove them on a note.

pub(crate) mod list_tags;
pub(crate) mod manage_tags;
