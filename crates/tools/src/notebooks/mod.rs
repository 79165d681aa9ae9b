//! Tools about notebooks: list the tree, create, rename and move.

pub(crate) mod create_notebook;
pub(crate) mod list_notebooks;
pub(crate) mod move_notebook;
pub(crate) mod rename_notebook;
