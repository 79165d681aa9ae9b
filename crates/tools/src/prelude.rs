//! What every tool file imports.

pub(crate) use quire_core::{Reader, Writer};
pub(crate) use schemars::JsonSchema;
pub(crate) use serde::{Deserialize, Serialize};

pub(crate) use crate::budget::{OUTPUT_TOKENS, SNIPPET_CHARS};
pub(crate) use crate::error::ToolError;
pub(crate) use crate::page::{Listed, Page};
pub(crate) use crate::types::{NoteInfo, NotebookInfo, Notebooks, limit, note_info, notebook_info, summary_info};
