//! `list_notes`: the notes of one notebook (or of the trash), paged.

use quire_core::{NoteList, NoteOrder};

use crate::prelude::*;

/// Arguments of `list_notes`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Default: the top level (`_root`). Not its sub-notebooks.
    #[serde(alias = "id")]
    pub notebook_id: Option<String>,
    /// The trash instead.
    pub in_trash: Option<bool>,
    /// Notes with this tag, in every notebook, instead.
    pub tag: Option<String>,
    /// Default 50, at most 100.
    pub limit: Option<u64>,
    pub offset: Option<u64>,
    /// Default: title in a notebook, else newest first.
    pub sort: Option<Sort>,
}

/// The orders `list_notes` offers.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sort {
    Title,
    Updated,
    Created,
}

/// A page of notes.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The notebook listed (absent when listing the trash or a tag).
    pub notebook: Option<NotebookInfo>,
    /// The notes.
    #[serde(flatten)]
    pub page: Page<NoteInfo>,
}

impl Listed for NoteInfo {
    const FIELD: &'static str = "notes";
    const ABOUT: &'static str = "The notes, in the order asked for (by default: by title in a notebook, most recently \
                                 updated first for a tag, most recently trashed first in the trash).";
}

tool! {
    /// List the notes of one notebook, of one tag, or in the trash. To find notes by content, use search_notes.
    name: "list_notes",
    title: "List notes",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let page = quire_core::Page {
        offset: input.offset.unwrap_or(0),
        limit: limit(input.limit, 50),
    };
    let notebooks = Notebooks::load(r)?;
    let in_trash = input.in_trash.unwrap_or(false);
    let chosen = [input.notebook_id.is_some(), in_trash, input.tag.is_some()];
    if chosen.iter().filter(|c| **c).count() > 1 {
        return Err(ToolError::new("Give one of notebook_id, tag or in_trash, not several."));
    }
    let order = match input.sort {
        None => NoteOrder::Natural,
        Some(Sort::Title) => NoteOrder::Title,
        Some(Sort::Updated) => NoteOrder::Updated,
        Some(Sort::Created) => NoteOrder::Created,
    };
    let (notebook, notes) = if in_trash {
        (None, r.note_list(NoteList::Trash, order, page)?)
    } else if let Some(tag) = &input.tag {
        (None, r.note_list(NoteList::Tagged(tag), order, page)?)
    } else {
        let id = input.notebook_id.as_deref().unwrap_or(quire_core::ROOT_NOTEBOOK_ID);
        let notebook = r.notebook(id)?;
        (
            Some(notebooks.notebook(&notebook)),
            r.note_list(NoteList::Notebook(id), order, page)?,
        )
    };
    let items: Vec<NoteInfo> = notes.items.iter().map(|n| notebooks.note(n)).collect();
    Ok(Output {
        notebook,
        page: Page::fitted(items, notes.total, notes.offset),
    })
}
