//! Tools about notebooks: list the tree, create, rename and move.

pub mod create_notebook;
pub mod list_notebooks;
pub mod move_notebook;
pub mod rename_notebook;
