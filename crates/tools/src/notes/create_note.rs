//! `create_note`: a new note; it never overwrites an existing one.

use crate::prelude::*;

/// Arguments of `create_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// The title: one line, not empty.
    pub(crate) title: String,
    /// The body, in Markdown (default empty).
    #[serde(default, alias = "content", alias = "text")]
    pub(crate) body: String,
    /// The notebook to put it in (default: the top level). Use list_notebooks to find ids.
    pub(crate) notebook_id: Option<String>,
    /// Tags to put on it; missing tags are created.
    #[serde(default)]
    pub(crate) tags: Vec<String>,
    /// Make it a to-do (default false).
    #[serde(default)]
    pub(crate) is_todo: bool,
}

tool! {
    /// Create a new note with a title, a Markdown body, and optionally a notebook and tags. It always creates a new
    /// note with a new id; to change an existing note use update_note.
    name: "create_note",
    title: "Create note",
    effect: mutating,
    input: Input,
    output: NoteInfo,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<NoteInfo, ToolError> {
    let note = w.create_note(quire_core::NewNote {
        notebook_id: input.notebook_id,
        tags: input.tags,
        is_todo: input.is_todo,
        ..quire_core::NewNote::new(input.title, input.body)
    })?;
    note_info(w, &note.summary.id)
}
