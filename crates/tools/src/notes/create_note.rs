//! `create_note`: a new note; it never overwrites an existing one.

use crate::prelude::*;

/// Arguments of `create_note`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// One line.
    pub title: String,
    /// Markdown.
    #[serde(default, alias = "content", alias = "text")]
    pub body: String,
    /// Default: the top level.
    pub notebook_id: Option<String>,
    /// Created if missing.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Make it a to-do.
    #[serde(default)]
    pub is_todo: bool,
}

tool! {
    /// Create a new note. To change an existing one, use update_note.
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
